// Decisions made without measuring: replay of the candidate a plan pins, reuse of the decision
// cache's record, and the incumbent serving while a background decision is pending.
#include "arbiter/replay.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "arbiter/candidate.h"
#include "arbiter/decision_cache.h"

namespace tessera::arbiter::internal {
namespace {

/// What changed between a stale record and now, e.g. "openblas: A → B".
std::string DescribeChange(const DecisionRecord& old, const std::vector<Candidate>& candidates,
                           const std::string& toolchain) {
  std::vector<std::string> changes;
  if (old.toolchain != toolchain) {
    changes.push_back(absl::StrCat("toolchain ", old.toolchain, " → ", toolchain));
  }
  for (const Candidate& c : candidates) {
    const CandidateOutcome* before = old.Find(c.id);
    if (before == nullptr) {
      changes.push_back(absl::StrCat("new candidate ", c.id));
    } else if (ContractText(before->candidate) != ContractText(c)) {
      changes.push_back(
          before->candidate.identity == c.identity
              ? absl::StrCat(c.id, " contract changed")
              : absl::StrCat(c.id, ": ", before->candidate.identity, " → ", c.identity));
    }
  }
  for (const CandidateOutcome& before : old.candidates) {
    bool present = false;
    for (const Candidate& c : candidates) present |= c.id == before.candidate.id;
    if (!present) changes.push_back(absl::StrCat(before.candidate.id, " removed"));
  }
  return changes.empty() ? "unknown change" : absl::StrJoin(changes, "; ");
}

}  // namespace

absl::Status Replay(Selection& s, const Plan& plan) {
  const std::string where =
      absl::StrCat(Describe(s.point), " in @", s.point.function, " (plan ", plan.name(), ")");
  const PlanEntry* entry = plan.Find(s.point);
  if (entry == nullptr) {
    if (s.context.plan_strict) {
      return Error(s.point, absl::StrCat("strict replay: ", where,
                                         " is not in the plan; export a plan from a compile that "
                                         "decided it, or replay without strict"));
    }
    CandidateOutcome* compiled = s.Outcome(kCompiledCandidate);
    CandidateOutcome* chosen = compiled->gate.empty() ? compiled : s.Alive()[0];
    if (!chosen->candidate.BatchInvariantByConstruction() && s.point.batch_invariant) {
      return Error(s.point, absl::StrCat("replay: ", where,
                                         " is not in the plan, and the "
                                         "forced candidate '",
                                         chosen->candidate.id,
                                         "' cannot prove batch invariance with probes off"));
    }
    for (CandidateOutcome* o : s.Alive()) {
      if (o != chosen) Remove(*o, "plan", "replay: not in the plan and measurement is off");
    }
    if (s.point.batch_invariant) chosen->batch_invariance = kByConstruction;
    chosen->reason = "not probed: replay";
    s.Win(*chosen, chosen->candidate.compiled()
                       ? "not in the plan: the compiled lowering runs (replay measures nothing)"
                       : absl::StrCat("forced (", s.point.forced_by,
                                      "); not in the plan: taken as declared"));
    s.record.source = "replay: not in the plan";
    return absl::OkStatus();
  }
  CandidateOutcome* pinned = s.Outcome(entry->winner);
  if (pinned == nullptr) {
    return Error(s.point,
                 absl::StrCat("replay: the plan pins '", entry->winner, "' for ", where,
                              ", which is not a candidate here; candidates: ", s.CandidateIds()));
  }
  if (!pinned->gate.empty()) {
    return Error(s.point,
                 absl::StrCat("replay: the plan pins '", entry->winner, "' for ", where,
                              ", which the ", pinned->gate, " gate removes: ", pinned->reason));
  }
  std::string note;
  if (!entry->identity.empty() && entry->identity != pinned->candidate.identity) {
    if (s.point.batch_invariant && !pinned->candidate.BatchInvariantByConstruction()) {
      return Error(s.point, absl::StrCat("replay: the plan pins '", entry->winner, "' for ", where,
                                         " at the batch_invariant level, but it changed since its "
                                         "batch invariance was proven (",
                                         entry->identity, " → ", pinned->candidate.identity,
                                         "); decide it again and export a new plan"));
    }
    note = absl::StrCat("; its identity changed since: ", entry->identity, " → ",
                        pinned->candidate.identity);
  }
  for (CandidateOutcome* o : s.Alive()) {
    if (o != pinned) Remove(*o, "plan", absl::StrCat("the plan pins '", entry->winner, "'"));
  }
  if (s.point.batch_invariant) {
    pinned->batch_invariance =
        pinned->candidate.BatchInvariantByConstruction()
            ? kByConstruction
            : absl::StrCat("proven when the plan's decision was made (record ",
                           entry->record.substr(0, 16), ")");
  }
  pinned->reason = "not probed: pinned";
  s.Win(*pinned,
        absl::StrCat("pinned by the plan ", plan.name(), " (decided: ", entry->source, ", on ",
                     entry->device, ", record ", entry->record.substr(0, 16), ")", note));
  s.record.source = "pinned";
  return absl::OkStatus();
}

std::optional<DecisionRecord> Reuse(Selection& s, const DecisionKeys& keys,
                                    const std::vector<Candidate>& candidates,
                                    std::string& stale_note) {
  DecisionCache::Lookup found;
  if (s.context.cache != nullptr) found = s.context.cache->Find(keys.full, keys.base);
  if (found.fresh) {
    DecisionRecord reused = *found.fresh;
    reused.point.location = s.point.location;
    reused.point.function = s.point.function;
    reused.point.probe_source = s.point.probe_source;  // not in the JSON; part of plan keys
    reused.source = "cache";
    return reused;
  }
  if (found.stale) {
    s.incumbent = found.stale->winner;
    stale_note = absl::StrCat("stale record (",
                              DescribeChange(*found.stale, candidates, s.context.toolchain),
                              ") kept; re-measured with its winner ", s.incumbent, " as incumbent");
  }
  return std::nullopt;
}

bool Deferred(const Selection& s) {
  if (!s.context.defer || s.Forced() || !s.CannotProbe().empty()) return false;
  return !s.point.deterministic || s.context.defer_deterministic;
}

void Defer(Selection& s) {
  CandidateOutcome* incumbent = s.Outcome(kCompiledCandidate);
  // A stale record's delegate serves meanwhile — but not at the batch_invariant level: its
  // proof was for another build (replay refuses it for the same reason).
  if (CandidateOutcome* stale = s.incumbent.empty() ? nullptr : s.Outcome(s.incumbent);
      stale != nullptr && stale->gate.empty() &&
      (!s.point.batch_invariant || stale->candidate.BatchInvariantByConstruction())) {
    incumbent = stale;
  }
  for (CandidateOutcome* o : s.Alive()) o->reason = "not probed yet: the decision is pending";
  if (s.point.batch_invariant && incumbent->candidate.BatchInvariantByConstruction()) {
    incumbent->batch_invariance = kByConstruction;
  }
  s.Win(*incumbent, absl::StrCat("incumbent while the decision is measured in the background (",
                                 incumbent->candidate.compiled() ? "the compiled lowering"
                                                                 : "a stale record's winner",
                                 ")"));
  s.record.source = kPendingSource;
}

}  // namespace tessera::arbiter::internal
