// The arbiter (docs/design.md §2, §4, §5, §7): for one arbitration point, filters the candidates —
// applicability, availability, determinism, forcing, accuracy on probes — then measures the
// survivors and picks one under the noise rule, or reuses the cached decision. Every decision
// is a DecisionRecord; when nothing survives, or a forced candidate is rejected, the compile
// fails with a report instead of falling back silently.
#ifndef TESSERA_ARBITER_ARBITER_H_
#define TESSERA_ARBITER_ARBITER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "arbiter/arbitration_point.h"
#include "arbiter/candidate.h"
#include "arbiter/decision_cache.h"
#include "arbiter/decision_record.h"
#include "arbiter/plan.h"
#include "arbiter/prober.h"

namespace tessera::arbiter {

/// The default time budget of one decision: how long its candidates may run (warm-up and
/// timed samples) — 300 ms, for up to 8 candidates.
inline constexpr double kDefaultBudgetSeconds = 0.3;

struct ArbitrationContext {
  /// Runs candidates on probes; null when nothing can run (then only the compiled lowering, or
  /// a forced delegate taken as declared, can be chosen).
  Prober* prober = nullptr;
  /// Why there is no prober, for the record (empty: "no prober for this target").
  std::string no_prober_reason;
  /// Where decisions are reused from and kept; null: every compile decides afresh.
  DecisionCache* cache = nullptr;
  /// The toolchain digest (Tessera, LLVM, CUDA, nvJitLink versions) that keys decisions.
  std::string toolchain;
  /// How long candidates may run for this decision (> 0). Racing stops each candidate once its
  /// median is known well enough, drops those that cannot win, and stops all at the budget;
  /// the timed shape is capped so that the minimum samples fit.
  double budget_s = kDefaultBudgetSeconds;
  /// Replay (null: measure): every point takes the candidate the plan pins, with nothing
  /// probed or timed. A point the plan lacks takes the compiled lowering, or in `plan_strict`
  /// mode fails the compile naming it.
  const Plan* plan = nullptr;
  bool plan_strict = false;
  /// Background decisions: a contest with no fresh record is not measured now — the incumbent
  /// (a stale record's winner, else the compiled lowering) serves, and the record says
  /// `source = "pending"` (never cached, never in a plan). The caller measures later, e.g. by
  /// compiling again without `defer` on a worker. A deterministic point is measured now unless
  /// `defer_deterministic`: a swap would change its results between calls.
  bool defer = false;
  bool defer_deterministic = false;
};

/// Decides who runs `point` among `candidates` (which must include the compiled lowering).
/// InvalidArgument, prefixed with the op's location, when a forced candidate is unknown or
/// rejected by a gate (naming the gate and why) or when no candidate survives (listing each
/// candidate and the gate that removed it). Measurements of concurrent arbitrations in one
/// process never overlap.
absl::StatusOr<DecisionRecord> Arbitrate(const ArbitrationPoint& point,
                                         const std::vector<Candidate>& candidates,
                                         const ArbitrationContext& context);

/// The decision-cache keys of `point` with `candidates`: `base` covers the op (kind, shape
/// bucket, dtype, arch/device, layout, numeric policy, movement, determinism, forcing);
/// `full` adds the toolchain digest and every candidate's identity and contract. The
/// determinism level (none, run_to_run, batch_invariant) is part of both.
struct DecisionKeys {
  std::string base;
  std::string full;
};
DecisionKeys KeysFor(const ArbitrationPoint& point, const std::vector<Candidate>& candidates,
                     const std::string& device, const std::string& toolchain);

}  // namespace tessera::arbiter

#endif  // TESSERA_ARBITER_ARBITER_H_
