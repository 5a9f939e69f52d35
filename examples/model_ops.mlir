// The model ops one by one, in the forms docs/ir.md describes: broadcasting tile.map, batched
// tile.matmul, argmax/argmin, layer and RMS norm (with the fused residual add), attention with
// key lengths, and both RoPE layouts. tests/examples assembles each for every supported arch.
func.func @add_bias_rows(%x: memref<?x?xf16>, %bias: memref<?xf16>, %y: memref<?x?xf16>) {
  tile.map ins(%x, %bias : memref<?x?xf16>, memref<?xf16>) outs(%y : memref<?x?xf16>) {
  ^bb0(%a: f16, %b: f16):
    %0 = arith.addf %a, %b : f16
    tile.yield %0 : f16
  }
  return
}

func.func @scores(%q: memref<?x?x?x64xbf16>, %k: memref<?x1x?x64xbf16>, %s: memref<?x?x?x?xf32>) {
  tile.matmul %q, %k -> %s {transpose_b}
      : memref<?x?x?x64xbf16>, memref<?x1x?x64xbf16> -> memref<?x?x?x?xf32>
  return
}

func.func @top1(%logits: memref<?x?xf32>, %ids: memref<?xi32>, %worst: memref<?x1xi64>) {
  tile.reduce argmax %logits -> %ids axis = 1 : memref<?x?xf32> -> memref<?xi32>
  tile.reduce argmin %logits -> %worst axis = 1 keepdims : memref<?x?xf32> -> memref<?x1xi64>
  return
}

func.func @norms(%x: memref<?x768xbf16>, %r: memref<?x768xbf16>, %w: memref<768xbf16>,
                 %b: memref<768xbf16>, %y: memref<?x768xbf16>, %h: memref<?x768xbf16>,
                 %z: memref<?x768xf32>) {
  tile.norm rms %x residual(%r : memref<?x768xbf16>) -> %y residual_out(%h : memref<?x768xbf16>)
      weight(%w : memref<768xbf16>) eps(1.0e-6) : memref<?x768xbf16> -> memref<?x768xbf16>
  tile.norm layer %x -> %z weight(%w : memref<768xbf16>) bias(%b : memref<768xbf16>)
      : memref<?x768xbf16> -> memref<?x768xf32>
  return
}

func.func @padded_attention(%q: memref<?x8x?x128xf16>, %k: memref<?x2x?x128xf16>,
                            %v: memref<?x2x?x128xf16>, %lengths: memref<?xi64>,
                            %o: memref<?x8x?x128xf16>) {
  tile.attention %q, %k, %v -> %o key_lengths(%lengths : memref<?xi64>) scale(0.0883883461)
      : memref<?x8x?x128xf16>, memref<?x2x?x128xf16>, memref<?x2x?x128xf16> -> memref<?x8x?x128xf16>
  return
}

func.func @rotary(%x: memref<?x?x64xf32>, %cos: memref<?x32xf32>, %sin: memref<?x32xf32>,
                  %y: memref<?x?x64xf32>) {
  tile.rope interleaved %x, %cos, %sin -> %y
      : memref<?x?x64xf32>, memref<?x32xf32>, memref<?x32xf32> -> memref<?x?x64xf32>
  tile.rope half %y, %cos, %sin -> %y
      : memref<?x?x64xf32>, memref<?x32xf32>, memref<?x32xf32> -> memref<?x?x64xf32>
  return
}
