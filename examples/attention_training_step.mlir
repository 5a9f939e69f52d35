// One training step of a decoder layer's attention (f32, dynamic batch B and sequence length S),
// projections included, with the loss L = ½‖O − T‖²:
//   q, k, v = x Wq, x Wk, x Wv   (per head)          batched tile.matmul (H = 4, Hkv = 2, D = 16)
//   o, lse  = causal grouped-query attention(q, k, v), window of 8 keys, soft cap 20
//   dO      = o − t                                  tile.map
//   dq, dk, dv = attention backward(dO, q, k, v, o, lse)  tile.attention_backward
//   dWq = Σ_b xᵀ dq (and dWk, dWv)                   batched tile.matmul {transpose_a}, tile.reduce
//   W  -= lr · dW                                    tile.map (lr = 0.1)
// Deterministic end to end (a `tessera.deterministic` function: the backward has no atomics).
// The intermediates are workspace arguments (the same entry compiles for host and GPU).
// examples/attention_training_step_check.py checks the gradients and the updated weights
// against a float64 NumPy step written there (and that against finite differences of the loss).
func.func @attention_training_step(
    %x: memref<?x1x?x64xf32>, %t: memref<?x4x?x16xf32>,
    %wq: memref<4x64x16xf32>, %wk: memref<2x64x16xf32>, %wv: memref<2x64x16xf32>,
    %dwq: memref<4x64x16xf32>, %dwk: memref<2x64x16xf32>, %dwv: memref<2x64x16xf32>,
    %q: memref<?x4x?x16xf32>, %k: memref<?x2x?x16xf32>, %v: memref<?x2x?x16xf32>,
    %o: memref<?x4x?x16xf32>, %lse: memref<?x4x?xf32>, %do: memref<?x4x?x16xf32>,
    %dq: memref<?x4x?x16xf32>, %dk: memref<?x2x?x16xf32>, %dv: memref<?x2x?x16xf32>,
    %gq: memref<?x4x64x16xf32>, %gkv: memref<?x2x64x16xf32>)
    attributes {tessera.deterministic} {
  tile.matmul %x, %wq -> %q : memref<?x1x?x64xf32>, memref<4x64x16xf32> -> memref<?x4x?x16xf32>
  tile.matmul %x, %wk -> %k : memref<?x1x?x64xf32>, memref<2x64x16xf32> -> memref<?x2x?x16xf32>
  tile.matmul %x, %wv -> %v : memref<?x1x?x64xf32>, memref<2x64x16xf32> -> memref<?x2x?x16xf32>
  tile.attention %q, %k, %v -> %o lse(%lse : memref<?x4x?xf32>) causal window(7, 0) softcap(20.0)
      : memref<?x4x?x16xf32>, memref<?x2x?x16xf32>, memref<?x2x?x16xf32> -> memref<?x4x?x16xf32>
  tile.map ins(%o, %t : memref<?x4x?x16xf32>, memref<?x4x?x16xf32>)
      outs(%do : memref<?x4x?x16xf32>) {
  ^bb0(%oi: f32, %ti: f32):
    %diff = arith.subf %oi, %ti : f32
    tile.yield %diff : f32
  }
  tile.attention_backward %do, %q, %k, %v, %o, %lse -> %dq, %dk, %dv causal window(7, 0)
      softcap(20.0)
      : memref<?x4x?x16xf32>, memref<?x4x?x16xf32>, memref<?x2x?x16xf32>,
        memref<?x2x?x16xf32>, memref<?x4x?x16xf32>, memref<?x4x?xf32>
        -> memref<?x4x?x16xf32>, memref<?x2x?x16xf32>, memref<?x2x?x16xf32>
  // dW[h] = Σ_b x[b]ᵀ d[b, h]: per batch [64, S] · [S, 16], then the sum over the batch.
  tile.matmul %x, %dq -> %gq {transpose_a}
      : memref<?x1x?x64xf32>, memref<?x4x?x16xf32> -> memref<?x4x64x16xf32>
  tile.reduce sum %gq -> %dwq axis = 0 : memref<?x4x64x16xf32> -> memref<4x64x16xf32>
  tile.matmul %x, %dk -> %gkv {transpose_a}
      : memref<?x1x?x64xf32>, memref<?x2x?x16xf32> -> memref<?x2x64x16xf32>
  tile.reduce sum %gkv -> %dwk axis = 0 : memref<?x2x64x16xf32> -> memref<2x64x16xf32>
  tile.matmul %x, %dv -> %gkv {transpose_a}
      : memref<?x1x?x64xf32>, memref<?x2x?x16xf32> -> memref<?x2x64x16xf32>
  tile.reduce sum %gkv -> %dwv axis = 0 : memref<?x2x64x16xf32> -> memref<2x64x16xf32>
  // SGD: W -= 0.1 · dW.
  tile.map ins(%wq, %dwq : memref<4x64x16xf32>, memref<4x64x16xf32>) outs(%wq : memref<4x64x16xf32>) {
  ^bb0(%w: f32, %g: f32):
    %lr = arith.constant 0.1 : f32
    %step = arith.mulf %lr, %g : f32
    %next = arith.subf %w, %step : f32
    tile.yield %next : f32
  }
  tile.map ins(%wk, %dwk : memref<2x64x16xf32>, memref<2x64x16xf32>) outs(%wk : memref<2x64x16xf32>) {
  ^bb0(%w: f32, %g: f32):
    %lr = arith.constant 0.1 : f32
    %step = arith.mulf %lr, %g : f32
    %next = arith.subf %w, %step : f32
    tile.yield %next : f32
  }
  tile.map ins(%wv, %dwv : memref<2x64x16xf32>, memref<2x64x16xf32>) outs(%wv : memref<2x64x16xf32>) {
  ^bb0(%w: f32, %g: f32):
    %lr = arith.constant 0.1 : f32
    %step = arith.mulf %lr, %g : f32
    %next = arith.subf %w, %step : f32
    tile.yield %next : f32
  }
  return
}
