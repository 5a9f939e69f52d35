// Tessera IR → compiled module, for the host CPU or NVIDIA GPUs.
#ifndef TESSERA_JIT_COMPILER_H_
#define TESSERA_JIT_COMPILER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jit/compile_options.h"
#include "jit/compiled_module.h"

namespace tessera::jit {

/// Parses, verifies and compiles `source` (Tessera IR as MLIR text).
///
/// Errors: bad IR, a broken contract or a failed lowering → InvalidArgument with every
/// diagnostic and its source location (`name:line:col: error: …`); an unsupported arch →
/// Unimplemented; a missing CUDA toolkit (libdevice) → FailedPrecondition; nvJitLink failing
/// on generated PTX → Internal. Never aborts. Thread-safe: compiles may run concurrently.
absl::StatusOr<std::unique_ptr<CompiledModule>> Compile(absl::string_view source,
                                                        const CompileOptions& options);

/// The host code of an nvptx module, JIT-compiled so its entries can be invoked: they load the
/// module's device image on the first RunInitializers() and launch kernels through the GPU
/// runtime (jit/runtime/kernel_abi.h) — call them inside a runtime::InvocationScope.
/// FailedPrecondition for a host-target module (whose CompiledModule::host is already that).
absl::StatusOr<std::unique_ptr<HostExecutable>> LoadDeviceHostCode(const CompiledModule& module);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_COMPILER_H_
