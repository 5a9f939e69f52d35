// LLVM's default optimisation pipeline at a Tessera opt level, for host and device modules.
#ifndef TESSERA_JIT_LLVM_OPTIMIZE_H_
#define TESSERA_JIT_LLVM_OPTIMIZE_H_

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessera::jit {

/// Runs LLVM's per-module default pipeline at `opt_level` (0–3; 0 runs the O0 pipeline, which
/// still applies target passes such as NVVMReflect) with `machine`'s pass-builder callbacks.
void OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine, int opt_level);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_LLVM_OPTIMIZE_H_
