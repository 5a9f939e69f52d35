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

/// Links a module's host machine code (CompiledModule::host_object; no code generation) so its
/// entries can be invoked: for a host-target module loaded from a cache, and for an nvptx
/// module, whose entries
/// load the device image on the first RunInitializers() and launch kernels through the GPU
/// runtime (runtime/launch_entry_points.h) — call those inside a runtime::InvocationScope.
absl::StatusOr<std::unique_ptr<runtime::HostExecutable>> LoadHostCode(const CompiledModule& module);

/// The canonical text of Tessera IR: parsed and printed in MLIR's generic form without
/// locations, so comments, whitespace and SSA names do not matter and any semantic change does.
/// InvalidArgument (with diagnostics) when `source` does not parse. Thread-safe.
absl::StatusOr<std::string> CanonicalSource(absl::string_view source);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_COMPILER_H_
