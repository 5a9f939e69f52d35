// One transformer decoder layer (Llama-style), f32, dynamic batch B and sequence length S:
//   h  = RMSNorm(x)                                 tile.norm rms
//   q, k, v = h Wq, h Wk, h Wv   (per head)          batched tile.matmul (H = 4, Hkv = 2, D = 16)
//   q, k = RoPE(q), RoPE(k)                          tile.rope half (in place)
//   a  = causal grouped-query attention(q, k, v)     tile.attention causal
//   o  = sum over heads of a[h] Wo[h]                batched tile.matmul + tile.reduce sum
//   r  = x + o;  g = RMSNorm(r)                      tile.norm rms residual(...) residual_out(...)
//   m  = (silu(g Wg) * (g Wu)) Wd                    tile.matmul, tile.map, tile.matmul
//   out = r + m                                      tile.map
// The residual stream is [B, 1, S, 64]: its size-1 axis broadcasts against the heads of the
// per-head weights [H, 64, 16] in the projections. cos and sin are the RoPE tables [S, 8].
// The intermediates are workspace arguments the caller allocates (%h ... %up): host code of an
// nvptx compile cannot allocate device memory, and the same entry compiles for both targets.
// %out first receives r, then r + m. Checked against a float64 NumPy implementation by
// examples/decoder_block_check.py.
func.func @decoder_block(%x: memref<?x1x?x64xf32>, %cos: memref<?x8xf32>, %sin: memref<?x8xf32>,
                         %norm1: memref<64xf32>, %wq: memref<4x64x16xf32>,
                         %wk: memref<2x64x16xf32>, %wv: memref<2x64x16xf32>,
                         %wo: memref<4x16x64xf32>, %norm2: memref<64xf32>,
                         %wg: memref<64x128xf32>, %wu: memref<64x128xf32>,
                         %wd: memref<128x64xf32>, %out: memref<?x1x?x64xf32>,
                         %h: memref<?x1x?x64xf32>, %q: memref<?x4x?x16xf32>,
                         %k: memref<?x2x?x16xf32>, %v: memref<?x2x?x16xf32>,
                         %a: memref<?x4x?x16xf32>, %heads: memref<?x4x?x64xf32>,
                         %g: memref<?x1x?x64xf32>, %gate: memref<?x1x?x128xf32>,
                         %up: memref<?x1x?x128xf32>)
    attributes {tessera.deterministic} {
  tile.norm rms %x -> %h weight(%norm1 : memref<64xf32>) eps(1.0e-5)
      : memref<?x1x?x64xf32> -> memref<?x1x?x64xf32>
  tile.matmul %h, %wq -> %q : memref<?x1x?x64xf32>, memref<4x64x16xf32> -> memref<?x4x?x16xf32>
  tile.matmul %h, %wk -> %k : memref<?x1x?x64xf32>, memref<2x64x16xf32> -> memref<?x2x?x16xf32>
  tile.matmul %h, %wv -> %v : memref<?x1x?x64xf32>, memref<2x64x16xf32> -> memref<?x2x?x16xf32>
  tile.rope half %q, %cos, %sin -> %q
      : memref<?x4x?x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x4x?x16xf32>
  tile.rope half %k, %cos, %sin -> %k
      : memref<?x2x?x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x2x?x16xf32>

  tile.attention %q, %k, %v -> %a causal
      : memref<?x4x?x16xf32>, memref<?x2x?x16xf32>, memref<?x2x?x16xf32> -> memref<?x4x?x16xf32>
  tile.matmul %a, %wo -> %heads : memref<?x4x?x16xf32>, memref<4x16x64xf32> -> memref<?x4x?x64xf32>
  tile.reduce sum %heads -> %h axis = 1 keepdims : memref<?x4x?x64xf32> -> memref<?x1x?x64xf32>

  tile.norm rms %h residual(%x : memref<?x1x?x64xf32>) -> %g
      residual_out(%out : memref<?x1x?x64xf32>) weight(%norm2 : memref<64xf32>) eps(1.0e-5)
      : memref<?x1x?x64xf32> -> memref<?x1x?x64xf32>
  tile.matmul %g, %wg -> %gate : memref<?x1x?x64xf32>, memref<64x128xf32> -> memref<?x1x?x128xf32>
  tile.matmul %g, %wu -> %up : memref<?x1x?x64xf32>, memref<64x128xf32> -> memref<?x1x?x128xf32>
  tile.map ins(%gate, %up : memref<?x1x?x128xf32>, memref<?x1x?x128xf32>)
      outs(%gate : memref<?x1x?x128xf32>) {
  ^bb0(%gi: f32, %ui: f32):
    // silu(g) * u = g / (1 + exp(-g)) * u
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %gi : f32
    %e = math.exp %neg : f32
    %den = arith.addf %one, %e : f32
    %silu = arith.divf %gi, %den : f32
    %prod = arith.mulf %silu, %ui : f32
    tile.yield %prod : f32
  }
  tile.matmul %gate, %wd -> %h : memref<?x1x?x128xf32>, memref<128x64xf32> -> memref<?x1x?x64xf32>
  tile.map ins(%out, %h : memref<?x1x?x64xf32>, memref<?x1x?x64xf32>) outs(%out : memref<?x1x?x64xf32>) {
  ^bb0(%ri: f32, %mi: f32):
    %sum = arith.addf %ri, %mi : f32
    tile.yield %sum : f32
  }
  return
}
