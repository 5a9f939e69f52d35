// The programs the compile service tests compile: saxpy, and the same program spelled
// differently (comments, whitespace, SSA names); and the check that a module's saxpy computes.
#ifndef TESSERA_TESTS_SERVICE_SOURCES_H_
#define TESSERA_TESTS_SERVICE_SOURCES_H_

#include "gtest/gtest.h"
#include "jit/compiled_module.h"
#include "runtime/host_executable.h"
#include "runtime/memref_descriptor.h"

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

/// Runs saxpy from a host module and checks the result: a cached or loaded module must work.
inline void ExpectSaxpyWorks(const jit::CompiledModule& module) {
  ASSERT_NE(module.host, nullptr);
  auto entry = module.host->Lookup("saxpy");
  ASSERT_TRUE(entry.ok()) << entry.status();
  float x[3] = {1, 2, 3}, y[3] = {1, 1, 1}, out[3] = {};
  runtime::MemRefDescriptor descriptors[3] = {runtime::MakeMemRefDescriptor(x, {3}),
                                              runtime::MakeMemRefDescriptor(y, {3}),
                                              runtime::MakeMemRefDescriptor(out, {3})};
  float alpha = 2.0f;
  void* args[] = {&alpha, descriptors[0].data(), descriptors[1].data(), descriptors[2].data()};
  (*entry)(args);
  EXPECT_EQ(out[0], 3.0f);
  EXPECT_EQ(out[1], 5.0f);
  EXPECT_EQ(out[2], 7.0f);
}

}  // namespace tessera::service

#endif  // TESSERA_TESTS_SERVICE_SOURCES_H_
