"""The Python package as its users meet it: any DLPack producer in (NumPy of either DLPack
generation, JAX, hand-made producers), the package's own capsules out (np.from_dlpack,
jax.dlpack), bfloat16 through ml_dtypes, the stream argument handed to device producers,
exceptions per code, objects that clean up after themselves, and hostile calls.

Runs under the distribution's Python (NumPy 1.24: DLPack 0.x capsules) in Bazel and in a fresh
venv with NumPy 2, JAX and ml_dtypes from PyPI (tools/python_package_test.sh)."""
import ctypes
import gc
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest

import numpy as np

import tessera_jit as tj
from tessera_jit import _native, errors

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
func.func @twice_bf16(%x: memref<?x?xbf16>, %y: memref<?x?xbf16>) {
  tile.map ins(%x : memref<?x?xbf16>) outs(%y : memref<?x?xbf16>) {
  ^bb0(%v: bf16):
    %r = arith.addf %v, %v : bf16
    tile.yield %r : bf16
  }
  return
}
func.func @mask(%m: memref<?xi1>, %y: memref<?xf32>) {
  tile.map ins(%m : memref<?xi1>) outs(%y : memref<?xf32>) {
  ^bb0(%b: i1):
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.select %b, %one, %zero : f32
    tile.yield %r : f32
  }
  return
}
func.func @bytes(%x: memref<?xi8>, %y: memref<?xi8>) {
  tile.map ins(%x : memref<?xi8>) outs(%y : memref<?xi8>) {
  ^bb0(%v: i8):
    tile.yield %v : i8
  }
  return
}
func.func @count(%n: i64, %x: f64) -> f64 {
  %f = arith.sitofp %n : i64 to f64
  %r = arith.mulf %f, %x : f64
  return %r : f64
}
"""

try:
    import jax
    import jax.numpy as jnp
except ImportError:  # the distribution's Python has no JAX
    jax = None

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None


class Producer:
    """A DLPack producer of host memory that records how it was asked: the stream and
    max_version keywords a consumer passed."""

    versioned = True

    def __init__(self, array, device=(1, 0), read_only=False):
        self.array = np.ascontiguousarray(array)
        self.device = device
        self.read_only = read_only
        self.calls = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, *, stream=None, max_version=None, **kwargs):
        self.calls.append({"stream": stream, "max_version": max_version, **kwargs})
        if not self.versioned and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        code, bits = tj._dlpack.dl_dtype(self.array.dtype)
        versioned = max_version is not None and max_version[0] >= 1
        return _native.export_capsule(self.array, self.array.ctypes.data, self.array.shape,
                                      code, bits, self.device[0], self.device[1], versioned,
                                      self.read_only)


class LegacyProducer(Producer):
    """A producer from before DLPack 1.0: no max_version keyword, 0.x capsules. (Whether a
    producer takes the keyword is remembered per type, as real producers are consistent.)"""

    versioned = False


class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctx = tj.Context(default_target="host", cache_dir="")
        cls.module = cls.ctx.compile(SOURCE)
        cls.saxpy = cls.module.saxpy

    @classmethod
    def tearDownClass(cls):
        cls.ctx.close()

    def saxpy_inputs(self, n=257):
        x = np.linspace(-3, 3, n, dtype=np.float32)
        return x, np.full(n, 0.25, np.float32), np.zeros(n, np.float32)

    # Arrays in and out ------------------------------------------------------------------------

    def test_numpy_arrays_zero_copy(self):
        x, y, out = self.saxpy_inputs()
        self.assertIsNone(self.saxpy(1.5, x, y, out))
        np.testing.assert_array_equal(out, np.float32(1.5) * x + y)
        view = out[:]  # a view of the same memory is written in place
        self.saxpy(np.float32(2.0), x, y, view)
        np.testing.assert_array_equal(out, np.float32(2.0) * x + y)

    def test_versioned_and_unversioned_producers(self):
        x, y, out = self.saxpy_inputs()
        for producer in (Producer, LegacyProducer):
            px, py = producer(x), producer(y)
            out[:] = 0
            self.saxpy(0.5, px, py, out)
            np.testing.assert_array_equal(out, np.float32(0.5) * x + y)
            self.assertEqual(px.calls[0]["max_version"], (1, 0))  # asked for DLPack 1.0 first
            self.assertIsNone(px.calls[0]["stream"])             # host memory: no stream
            if not producer.versioned:  # refused the keyword, then served a 0.x capsule
                self.assertIsNone(px.calls[-1]["max_version"])

    def test_read_only_tensors_are_inputs_only(self):
        x, y, out = self.saxpy_inputs()
        self.saxpy(1.0, Producer(x, read_only=True), y, out)
        np.testing.assert_array_equal(out, x + y)
        with self.assertRaises(tj.InvalidArgumentError) as raised:
            self.saxpy(1.0, x, y, Producer(out, read_only=True))
        self.assertIn("'out'", str(raised.exception))
        frozen = np.zeros_like(out)
        frozen.flags.writeable = False  # NumPy 2: a read-only capsule; 1.x: the fallback
        with self.assertRaises(tj.InvalidArgumentError):
            self.saxpy(1.0, x, y, frozen)
        self.saxpy(1.0, frozen, y, out)  # …and as an input it is fine
        np.testing.assert_array_equal(out, y)

    def test_outputs_over_inputs_in_place_or_not_at_all(self):
        x, y, _ = self.saxpy_inputs()
        expected = np.float32(2.0) * x + y
        self.saxpy(2.0, x, y, y)  # y = 2x + y in place: elementwise, the same buffer
        np.testing.assert_array_equal(y, expected)
        buffer = np.arange(258, dtype=np.float32)
        with self.assertRaises(tj.InvalidArgumentError) as raised:
            self.saxpy(1.0, buffer[:-1], x, buffer[1:])  # shifted by one element: refused
        self.assertIn("argument #3 'out' (written) overlaps argument #1 'x'", str(raised.exception))
        np.testing.assert_array_equal(buffer, np.arange(258, dtype=np.float32))  # nothing ran

    def test_device_producers_receive_the_stream(self):
        x, y, out = self.saxpy_inputs(8)
        cuda = Producer(x, device=(2, 0))
        with self.assertRaises(tj.InvalidArgumentError) as raised:  # a host module
            self.saxpy(1.0, cuda, y, out)
        self.assertIn("device", str(raised.exception))
        self.assertEqual(cuda.calls[-1]["stream"], 1)  # no stream= : the legacy default stream

        class TorchLikeStream:
            cuda_stream = 0x5000

        class ProtocolStream:
            def __cuda_stream__(self):
                return (0, 0x6000)

        for stream, expected in ((0x4000, 0x4000), (TorchLikeStream(), 0x5000),
                                 (ProtocolStream(), 0x6000), (0, 1)):
            with self.assertRaises(tj.InvalidArgumentError):
                self.saxpy(1.0, cuda, y, out, stream=stream)
            self.assertEqual(cuda.calls[-1]["stream"], expected)
        with self.assertRaises(TypeError):
            self.saxpy(1.0, x, y, out, stream="default")
        with self.assertRaises(TypeError):  # a bool is not a CUstream
            self.saxpy(1.0, x, y, out, stream=True)
        with self.assertRaises(TypeError):
            self.saxpy(1.0, x, y, out, stream=None, other=1)

    def test_the_package_capsules_feed_numpy_and_keep_their_owner_alive(self):
        if not hasattr(np, "from_dlpack"):
            self.skipTest("NumPy before 1.22 has no from_dlpack")
        data = np.arange(12, dtype=np.float32).reshape(3, 4)
        producer = Producer(data.copy())
        address = producer.array.ctypes.data
        consumed = np.from_dlpack(producer)
        del producer
        gc.collect()
        np.testing.assert_array_equal(consumed, data)  # the capsule keeps the memory alive
        # zero-copy: the producer's memory (NumPy 1.x makes it read-only: DLPack 0.x has no flag)
        self.assertEqual(consumed.__array_interface__["data"][0], address)

    def test_bfloat16_through_ml_dtypes(self):
        if ml_dtypes is None:
            self.skipTest("ml_dtypes is not installed")
        x = (np.arange(12, dtype=np.float32).reshape(3, 4) / 8).astype(ml_dtypes.bfloat16)
        y = np.zeros_like(x)
        self.module.twice_bf16(x, y)
        np.testing.assert_array_equal(y.astype(np.float32), 2 * x.astype(np.float32))
        self.assertEqual(self.module.twice_bf16.args[0].dtype, np.dtype(ml_dtypes.bfloat16))

    def test_jax_arrays_are_inputs_and_read_outputs(self):
        if jax is None:
            self.skipTest("JAX is not installed")
        x, y, out = self.saxpy_inputs()
        self.saxpy(3.0, jnp.asarray(x), jnp.asarray(y), out)
        np.testing.assert_allclose(out, 3.0 * x + y, rtol=1e-6)
        exported = jax.dlpack.from_dlpack(Producer(out))  # JAX consumes the package's capsule
        np.testing.assert_allclose(np.asarray(exported), 3.0 * x + y, rtol=1e-6)
        if ml_dtypes is not None:
            xb = jnp.asarray(x[:12].reshape(3, 4), dtype=jnp.bfloat16)
            yb = np.zeros((3, 4), ml_dtypes.bfloat16)
            self.module.twice_bf16(xb, yb)
            np.testing.assert_array_equal(yb.astype(np.float32),
                                          2 * np.asarray(xb).astype(np.float32))

    def test_scalars_and_results(self):
        self.assertEqual(self.module.count(3, 0.5), 1.5)
        self.assertEqual(self.module.count(np.int32(4), np.float32(0.25)), 1.0)
        self.assertEqual(self.module.count(True, 2), 2.0)  # bool is an int, int converts

    def test_bool_arrays_serve_i1_only(self):
        m = np.array([True, False, True, True])
        y = np.zeros(4, np.float32)
        self.module.mask(m, y)
        np.testing.assert_array_equal(y, m.astype(np.float32))
        with self.assertRaises(tj.InvalidArgumentError):  # a bool array is not an i8 array
            self.module.bytes(m, np.zeros(4, np.int8))
        self.module.mask(Producer(m), y)  # through DLPack: the same answer
        np.testing.assert_array_equal(y, m.astype(np.float32))

    def test_capsules_are_consumed_once_and_released(self):
        x, y, out = self.saxpy_inputs()
        producer = Producer(x)
        is_valid = ctypes.pythonapi.PyCapsule_IsValid
        is_valid.restype, is_valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
        captured = []
        original = producer.__dlpack__

        def keep(**kwargs):
            capsule = original(**kwargs)
            captured.append(capsule)
            return capsule

        producer.__dlpack__ = keep
        before = sys.getrefcount(producer.array)
        self.saxpy(1.0, producer, y, out)
        self.assertTrue(is_valid(captured[0], b"used_dltensor_versioned"))  # renamed: consumed
        del captured[:]
        for _ in range(1000):  # every deleter ran once: the owner's count is back
            self.saxpy(1.0, producer, y, out)
        del captured[:]
        self.assertEqual(sys.getrefcount(producer.array), before)

    def test_the_fallback_trusts_the_interface_not_the_dtype_attribute(self):
        class Liar:
            def __init__(self):
                self.memory = np.zeros(4, np.float32)
                self.dtype = np.dtype(np.float64)  # says f64; the memory is f4
                self.__array_interface__ = self.memory.__array_interface__

        with self.assertRaises(tj.InvalidArgumentError) as raised:
            self.module.twice_bf16(Liar(), Liar())
        self.assertIn("dtype float32", str(raised.exception))

    def test_producer_errors_are_kept(self):
        class Broken:
            def __dlpack__(self, **kwargs):
                raise BufferError("cannot export this")

        with self.assertRaises(TypeError) as raised:
            self.saxpy(1.0, Broken(), Broken(), Broken())
        self.assertIsInstance(raised.exception.__cause__, BufferError)
        self.assertIn("cannot export this", str(raised.exception.__cause__))
        self.assertIsNotNone(raised.exception.__cause__.__traceback__)  # where it was raised

        class Raising:
            @property
            def __class__(self):
                raise KeyError("no class")

        with self.assertRaises(KeyError):
            self.saxpy(1.0, Raising(), Raising(), Raising())

    # Errors ------------------------------------------------------------------------------------

    def test_an_exception_class_per_code(self):
        self.assertTrue(issubclass(tj.InvalidArgumentError, tj.TesseraError))
        self.assertTrue(issubclass(tj.InvalidArgumentError, ValueError))
        self.assertTrue(issubclass(tj.NotFoundError, LookupError))
        self.assertEqual(errors.make_error(14, "x").__class__, tj.UnavailableError)
        self.assertEqual(errors.make_error(99, "x").__class__, tj.UnknownError)
        with self.assertRaises(tj.InvalidArgumentError) as raised:
            self.ctx.compile("func.func @f( {")
        self.assertEqual(raised.exception.code, "INVALID_ARGUMENT")
        self.assertIn("<source>:1:", raised.exception.message)  # located
        with self.assertRaises(tj.NotFoundError) as raised:
            self.module.function("nope")
        self.assertIn("saxpy", raised.exception.message)  # names the entries that exist
        with self.assertRaises(AttributeError):
            self.module.nope  # noqa: B018

    def test_hostile_calls(self):
        x, y, out = self.saxpy_inputs()
        with self.assertRaises(tj.InvalidArgumentError) as raised:
            self.saxpy(1.0, x, y)
        self.assertIn("takes 4 argument(s), found 3", str(raised.exception))
        with self.assertRaises(tj.InvalidArgumentError):
            self.saxpy(1.0, x, y, out[: out.size - 1])  # mismatched sizes
        with self.assertRaises(tj.InvalidArgumentError) as raised:
            self.saxpy(1.0, x[::2], y[::2], out[::2])  # strided: not dense
        self.assertIn("dense row-major", str(raised.exception))
        with self.assertRaises(tj.InvalidArgumentError):
            self.saxpy(1.0, x.astype(np.float64), y, out)  # dtype
        with self.assertRaises(TypeError) as raised:  # never read as little endian
            self.saxpy(1.0, x.astype(">f4"), y, out)
        self.assertIn("byte order", str(raised.exception))
        for odd in (x.astype(np.complex64), x.astype(object), np.zeros(257, "i4,f4")):
            with self.assertRaises((TypeError, tj.InvalidArgumentError)):
                self.saxpy(1.0, odd, y, out)
        with self.assertRaises(TypeError) as raised:
            self.saxpy(1.0, [1.0, 2.0], y, out)
        self.assertIn("argument #1", str(raised.exception))
        with self.assertRaises(OverflowError) as raised:
            self.module.count(1 << 80, 1.0)
        self.assertIn("argument #0", str(raised.exception))
        with self.assertRaises(OverflowError) as raised:
            self.module.count(1, 10**400)
        self.assertIn("argument #1", str(raised.exception))
        with self.assertRaises(OverflowError):
            self.module.count(np.uint64(2**64 - 1), 1.0)
        for not_a_number in ("2.5", b"2", np.complex128(1 + 2j), np.complex64(1), 1j):
            with self.assertRaises(TypeError):
                self.module.count(1, not_a_number)
        with self.assertRaises(ValueError):
            self.saxpy(1.0, x, y, out, stream=-1)
        with self.assertRaises(TypeError):
            self.ctx.compile(5)
        with self.assertRaises(ValueError):
            tj.Context(device=2**32 + 1)
        with self.assertRaises(ValueError):  # 2^64 elements: refused before anything allocates
            self.ctx.empty((2**32, 2**32), np.float32)
        with self.assertRaises(tj.InvalidArgumentError):
            self.saxpy(*([x] * 40))  # more than the inline argument slots
        empty = np.zeros(0, np.float32)
        self.saxpy(1.0, empty, empty, empty)  # zero-length is fine

    def test_failed_constructors_leave_nothing_behind(self):
        unraisable = []
        previous = sys.unraisablehook
        sys.unraisablehook = unraisable.append
        try:
            with self.assertRaises(tj.InvalidArgumentError):
                tj.Context(default_target="tpu")
            with self.assertRaises(tj.InvalidArgumentError):
                tj.Context(remote_cache="http://nope")
            if not tj.is_gpu_available():
                with self.assertRaises(tj.UnavailableError):
                    self.ctx.empty((4,), np.float32)
                with self.assertRaises(tj.UnavailableError):
                    tj.Stream(self.ctx)
                with self.assertRaises(tj.UnavailableError):
                    self.ctx.event()
            gc.collect()
        finally:
            sys.unraisablehook = previous
        self.assertEqual(unraisable, [])

    # Objects -----------------------------------------------------------------------------------

    def test_reprs_show_signatures(self):
        self.assertEqual(repr(self.saxpy),
                         "<tessera_jit.Function @saxpy(%alpha: f32, %x: memref<?xf32>, "
                         "%y: memref<?xf32>, %out: memref<?xf32> (written)) -> ()>")
        self.assertIn("@saxpy, @twice_bf16, @mask, @bytes, @count", repr(self.module))
        self.assertIn("host", repr(self.ctx))
        self.assertEqual(self.module.count.signature, "@count(%n: i64, %x: f64) -> (f64)")

    def test_context_managers_and_closed_objects(self):
        with tj.Context(default_target="host", cache_dir="") as ctx:
            with ctx.compile(SOURCE) as module:
                saxpy = module.saxpy
                x, y, out = self.saxpy_inputs()
                saxpy(1.0, x, y, out)
            self.assertIn("closed", repr(module))
            with self.assertRaises(RuntimeError):
                saxpy(1.0, x, y, out)
            survivor = ctx.compile(SOURCE).saxpy  # the function keeps its module alive
        self.assertIn("closed", repr(ctx))
        with self.assertRaises(RuntimeError):  # closing the context closed its modules
            survivor(1.0, x, y, out)
        with self.assertRaises(RuntimeError):
            ctx.compile(SOURCE)

    def test_a_function_alone_keeps_its_module(self):
        ctx = tj.Context(default_target="host", cache_dir="")
        saxpy = ctx.compile(SOURCE).saxpy
        del ctx
        gc.collect()
        x, y, out = self.saxpy_inputs()
        saxpy(2.0, x, y, out)
        np.testing.assert_array_equal(out, np.float32(2.0) * x + y)

    def test_closing_a_module_while_threads_call_it(self):
        module = self.ctx.compile(SOURCE.replace("@saxpy", "@saxpy2").replace(
            "@twice_bf16", "@t2").replace("@count", "@c2"))
        saxpy = module.saxpy2
        x, y, _ = self.saxpy_inputs(1 << 16)
        failures, closed = [], []

        def call():
            out = np.zeros_like(x)
            try:
                for _ in range(2000):
                    saxpy(1.0, x, y, out)
                    if not np.array_equal(out, x + y):
                        failures.append("wrong result")
                        return
            except RuntimeError as error:  # the module closed: the only acceptable failure
                closed.append(str(error))
            except Exception as error:  # noqa: BLE001
                failures.append(repr(error))

        threads = [threading.Thread(target=call) for _ in range(4)]
        for thread in threads:
            thread.start()
        module.close()
        for thread in threads:
            thread.join()
        self.assertEqual(failures, [])
        self.assertTrue(all("closed" in message for message in closed))

    def test_closing_while_other_threads_use_the_module_and_the_context(self):
        for _ in range(5):
            ctx = tj.Context(default_target="host", cache_dir="")
            module = ctx.compile(SOURCE)
            failures, stop = [], threading.Event()

            def use():
                while not stop.is_set():
                    try:
                        module.function("saxpy")
                        module.function("count")
                        module.llvm_ir  # noqa: B018
                        ctx.compile(SOURCE)
                    except RuntimeError as error:  # closed: the only acceptable failure
                        if "closed" not in str(error):
                            failures.append(repr(error))
                    except Exception as error:  # noqa: BLE001
                        failures.append(repr(error))

            threads = [threading.Thread(target=use) for _ in range(3)]
            for thread in threads:
                thread.start()
            module.close()
            ctx.close()
            stop.set()
            for thread in threads:
                thread.join()
            self.assertEqual(failures, [])

    def test_plans_budgets_and_batch_invariance(self):
        matmul = """
func.func @mm(%a: memref<32x32xf32>, %b: memref<32x32xf32>, %c: memref<32x32xf32>) {
  tile.matmul %a, %b -> %c : memref<32x32xf32>, memref<32x32xf32> -> memref<32x32xf32>
  return
}
"""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "plan.json")
            with tj.Context(default_target="host", cache_dir="", arbitration_budget_ms=40) as ctx:
                ctx.register_default_libraries()
                module = ctx.compile(matmul, batch_invariant=True)
                record = module.decisions()[0]
                self.assertTrue(record["point"]["batch_invariant"])
                self.assertEqual(record["budget_ms"], 40)
                plan = json.loads(module.plan())
                self.assertEqual(plan["format"], "tessera-jit-plan")
                self.assertEqual(plan["decisions"][0]["determinism"], "batch_invariant")
                ctx.write_plan(path)
            with tj.Context(default_target="host", cache_dir="", plan=path,
                            plan_strict=True) as ctx:
                ctx.register_default_libraries()
                pinned = ctx.compile(matmul, batch_invariant=True).decisions()[0]
                self.assertEqual(pinned["source"], "pinned")
                self.assertEqual(pinned["winner"], record["winner"])
                with self.assertRaises(errors.InvalidArgumentError) as caught:
                    ctx.compile(matmul)  # the level none: another point
                self.assertIn("strict replay", caught.exception.message)
            with self.assertRaises(errors.NotFoundError):
                tj.Context(default_target="host", cache_dir="", plan=os.path.join(tmp, "no"))
            with self.assertRaises(ValueError):
                self.ctx.compile(matmul, arbitration_budget_ms=-1)

    def test_background_decisions_swap_in_and_can_be_waited_for(self):
        matmul = """
func.func @mm(%a: memref<32x32xf32>, %b: memref<32x32xf32>, %c: memref<32x32xf32>) {
  tile.matmul %a, %b -> %c : memref<32x32xf32>, memref<32x32xf32> -> memref<32x32xf32>
  return
}
"""
        a = np.linspace(-1, 1, 32 * 32, dtype=np.float32).reshape(32, 32)
        b = np.cos(np.arange(32 * 32, dtype=np.float32)).reshape(32, 32)
        reference = a.astype(np.float64) @ b.astype(np.float64)
        with tj.Context(default_target="host", cache_dir="", arbitration_budget_ms=40) as ctx:
            ctx.register_default_libraries()
            module = ctx.compile(matmul, background=True)
            self.assertEqual(module.decisions()[0]["source"], "pending")
            state = module.decision_states()[0]
            self.assertIn(state["state"], ("pending", "decided"))
            self.assertEqual(state["function"], "mm")
            c = np.zeros((32, 32), np.float32)
            module.mm(a, b, c)  # the incumbent, or the measured code
            np.testing.assert_allclose(c, reference, atol=1e-4)
            self.assertEqual(module.wait_decisions(), 0)
            landed = module.decision_states()[0]
            self.assertEqual(landed["state"], "decided")
            self.assertEqual(landed["detail"], "measured in the background and swapped in")
            self.assertEqual(landed["serving"], landed["winner"])
            self.assertEqual(module.decisions()[0]["source"], "measured")
            c[:] = 0
            module.mm(a, b, c)
            np.testing.assert_allclose(c, reference, atol=1e-4)
            with self.assertRaises(ValueError):
                module.wait_decisions(-1)
            module.close()
            with self.assertRaises(RuntimeError):
                module.decision_states()

    def test_an_nvptx_module_compiles_to_ptx_only_on_request(self):
        with tj.Context(cache_dir="") as ctx:
            linked = ctx.compile(SOURCE, target="nvptx")
            self.assertEqual(linked.cubin[:4], b"\x7fELF")
            ptx_only = ctx.compile(SOURCE, target="nvptx", ptx_only=True)
            self.assertIn(".entry saxpy_map_0", ptx_only.ptx)
            self.assertEqual(ptx_only.ptx, linked.ptx)
            with self.assertRaises(tj.NotFoundError):
                ptx_only.cubin
            linked.close()
            ptx_only.close()

    def test_api_version_and_library(self):
        self.assertEqual(tj.api_version(), (0, 15))
        self.assertTrue(tj.library_path().endswith("libtessera_jit.so"))
        self.assertIn("sm_90", tj.supported_archs())

    def test_a_package_made_here_loads_in_another_process_without_compiling(self):
        with tj.Context(default_target="host", cache_dir="") as ctx:
            module = ctx.compile(SOURCE)
            package = module.serialize()
            self.assertEqual(module.serialize(), package)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "saxpy.tjp")
            with open(path, "wb") as f:
                f.write(package)
            child = textwrap.dedent(f"""
                import numpy as np, tessera_jit as tj
                data = open({path!r}, "rb").read()
                with tj.Context(default_target="host", cache_dir="") as ctx:  # no cache at all
                    module = ctx.load(data)
                    x = np.arange(5, dtype=np.float32); y = np.ones(5, np.float32)
                    out = np.empty_like(x)
                    module.saxpy(3.0, x, y, out)
                    assert np.array_equal(out, 3 * x + y), out
                    stats = ctx.cache_stats()
                    assert stats["compiles"] == 0, stats
                    assert module.serialize() == data  # the same module, the same bytes
                print("loaded")
                """)
            run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                                 timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn("loaded", run.stdout)
        with tj.Context(default_target="host", cache_dir="") as ctx:
            with self.assertRaises(tj.DataLossError):
                ctx.load(package[:-1])
            flipped = bytearray(package)
            flipped[len(flipped) // 2] ^= 1
            with self.assertRaises(tj.DataLossError):
                ctx.load(bytes(flipped))
            with self.assertRaises(tj.InvalidArgumentError):
                ctx.load(b"")
            with self.assertRaises(tj.InvalidArgumentError):
                ctx.load(b"\x7fELF" + bytes(100))
            with self.assertRaises(tj.FailedPreconditionError) as refused:
                ctx.load(package, target="nvptx", arch="sm_90")
            self.assertIn("no entry of the package fits nvptx sm_90", str(refused.exception))
            with self.assertRaises(tj.InvalidArgumentError):
                ctx.load(package, target="tpu")
            loaded = ctx.load(memoryview(package))  # any bytes-like object
            self.assertEqual(loaded.entries[0], "saxpy")

    def test_one_package_carries_host_code_for_several_cpus(self):
        x = np.arange(9, dtype=np.float32)
        y = np.ones(9, np.float32)
        with tj.Context(default_target="host", cache_dir="") as ctx:
            baseline = ctx.compile(SOURCE, host_cpu="x86-64")  # runs on every x86-64 CPU
            out = np.empty_like(x)
            baseline.saxpy(2.0, x, y, out)
            np.testing.assert_array_equal(out, 2 * x + y)
            # AMX is Intel's, MWAITX AMD's: no CPU runs code for both of these.
            foreign = []
            for cpu in ("graniterapids", "znver5"):
                module = ctx.compile(SOURCE, host_cpu=cpu)
                try:
                    module.saxpy(2.0, x, y, out)
                except tj.FailedPreconditionError as error:
                    self.assertIn("lacks its features", str(error))
                    foreign.append(module)
            self.assertTrue(foreign)
            package = tj.write_package([foreign[0], baseline, ctx.compile(SOURCE)])
            loaded = ctx.load(package)
            out[:] = 0
            loaded.saxpy(2.0, x, y, out)
            np.testing.assert_array_equal(out, 2 * x + y)
            with self.assertRaises(tj.FailedPreconditionError) as refused:
                ctx.load(tj.write_package(foreign[:1]))
            self.assertIn("which this CPU", str(refused.exception))
            with self.assertRaises(tj.InvalidArgumentError):
                tj.write_package([baseline, baseline])
            with self.assertRaises(ValueError):
                tj.write_package([])
            with self.assertRaises(tj.InvalidArgumentError):
                ctx.compile(SOURCE, host_cpu="pentium-9000")

    def test_build_info_says_where_each_cuda_component_was_found(self):
        info = tj.build_info()
        self.assertEqual(info["api"], "0.15")
        self.assertEqual(info["cuda_headers"], "13.0")
        self.assertTrue(info["host_cpu"])
        for name in ("nvrtc", "nvjitlink", "libdevice"):
            component = info["cuda"][name]
            self.assertTrue(component["steps"], name)  # every search says where it looked
            if component["found"]:
                self.assertTrue(os.path.isfile(component["path"]), component)
                self.assertIn(component["origin"], ("$TESSERA_JIT_CUDA_HOME", "NVIDIA wheel",
                                                    "$CUDA_HOME", "$CUDA_PATH", "toolkit",
                                                    "system loader path"))
        for name in ("nvrtc", "nvjitlink"):
            if info["cuda"][name]["found"]:
                self.assertRegex(info["cuda"][name]["version"], r"^13\.\d+$")
        self.assertIn("found", info["driver"])
        self.assertEqual(tj.build_info(), info)  # one search per process: the same answer


class GpuPackageTest(unittest.TestCase):
    """Device arrays, streams and events on a GPU (skipped without one)."""

    def setUp(self):
        if not tj.is_gpu_available():
            self.skipTest("no usable GPU")
        self.ctx = tj.Context(default_target="nvptx", cache_dir="")

    def tearDown(self):
        self.ctx.close()

    def test_device_arrays_on_a_stream_with_events(self):
        module = self.ctx.compile(SOURCE)
        x = np.linspace(-1, 1, 1 << 20, dtype=np.float32)
        y = np.full_like(x, 0.5)
        dx, dy, dout = self.ctx.to_device(x), self.ctx.to_device(y), self.ctx.empty(x.shape)
        self.assertEqual(dx.__dlpack_device__(), (2, self.ctx.device))
        with self.ctx.stream() as stream:
            start = stream.record_event()
            module.saxpy(2.0, dx, dy, dout, stream=stream)
            stop = stream.record_event()
            stop.synchronize()
            self.assertTrue(stream.query())
            self.assertGreaterEqual(start.elapsed_time(stop), 0.0)
        np.testing.assert_allclose(dout.numpy(), 2 * x + y, rtol=1e-6)
        if tuple(int(v) for v in np.__version__.split(".")[:2]) >= (2, 1):
            np.testing.assert_allclose(np.from_dlpack(dout), 2 * x + y, rtol=1e-6)  # a host copy
        capsule = dout.__dlpack__(max_version=(1, 0))
        dout.free()  # the capsule keeps the memory until it is released
        del capsule
        with self.assertRaises(RuntimeError):
            dout.numpy()

    def test_host_memory_is_refused_by_a_device_module(self):
        module = self.ctx.compile(SOURCE)
        x = np.zeros(8, np.float32)
        with self.assertRaises(tj.InvalidArgumentError):
            module.saxpy(1.0, x, x, x)


if __name__ == "__main__":
    unittest.main(verbosity=2)
