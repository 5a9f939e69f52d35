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
func.func @matmul_policies(%a16: memref<32x64xf16>, %b16: memref<32x16xf16>, %c16: memref<64x16xf16>,
                           %a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>,
                           %abf: memref<8x8xbf16>, %bbf: memref<8x8xbf16>, %cbf: memref<8x8xf32>) {
  tile.matmul %a16, %b16 -> %c16 activation(silu) policy(f16) {transpose_a}
      : memref<32x64xf16>, memref<32x16xf16> -> memref<64x16xf16>
  tile.matmul %a, %b -> %c activation(relu) policy(tf32)
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  tile.matmul %abf, %bbf -> %cbf : memref<8x8xbf16>, memref<8x8xbf16> -> memref<8x8xf32>
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
