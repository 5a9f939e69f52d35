// Host code generation: a module's LLVM IR to a relocatable object for one CPU
// (runtime::HostObject), which the compile cache stores and runtime::HostExecutable links.
#ifndef TESSERA_JIT_CODEGEN_HOST_OBJECT_H_
#define TESSERA_JIT_CODEGEN_HOST_OBJECT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "jit/stage_clock.h"
#include "runtime/host_executable.h"
#include "runtime/host_target.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace tessera::jit {

/// Optimises `module` at `opt_level` (0–3) and generates machine code for `target`'s CPU
/// (by default this machine's, as LLVM's host detection sees it). Thread-safe; counts one code
/// generation (HostCodegenCount). With `stages`, its steps' times go there ("host-optimize",
/// "host-codegen").
absl::StatusOr<runtime::HostObject> CompileHostObject(
    llvm::Module& module, int opt_level,
    const runtime::HostTarget& target = runtime::ThisMachineHostTarget(),
    StageTimes* stages = nullptr);

/// The host code generations this process has run (CompileHostObject calls). A compile cache
/// hit runs none. Thread-safe.
uint64_t HostCodegenCount();

}  // namespace tessera::jit

#endif  // TESSERA_JIT_CODEGEN_HOST_OBJECT_H_
