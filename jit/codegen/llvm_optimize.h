// LLVM optimisation pipelines: the default one at a Tessera opt level (host code), and the one
// sized for GPU kernels.
#ifndef TESSERA_JIT_CODEGEN_LLVM_OPTIMIZE_H_
#define TESSERA_JIT_CODEGEN_LLVM_OPTIMIZE_H_

#include <cstdint>

#include "absl/status/status.h"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessera::jit {

/// Innermost loops whose bodies have more use-def paths than this to one value are not
/// vectorized (LLVM 22's loop vectorizer walks them path by path; see llvm_optimize.cc). The
/// host's own kernels reach ~7,200 (the MLP example's); a tile.map body of one bf16 fma chain
/// or f16 log1p/log chain reaches millions and took seconds to minutes to vectorize.
inline constexpr uint64_t kMaxVectorizedOperandPaths = uint64_t{1} << 16;

/// Runs LLVM's per-module default pipeline at `opt_level` (0–3; 0 runs the O0 pipeline, which
/// still applies target passes such as NVVMReflect) with `machine`'s pass-builder callbacks,
/// tuned for host code: loops are vectorised but interleaved only where their metadata asks
/// (`llvm.loop.interleave.count`), with no loop unrolling (partial, runtime or full: LLVM's
/// full unroll pass then runs only where metadata forces it) and no SLP vectorizer. Above 0,
/// loops with more than kMaxVectorizedOperandPaths operand paths stay scalar.
void OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine, int opt_level);

/// The pipeline for GPU kernels (`machine` an NVPTX target machine), sized for modules MLIR
/// has already canonicalised and CSE'd, whose PTX ptxas (or the driver's JIT) optimises again:
/// NVVMReflect, inlining of `alwaysinline` functions (the libdevice functions a kernel calls),
/// then per function SROA, early CSE, instcombine, CFG simplification, LICM and dead-code
/// elimination — no loop unrolling or vectorisation (ptxas unrolls), no interprocedural
/// passes. At opt_level 0, LLVM's O0 pipeline (NVVMReflect only).
absl::Status OptimizeKernelModule(llvm::Module& module, llvm::TargetMachine& machine,
                                  int opt_level);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_CODEGEN_LLVM_OPTIMIZE_H_
