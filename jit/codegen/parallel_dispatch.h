// Parallel loops of host code onto the runtime's threads. tessera-lower-tile-to-loops outlines
// the outer loop of each Tile op into a private function marked `tessera_jit.parallel_body`
// (kParallelBodyAttr, dialect/Passes.h),
// `(begin, end, cost, captures...)`, and calls it over the whole range. After the conversion
// to the LLVM dialect this pass turns each such call into
// `tessera_rt_parallel_for(@task, &captures, begin, end, cost)` (runtime/thread_pool.h),
// where `@task(context, begin, end)` unpacks the captures and calls the body. A body that can
// fail a run-time check (tessera_rt_check_failed unwinds only the calling thread) stays a
// direct, sequential call.
#ifndef TESSERA_JIT_CODEGEN_PARALLEL_DISPATCH_H_
#define TESSERA_JIT_CODEGEN_PARALLEL_DISPATCH_H_

#include <memory>

namespace mlir {
class Pass;
}  // namespace mlir

namespace tessera::jit {

std::unique_ptr<mlir::Pass> CreateDispatchParallelLoopsPass();

}  // namespace tessera::jit

#endif  // TESSERA_JIT_CODEGEN_PARALLEL_DISPATCH_H_
