// Composed accuracy: per-op accuracy budgets do not compose (five delegates each within 1e-3 do
// not make a result within 1e-3), so after the per-op decisions of a host compile, every entry
// function in which a delegate serves a Tile op runs once on a probe under the chosen plan and
// under the reference plan (every Tile op on its compiled, reference_exact lowering), and its
// written outputs are compared under the entry's budget: its declared `tessera.accuracy`, else
// the strictest budget its ops' winners were accepted under. Over budget, the delegated op
// whose reversion lowers the entry's error most reverts to the compiled lowering, and the check
// repeats. The records say so (DecisionRecord::composed; a reverted op's source is "reverted").
#ifndef TESSERA_JIT_ARBITRATION_COMPOSED_ACCURACY_H_
#define TESSERA_JIT_ARBITRATION_COMPOSED_ACCURACY_H_

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "jit/compile_options.h"
#include "jit/compiled_module.h"
#include "jit/internal_compile.h"

namespace tessera::jit {

/// Compiles the same source under other options (InternalCompileOptions::revert_to_compiled
/// set, check_composed_accuracy off).
using Recompile = std::function<absl::StatusOr<std::unique_ptr<CompiledModule>>(
    const CompileOptions&, const InternalCompileOptions&)>;

/// Checks every entry of `module` (a loaded host module) and replaces it with the recompiled
/// one when ops revert. InvalidArgument, naming the entry and its forced ops, when an entry is
/// over budget and only forced candidates are left to revert.
absl::Status CheckComposedAccuracy(const Recompile& recompile,
                                   std::unique_ptr<CompiledModule>& module);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_ARBITRATION_COMPOSED_ACCURACY_H_
