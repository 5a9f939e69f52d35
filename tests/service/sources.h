// The programs the compile service tests compile: saxpy, and the same program spelled
// differently (comments, whitespace, SSA names).
#ifndef TESSERA_TESTS_SERVICE_SOURCES_H_
#define TESSERA_TESTS_SERVICE_SOURCES_H_

namespace tessera::service {

inline constexpr char kSaxpy[] = R"mlir(
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

// The same program spelled differently: comments, whitespace, SSA names.
inline constexpr char kSaxpyRespelled[] = R"mlir(// respelled
func.func @saxpy(%s: f32, %in: memref<?xf32>, %acc: memref<?xf32>, %o: memref<?xf32>) {
  tile.map ins(%s, %in, %acc : f32, memref<?xf32>, memref<?xf32>) outs(%o : memref<?xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %t = arith.mulf %p, %q : f32
    %u = arith.addf %t, %r : f32
    tile.yield %u : f32
  }
  return
})mlir";

}  // namespace tessera::service

#endif  // TESSERA_TESTS_SERVICE_SOURCES_H_
