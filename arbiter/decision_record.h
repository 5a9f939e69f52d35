// What the arbiter decided for one arbitration point, and why: every candidate with the gate
// that removed it or its measurements. Records are cached (decision_cache.h), exported as JSON
// by the C API and printed by `tessera-jit explain`.
#ifndef TESSERA_ARBITER_DECISION_RECORD_H_
#define TESSERA_ARBITER_DECISION_RECORD_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "arbiter/arbitration_point.h"
#include "arbiter/candidate.h"

namespace tessera::arbiter {

/// One candidate's fate.
struct CandidateOutcome {
  Candidate candidate;
  /// "" while it survives; else the gate that removed it: "applicability", "availability",
  /// "determinism", "forcing", "accuracy".
  std::string gate;
  std::string reason;  ///< why it was removed, or why it was not measured; "" when measured
  /// Accuracy gate: worst probe, as max over elements of |out − ref| / (atol + rtol·|ref|)
  /// (≤ 1 passes), and where it happened. Negative when not probed.
  double error_ratio = -1;
  double max_abs_error = -1;
  std::string worst_probe;
  /// Measurement: median seconds per run, relative spread (IQR / median), sample count. 0
  /// samples: unmeasured (see reason).
  double median_s = 0;
  double spread = 0;
  int samples = 0;
  /// How its measurement ended: "settled: …" (the median's 95 % confidence interval is tight),
  /// "dropped: …" (its best sample cannot beat the leader), "stopped: …" (the time budget or
  /// the sample limit); "" when not measured.
  std::string race;
  /// Batch invariance at the batch_invariant level: "by construction" (the compiled
  /// lowering), "proven: …" (the replay probe), or why not (then `gate` is "batch
  /// invariance"); "" when the level does not ask.
  std::string batch_invariance;
};

/// The record source of a decision left to the background (ArbitrationContext::defer): the
/// incumbent serves; such a record is never cached nor exported to a plan.
inline constexpr char kPendingSource[] = "pending";

struct DecisionRecord {
  std::string key;        ///< the full decision-cache key (64 hex digits)
  std::string base_key;   ///< the key without toolchain and candidate identities
  std::string toolchain;  ///< the toolchain digest the record was made with
  ArbitrationPoint point;
  std::string shape_bucket;
  std::vector<CandidateOutcome> candidates;
  std::string winner;  ///< candidate id
  std::string route;   ///< the artifact that runs
  std::string reason;  ///< one line: why the winner won
  /// Relative separation of the fastest from the runner-up, and the noise it was held against
  /// (the larger relative standard error of their medians, at least 1 %); 0 when not measured.
  double separation = 0;
  double noise = 0;
  std::string
      timing_source;  ///< "host steady_clock", "CUDA events on a non-default stream", or "none"
  std::string measured_shape;  ///< the shape timed, e.g. "256x256x256"
  std::string created;         ///< UTC time the decision was made
  double arbitration_ms = 0;   ///< what making the decision cost
  /// The time budget candidates could run for, and how long they ran (warm-up and samples).
  double budget_ms = 0;
  double measured_ms = 0;
  /// How this compile got it: "measured", "cache", "measured; stale record (…) kept; …",
  /// "sole candidate", "forced", "unprobed", "pinned", "replay: not in the plan", "pending"
  /// (background decisions), "reverted" (by the composed accuracy check).
  std::string source;
  /// What the composed accuracy check found for the entry this op is in
  /// (jit/arbitration/composed_accuracy.h); empty when it did not run (no delegate in the entry,
  /// not a host compile).
  std::string composed;

  const CandidateOutcome* Find(const std::string& id) const;
  /// Whether a delegate won: neither the compiled lowering nor one of its kernel variants.
  bool Delegated() const;
};

/// JSON: one record as an object; a list as an array.
std::string ToJson(const DecisionRecord& record);
std::string ToJson(const std::vector<DecisionRecord>& records);
/// DataLoss when `json` is not what ToJson writes.
absl::StatusOr<DecisionRecord> RecordFromJson(const std::string& json);
absl::StatusOr<std::vector<DecisionRecord>> RecordsFromJson(const std::string& json);

/// A readable report: the op, the winner and why, then one line per candidate.
std::string FormatRecord(const DecisionRecord& record);

}  // namespace tessera::arbiter

#endif  // TESSERA_ARBITER_DECISION_RECORD_H_
