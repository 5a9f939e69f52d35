// The state of one arbitration and the helpers its steps share (arbiter/selection.h).
#include "arbiter/selection.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "arbiter/matmul_probe.h"

namespace tessera::arbiter::internal {

absl::Mutex& MeasurementMutex() {
  static auto* mu = new absl::Mutex();
  return *mu;
}

std::string Describe(const ArbitrationPoint& p) {
  return absl::StrCat(p.op, " (shape ", p.ShapeText(), ", ", p.DtypeText(), ", ", p.Movement(),
                      p.deterministic ? ", deterministic" : "", ")");
}

absl::Status Error(const ArbitrationPoint& point, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(point.location, ": error: ", message));
}

std::string ContractText(const Candidate& c) {
  return absl::StrCat(c.id, "|", c.provenance, "|", c.determinism, "|", c.accuracy, "|",
                      absl::StrFormat("%.17g|%.17g", c.budget.atol, c.budget.rtol), "|", c.covers,
                      "|", c.identity, "|", c.route);
}

std::string Duration(double seconds) {
  if (seconds >= 1) return absl::StrFormat("%.3f s", seconds);
  if (seconds >= 1e-3) return absl::StrFormat("%.3f ms", seconds * 1e3);
  return absl::StrFormat("%.3f us", seconds * 1e6);
}

void Remove(CandidateOutcome& o, const char* gate, std::string reason) {
  o.gate = gate;
  o.reason = std::move(reason);
}

Selection::Selection(const ArbitrationPoint& point, const std::vector<Candidate>& candidates,
                     const ArbitrationContext& context)
    : point(point), context(context) {
  for (const Candidate& candidate : candidates) {
    CandidateOutcome outcome;
    outcome.candidate = candidate;
    outcomes.push_back(std::move(outcome));
  }
}

CandidateOutcome* Selection::Outcome(const std::string& id) {
  for (CandidateOutcome& o : outcomes) {
    if (o.candidate.id == id) return &o;
  }
  return nullptr;
}

std::string Selection::CandidateIds() const {
  std::vector<std::string> ids;
  for (const CandidateOutcome& o : outcomes) ids.push_back(o.candidate.id);
  return absl::StrJoin(ids, ", ");
}

std::vector<CandidateOutcome*> Selection::Alive() {
  std::vector<CandidateOutcome*> alive;
  for (CandidateOutcome& o : outcomes) {
    if (o.gate.empty()) alive.push_back(&o);
  }
  return alive;
}

bool Selection::Forced() const { return !point.forced.empty(); }

std::string Selection::CannotProbe() const {
  if (std::string uncovered = ProbeCoverage(point); !uncovered.empty()) return uncovered;
  if (context.prober == nullptr) {
    return context.no_prober_reason.empty() ? "no prober for this target"
                                            : context.no_prober_reason;
  }
  return context.prober->Unavailable();
}

double Selection::Budget() const {
  return context.budget_s > 0 ? context.budget_s : kDefaultBudgetSeconds;
}

void Selection::Win(const CandidateOutcome& winner, std::string reason) {
  record.winner = winner.candidate.id;
  record.route = winner.candidate.route;
  record.reason = std::move(reason);
}

absl::Status Selection::CheckForced() {
  if (!Forced()) return absl::OkStatus();
  CandidateOutcome* forced = Outcome(point.forced);
  if (forced->gate.empty()) return absl::OkStatus();
  return Error(point, absl::StrCat(point.op, ": the forced candidate '", point.forced, "' (",
                                   point.forced_by, ") is rejected by the ", forced->gate,
                                   " gate: ", forced->reason));
}

absl::Status Selection::NoSurvivor() {
  std::string report = absl::StrCat("no candidate can run ", Describe(point), ":");
  for (const CandidateOutcome& o : outcomes) {
    absl::StrAppend(&report, "\n  ", o.candidate.id, ": removed by the ", o.gate,
                    " gate: ", o.reason);
  }
  return Error(point, report);
}

}  // namespace tessera::arbiter::internal
