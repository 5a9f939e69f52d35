// The Tessera IR the compile benchmarks time: the same computations on every target and against
// every other compiler (saxpy, row softmax, matmul+bias+relu, and a two-layer MLP head).
#ifndef TESSERA_BENCH_BENCH_KERNELS_H_
#define TESSERA_BENCH_BENCH_KERNELS_H_

namespace tessera::bench {

// out = alpha·x + y.
inline constexpr char kElementwiseIr[] = R"mlir(
func.func @saxpy(%alpha: f32, %x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>) {
  tile.map ins(%alpha, %x, %y : f32, memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %xi: f32, %yi: f32):
    %ax = arith.mulf %a, %xi : f32
    %r = arith.addf %ax, %yi : f32
    tile.yield %r : f32
  }
  return
}
)mlir";

// relu(A·B + bias).
inline constexpr char kMatmulIr[] = R"mlir(
func.func @dense(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %bias: memref<?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf32>) activation(relu)
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}
)mlir";

// Softmax of every row.
inline constexpr char kSoftmaxIr[] = R"mlir(
func.func @row_softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.softmax %x -> %y : memref<?x?xf32> -> memref<?x?xf32>
  return
}
)mlir";

// examples/mlp.mlir without its determinism attribute: two matmuls, a softmax, two reductions.
inline constexpr char kMlpIr[] = R"mlir(
func.func @mlp(%x: memref<?x784xf32>, %w1: memref<784x256xf32>, %b1: memref<256xf32>,
               %w2: memref<256x10xf32>, %b2: memref<10xf32>, %hidden: memref<?x256xf32>,
               %logits: memref<?x10xf32>, %probs: memref<?x10xf32>, %top: memref<?xf32>,
               %confidence: memref<f32>) {
  tile.matmul %x, %w1 -> %hidden bias(%b1 : memref<256xf32>) activation(relu)
      : memref<?x784xf32>, memref<784x256xf32> -> memref<?x256xf32>
  tile.matmul %hidden, %w2 -> %logits bias(%b2 : memref<10xf32>)
      : memref<?x256xf32>, memref<256x10xf32> -> memref<?x10xf32>
  tile.softmax %logits -> %probs : memref<?x10xf32> -> memref<?x10xf32>
  tile.reduce max %probs -> %top axis = 1 : memref<?x10xf32> -> memref<?xf32>
  tile.reduce mean %top -> %confidence axis = 0 : memref<?xf32> -> memref<f32>
  return
}
)mlir";

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_BENCH_KERNELS_H_
