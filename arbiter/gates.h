// The selection gates: the contract gates (applicability, availability, determinism, forcing),
// the accuracy gate on probes, the choice when probes cannot run, and the noise rule that picks
// among the timed survivors. Internal to //arbiter:arbiter.
#ifndef TESSERA_ARBITER_GATES_H_
#define TESSERA_ARBITER_GATES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "arbiter/candidate.h"
#include "arbiter/decision_record.h"
#include "arbiter/matmul_probe.h"
#include "arbiter/selection.h"
#include "arbiter/timing.h"

namespace tessera::arbiter::internal {

/// Gates 1–4: applicability, availability, determinism, forcing.
absl::Status FilterByContract(Selection& s);

/// Probes cannot run (`cannot_probe` says why): the compiled lowering is kept, or a forced
/// candidate taken as declared; at the batch_invariant level only candidates invariant by
/// construction stay.
absl::Status ChooseUnprobed(Selection& s, const std::string& cannot_probe);

/// The op's reference failed with `status`: decided unprobed, and the decision kept when
/// the failure would repeat (a probe that cannot bind or a run-time check fails on the fixed
/// inputs: FailedPrecondition; a probe module that does not compile: InvalidArgument or
/// Unimplemented) — not when forced, nor for a device error that may pass.
absl::Status ChooseUnprobedFor(Selection& s, const absl::Status& status,
                               const std::string& cannot_probe);

/// Gate 5: every survivor against the host reference on the probes; at the batch_invariant
/// level, each delegate then proves batch invariance on the same kernel (gate 6). Also
/// estimates each survivor's seconds per multiply-add on the op-shaped probe, which sizes
/// the timed problem.
absl::Status AccuracyGate(Selection& s, const std::vector<CandidateOutcome*>& alive);

/// Folds one probe's result into `o`; removes it when over budget.
void Judge(CandidateOutcome& o, const MatmulProblem& probe, const std::vector<float>& out,
           const std::vector<double>& reference);

/// Folds one op probe's comparison with the reference into `o`; removes it when over budget.
void JudgeOp(CandidateOutcome& o, const std::string& shape, const AccuracyCheck& check,
             const std::vector<float>& reference, const AccuracyBudget& budget);

/// When the accuracy gate left one candidate, it wins untimed (true).
bool SoleSurvivor(Selection& s);

/// The noise rule (arbiter/timing.h) picks the winner among the timed `contestants`, ties going
/// to the compiled lowering, then by id. When none was timed before the `budget` (seconds) ran
/// out, the stable order picks one, and the record is not kept.
absl::Status DecideByNoiseRule(Selection& s, const std::vector<Contestant>& contestants,
                               double budget);

}  // namespace tessera::arbiter::internal

#endif  // TESSERA_ARBITER_GATES_H_
