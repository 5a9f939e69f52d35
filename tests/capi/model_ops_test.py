"""The model ops on the host target against float64 NumPy references written here (not with
Tessera code): broadcasting tile.map, batched tile.matmul, tile.reduce argmax/argmin,
tile.norm, tile.attention and tile.rope — size-1, ragged, empty, long (>= 32k) and
large-magnitude inputs, contract errors, and bitwise run-to-run, thread-count and
batch-invariance checks."""
import unittest

import numpy as np

import tessera_jit as tj

SOURCE = """
func.func @bias_scale(%x: memref<?x?xf32>, %b: memref<?xf32>, %s: memref<?x1xf32>, %y: memref<?x?xf32>) {
  tile.map ins(%x, %b, %s : memref<?x?xf32>, memref<?xf32>, memref<?x1xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32):
    %0 = arith.addf %a, %c : f32
    %1 = arith.mulf %0, %d : f32
    tile.yield %1 : f32
  }
  return
}
func.func @outer_sum(%a: memref<?x?x?xf32>, %b: memref<?x?xf32>, %y: memref<?x?x?xf32>) {
  tile.map ins(%a, %b : memref<?x?x?xf32>, memref<?x?xf32>) outs(%y : memref<?x?x?xf32>) {
  ^bb0(%p: f32, %q: f32):
    %0 = arith.addf %p, %q : f32
    tile.yield %0 : f32
  }
  return
}
func.func @argmax_rows(%x: memref<?x?xf32>, %i: memref<?xi64>) {
  tile.reduce argmax %x -> %i axis = 1 : memref<?x?xf32> -> memref<?xi64>
  return
}
func.func @argmin_cols(%x: memref<?x?xf16>, %i: memref<1x?xi32>) {
  tile.reduce argmin %x -> %i axis = 0 keepdims : memref<?x?xf16> -> memref<1x?xi32>
  return
}
func.func @argmax_mid(%x: memref<?x?x?xf32>, %i: memref<?x?xi32>) {
  tile.reduce argmax %x -> %i axis = 1 : memref<?x?x?xf32> -> memref<?x?xi32>
  return
}
func.func @bmm(%a: memref<?x?x?x?xf32>, %b: memref<?x?x?xf32>, %c: memref<?x?x?x?xf32>) {
  tile.matmul %a, %b -> %c : memref<?x?x?x?xf32>, memref<?x?x?xf32> -> memref<?x?x?x?xf32>
  return
}
func.func @bmm_nt_bias(%a: memref<?x?x?xf32>, %b: memref<?x?x?xf32>, %bias: memref<?xf32>, %c: memref<?x?x?xf32>) {
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf32>) activation(relu) {transpose_b}
      : memref<?x?x?xf32>, memref<?x?x?xf32> -> memref<?x?x?xf32>
  return
}
func.func @bmm_shared_weight(%a: memref<?x?x?xf16>, %w: memref<?x?xf16>, %c: memref<?x?x?xf32>) {
  tile.matmul %a, %w -> %c : memref<?x?x?xf16>, memref<?x?xf16> -> memref<?x?x?xf32>
  return
}
func.func @rms(%x: memref<?x?xf32>, %w: memref<?xf32>, %y: memref<?x?xf32>) {
  tile.norm rms %x -> %y weight(%w : memref<?xf32>) eps(1.0e-6) : memref<?x?xf32> -> memref<?x?xf32>
  return
}
func.func @add_rms(%x: memref<?x?xf16>, %r: memref<?x?xf16>, %y: memref<?x?xf16>, %h: memref<?x?xf16>, %w: memref<?xf16>) {
  tile.norm rms %x residual(%r : memref<?x?xf16>) -> %y residual_out(%h : memref<?x?xf16>)
      weight(%w : memref<?xf16>) eps(1.0e-5) : memref<?x?xf16> -> memref<?x?xf16>
  return
}
func.func @layer(%x: memref<?x?x?xf32>, %w: memref<?xf32>, %b: memref<?xf32>, %y: memref<?x?x?xf32>) {
  tile.norm layer %x -> %y weight(%w : memref<?xf32>) bias(%b : memref<?xf32>) : memref<?x?x?xf32> -> memref<?x?x?xf32>
  return
}
func.func @attention(%q: memref<?x?x?x?xf32>, %k: memref<?x?x?x?xf32>, %v: memref<?x?x?x?xf32>, %o: memref<?x?x?x?xf32>) {
  tile.attention %q, %k, %v -> %o : memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32> -> memref<?x?x?x?xf32>
  return
}
func.func @causal(%q: memref<?x?x?x?xf32>, %k: memref<?x?x?x?xf32>, %v: memref<?x?x?x?xf32>, %o: memref<?x?x?x?xf32>, %len: memref<?xi32>) {
  tile.attention %q, %k, %v -> %o key_lengths(%len : memref<?xi32>) scale(0.3) causal
      : memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32> -> memref<?x?x?x?xf32>
  return
}
func.func @attention_half(%q: memref<?x?x?x?xf16>, %k: memref<?x?x?x?xf16>, %v: memref<?x?x?x?xf16>, %o: memref<?x?x?x?xf16>) {
  tile.attention %q, %k, %v -> %o causal : memref<?x?x?x?xf16>, memref<?x?x?x?xf16>, memref<?x?x?x?xf16> -> memref<?x?x?x?xf16>
  return
}
func.func @rope_half(%x: memref<?x?x?x?xf32>, %c: memref<?x?xf32>, %s: memref<?x?xf32>, %y: memref<?x?x?x?xf32>) {
  tile.rope half %x, %c, %s -> %y : memref<?x?x?x?xf32>, memref<?x?xf32>, memref<?x?xf32> -> memref<?x?x?x?xf32>
  return
}
func.func @rope_interleaved(%x: memref<?x?xf16>, %c: memref<?x?xf32>, %s: memref<?x?xf32>, %y: memref<?x?xf16>) {
  tile.rope interleaved %x, %c, %s -> %y : memref<?x?xf16>, memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf16>
  return
}
"""

RNG = np.random.default_rng(2026)


def normal(*shape, dtype=np.float32, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def f64(x):
    return np.asarray(x, dtype=np.float64)


def attention_reference(q, k, v, scale=None, causal=False, lengths=None):
    """Masked softmax attention in float64, one (batch, head, query) at a time."""
    batch, heads, queries, depth = q.shape
    kv_heads, keys = k.shape[1], k.shape[2]
    scale = 1.0 / np.sqrt(max(depth, 1)) if scale is None else scale
    out = np.zeros((batch, heads, queries, v.shape[3]))
    for b in range(batch):
        length = keys if lengths is None else min(max(int(lengths[b]), 0), keys)
        for h in range(heads):
            g = h // (heads // kv_heads)
            scores = f64(q[b, h]) @ f64(k[b, g]).T * scale
            for i in range(queries):
                visible = np.arange(keys) < length
                if causal:
                    visible &= np.arange(keys) <= i + length - queries
                if not visible.any():
                    continue
                s = scores[i, visible]
                p = np.exp(s - s.max())
                out[b, h, i] = (p / p.sum()) @ f64(v[b, g])[visible]
    return out


def rope_reference(x, cos, sin, interleaved):
    x = f64(x)
    cos, sin = f64(cos), f64(sin)
    if interleaved:
        x1, x2 = x[..., 0::2], x[..., 1::2]
    else:
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]
    y1, y2 = x1 * cos - x2 * sin, x2 * cos + x1 * sin
    y = np.empty_like(x)
    if interleaved:
        y[..., 0::2], y[..., 1::2] = y1, y2
    else:
        y[..., :half], y[..., half:] = y1, y2
    return y


class ModelOpsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctx = tj.Context(default_target="host")
        cls.module = cls.ctx.compile(SOURCE)

    def call(self, name, *args, module=None):
        (module or self.module).function(name)(*args)

    # --- tile.map broadcasting ---------------------------------------------------------------

    def test_map_broadcasts_by_numpy_rules(self):
        for rows, cols, s_rows in [(5, 7, 5), (1, 1, 1), (3, 40000, 1), (4, 1, 4)]:
            x, b, s = normal(rows, cols), normal(cols), normal(s_rows, 1)
            y = np.empty((rows, cols), np.float32)
            self.call("bias_scale", x, b, s, y)
            expected = (f64(x) + f64(b)) * f64(s)
            np.testing.assert_allclose(y, expected, rtol=2e-7, atol=1e-6)
        # A dynamic dimension of size 1 broadcasts at run time; rank-2 into rank-3.
        a, bb = normal(2, 1, 6), normal(5, 1)
        y = np.empty((2, 5, 6), np.float32)
        self.call("outer_sum", a, bb, y)
        np.testing.assert_array_equal(y, a + bb)
        empty = np.empty((0, 3), np.float32)
        self.call("bias_scale", empty, normal(3), normal(1, 1), empty)

    def test_map_refuses_shapes_that_do_not_broadcast(self):
        y = np.full((5, 7), 9, np.float32)
        with self.assertRaises(tj.TesseraError) as raised:
            self.call("bias_scale", normal(5, 7), normal(6), normal(5, 1), y)
        self.assertEqual(raised.exception.code, "INVALID_ARGUMENT")
        self.assertIn("dimension 0 of argument #1 'b' is 6 but dimension 1 of argument #3 'y' "
                      "is 7 (it must be 1 or that): tile.map at <source>:3:3 broadcasts its "
                      "inputs to the output's shape", raised.exception.message)
        with self.assertRaises(tj.TesseraError):
            self.call("outer_sum", normal(2, 3, 6), normal(5, 1), np.empty((2, 5, 6), np.float32))
        self.assertTrue((y == 9).all())

    # --- argmax / argmin ---------------------------------------------------------------------

    def test_arg_reductions_match_numpy(self):
        for rows, cols in [(1, 1), (7, 33), (3, 40000), (64, 5)]:
            x = normal(rows, cols, scale=1e30)
            x[0, cols // 2] = np.float32(3e38)  # a unique maximum, large magnitude
            out = np.empty(rows, np.int64)
            self.call("argmax_rows", x, out)
            np.testing.assert_array_equal(out, np.argmax(x, axis=1))
        x = np.array([[1, 3, 3, 2], [np.nan, 1, np.nan, 9], [-np.inf] * 4, [0.0, -0.0, 0.0, 0.0],
                      [5, 5, 5, np.nan]], np.float32)
        out = np.empty(5, np.int64)
        self.call("argmax_rows", x, out)
        np.testing.assert_array_equal(out, [1, 0, 0, 0, 3])  # ties: first; NaN: first NaN
        np.testing.assert_array_equal(out, np.argmax(x, axis=1))
        halves = normal(300, 9, dtype=np.float16)
        halves[17, 4] = np.float16(-60000)
        halves[:, 8] = 1  # an all-equal column: index 0
        mins = np.empty((1, 9), np.int32)
        self.call("argmin_cols", halves, mins)
        np.testing.assert_array_equal(mins[0], np.argmin(halves, axis=0))
        self.assertEqual(mins[0, 4], 17)
        self.assertEqual(mins[0, 8], 0)
        cube = normal(3, 50, 11)
        cube[1, 7, 2] = np.nan
        mid = np.empty((3, 11), np.int32)
        self.call("argmax_mid", cube, mid)
        np.testing.assert_array_equal(mid, np.argmax(cube, axis=1))

    def test_arg_reduction_of_an_empty_axis_is_minus_one(self):
        out = np.zeros(3, np.int64)
        self.call("argmax_rows", np.empty((3, 0), np.float32), out)
        np.testing.assert_array_equal(out, [-1, -1, -1])

    # --- batched matmul ----------------------------------------------------------------------

    def test_batched_matmul_broadcasts_batch_dimensions(self):
        cases = [((3, 1, 5, 4), (2, 4, 6)), ((1, 2, 7, 3), (2, 3, 9)), ((2, 3, 1, 8), (1, 8, 1)),
                 ((1, 1, 13, 64), (5, 64, 17))]
        for a_shape, b_shape in cases:
            a, b = normal(*a_shape), normal(*b_shape)
            expected = np.matmul(f64(a), f64(b))
            c = np.empty(expected.shape, np.float32)
            self.call("bmm", a, b, c)
            np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
        a, b, bias = normal(4, 9, 16), normal(4, 11, 16), normal(11)
        c = np.empty((4, 9, 11), np.float32)
        self.call("bmm_nt_bias", a, b, bias, c)
        expected = np.maximum(np.matmul(f64(a), np.swapaxes(f64(b), 1, 2)) + f64(bias), 0)
        np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
        a, w = normal(3, 40, 24, dtype=np.float16), normal(24, 70, dtype=np.float16)
        c = np.empty((3, 40, 70), np.float32)
        self.call("bmm_shared_weight", a, w, c)
        np.testing.assert_allclose(c, np.matmul(f64(a), f64(w)), rtol=1e-5, atol=1e-4)

    def test_batched_matmul_refuses_batches_that_do_not_broadcast(self):
        c = np.full((3, 2, 5, 6), 7, np.float32)
        with self.assertRaises(tj.TesseraError) as raised:
            self.call("bmm", normal(3, 2, 5, 4), normal(4, 4, 6), c)
        self.assertIn("(it must be 1 or that): tile.matmul at <source>:", raised.exception.message)
        self.assertIn("batch dimensions of A and B that broadcast to C's", raised.exception.message)
        self.assertTrue((c == 7).all())

    def test_batched_matmul_is_batch_invariant(self):
        a, b = normal(6, 1, 9, 32), normal(4, 32, 20)
        full = np.empty((6, 4, 9, 20), np.float32)
        self.call("bmm", a, b, full)
        one = np.empty((1, 4, 9, 20), np.float32)
        self.call("bmm", a[3:4].copy(), b, one)
        np.testing.assert_array_equal(one[0], full[3])

    # --- norm --------------------------------------------------------------------------------

    def test_rms_norm(self):
        for rows, cols, scale in [(1, 1, 1.0), (5, 33, 1.0), (2, 40000, 1.0), (3, 64, 1e15),
                                  (4, 17, 1e-20)]:
            x, w = normal(rows, cols, scale=scale), normal(cols)
            y = np.empty_like(x)
            self.call("rms", x, w, y)
            xs = f64(x)
            expected = xs / np.sqrt((xs * xs).mean(axis=1, keepdims=True) + 1e-6) * f64(w)
            np.testing.assert_allclose(y, expected, rtol=5e-6, atol=1e-6)

    def test_fused_add_rms_norm_in_half_precision(self):
        x, r, w = normal(6, 96, dtype=np.float16), normal(6, 96, dtype=np.float16), normal(96, dtype=np.float16)
        y, h = np.empty_like(x), np.empty_like(x)
        self.call("add_rms", x, r, y, h, w)
        s = f64(x) + f64(r)
        np.testing.assert_array_equal(h, s.astype(np.float16))
        expected = s / np.sqrt((s * s).mean(axis=1, keepdims=True) + 1e-5) * f64(w)
        np.testing.assert_allclose(f64(y), expected, rtol=2e-3, atol=2e-3)

    def test_layer_norm(self):
        for shape, offset in [((2, 3, 50), 0.0), ((1, 1, 1), 0.0), ((2, 2, 32768), 0.0),
                              ((3, 4, 19), 1e4)]:
            x = normal(*shape) + np.float32(offset)
            w, b = normal(shape[-1]), normal(shape[-1])
            y = np.empty_like(x)
            self.call("layer", x, w, b, y)
            xs = f64(x)
            mean = xs.mean(axis=-1, keepdims=True)
            var = ((xs - mean) ** 2).mean(axis=-1, keepdims=True)
            expected = (xs - mean) / np.sqrt(var + 1e-5) * f64(w) + f64(b)
            # A size-1 row normalizes to 0 (its variance is 0): y = b. With a mean of 1e4 the
            # f32 mean itself is off by a few ulp of 1e4 (~1e-3): statistics are f32.
            np.testing.assert_allclose(y, expected, rtol=1e-4, atol=5e-3 if offset else 2e-5)
        empty = np.empty((2, 0, 7), np.float32)
        self.call("layer", empty, normal(7), normal(7), empty)

    def test_norm_refuses_a_weight_of_the_wrong_length(self):
        with self.assertRaises(tj.TesseraError) as raised:
            self.call("rms", normal(3, 8), normal(9), np.empty((3, 8), np.float32))
        self.assertIn("tile.norm at <source>:", raised.exception.message)
        self.assertIn("needs weight and bias as long as the last axis", raised.exception.message)

    def test_norm_is_batch_invariant(self):
        x, w = normal(9, 300), normal(300)
        y = np.empty_like(x)
        self.call("rms", x, w, y)
        y1 = np.empty((1, 300), np.float32)
        self.call("rms", x[5:6].copy(), w, y1)
        np.testing.assert_array_equal(y1[0], y[5])

    # --- attention ---------------------------------------------------------------------------

    def test_attention_matches_the_float64_reference(self):
        for b, h, hkv, sq, sk, d, dv in [(2, 4, 2, 5, 9, 8, 3), (1, 1, 1, 1, 1, 1, 1),
                                         (1, 8, 1, 7, 130, 64, 64), (3, 2, 2, 4, 4, 16, 5)]:
            q, k, v = normal(b, h, sq, d), normal(b, hkv, sk, d), normal(b, hkv, sk, dv)
            o = np.empty((b, h, sq, dv), np.float32)
            self.call("attention", q, k, v, o)
            np.testing.assert_allclose(o, attention_reference(q, k, v), rtol=2e-5, atol=2e-6)

    def test_causal_attention_with_key_lengths(self):
        # Sq < Sk, Sq > Sk (the first queries see nothing: zeros), lengths 0 and past Sk.
        for sq, sk, lengths in [(3, 10, [10, 6, 0, 99]), (12, 5, [5, 5, 3, -4]), (6, 6, [6, 1, 2, 6])]:
            q, k, v = normal(4, 2, sq, 8), normal(4, 1, sk, 8), normal(4, 1, sk, 4)
            o = np.full((4, 2, sq, 4), 7, np.float32)
            lens = np.array(lengths, np.int32)
            self.call("causal", q, k, v, o, lens)
            expected = attention_reference(q, k, v, scale=0.3, causal=True, lengths=lens)
            np.testing.assert_allclose(o, expected, rtol=2e-5, atol=2e-6)

    def test_attention_over_long_rows_and_large_scores(self):
        q, k, v = normal(1, 1, 2, 16, scale=8.0), normal(1, 1, 40000, 16, scale=8.0), normal(1, 1, 40000, 8)
        o = np.empty((1, 1, 2, 8), np.float32)
        self.call("attention", q, k, v, o)
        np.testing.assert_allclose(o, attention_reference(q, k, v), rtol=1e-4, atol=1e-5)

    def test_half_precision_causal_attention(self):
        q, k, v = (normal(2, 4, 33, 32, dtype=np.float16), normal(2, 4, 33, 32, dtype=np.float16),
                   normal(2, 4, 33, 32, dtype=np.float16))
        o = np.empty_like(q)
        self.call("attention_half", q, k, v, o)
        np.testing.assert_allclose(f64(o), attention_reference(q, k, v, causal=True),
                                   rtol=2e-3, atol=2e-3)

    def test_attention_refuses_ungrouped_heads(self):
        o = np.empty((1, 3, 4, 8), np.float32)
        with self.assertRaises(tj.TesseraError) as raised:
            self.call("attention", normal(1, 3, 4, 8), normal(1, 2, 4, 8), normal(1, 2, 4, 8), o)
        self.assertIn("dimension 1 of argument #0 'q' is 3 but it must be a multiple of "
                      "dimension 1 of argument #1 'k' (2): tile.attention at <source>:",
                      raised.exception.message)

    def test_attention_is_bitwise_reproducible_and_batch_invariant(self):
        q, k, v = normal(5, 4, 17, 32), normal(5, 2, 50, 32), normal(5, 2, 50, 16)
        first, second = np.empty((5, 4, 17, 16), np.float32), np.empty((5, 4, 17, 16), np.float32)
        self.call("attention", q, k, v, first)
        self.call("attention", q, k, v, second)
        np.testing.assert_array_equal(first, second)
        one = np.empty((1, 4, 17, 16), np.float32)
        self.call("attention", q[2:3].copy(), k[2:3].copy(), v[2:3].copy(), one)
        np.testing.assert_array_equal(one[0], first[2])
        for threads in (1, 3):
            with self.subTest(threads=threads):
                module = tj.Context(default_target="host", num_threads=threads).compile(SOURCE)
                again = np.empty_like(first)
                self.call("attention", q, k, v, again, module=module)
                np.testing.assert_array_equal(again, first)

    # --- rope --------------------------------------------------------------------------------

    def test_rope_half_and_interleaved(self):
        x = normal(2, 3, 11, 64)
        angles = np.arange(11)[:, None] * (10000.0 ** (-np.arange(32) / 32.0))[None, :]
        cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
        y = np.empty_like(x)
        self.call("rope_half", x, cos, sin, y)
        np.testing.assert_allclose(y, rope_reference(x, cos, sin, False), rtol=1e-6, atol=1e-6)
        xh = normal(11, 64, dtype=np.float16)
        yh = np.empty_like(xh)
        self.call("rope_interleaved", xh, cos, sin, yh)
        np.testing.assert_allclose(f64(yh), rope_reference(xh, cos, sin, True), rtol=1e-3, atol=2e-3)
        # In place, as kernels apply it to Q and K.
        inplace = x.copy()
        self.call("rope_half", inplace, cos, sin, inplace)
        np.testing.assert_array_equal(inplace, y)

    def test_rope_refuses_tables_of_the_wrong_width(self):
        with self.assertRaises(tj.TesseraError) as raised:
            self.call("rope_half", normal(1, 1, 4, 10), normal(4, 4), normal(4, 4),
                      np.empty((1, 1, 4, 10), np.float32))
        self.assertIn("dimension 3 of argument #0 'x' is 10 but it must be twice dimension 1 of "
                      "argument #1 'c' (4): tile.rope at <source>:", raised.exception.message)


if __name__ == "__main__":
    unittest.main(verbosity=2)
