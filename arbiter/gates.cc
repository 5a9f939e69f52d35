// The selection gates: the contract gates (applicability, availability, determinism, forcing),
// the accuracy gate on probes, the choice when probes cannot run, and the noise rule.
#include "arbiter/gates.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "arbiter/batch_invariance.h"
#include "arbiter/prober.h"
#include "base/status_macros.h"

namespace tessera::arbiter::internal {
namespace {

std::string ForcedText(const Selection& s) {
  return s.Forced() ? absl::StrCat("forced (", s.point.forced_by, ")") : "";
}

}  // namespace

absl::Status FilterByContract(Selection& s) {
  for (CandidateOutcome* o : s.Alive()) {
    if (!o->candidate.inapplicable.empty()) {
      Remove(*o, "applicability", o->candidate.inapplicable);
    }
  }
  for (CandidateOutcome* o : s.Alive()) {
    if (!o->candidate.unavailable.empty()) Remove(*o, "availability", o->candidate.unavailable);
  }
  if (s.point.deterministic || s.point.batch_invariant) {
    for (CandidateOutcome* o : s.Alive()) {
      if (o->candidate.determinism != "deterministic") {
        Remove(*o, "determinism",
               absl::StrCat("it declares determinism = \"", o->candidate.determinism, "\" and @",
                            s.point.function,
                            " must be deterministic (tessera.deterministic or a deterministic "
                            "compile)"));
      }
    }
  }
  TESSERA_RETURN_IF_ERROR(s.CheckForced());
  if (s.Forced()) {
    for (CandidateOutcome* o : s.Alive()) {
      if (o->candidate.id != s.point.forced) {
        Remove(*o, "forcing",
               absl::StrCat("the field is restricted to '", s.point.forced, "' (",
                            s.point.forced_by, ")"));
      }
    }
  }
  if (s.Alive().empty()) return s.NoSurvivor();
  return absl::OkStatus();
}

absl::Status ChooseUnprobed(Selection& s, const std::string& cannot_probe) {
  s.probed = false;
  std::vector<CandidateOutcome*> alive = s.Alive();
  if (s.point.batch_invariant) {
    for (CandidateOutcome* o : alive) {
      if (o->candidate.BatchInvariantByConstruction()) {
        o->batch_invariance = kByConstruction;
      } else {
        Remove(*o, "batch invariance",
               absl::StrCat("a delegate proves batch invariance by a replay probe, and "
                            "probes cannot run here (",
                            cannot_probe, ")"));
      }
    }
    TESSERA_RETURN_IF_ERROR(s.CheckForced());
    alive = s.Alive();
  }
  for (CandidateOutcome* o : alive) o->reason = absl::StrCat("not probed: ", cannot_probe);
  s.record.source = "unprobed";
  if (s.Forced()) {
    s.Win(*alive[0], absl::StrCat(ForcedText(s),
                                  "; taken as declared: accuracy and timing "
                                  "cannot be probed here (",
                                  cannot_probe, ")"));
    return absl::OkStatus();
  }
  CandidateOutcome* compiled = s.Outcome(kCompiledCandidate);
  s.Win(*compiled, absl::StrCat("probes cannot run here (", cannot_probe,
                                "); the compiled lowering is kept — a delegate runs unprobed "
                                "only when forced"));
  return absl::OkStatus();
}

absl::Status ChooseUnprobedFor(Selection& s, const absl::Status& status,
                               const std::string& cannot_probe) {
  s.settled_unprobed =
      !s.Forced() && (absl::IsFailedPrecondition(status) || absl::IsInvalidArgument(status) ||
                      absl::IsUnimplemented(status));
  return ChooseUnprobed(s, cannot_probe);
}

absl::Status AccuracyGate(Selection& s, const std::vector<CandidateOutcome*>& alive) {
  const std::vector<MatmulProblem> probes = AccuracyProbes(s.point);
  std::vector<MatmulInputs> inputs;
  std::vector<std::vector<double>> references;
  for (size_t i = 0; i < probes.size(); ++i) {
    inputs.push_back(MakeInputs(probes[i], static_cast<uint32_t>(1000 + i)));
    references.push_back(ReferenceMatmul(inputs.back()));
  }
  for (CandidateOutcome* o : alive) {
    absl::StatusOr<std::unique_ptr<ProbeKernel>> kernel =
        s.context.prober->Prepare(s.point, o->candidate, nullptr);
    if (!kernel.ok()) {
      Remove(*o, "availability",
             absl::StrCat("its probe kernel failed to build: ", kernel.status().message()));
      continue;
    }
    // The op-shaped probe last, so the kernel stays bound to it for the estimate.
    for (size_t step = 1; step <= probes.size() && o->gate.empty(); ++step) {
      const size_t i = step % probes.size();
      absl::StatusOr<std::vector<float>> out = (*kernel)->Run(inputs[i]);
      if (!out.ok()) {
        Remove(*o, "availability",
               absl::StrCat("it failed on probe ", probes[i].ShapeText(), ": ",
                            out.status().message()));
        break;
      }
      Judge(*o, probes[i], *out, references[i]);
    }
    if (!o->gate.empty()) continue;
    // The estimate: one timed run (it counts against the budget) — unless the probe's own
    // run already took more than a tenth of what is left: then that run is the estimate,
    // so a slow candidate does not spend the race's budget before the race.
    const double probe_run = (*kernel)->LastRunSeconds();
    double estimate = probe_run;
    if (!(probe_run > (s.Budget() - s.spent) / 10)) {
      absl::MutexLock lock(&MeasurementMutex());  // a timed run, as in the race
      absl::StatusOr<double> seconds = (*kernel)->Time(1);
      if (seconds.ok() && *seconds > 0) {
        estimate = *seconds;
        s.spent += *seconds;
      }
    }
    if (estimate > 0) s.seconds_per_mac[o->candidate.id] = estimate / Macs(probes[0]);
    if (s.point.batch_invariant) {
      if (o->candidate.BatchInvariantByConstruction()) {
        o->batch_invariance = kByConstruction;
        continue;
      }
      absl::StatusOr<BatchInvarianceProof> proof = ProveBatchInvariance(**kernel, s.point);
      if (!proof.ok()) {
        Remove(*o, "availability",
               absl::StrCat("it failed on the batch-invariance probe: ", proof.status().message()));
      } else if (!proof->invariant) {
        o->batch_invariance = proof->text;
        Remove(*o, "batch invariance", proof->text);
      } else {
        o->batch_invariance = absl::StrCat("proven: ", proof->text);
      }
    }
  }
  TESSERA_RETURN_IF_ERROR(s.CheckForced());
  if (s.Alive().empty()) return s.NoSurvivor();
  return absl::OkStatus();
}

void Judge(CandidateOutcome& o, const MatmulProblem& probe, const std::vector<float>& out,
           const std::vector<double>& reference) {
  const AccuracyBudget budget = ResultBudget(o.candidate.budget, probe);
  const AccuracyCheck check = CheckAccuracy(out, reference, budget);
  if (check.ratio >= o.error_ratio) {
    o.error_ratio = check.ratio;
    o.max_abs_error = check.max_abs_error;
    o.worst_probe = probe.ShapeText();
  }
  if (check.ratio <= 1) return;
  const int64_t row = check.worst_index < 0 ? 0 : check.worst_index / probe.n;
  const int64_t column = check.worst_index < 0 ? 0 : check.worst_index % probe.n;
  const double ref = check.worst_index < 0 ? 0 : reference[check.worst_index];
  Remove(o, "accuracy",
         absl::StrFormat("on probe %s, |out - ref| = %.3g at [%d, %d] (ref %.6g) exceeds "
                         "atol + rtol*|ref| = %.3g (%s: atol %g, rtol %g%s)",
                         probe.ShapeText(), check.max_abs_error, row, column, ref,
                         budget.atol + budget.rtol * std::fabs(ref), o.candidate.accuracy,
                         budget.atol, budget.rtol,
                         probe.result_element == "f32"
                             ? ""
                             : absl::StrCat(", with one ulp of ", probe.result_element)));
}

void JudgeOp(CandidateOutcome& o, const std::string& shape, const AccuracyCheck& check,
             const std::vector<float>& reference, const AccuracyBudget& budget) {
  if (check.ratio >= o.error_ratio) {
    o.error_ratio = check.ratio;
    o.max_abs_error = check.max_abs_error;
    o.worst_probe = shape;
  }
  if (check.ratio <= 1) return;
  const double ref =
      check.worst_index >= 0 && check.worst_index < static_cast<int64_t>(reference.size())
          ? reference[check.worst_index]
          : 0;
  Remove(o, "accuracy",
         absl::StrFormat("on probe %s, |out - ref| = %.3g at output element %d (the compiled "
                         "lowering's %.6g) exceeds its budget there, %.3g (%s: atol %g scaled "
                         "by the output's magnitude up to 1, rtol %g plus one ulp of an f16 "
                         "or bf16 output)",
                         shape, check.max_abs_error, check.worst_index, ref, check.allowed,
                         o.candidate.accuracy, budget.atol, budget.rtol));
}

bool SoleSurvivor(Selection& s) {
  std::vector<CandidateOutcome*> alive = s.Alive();
  if (alive.size() != 1) return false;
  alive[0]->reason = "not timed: no contest after the accuracy gate";
  s.Win(*alive[0], s.Forced() ? absl::StrCat(ForcedText(s), "; within its accuracy budget")
                              : "the only candidate left after the accuracy gate");
  return true;
}

absl::Status DecideByNoiseRule(Selection& s, const std::vector<Contestant>& contestants,
                               double budget) {
  // Ties go to the compiled lowering (no external dependency), then by id.
  std::vector<std::string> tie_order;
  for (const CandidateOutcome& o : s.outcomes) tie_order.push_back(o.candidate.id);
  std::stable_sort(tie_order.begin(), tie_order.end(),
                   [](const std::string& a, const std::string& b) {
                     const bool a_compiled = a == kCompiledCandidate;
                     const bool b_compiled = b == kCompiledCandidate;
                     return a_compiled != b_compiled ? a_compiled : a < b;
                   });
  if (contestants.empty()) {
    s.untimed = true;  // not a measurement: not cached
    for (const std::string& id : tie_order) {
      CandidateOutcome* o = s.Outcome(id);
      if (o->gate.empty()) {
        s.Win(*o, absl::StrCat("the budget (", Duration(budget),
                               ") ran out before any candidate was timed: the stable order "
                               "picks ",
                               id));
        break;
      }
    }
    return absl::OkStatus();
  }
  const Ranking ranking = Rank(contestants, s.incumbent, tie_order);
  s.record.separation = ranking.separation;
  s.record.noise = ranking.noise;
  s.Win(*s.Outcome(ranking.winner), ranking.reason);
  return absl::OkStatus();
}

}  // namespace tessera::arbiter::internal
