// RUN: tessera-opt %s | tessera-opt | FileCheck %s
// RUN: tessera-opt %s --mlir-print-op-generic | tessera-opt | FileCheck %s

// CHECK-LABEL: func.func @map_binary
// CHECK: tile.map ins(%{{.*}}, %{{.*}} : memref<?xf32>, memref<?xf32>) outs(%{{.*}} : memref<?xf32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.addf
// CHECK-NEXT: tile.yield %{{.*}} : f32
func.func @map_binary(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>) {
  tile.map ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%c : memref<?xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    tile.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @map_scalar_broadcast
// CHECK: tile.map ins(%{{.*}}, %{{.*}} : memref<4x?xf16>, f16) outs(%{{.*}} : memref<4x?xf16>)
func.func @map_scalar_broadcast(%x: memref<4x?xf16>, %alpha: f16, %y: memref<4x?xf16>) {
  tile.map ins(%x, %alpha : memref<4x?xf16>, f16) outs(%y : memref<4x?xf16>) {
  ^bb0(%v: f16, %s: f16):
    %p = arith.mulf %v, %s : f16
    tile.yield %p : f16
  }
  return
}

// A compare-and-select family member with two outputs of different element types.
// CHECK-LABEL: func.func @map_where_two_outputs
// CHECK: tile.map ins(%{{.*}}, %{{.*}} : memref<8x8xf32>, memref<8x8xf32>) outs(%{{.*}}, %{{.*}} : memref<8x8xf32>, memref<8x8xi1>)
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// CHECK: tile.yield %{{.*}}, %{{.*}} : f32, i1
func.func @map_where_two_outputs(%a: memref<8x8xf32>, %b: memref<8x8xf32>,
                                 %max: memref<8x8xf32>, %mask: memref<8x8xi1>) {
  tile.map ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%max, %mask : memref<8x8xf32>, memref<8x8xi1>) {
  ^bb0(%x: f32, %y: f32):
    %gt = arith.cmpf ogt, %x, %y : f32
    %m = arith.select %gt, %x, %y : f32
    tile.yield %m, %gt : f32, i1
  }
  return
}

// A fill: no inputs.
// CHECK-LABEL: func.func @map_fill
// CHECK: tile.map outs(%{{.*}} : memref<16xf32>) {
// CHECK: arith.constant 1.000000e+00 : f32
func.func @map_fill(%y: memref<16xf32>) {
  tile.map outs(%y : memref<16xf32>) {
    %one = arith.constant 1.0 : f32
    tile.yield %one : f32
  }
  return
}

// CHECK-LABEL: func.func @map_unary_math
// CHECK: math.exp
// CHECK: math.tanh
func.func @map_unary_math(%x: memref<2x3x5xbf16>, %y: memref<2x3x5xbf16>) {
  tile.map ins(%x : memref<2x3x5xbf16>) outs(%y : memref<2x3x5xbf16>) {
  ^bb0(%v: bf16):
    %e = math.exp %v : bf16
    %t = math.tanh %e : bf16
    tile.yield %t : bf16
  }
  return
}

// CHECK-LABEL: func.func @reduce_kinds
// CHECK: tile.reduce sum %{{.*}} -> %{{.*}} axis = 1 : memref<?x128xf32> -> memref<?xf32>
// CHECK: tile.reduce mean %{{.*}} -> %{{.*}} axis = 0 keepdims : memref<?x128xf32> -> memref<1x128xf32>
// CHECK: tile.reduce max %{{.*}} -> %{{.*}} axis = 1 : memref<?x128xf32> -> memref<?xf32>
// CHECK: tile.reduce min %{{.*}} -> %{{.*}} axis = 1 : memref<?x128xf32> -> memref<?xf32>
// CHECK: tile.reduce prod %{{.*}} -> %{{.*}} axis = 1 keepdims : memref<?x128xf32> -> memref<?x1xf32>
func.func @reduce_kinds(%x: memref<?x128xf32>, %rows: memref<?xf32>, %cols: memref<1x128xf32>,
                        %kept: memref<?x1xf32>) {
  tile.reduce sum %x -> %rows axis = 1 : memref<?x128xf32> -> memref<?xf32>
  tile.reduce mean %x -> %cols axis = 0 keepdims : memref<?x128xf32> -> memref<1x128xf32>
  tile.reduce max %x -> %rows axis = 1 : memref<?x128xf32> -> memref<?xf32>
  tile.reduce min %x -> %rows axis = 1 : memref<?x128xf32> -> memref<?xf32>
  tile.reduce prod %x -> %kept axis = 1 keepdims : memref<?x128xf32> -> memref<?x1xf32>
  return
}

// A full reduction of a vector yields a rank-0 memref; f16 input may accumulate into f32 output.
// CHECK-LABEL: func.func @reduce_to_scalar
// CHECK: tile.reduce sum %{{.*}} -> %{{.*}} axis = 0 : memref<?xf16> -> memref<f32>
func.func @reduce_to_scalar(%x: memref<?xf16>, %total: memref<f32>) {
  tile.reduce sum %x -> %total axis = 0 : memref<?xf16> -> memref<f32>
  return
}

// CHECK-LABEL: func.func @matmul_plain
// CHECK: tile.matmul %{{.*}}, %{{.*}} -> %{{.*}} : memref<64x32xf32>, memref<32x16xf32> -> memref<64x16xf32>
func.func @matmul_plain(%a: memref<64x32xf32>, %b: memref<32x16xf32>, %c: memref<64x16xf32>) {
  tile.matmul %a, %b -> %c : memref<64x32xf32>, memref<32x16xf32> -> memref<64x16xf32>
  return
}

// CHECK-LABEL: func.func @matmul_epilogue
// CHECK: tile.matmul %{{.*}}, %{{.*}} -> %{{.*}} bias(%{{.*}} : memref<256xf32>) activation(gelu) {transpose_b} : memref<?x784xf32>, memref<256x784xf32> -> memref<?x256xf32>
func.func @matmul_epilogue(%x: memref<?x784xf32>, %w: memref<256x784xf32>, %b: memref<256xf32>,
                           %h: memref<?x256xf32>) {
  tile.matmul %x, %w -> %h bias(%b : memref<256xf32>) activation(gelu) {transpose_b}
      : memref<?x784xf32>, memref<256x784xf32> -> memref<?x256xf32>
  return
}

// CHECK-LABEL: func.func @matmul_policies
// CHECK: tile.matmul %{{.*}}, %{{.*}} -> %{{.*}} activation(silu) policy(f16) {transpose_a} : memref<32x64xf16>, memref<32x16xf16> -> memref<64x16xf16>
// CHECK: tile.matmul %{{.*}}, %{{.*}} -> %{{.*}} activation(relu) policy(tf32) : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
// CHECK: tile.matmul %{{.*}}, %{{.*}} -> %{{.*}} : memref<8x8xbf16>, memref<8x8xbf16> -> memref<8x8xf32>
// CHECK: tile.matmul %{{.*}}, %{{.*}} -> %{{.*}} policy(fma) : memref<8x8xbf16>, memref<8x8xbf16> -> memref<8x8xf32>
func.func @matmul_policies(%a16: memref<32x64xf16>, %b16: memref<32x16xf16>, %c16: memref<64x16xf16>,
                           %a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>,
                           %abf: memref<8x8xbf16>, %bbf: memref<8x8xbf16>, %cbf: memref<8x8xf32>) {
  tile.matmul %a16, %b16 -> %c16 activation(silu) policy(f16) {transpose_a}
      : memref<32x64xf16>, memref<32x16xf16> -> memref<64x16xf16>
  tile.matmul %a, %b -> %c activation(relu) policy(tf32)
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  tile.matmul %abf, %bbf -> %cbf : memref<8x8xbf16>, memref<8x8xbf16> -> memref<8x8xf32>
  tile.matmul %abf, %bbf -> %cbf policy(fma) : memref<8x8xbf16>, memref<8x8xbf16> -> memref<8x8xf32>
  return
}

// CHECK-LABEL: func.func @softmax
// CHECK: tile.softmax %{{.*}} -> %{{.*}} : memref<?x10xf32> -> memref<?x10xf32>
// CHECK: tile.softmax %{{.*}} -> %{{.*}} : memref<2x3x4xf16> -> memref<2x3x4xf16>
func.func @softmax(%x: memref<?x10xf32>, %y: memref<?x10xf32>, %p: memref<2x3x4xf16>,
                   %q: memref<2x3x4xf16>) {
  tile.softmax %x -> %y : memref<?x10xf32> -> memref<?x10xf32>
  tile.softmax %p -> %q : memref<2x3x4xf16> -> memref<2x3x4xf16>
  return
}

// CHECK-LABEL: func.func @broadcast_map
// CHECK: tile.map ins(%{{.*}}, %{{.*}} : memref<?x?xf32>, memref<1x?xf32>) outs(%{{.*}} : memref<?x?xf32>)
func.func @broadcast_map(%x: memref<?x?xf32>, %row: memref<1x?xf32>, %y: memref<?x?xf32>) {
  tile.map ins(%x, %row : memref<?x?xf32>, memref<1x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %0 = arith.addf %a, %b : f32
    tile.yield %0 : f32
  }
  return
}

// CHECK-LABEL: func.func @arg_reductions
// CHECK: tile.reduce argmax %{{.*}} -> %{{.*}} axis = 1 : memref<?x?xf16> -> memref<?xi64>
// CHECK: tile.reduce argmin %{{.*}} -> %{{.*}} axis = 0 keepdims : memref<?x?xf16> -> memref<1x?xi32>
func.func @arg_reductions(%x: memref<?x?xf16>, %i: memref<?xi64>, %j: memref<1x?xi32>) {
  tile.reduce argmax %x -> %i axis = 1 : memref<?x?xf16> -> memref<?xi64>
  tile.reduce argmin %x -> %j axis = 0 keepdims : memref<?x?xf16> -> memref<1x?xi32>
  return
}

// CHECK-LABEL: func.func @batched_matmul
// CHECK: tile.matmul %{{.*}}, %{{.*}} -> %{{.*}} bias(%{{.*}} : memref<?xf32>) activation(gelu) {transpose_b} : memref<?x1x?x?xf32>, memref<?x?x?xf32> -> memref<?x?x?x?xf32>
func.func @batched_matmul(%a: memref<?x1x?x?xf32>, %b: memref<?x?x?xf32>, %bias: memref<?xf32>,
                          %c: memref<?x?x?x?xf32>) {
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf32>) activation(gelu) {transpose_b}
      : memref<?x1x?x?xf32>, memref<?x?x?xf32> -> memref<?x?x?x?xf32>
  return
}

// CHECK-LABEL: func.func @norms
// CHECK: tile.norm rms %{{.*}} residual(%{{.*}} : memref<?x64xbf16>) -> %{{.*}} residual_out(%{{.*}} : memref<?x64xbf16>) weight(%{{.*}} : memref<64xbf16>) eps(9.99999997E-7) : memref<?x64xbf16> -> memref<?x64xbf16>
// CHECK: tile.norm layer %{{.*}} -> %{{.*}} weight(%{{.*}} : memref<64xbf16>) bias(%{{.*}} : memref<64xbf16>) : memref<?x64xbf16> -> memref<?x64xf32>
func.func @norms(%x: memref<?x64xbf16>, %r: memref<?x64xbf16>, %y: memref<?x64xbf16>,
                 %h: memref<?x64xbf16>, %w: memref<64xbf16>, %b: memref<64xbf16>,
                 %z: memref<?x64xf32>) {
  tile.norm rms %x residual(%r : memref<?x64xbf16>) -> %y residual_out(%h : memref<?x64xbf16>)
      weight(%w : memref<64xbf16>) eps(1.0e-6) : memref<?x64xbf16> -> memref<?x64xbf16>
  tile.norm layer %x -> %z weight(%w : memref<64xbf16>) bias(%b : memref<64xbf16>)
      : memref<?x64xbf16> -> memref<?x64xf32>
  return
}

// CHECK-LABEL: func.func @attention
// CHECK: tile.attention %{{.*}}, %{{.*}}, %{{.*}} -> %{{.*}} key_lengths(%{{.*}} : memref<?xi32>) scale(1.250000e-01) causal : memref<?x8x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> -> memref<?x8x?x64xf16>
// CHECK: tile.attention %{{.*}}, %{{.*}}, %{{.*}} -> %{{.*}} : memref<?x8x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> -> memref<?x8x?x64xf16>
func.func @attention(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>,
                     %o: memref<?x8x?x64xf16>, %len: memref<?xi32>) {
  tile.attention %q, %k, %v -> %o key_lengths(%len : memref<?xi32>) scale(0.125) causal
      : memref<?x8x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> -> memref<?x8x?x64xf16>
  tile.attention %q, %k, %v -> %o
      : memref<?x8x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> -> memref<?x8x?x64xf16>
  return
}

// CHECK-LABEL: func.func @attention_for_training
// CHECK: tile.attention %{{.*}}, %{{.*}}, %{{.*}} -> %{{.*}} bias(%{{.*}} : memref<1x8x?x?xf32>) lse(%{{.*}} : memref<?x8x?xf32>) causal window(128, 0) aligned(top_left) softcap(3.000000e+01) dropout(1.000000e-01, -7) dropout_rule(lcg) empty_rows(nan) : memref<?x8x?x64xbf16>, memref<?x2x?x64xbf16>, memref<?x2x?x64xbf16> -> memref<?x8x?x64xbf16>
func.func @attention_for_training(%q: memref<?x8x?x64xbf16>, %k: memref<?x2x?x64xbf16>,
                                  %v: memref<?x2x?x64xbf16>, %o: memref<?x8x?x64xbf16>,
                                  %bias: memref<1x8x?x?xf32>, %lse: memref<?x8x?xf32>) {
  tile.attention %q, %k, %v -> %o bias(%bias : memref<1x8x?x?xf32>) lse(%lse : memref<?x8x?xf32>)
      causal window(128, 0) aligned(top_left) softcap(30.0) dropout(0.1, -7) dropout_rule(lcg)
      empty_rows(nan)
      : memref<?x8x?x64xbf16>, memref<?x2x?x64xbf16>, memref<?x2x?x64xbf16> -> memref<?x8x?x64xbf16>
  return
}

// CHECK-LABEL: func.func @rope
// CHECK: tile.rope half %{{.*}}, %{{.*}}, %{{.*}} -> %{{.*}} : memref<?x8x?x64xf32>, memref<?x32xf32>, memref<?x32xf32> -> memref<?x8x?x64xf32>
// CHECK: tile.rope interleaved %{{.*}}, %{{.*}}, %{{.*}} -> %{{.*}} : memref<?x8x?x64xf32>, memref<?x32xf32>, memref<?x32xf32> -> memref<?x8x?x64xf32>
func.func @rope(%x: memref<?x8x?x64xf32>, %c: memref<?x32xf32>, %s: memref<?x32xf32>,
                %y: memref<?x8x?x64xf32>) {
  tile.rope half %x, %c, %s -> %y
      : memref<?x8x?x64xf32>, memref<?x32xf32>, memref<?x32xf32> -> memref<?x8x?x64xf32>
  tile.rope interleaved %x, %c, %s -> %y
      : memref<?x8x?x64xf32>, memref<?x32xf32>, memref<?x32xf32> -> memref<?x8x?x64xf32>
  return
}
