"""The Python binding end to end on the host target: compile -> invoke -> compare with NumPy,
errors as exceptions with code and message, several threads at once."""
import threading
import unittest

import numpy as np

import tessera_jit as tj

SOURCE = """
func.func @saxpy(%alpha: f32, %x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>) {
  tile.map ins(%alpha, %x, %y : f32, memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %xi: f32, %yi: f32):
    %ax = arith.mulf %a, %xi : f32
    %r = arith.addf %ax, %yi : f32
    tile.yield %r : f32
  }
  return
}
func.func @dense(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %bias: memref<?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf32>) activation(relu)
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}
func.func @probs(%x: memref<?x?xf16>, %y: memref<?x?xf16>) {
  tile.softmax %x -> %y : memref<?x?xf16> -> memref<?x?xf16>
  return
}
func.func @scale(%n: i64, %x: f64) -> f64 {
  %f = arith.sitofp %n : i64 to f64
  %r = arith.mulf %f, %x : f64
  return %r : f64
}
"""


class PythonBindingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctx = tj.Context(default_target="host")
        cls.module = cls.ctx.compile(SOURCE)

    def test_entries_and_signature(self):
        self.assertEqual(self.module.entries, ["saxpy", "dense", "probs", "scale"])
        dense = self.module.function("dense")
        self.assertEqual([a["type"] for a in dense.args],
                         ["memref<?x?xf32>"] * 2 + ["memref<?xf32>", "memref<?x?xf32>"])
        self.assertEqual(dense.args[0]["shape"], (-1, -1))

    def test_saxpy(self):
        x = np.linspace(-1, 1, 1001, dtype=np.float32)
        y = np.ones_like(x)
        out = np.zeros_like(x)
        self.module.function("saxpy")(0.5, x, y, out)
        np.testing.assert_array_equal(out, np.float32(0.5) * x + y)

    def test_dense_against_numpy(self):
        rng = np.random.default_rng(1)
        a = rng.standard_normal((13, 37)).astype(np.float32)
        b = rng.standard_normal((37, 9)).astype(np.float32)
        bias = rng.standard_normal(9).astype(np.float32)
        c = np.empty((13, 9), np.float32)
        self.module.function("dense")(a, b, bias, c)
        np.testing.assert_allclose(c, np.maximum(a @ b + bias, 0), rtol=1e-5, atol=1e-5)

    def test_half_softmax(self):
        x = np.random.default_rng(2).uniform(-4, 4, (5, 33)).astype(np.float16)
        y = np.empty_like(x)
        self.module.function("probs")(x, y)
        e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(y.astype(np.float64), e / e.sum(axis=1, keepdims=True),
                                   atol=2e-3)

    def test_scalar_result(self):
        self.assertEqual(self.module.function("scale")(4, 2.5), 10.0)

    def test_errors_carry_code_and_message(self):
        saxpy = self.module.function("saxpy")
        x = np.zeros(4, np.float32)
        cases = [
            ((1.0, x, x), "takes 4 argument(s), found 3"),
            ((1.0, x.astype(np.float64), x, x), "dtype float64 does not match"),
            ((1.0, np.zeros((2, 2), np.float32), x, x), "expected rank 1, found 2"),
        ]
        for args, expected in cases:
            with self.assertRaises(tj.TesseraError) as raised:
                saxpy(*args)
            self.assertEqual(raised.exception.code, "INVALID_ARGUMENT")
            self.assertIn(expected, raised.exception.message)
        with self.assertRaises(tj.TesseraError) as raised:
            saxpy(1.0, np.zeros(8, np.float32)[::2], x, x)
        self.assertIn("expected a dense row-major tensor, found strides [2]",
                      raised.exception.message)
        with self.assertRaises(tj.TesseraError) as raised:  # a float for an integer: refused
            self.module.function("scale")(1.5, 2.0)
        self.assertEqual(raised.exception.code, "INVALID_ARGUMENT")
        with self.assertRaises(tj.TesseraError) as raised:
            self.module.function("missing")
        self.assertEqual(raised.exception.code, "NOT_FOUND")
        with self.assertRaises(tj.TesseraError) as raised:
            self.ctx.compile("func.func @f(%x: memref<4xf32>) {\n  tile.softmax %x -> %x\n}")
        self.assertEqual(raised.exception.code, "INVALID_ARGUMENT")
        self.assertIn("<source>:2:", raised.exception.message)

    def test_mismatched_sizes_and_read_only_arrays_are_refused(self):
        saxpy = self.module.function("saxpy")
        x = np.ones(4, np.float32)
        out = np.full(1 << 20, 7, np.float32)
        with self.assertRaises(tj.TesseraError) as raised:
            saxpy(2.0, x, np.ones(1 << 20, np.float32), out)
        self.assertEqual(raised.exception.code, "INVALID_ARGUMENT")
        self.assertIn("@saxpy: dimension 0 of argument #1 'x' is 4 but argument #3 'out' "
                      "has 1048576 (it must be 1 or that): tile.map at <source>:3:3 broadcasts "
                      "its inputs to the output's shape",
                      raised.exception.message)
        self.assertTrue((out == 7).all())
        frozen = np.zeros(4, np.float32)
        frozen.flags.writeable = False
        with self.assertRaises(tj.TesseraError) as raised:
            saxpy(2.0, x, x, frozen)
        self.assertIn("the tensor is read-only, but @saxpy writes this argument",
                      raised.exception.message)
        result = np.zeros(4, np.float32)
        saxpy(2.0, frozen, x, result)  # read-only inputs are fine
        np.testing.assert_array_equal(result, np.ones(4, np.float32))
        self.assertEqual([a["name"] for a in saxpy.args], ["alpha", "x", "y", "out"])
        self.assertEqual([a["written"] for a in saxpy.args], [False, False, False, True])

    def test_threads(self):
        saxpy = self.module.function("saxpy")
        failures = []

        def work(seed):
            x = np.full(300, seed, np.float32)
            out = np.empty_like(x)
            for _ in range(20):
                saxpy(2.0, x, x, out)
                if not np.array_equal(out, 3 * x):
                    failures.append(seed)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])

    def test_cache(self):
        stats = self.ctx.cache_stats()
        self.assertGreaterEqual(stats["compiles"], 1)
        self.ctx.compile(SOURCE)
        self.assertEqual(self.ctx.cache_stats()["memory_hits"], stats["memory_hits"] + 1)

    def test_openblas_delegate(self):
        ctx = tj.Context(default_target="host", cache_dir="")
        ctx.register_default_libraries()
        self.assertIn("openblas (library, host pointers) libopenblas.so.0", ctx.delegates()[0])
        module = ctx.compile(SOURCE.replace(" activation(relu)", "").replace(
            " bias(%bias : memref<?xf32>)", ""), matmul_delegate="openblas")
        a = np.random.default_rng(3).standard_normal((7, 5)).astype(np.float32)
        b = np.random.default_rng(4).standard_normal((5, 6)).astype(np.float32)
        c = np.empty((7, 6), np.float32)
        before = tj.delegate_dispatch_count()
        module.function("dense")(a, b, np.zeros(6, np.float32), c)
        self.assertEqual(tj.delegate_dispatch_count(), before + 1)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
        ctx.close()

    def test_arbiter_decisions(self):
        ctx = tj.Context(default_target="host", cache_dir="")
        ctx.register_default_libraries()
        # openblas's own cblas_sgemm, declared again as a provider with a bounded contract.
        ctx.declare_matmul_provider("blas2", "openblas", "cblas_sgemm", provenance="vendor_library",
                                    accuracy="tolerance_bounded", tolerance=1e-3)
        with self.assertRaises(tj.TesseraError) as raised:
            ctx.declare_matmul_provider("bad", "nolib", "cblas_sgemm")
        self.assertIn("library 'nolib' is not registered", str(raised.exception))
        module = ctx.compile(SOURCE.replace(" activation(relu)", "").replace(
            " bias(%bias : memref<?xf32>)", ""))
        records = module.decisions()
        self.assertIn("tile.map", [r["point"]["op"] for r in records])  # every Tile op has one
        [record] = [r for r in records if r["point"]["op"] == "tile.matmul"]
        ids = {c["id"]: c for c in record["candidates"]}
        self.assertEqual(set(ids), {"compiled", "openblas", "cublas", "blas2"})
        self.assertEqual(ids["cublas"]["gate"], "applicability")
        self.assertIn(record["winner"], ("compiled", "openblas", "blas2"))
        self.assertEqual(ids["blas2"]["atol"], 1e-3)
        self.assertEqual(record["source"], "measured")
        ctx.close()

    def test_gpu_absent(self):
        if tj.is_gpu_available():
            self.skipTest("a GPU is present")
        self.assertEqual(tj.device_count(), 0)
        with self.assertRaises(tj.TesseraError) as raised:
            self.ctx.device_info(0)
        self.assertEqual(raised.exception.code, "UNAVAILABLE")
        module = self.ctx.compile(SOURCE, target="nvptx")
        self.assertIn(".entry saxpy_map_0", module.ptx)
        self.assertEqual(module.cubin[:4], b"\x7fELF")


if __name__ == "__main__":
    unittest.main(verbosity=2)
