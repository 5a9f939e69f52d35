// Tessera IR → compiled module, for the host CPU or NVIDIA GPUs.
#ifndef TESSERA_JIT_COMPILER_H_
#define TESSERA_JIT_COMPILER_H_

#include <cstdint>
#include <memory>
#include <string>

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

/// Tessera IR parsed once, for the compile service: the canonical text it keys by, and the
/// parsed module a miss compiles without parsing again. Holds one of the compiler's sessions
/// until it is compiled or destroyed. Movable; one thread at a time.
class ParsedSource {
 public:
  struct State;
  explicit ParsedSource(std::unique_ptr<State> state);
  ParsedSource(ParsedSource&&) noexcept;
  ParsedSource& operator=(ParsedSource&&) noexcept;
  ~ParsedSource();

  /// The text CanonicalSource gives for it.
  const std::string& canonical() const;

 private:
  friend absl::StatusOr<std::unique_ptr<CompiledModule>> Compile(ParsedSource parsed,
                                                                 const CompileOptions& options);
  std::unique_ptr<State> state_;
};

/// Parses `source`, its diagnostics naming `source_name` (as CompileOptions::source_name does
/// for Compile): InvalidArgument with every diagnostic when it does not parse. Thread-safe.
absl::StatusOr<ParsedSource> Parse(absl::string_view source, absl::string_view source_name);

/// The sources this process has parsed (every parse: Parse, Compile of text, CanonicalSource):
/// a compile service miss parses once, a hit by text not at all. Thread-safe.
uint64_t ParseCount();

/// Compile of a source Parse parsed, without parsing it again (`options.source_name` should be
/// the name it was parsed under).
absl::StatusOr<std::unique_ptr<CompiledModule>> Compile(ParsedSource parsed,
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
