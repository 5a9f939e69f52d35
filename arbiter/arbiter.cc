// The arbiter's entry (arbiter/arbiter.h): the decision keys, and the order of one arbitration's
// steps — the contract gates, then replay or reuse, else the gates on probes and the race.
#include "arbiter/arbiter.h"

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "arbiter/gates.h"
#include "arbiter/race.h"
#include "arbiter/replay.h"
#include "arbiter/selection.h"
#include "base/sha256.h"
#include "base/status_macros.h"

namespace tessera::arbiter {
namespace {

using internal::Selection;

/// Bumped when the selection procedure changes what a decision means.
constexpr char kArbiterVersion[] = "arbiter-2";

std::string Now() {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::Now(), absl::UTCTimeZone());
}

/// Completes the record (outcomes, times); it is kept in the cache when it was measured, or
/// decided unprobed for a reason that repeats.
DecisionRecord Finish(Selection& s, std::chrono::steady_clock::time_point start) {
  s.record.candidates = s.outcomes;
  s.record.measured_ms = s.spent * 1e3;
  s.record.arbitration_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  s.record.created = Now();
  if (((s.probed && !s.untimed) || s.settled_unprobed) && s.context.cache != nullptr) {
    s.context.cache->Store(s.record);
  }
  return s.record;
}

/// Gates 5–7 and the race when probes can run, else the choice without them.
absl::Status Choose(Selection& s) {
  if (const std::string cannot_probe = s.CannotProbe(); !cannot_probe.empty()) {
    return internal::ChooseUnprobed(s, cannot_probe);
  }
  s.probed = true;
  s.record.budget_ms = s.Budget() * 1e3;
  if (!s.point.probe_source.empty()) return internal::ChooseByOpProbes(s);
  TESSERA_RETURN_IF_ERROR(internal::AccuracyGate(s, s.Alive()));
  if (internal::SoleSurvivor(s)) return absl::OkStatus();
  return internal::Measure(s, s.Alive());
}

/// The contract gates, then replay, reuse of a cached decision or deferral, else Choose.
absl::StatusOr<DecisionRecord> Run(Selection& s) {
  const auto start = std::chrono::steady_clock::now();
  s.record.point = s.point;
  s.record.point.device = s.context.prober ? s.context.prober->Device() : s.point.target;
  s.record.shape_bucket = s.point.ShapeBucket();
  s.record.toolchain = s.context.toolchain;
  s.record.timing_source = "none";
  std::vector<Candidate> candidates;
  for (const CandidateOutcome& o : s.outcomes) candidates.push_back(o.candidate);
  const DecisionKeys keys =
      KeysFor(s.point, candidates, s.record.point.device, s.context.toolchain);
  s.record.key = keys.full;
  s.record.base_key = keys.base;

  if (!s.point.forced.empty() && s.Outcome(s.point.forced) == nullptr) {
    return internal::Error(
        s.point, absl::StrCat(s.point.op, ": the forced candidate '", s.point.forced, "' (",
                              s.point.forced_by, ") is unknown; candidates: ", s.CandidateIds()));
  }
  TESSERA_RETURN_IF_ERROR(internal::FilterByContract(s));
  std::vector<CandidateOutcome*> alive = s.Alive();
  if (alive.size() == 1 && alive[0]->candidate.compiled()) {
    // The compiled lowering is the reference lowering: nothing to check it against or race,
    // and nothing worth caching (or pinning: the choice is already reproducible).
    alive[0]->reason = "not probed: no contest";
    if (s.point.batch_invariant) alive[0]->batch_invariance = internal::kByConstruction;
    s.Win(*alive[0], s.Forced() ? absl::StrCat("forced (", s.point.forced_by, ")")
                                : "the only candidate left after applicability, availability, "
                                  "determinism and forcing");
    s.record.source = s.Forced() ? "forced" : "sole candidate";
    return Finish(s, start);
  }
  if (s.context.plan != nullptr) {
    TESSERA_RETURN_IF_ERROR(internal::Replay(s, *s.context.plan));
    return Finish(s, start);
  }
  std::string stale_note;
  if (std::optional<DecisionRecord> reused = internal::Reuse(s, keys, candidates, stale_note)) {
    return *std::move(reused);
  }
  if (internal::Deferred(s)) {
    internal::Defer(s);
    return Finish(s, start);
  }
  TESSERA_RETURN_IF_ERROR(Choose(s));
  if (s.probed) {
    s.record.source = stale_note.empty() ? "measured" : absl::StrCat("measured; ", stale_note);
  }
  return Finish(s, start);
}

}  // namespace

DecisionKeys KeysFor(const ArbitrationPoint& p, const std::vector<Candidate>& candidates,
                     const std::string& device, const std::string& toolchain) {
  DecisionKeys keys;
  const std::string base = absl::StrCat(
      kArbiterVersion, "\nop=", p.op, "\nbucket=", p.ShapeBucket(), "\ndtype=", p.DtypeText(),
      "\ntarget=", p.target, "\narch=", p.arch, "\ndevice=", device, "\nlayout=", p.layout,
      "\npolicy=", p.numeric_policy, "\nmovement=", p.Movement(),
      "\ndeterminism=", p.DeterminismLevel(), "\nforced=", p.forced, "\n",
      p.probe_source.empty() ? "" : absl::StrCat("body=", Sha256Hex(p.probe_source), "\n"));
  keys.base = Sha256Hex(base);
  std::string full = absl::StrCat(base, "toolchain=", toolchain, "\n");
  for (const Candidate& c : candidates) {
    absl::StrAppend(&full, "candidate=", internal::ContractText(c), "\n");
  }
  keys.full = Sha256Hex(full);
  return keys;
}

absl::StatusOr<DecisionRecord> Arbitrate(const ArbitrationPoint& point,
                                         const std::vector<Candidate>& candidates,
                                         const ArbitrationContext& context) {
  Selection selection(point, candidates, context);
  return Run(selection);
}

}  // namespace tessera::arbiter
