// Passes over Tessera IR (definitions: Passes.td; one pass per file under transforms/).
#ifndef TESSERA_DIALECT_PASSES_H_
#define TESSERA_DIALECT_PASSES_H_

#include <memory>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tessera {

/// Marks a private function tessera-lower-tile-to-loops outlined from a parallel loop:
/// `(begin: index, end: index, cost: index, captures...)` runs iterations [begin, end); cost
/// estimates the elements one iteration touches (jit/codegen/parallel_dispatch.cc dispatches it).
inline constexpr char kParallelBodyAttr[] = "tessera_jit.parallel_body";

/// An `#llvm.loop_annotation` on an scf.for (what LLVM's loop passes should do with it).
/// scf-to-cf copies it onto the loop's latch branch, where tessera-attach-loop-annotations makes
/// it the branch's own, so the LLVM IR loop gets its !llvm.loop metadata.
inline constexpr char kLoopAnnotationAttr[] = "llvm.loop_annotation";

#define GEN_PASS_DECL
#include "dialect/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialect/Passes.h.inc"

}  // namespace tessera

#endif  // TESSERA_DIALECT_PASSES_H_
