"""A notebook-style walk through the Python binding: compile the MLP example, run it on random
data (on the GPU when one is present, otherwise on the host target), and check it against
NumPy.

    /usr/bin/python3 capi/python/example_mlp.py        # after tools/test.sh or a bazel build
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tessera_jit as tj  # noqa: E402

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

# %% 1. A context: the GPU when present, else the host target.
target = "nvptx" if tj.is_gpu_available() else "host"
print(f"Tessera JIT C API {tj.api_version()}, target: {target}")
ctx = tj.Context(default_target=target)

# %% 2. Compile examples/mlp.mlir: matmul + bias + relu -> matmul + bias -> softmax -> reduce.
with open(os.path.join(REPO, "examples", "mlp.mlir")) as f:
    module = ctx.compile(f.read())
mlp = module.function("mlp")
print("entries:", module.entries)
for i, arg in enumerate(mlp.args):
    print(f"  #{i} {arg['type']}")

# %% 3. Random inputs (batch of 16) and output buffers.
rng = np.random.default_rng(0)
batch = 16
x = rng.uniform(-1, 1, (batch, 784)).astype(np.float32)
w1 = rng.uniform(-0.05, 0.05, (784, 256)).astype(np.float32)
b1 = rng.uniform(-0.1, 0.1, 256).astype(np.float32)
w2 = rng.uniform(-0.1, 0.1, (256, 10)).astype(np.float32)
b2 = rng.uniform(-0.1, 0.1, 10).astype(np.float32)
hidden = np.empty((batch, 256), np.float32)
logits = np.empty((batch, 10), np.float32)
probs = np.empty((batch, 10), np.float32)
top = np.empty(batch, np.float32)
confidence = np.empty((), np.float32)
arrays = [x, w1, b1, w2, b2, hidden, logits, probs, top, confidence]

# %% 4. Invoke: NumPy arrays on the host; device copies on the GPU.
if target == "host":
    mlp(*arrays)
else:
    device = [ctx.to_device(a) for a in arrays]
    mlp(*device)
    ctx.synchronize()
    hidden, logits, probs, top, confidence = (d.numpy() for d in device[5:])

# %% 5. Check against NumPy.
h = np.maximum(x @ w1 + b1, 0)
l = h @ w2 + b2
e = np.exp(l - l.max(axis=1, keepdims=True))
p = e / e.sum(axis=1, keepdims=True)
print("max |probs - numpy| =", float(np.abs(probs - p).max()))
print("mean confidence:", float(confidence), "numpy:", float(p.max(axis=1).mean()))
assert np.allclose(probs, p, atol=1e-5, rtol=1e-4)
assert np.allclose(confidence, p.max(axis=1).mean(), atol=1e-5)

# %% 6. Errors are exceptions with the C API's code and message.
try:
    mlp(x)
except tj.TesseraError as error:
    print("as expected:", error.code, "-", error.message)
print("ok")
