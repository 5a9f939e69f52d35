// Tile-op arbitration as a pass over a module: every Tile op is an arbitration point whose
// candidates are the compiled lowering and the matmul providers; the decision is written back
// on the op, and a delegate that wins replaces it with a kernel_call.
#ifndef TESSERA_JIT_ARBITRATION_ARBITRATE_TILE_OPS_H_
#define TESSERA_JIT_ARBITRATION_ARBITRATE_TILE_OPS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "arbiter/arbitration_point.h"
#include "arbiter/candidate.h"
#include "arbiter/decision_record.h"
#include "jit/compile_options.h"
#include "mlir/IR/BuiltinOps.h"

namespace tessera::jit {
namespace delegates {
class DelegateRegistry;
}  // namespace delegates

/// The attribute the selection writes back on every Tile op (or the kernel_call replacing it):
/// `{winner, route, why, record}` — so the printed IR shows what runs and why.
inline constexpr char kDecisionAttr[] = "tessera_jit.decision";

/// What ArbitrateTileOps needs besides the module.
struct TileOpArbitration {
  Target target = Target::kHost;
  std::string arch;              ///< "host" or the GPU arch
  bool deterministic = false;    ///< the whole compile is deterministic
  bool batch_invariant = false;  ///< … at the batch_invariant level
  std::string forced;            ///< CompileOptions::matmul_delegate
  std::string forced_every_op;   ///< InternalCompileOptions::forced_candidate
  const delegates::DelegateRegistry* registry = nullptr;
  std::string toolchain;  ///< identifies the compiled lowering
  /// Decides one arbitration point. Null: no arbitration — a forced candidate runs as declared
  /// (after the applicability gate), anything else runs compiled (the probe compiles).
  std::function<absl::StatusOr<arbiter::DecisionRecord>(const arbiter::ArbitrationPoint&,
                                                        const std::vector<arbiter::Candidate>&)>
      arbitrate;
};

/// Every Tile op is an arbitration point. Candidates: the compiled lowering and every matmul
/// provider (built-in or declared in the registry); a tile.matmul `{delegate = "<id>"}` or
/// `TileOpArbitration::forced` forces one ("compiled" forces the compiled lowering). The
/// decision is written back as `tessera_jit.decision`; when a delegate wins, the tile.matmul
/// becomes a `tessera_nvidia.kernel_call` of its callee with its contract, operands marshalled
/// into the callee's ABI (cblas row-major, or cuBLAS's column-major trick). Appends one record
/// per op to `records`. Errors (InvalidArgument, prefixed with the op's location) are the
/// arbiter's: a forced candidate rejected by a gate, or no candidate left.
absl::Status ArbitrateTileOps(mlir::ModuleOp module, const TileOpArbitration& selection,
                              std::vector<arbiter::DecisionRecord>& records);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_ARBITRATION_ARBITRATE_TILE_OPS_H_
