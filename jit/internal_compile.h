// The compiler's own recompiles: what they change beside the caller's CompileOptions. Only the
// arbiter's probe compiles (jit/arbitration/probers.h) and the composed accuracy check
// (jit/arbitration/composed_accuracy.h) set these; no caller of jit::Compile, the compile service
// or the C API can, and no module compiled so reaches a cache (the module key does not name them).
#ifndef TESSERA_JIT_INTERNAL_COMPILE_H_
#define TESSERA_JIT_INTERNAL_COMPILE_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jit/compile_options.h"
#include "jit/compiled_module.h"

namespace tessera::jit {

struct InternalCompileOptions {
  /// Each Tile op is decided by the arbiter (arbiter/arbiter.h): contract gates, accuracy
  /// probes against the host reference, measurement. Off: a forced candidate runs as declared
  /// and everything else compiled, unprobed and unrecorded (the probe compiles).
  bool arbitrate = true;
  /// Forces every Tile op, of any kind, onto one candidate id ("compiled", a kernel variant
  /// `compiled.<schedule>`, a provider) — what `tessera.candidate` on each op would; an
  /// attribute on the op wins over it, and it over CompileOptions::matmul_delegate. The probe
  /// compiles (one op per module) use it. Empty: none.
  std::string forced_candidate;
  /// Composed accuracy (jit/arbitration/composed_accuracy.h): a host compile in which a
  /// delegate serves a Tile op checks each such entry on a probe against the reference plan and
  /// reverts the op contributing most error while the entry is over its budget. Off for the
  /// check's own recompiles.
  bool check_composed_accuracy = true;
  /// Tile ops (by location, "file:line:col") that take the compiled lowering whatever was
  /// decided or forced, with why (the composed accuracy check's recompiles).
  std::map<std::string, std::string> revert_to_compiled;
};

/// jit::Compile with the recompile knobs set.
absl::StatusOr<std::unique_ptr<CompiledModule>> CompileInternal(
    absl::string_view source, const CompileOptions& options,
    const InternalCompileOptions& internal);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_INTERNAL_COMPILE_H_
