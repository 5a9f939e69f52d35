// The machine host code is generated for and linked on: this machine's CPU or a named one, with
// the relocation and code models LLJIT gives JITLink (PIC, small). Code generation
// (jit/codegen/host_object.cc) and the ORC session (host_executable.cc) both start here.
#ifndef TESSERA_RUNTIME_HOST_MACHINE_H_
#define TESSERA_RUNTIME_HOST_MACHINE_H_

#include "absl/status/statusor.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "runtime/host_target.h"

namespace tessera::runtime {

/// LLVM's native target and its printer, registered once per process. Thread-safe.
void InitializeNativeTarget();

/// This machine's CPU, or the named CPU of `target`, with the relocation and code models
/// LLJIT gives JITLink (PIC, small): what the object is generated with and what the session
/// links.
absl::StatusOr<llvm::orc::JITTargetMachineBuilder> HostMachineBuilder(
    const HostTarget& target = ThisMachineHostTarget());

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_HOST_MACHINE_H_
