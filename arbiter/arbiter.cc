#include "arbiter/arbiter.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "arbiter/batch_invariance.h"
#include "arbiter/matmul_probe.h"
#include "arbiter/op_probe.h"
#include "arbiter/timing.h"
#include "base/sha256.h"
#include "base/status_macros.h"

namespace tessera::arbiter {
namespace {

/// Bumped when the selection procedure changes what a decision means.
constexpr char kArbiterVersion[] = "arbiter-2";

/// Measurement policy (racing under the time budget): warm up for kWarmupSeconds (less when
/// the budget is small); a sample times enough back-to-back runs to last kSampleSeconds; a
/// candidate takes at least kMinSamples before it can be dropped, settles once the 95 %
/// confidence interval of its median (from kConfidenceSamples on) is within kSettledRelative
/// of it or kSettledAbsolute, and stops at kMaxSamples.
constexpr double kWarmupSeconds = 0.01;
constexpr double kSampleSeconds = 0.001;
constexpr int kMinSamples = 3;
constexpr int kConfidenceSamples = 5;
constexpr int kMaxSamples = 41;
constexpr double kSettledRelative = 0.01;
constexpr double kSettledAbsolute = 0.5e-6;
/// Bounds on the warm-up runs of a candidate and the runs of one sample.
constexpr int kMaxWarmupRuns = 100000;
constexpr int kMaxRepetitions = 1000000;
/// The timed problem is also checked against the reference when it is this small (M·N·K).
constexpr int64_t kCheckTimedProblemLimit = int64_t{1} << 21;

absl::Mutex& MeasurementMutex() {
  static auto* mu = new absl::Mutex();
  return *mu;
}

std::string Now() {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::Now(), absl::UTCTimeZone());
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
                      absl::StrFormat("%.17g|%.17g", c.budget.atol, c.budget.rtol), "|",
                      c.covers, "|", c.identity, "|", c.route);
}

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
      changes.push_back(before->candidate.identity == c.identity
                            ? absl::StrCat(c.id, " contract changed")
                            : absl::StrCat(c.id, ": ", before->candidate.identity, " → ",
                                           c.identity));
    }
  }
  for (const CandidateOutcome& before : old.candidates) {
    bool present = false;
    for (const Candidate& c : candidates) present |= c.id == before.candidate.id;
    if (!present) changes.push_back(absl::StrCat(before.candidate.id, " removed"));
  }
  return changes.empty() ? "unknown change" : absl::StrJoin(changes, "; ");
}

std::string Duration(double seconds) {
  if (seconds >= 1) return absl::StrFormat("%.3f s", seconds);
  if (seconds >= 1e-3) return absl::StrFormat("%.3f ms", seconds * 1e3);
  return absl::StrFormat("%.3f us", seconds * 1e6);
}

/// A kernel in the race.
struct Racer {
  CandidateOutcome* outcome;
  std::unique_ptr<ProbeKernel> kernel;
  int repetitions = 1;
  double per_run = 0;  ///< the latest seconds per run
  std::vector<double> samples;
  bool running = true;

  const std::string& id() const { return outcome->candidate.id; }
  void Stop(std::string why) {
    running = false;
    outcome->race = std::move(why);
  }
};

class Selection {
 public:
  Selection(const ArbitrationPoint& point, const std::vector<Candidate>& candidates,
            const ArbitrationContext& context)
      : point_(point), context_(context) {
    for (const Candidate& candidate : candidates) {
      CandidateOutcome outcome;
      outcome.candidate = candidate;
      outcomes_.push_back(std::move(outcome));
    }
  }

  absl::StatusOr<DecisionRecord> Run() {
    const auto start = std::chrono::steady_clock::now();
    record_.point = point_;
    record_.point.device = context_.prober ? context_.prober->Device() : point_.target;
    record_.shape_bucket = point_.ShapeBucket();
    record_.toolchain = context_.toolchain;
    record_.timing_source = "none";
    std::vector<Candidate> candidates;
    for (const CandidateOutcome& o : outcomes_) candidates.push_back(o.candidate);
    const DecisionKeys keys =
        KeysFor(point_, candidates, record_.point.device, context_.toolchain);
    record_.key = keys.full;
    record_.base_key = keys.base;

    if (!point_.forced.empty() && Outcome(point_.forced) == nullptr) {
      return Error(point_, absl::StrCat(point_.op, ": the forced candidate '", point_.forced,
                                        "' (", point_.forced_by, ") is unknown; candidates: ",
                                        CandidateIds()));
    }
    TESSERA_RETURN_IF_ERROR(FilterByContract());
    std::vector<CandidateOutcome*> alive = Alive();
    if (alive.size() == 1 && alive[0]->candidate.compiled()) {
      // The compiled lowering is the reference lowering: nothing to check it against or race,
      // and nothing worth caching (or pinning: the choice is already reproducible).
      alive[0]->reason = "not probed: no contest";
      if (point_.batch_invariant) alive[0]->batch_invariance = kByConstruction;
      Win(*alive[0], Forced() ? absl::StrCat("forced (", point_.forced_by, ")")
                              : "the only candidate left after applicability, availability, "
                                "determinism and forcing");
      record_.source = Forced() ? "forced" : "sole candidate";
      return Finish(start);
    }
    if (context_.plan != nullptr) {
      TESSERA_RETURN_IF_ERROR(Replay(*context_.plan));
      return Finish(start);
    }
    DecisionCache::Lookup found;
    if (context_.cache != nullptr) found = context_.cache->Find(keys.full, keys.base);
    if (found.fresh) {
      DecisionRecord reused = *found.fresh;
      reused.point.location = point_.location;
      reused.point.function = point_.function;
      reused.point.probe_source = point_.probe_source;  // not in the JSON; part of plan keys
      reused.source = "cache";
      return reused;
    }
    std::string incumbent;
    std::string stale_note;
    if (found.stale) {
      incumbent = found.stale->winner;
      stale_note = absl::StrCat("stale record (", DescribeChange(*found.stale, candidates,
                                                                 context_.toolchain),
                                ") kept; re-measured with its winner ", incumbent,
                                " as incumbent");
    }
    incumbent_ = incumbent;
    if (Deferred()) {
      Defer(incumbent);
      return Finish(start);
    }
    TESSERA_RETURN_IF_ERROR(Choose());
    if (probed_) {
      record_.source = stale_note.empty() ? "measured" : absl::StrCat("measured; ", stale_note);
    }
    return Finish(start);
  }

  DecisionRecord Finish(std::chrono::steady_clock::time_point start) {
    record_.candidates = outcomes_;
    record_.measured_ms = spent_ * 1e3;
    record_.arbitration_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
    record_.created = Now();
    if (((probed_ && !untimed_) || settled_unprobed_) && context_.cache != nullptr) {
      context_.cache->Store(record_);
    }
    return record_;
  }

 private:
  static constexpr char kByConstruction[] = "by construction";

  CandidateOutcome* Outcome(const std::string& id) {
    for (CandidateOutcome& o : outcomes_) {
      if (o.candidate.id == id) return &o;
    }
    return nullptr;
  }

  std::string CandidateIds() const {
    std::vector<std::string> ids;
    for (const CandidateOutcome& o : outcomes_) ids.push_back(o.candidate.id);
    return absl::StrJoin(ids, ", ");
  }

  std::vector<CandidateOutcome*> Alive() {
    std::vector<CandidateOutcome*> alive;
    for (CandidateOutcome& o : outcomes_) {
      if (o.gate.empty()) alive.push_back(&o);
    }
    return alive;
  }

  bool Forced() const { return !point_.forced.empty(); }

  /// Why this point's candidates cannot be probed here ("" when they can): a point the probes
  /// do not cover (ProbeCoverage), or no prober or device.
  std::string CannotProbe() const {
    if (std::string uncovered = ProbeCoverage(point_); !uncovered.empty()) return uncovered;
    if (context_.prober == nullptr) {
      return context_.no_prober_reason.empty() ? "no prober for this target"
                                               : context_.no_prober_reason;
    }
    return context_.prober->Unavailable();
  }

  void Remove(CandidateOutcome& o, const char* gate, std::string reason) {
    o.gate = gate;
    o.reason = std::move(reason);
  }

  /// A forced candidate removed by a gate fails the compile, naming the gate.
  absl::Status CheckForced() {
    if (!Forced()) return absl::OkStatus();
    CandidateOutcome* forced = Outcome(point_.forced);
    if (forced->gate.empty()) return absl::OkStatus();
    return Error(point_, absl::StrCat(point_.op, ": the forced candidate '", point_.forced, "' (",
                                      point_.forced_by, ") is rejected by the ", forced->gate,
                                      " gate: ", forced->reason));
  }

  absl::Status NoSurvivor() {
    std::string report = absl::StrCat("no candidate can run ", Describe(point_), ":");
    for (const CandidateOutcome& o : outcomes_) {
      absl::StrAppend(&report, "\n  ", o.candidate.id, ": removed by the ", o.gate, " gate: ",
                      o.reason);
    }
    return Error(point_, report);
  }

  /// Gates 1–4: applicability, availability, determinism, forcing.
  absl::Status FilterByContract() {
    for (CandidateOutcome* o : Alive()) {
      if (!o->candidate.inapplicable.empty()) {
        Remove(*o, "applicability", o->candidate.inapplicable);
      }
    }
    for (CandidateOutcome* o : Alive()) {
      if (!o->candidate.unavailable.empty()) Remove(*o, "availability", o->candidate.unavailable);
    }
    if (point_.deterministic || point_.batch_invariant) {
      for (CandidateOutcome* o : Alive()) {
        if (o->candidate.determinism != "deterministic") {
          Remove(*o, "determinism",
                 absl::StrCat("it declares determinism = \"", o->candidate.determinism,
                              "\" and @", point_.function,
                              " must be deterministic (tessera.deterministic or a deterministic "
                              "compile)"));
        }
      }
    }
    TESSERA_RETURN_IF_ERROR(CheckForced());
    if (Forced()) {
      for (CandidateOutcome* o : Alive()) {
        if (o->candidate.id != point_.forced) {
          Remove(*o, "forcing",
                 absl::StrCat("the field is restricted to '", point_.forced, "' (",
                              point_.forced_by, ")"));
        }
      }
    }
    if (Alive().empty()) return NoSurvivor();
    return absl::OkStatus();
  }

  void Win(const CandidateOutcome& winner, std::string reason) {
    record_.winner = winner.candidate.id;
    record_.route = winner.candidate.route;
    record_.reason = std::move(reason);
  }

  /// Replay: the plan's pinned candidate, nothing probed or timed.
  absl::Status Replay(const Plan& plan) {
    const std::string where =
        absl::StrCat(Describe(point_), " in @", point_.function, " (plan ", plan.name(), ")");
    const PlanEntry* entry = plan.Find(point_);
    if (entry == nullptr) {
      if (context_.plan_strict) {
        return Error(point_, absl::StrCat(
                                 "strict replay: ", where,
                                 " is not in the plan; export a plan from a compile that "
                                 "decided it, or replay without strict"));
      }
      CandidateOutcome* compiled = Outcome(kCompiledCandidate);
      CandidateOutcome* chosen = compiled->gate.empty() ? compiled : Alive()[0];
      if (!chosen->candidate.BatchInvariantByConstruction() && point_.batch_invariant) {
        return Error(point_, absl::StrCat("replay: ", where, " is not in the plan, and the "
                                          "forced candidate '", chosen->candidate.id,
                                          "' cannot prove batch invariance with probes off"));
      }
      for (CandidateOutcome* o : Alive()) {
        if (o != chosen) Remove(*o, "plan", "replay: not in the plan and measurement is off");
      }
      if (point_.batch_invariant) chosen->batch_invariance = kByConstruction;
      chosen->reason = "not probed: replay";
      Win(*chosen, chosen->candidate.compiled()
                       ? "not in the plan: the compiled lowering runs (replay measures nothing)"
                       : absl::StrCat("forced (", point_.forced_by,
                                      "); not in the plan: taken as declared"));
      record_.source = "replay: not in the plan";
      return absl::OkStatus();
    }
    CandidateOutcome* pinned = Outcome(entry->winner);
    if (pinned == nullptr) {
      return Error(point_, absl::StrCat("replay: the plan pins '", entry->winner, "' for ",
                                        where, ", which is not a candidate here; candidates: ",
                                        CandidateIds()));
    }
    if (!pinned->gate.empty()) {
      return Error(point_, absl::StrCat("replay: the plan pins '", entry->winner, "' for ",
                                        where, ", which the ", pinned->gate,
                                        " gate removes: ", pinned->reason));
    }
    std::string note;
    if (!entry->identity.empty() && entry->identity != pinned->candidate.identity) {
      if (point_.batch_invariant && !pinned->candidate.BatchInvariantByConstruction()) {
        return Error(point_, absl::StrCat(
                                 "replay: the plan pins '", entry->winner, "' for ", where,
                                 " at the batch_invariant level, but it changed since its "
                                 "batch invariance was proven (",
                                 entry->identity, " → ", pinned->candidate.identity,
                                 "); decide it again and export a new plan"));
      }
      note = absl::StrCat("; its identity changed since: ", entry->identity, " → ",
                          pinned->candidate.identity);
    }
    for (CandidateOutcome* o : Alive()) {
      if (o != pinned) Remove(*o, "plan", absl::StrCat("the plan pins '", entry->winner, "'"));
    }
    if (point_.batch_invariant) {
      pinned->batch_invariance =
          pinned->candidate.BatchInvariantByConstruction()
              ? kByConstruction
              : absl::StrCat("proven when the plan's decision was made (record ",
                             entry->record.substr(0, 16), ")");
    }
    pinned->reason = "not probed: pinned";
    Win(*pinned, absl::StrCat("pinned by the plan ", plan.name(), " (decided: ", entry->source,
                              ", on ", entry->device, ", record ", entry->record.substr(0, 16),
                              ")", note));
    record_.source = "pinned";
    return absl::OkStatus();
  }

  /// Whether this contest is left to the background (ArbitrationContext::defer): not a forced
  /// point, probes can run, and not deterministic unless allowed.
  bool Deferred() const {
    if (!context_.defer || Forced() || !CannotProbe().empty()) return false;
    return !point_.deterministic || context_.defer_deterministic;
  }

  /// The incumbent serves while the decision is pending.
  void Defer(const std::string& stale_winner) {
    CandidateOutcome* incumbent = Outcome(kCompiledCandidate);
    // A stale record's delegate serves meanwhile — but not at the batch_invariant level: its
    // proof was for another build (replay refuses it for the same reason).
    if (CandidateOutcome* stale = stale_winner.empty() ? nullptr : Outcome(stale_winner);
        stale != nullptr && stale->gate.empty() &&
        (!point_.batch_invariant || stale->candidate.BatchInvariantByConstruction())) {
      incumbent = stale;
    }
    for (CandidateOutcome* o : Alive()) o->reason = "not probed yet: the decision is pending";
    if (point_.batch_invariant && incumbent->candidate.BatchInvariantByConstruction()) {
      incumbent->batch_invariance = kByConstruction;
    }
    Win(*incumbent, absl::StrCat("incumbent while the decision is measured in the background (",
                                 incumbent->candidate.compiled() ? "the compiled lowering"
                                                                 : "a stale record's winner",
                                 ")"));
    record_.source = kPendingSource;
  }

  absl::Status Choose() {
    if (const std::string cannot_probe = CannotProbe(); !cannot_probe.empty()) {
      return ChooseUnprobed(cannot_probe);
    }
    probed_ = true;
    record_.budget_ms = Budget() * 1e3;
    if (!point_.probe_source.empty()) return ChooseByOpProbes();
    TESSERA_RETURN_IF_ERROR(AccuracyGate(Alive()));
    if (SoleSurvivor()) return absl::OkStatus();
    return Measure(Alive());
  }

  std::string ForcedText() const {
    return Forced() ? absl::StrCat("forced (", point_.forced_by, ")") : "";
  }

  /// When the accuracy gate left one candidate, it wins untimed (true).
  bool SoleSurvivor() {
    std::vector<CandidateOutcome*> alive = Alive();
    if (alive.size() != 1) return false;
    alive[0]->reason = "not timed: no contest after the accuracy gate";
    Win(*alive[0], Forced() ? absl::StrCat(ForcedText(), "; within its accuracy budget")
                            : "the only candidate left after the accuracy gate");
    return true;
  }

  /// Probes cannot run (`cannot_probe` says why): the compiled lowering is kept, or a forced
  /// candidate taken as declared; at the batch_invariant level only candidates invariant by
  /// construction stay.
  absl::Status ChooseUnprobed(const std::string& cannot_probe) {
    probed_ = false;
    std::vector<CandidateOutcome*> alive = Alive();
    if (point_.batch_invariant) {
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
      TESSERA_RETURN_IF_ERROR(CheckForced());
      alive = Alive();
    }
    for (CandidateOutcome* o : alive) o->reason = absl::StrCat("not probed: ", cannot_probe);
    record_.source = "unprobed";
    if (Forced()) {
      Win(*alive[0], absl::StrCat(ForcedText(), "; taken as declared: accuracy and timing "
                                                "cannot be probed here (",
                                  cannot_probe, ")"));
      return absl::OkStatus();
    }
    CandidateOutcome* compiled = Outcome(kCompiledCandidate);
    Win(*compiled, absl::StrCat("probes cannot run here (", cannot_probe,
                                "); the compiled lowering is kept — a delegate runs unprobed "
                                "only when forced"));
    return absl::OkStatus();
  }

  /// Gates 5–7 for an op with a probe function (arbiter/op_probe.h): the compiled lowering's
  /// output on each probe is the reference (it runs even when forcing removed it from the
  /// field); every other survivor must match it within its budget; then the race at
  /// kOpTimedSize, its timed output checked too.
  absl::Status ChooseByOpProbes() {
    CandidateOutcome* compiled = Outcome(kCompiledCandidate);
    absl::StatusOr<std::unique_ptr<ProbeKernel>> reference =
        context_.prober->Prepare(point_, compiled->candidate, nullptr);
    // Without its reference the contest cannot run: decided unprobed (kept only when the
    // failure would repeat: ChooseUnprobedFor).
    if (!reference.ok()) {
      return ChooseUnprobedFor(reference.status(),
                               absl::StrCat("the compiled lowering's probe kernel (the "
                                            "reference) failed to build: ",
                                            reference.status().message()));
    }
    std::vector<int64_t> sizes(std::begin(kOpProbeSizes), std::end(kOpProbeSizes));
    sizes.push_back(kOpTimedSize);
    std::vector<std::vector<float>> references;
    std::vector<std::vector<OutputSegment>> segments;
    std::vector<std::string> shapes;
    for (size_t i = 0; i < sizes.size(); ++i) {
      absl::StatusOr<std::vector<float>> out =
          (*reference)->RunOp(sizes[i], static_cast<uint32_t>(1000 + i));
      if (!out.ok()) return ChooseUnprobedFor(out.status(), std::string(out.status().message()));
      references.push_back(*std::move(out));
      segments.push_back((*reference)->OutputSegments());
      shapes.push_back((*reference)->BoundShape());
    }
    // Gate 5 on the accuracy probes, then the timed size's run (bound for Time), checked too.
    std::vector<Racer> racers;
    for (CandidateOutcome* o : Alive()) {
      std::unique_ptr<ProbeKernel> kernel;
      if (o->candidate.compiled()) {
        o->error_ratio = 0;
        o->worst_probe = shapes.back();
        kernel = *std::move(reference);  // already bound to the timed size, its last run
      } else {
        absl::StatusOr<std::unique_ptr<ProbeKernel>> built =
            context_.prober->Prepare(point_, o->candidate, nullptr);
        if (!built.ok()) {
          Remove(*o, "availability",
                 absl::StrCat("its probe kernel failed to build: ", built.status().message()));
          continue;
        }
        kernel = *std::move(built);
        const AccuracyBudget& budget = o->candidate.budget;
        for (size_t i = 0; i < sizes.size() && o->gate.empty(); ++i) {
          absl::StatusOr<std::vector<float>> out =
              kernel->RunOp(sizes[i], static_cast<uint32_t>(1000 + i));
          if (!out.ok()) {
            Remove(*o, "availability", absl::StrCat("it failed on probe ", shapes[i], ": ",
                                                    out.status().message()));
            break;
          }
          JudgeOp(*o, shapes[i],
                  CompareOutputs(*out, references[i], budget, segments[i],
                                 AtolScale::kOutputMagnitude),
                  references[i], budget);
        }
        if (!o->gate.empty()) continue;
      }
      if (point_.batch_invariant) {
        if (o->candidate.BatchInvariantByConstruction()) {
          o->batch_invariance = kByConstruction;
        } else {
          Remove(*o, "batch invariance",
                 absl::StrCat("only tile.matmul has a batch-invariance replay probe; ", point_.op,
                              " candidates must be invariant by construction"));
          continue;
        }
      }
      // The estimate for the race: the timed problem's run just made.
      const double run = kernel->LastRunSeconds();
      if (run > 0) {
        seconds_per_mac_[o->candidate.id] = run;
      } else {
        absl::MutexLock lock(&MeasurementMutex());
        absl::StatusOr<double> seconds = kernel->Time(1);
        if (seconds.ok() && *seconds > 0) {
          seconds_per_mac_[o->candidate.id] = *seconds;
          spent_ += *seconds;
        }
      }
      racers.push_back(Racer{o, std::move(kernel)});
    }
    TESSERA_RETURN_IF_ERROR(CheckForced());
    if (Alive().empty()) return NoSurvivor();
    if (SoleSurvivor()) return absl::OkStatus();
    record_.measured_shape = shapes.back();
    record_.timing_source = context_.prober->TimingSource();
    {
      absl::MutexLock lock(&MeasurementMutex());
      TESSERA_RETURN_IF_ERROR(Race(racers, Budget(), 1.0));
    }
    return DecideRace(racers, Budget());
  }

  /// The op's reference failed with `status`: decided unprobed, and the decision kept when
  /// the failure would repeat (a probe that cannot bind or a run-time check fails on the fixed
  /// inputs: FailedPrecondition; a probe module that does not compile: InvalidArgument or
  /// Unimplemented) — not when forced, nor for a device error that may pass.
  absl::Status ChooseUnprobedFor(const absl::Status& status, const std::string& cannot_probe) {
    settled_unprobed_ = !Forced() && (absl::IsFailedPrecondition(status) ||
                                      absl::IsInvalidArgument(status) ||
                                      absl::IsUnimplemented(status));
    return ChooseUnprobed(cannot_probe);
  }

  /// Folds one op probe's comparison with the reference into `o`; removes it when over budget.
  void JudgeOp(CandidateOutcome& o, const std::string& shape, const AccuracyCheck& check,
               const std::vector<float>& reference, const AccuracyBudget& budget) {
    if (check.ratio >= o.error_ratio) {
      o.error_ratio = check.ratio;
      o.max_abs_error = check.max_abs_error;
      o.worst_probe = shape;
    }
    if (check.ratio <= 1) return;
    const double ref = check.worst_index >= 0 &&
                               check.worst_index < static_cast<int64_t>(reference.size())
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

  /// Gate 5: every survivor against the host reference on the probes; at the batch_invariant
  /// level, each delegate then proves batch invariance on the same kernel (gate 6). Also
  /// estimates each survivor's seconds per multiply-add on the op-shaped probe, which sizes
  /// the timed problem.
  absl::Status AccuracyGate(const std::vector<CandidateOutcome*>& alive) {
    const std::vector<MatmulProblem> probes = AccuracyProbes(point_);
    std::vector<MatmulInputs> inputs;
    std::vector<std::vector<double>> references;
    for (size_t i = 0; i < probes.size(); ++i) {
      inputs.push_back(MakeInputs(probes[i], static_cast<uint32_t>(1000 + i)));
      references.push_back(ReferenceMatmul(inputs.back()));
    }
    for (CandidateOutcome* o : alive) {
      absl::StatusOr<std::unique_ptr<ProbeKernel>> kernel =
          context_.prober->Prepare(point_, o->candidate, nullptr);
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
      if (!(probe_run > (Budget() - spent_) / 10)) {
        absl::MutexLock lock(&MeasurementMutex());  // a timed run, as in the race
        absl::StatusOr<double> seconds = (*kernel)->Time(1);
        if (seconds.ok() && *seconds > 0) {
          estimate = *seconds;
          spent_ += *seconds;
        }
      }
      if (estimate > 0) seconds_per_mac_[o->candidate.id] = estimate / Macs(probes[0]);
      if (point_.batch_invariant) {
        if (o->candidate.BatchInvariantByConstruction()) {
          o->batch_invariance = kByConstruction;
          continue;
        }
        absl::StatusOr<BatchInvarianceProof> proof = ProveBatchInvariance(**kernel, point_);
        if (!proof.ok()) {
          Remove(*o, "availability",
                 absl::StrCat("it failed on the batch-invariance probe: ",
                              proof.status().message()));
        } else if (!proof->invariant) {
          o->batch_invariance = proof->text;
          Remove(*o, "batch invariance", proof->text);
        } else {
          o->batch_invariance = absl::StrCat("proven: ", proof->text);
        }
      }
    }
    TESSERA_RETURN_IF_ERROR(CheckForced());
    if (Alive().empty()) return NoSurvivor();
    return absl::OkStatus();
  }

  /// Folds one probe's result into `o`; removes it when over budget.
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

  double Budget() const {
    return context_.budget_s > 0 ? context_.budget_s : kDefaultBudgetSeconds;
  }

  /// The most multiply-adds a timed run may have so that every survivor's minimum (the checked
  /// run, one warm-up run and kMinSamples one-run samples) fits half of what is left of the
  /// budget, from the estimates of the accuracy gate.
  double MaxTimedMacs(const std::vector<CandidateOutcome*>& alive) const {
    double seconds_per_mac = 0;
    for (const CandidateOutcome* o : alive) {
      auto it = seconds_per_mac_.find(o->candidate.id);
      if (it != seconds_per_mac_.end()) seconds_per_mac += it->second;
    }
    if (seconds_per_mac <= 0) return std::numeric_limits<double>::infinity();
    return std::max(0.0, Budget() - spent_) / 2 / ((2 + kMinSamples) * seconds_per_mac);
  }

  /// Step 7: the survivors race under the budget, then the noise rule.
  absl::Status Measure(const std::vector<CandidateOutcome*>& alive) {
    const double budget = Budget();
    std::string capped_why;
    const MatmulProblem problem = TimedProblem(point_, MaxTimedMacs(alive), &capped_why);
    const MatmulInputs inputs = MakeInputs(problem, 7);
    const bool check = problem.m * problem.n * problem.k <= kCheckTimedProblemLimit;
    const std::vector<double> reference = check ? ReferenceMatmul(inputs) : std::vector<double>();
    record_.measured_shape = problem.ShapeText();
    if (!capped_why.empty()) absl::StrAppend(&record_.measured_shape, " (", capped_why, ")");
    record_.timing_source = context_.prober->TimingSource();
    std::vector<Racer> racers;
    for (CandidateOutcome* o : alive) {
      absl::StatusOr<std::unique_ptr<ProbeKernel>> kernel =
          context_.prober->Prepare(point_, o->candidate, &problem);
      if (!kernel.ok()) {
        Remove(*o, "availability",
               absl::StrCat("its timed kernel failed to build: ", kernel.status().message()));
        continue;
      }
      absl::StatusOr<std::vector<float>> out = (*kernel)->Run(inputs);
      if (!out.ok()) {
        Remove(*o, "availability",
               absl::StrCat("its timed kernel failed: ", out.status().message()));
        continue;
      }
      if (check) {
        Judge(*o, problem, *out, reference);
        if (!o->gate.empty()) continue;
      }
      racers.push_back(Racer{o, std::move(*kernel)});
    }
    TESSERA_RETURN_IF_ERROR(CheckForced());
    if (Alive().empty()) return NoSurvivor();
    {
      // Timings of concurrent arbitrations would disturb each other.
      absl::MutexLock lock(&MeasurementMutex());
      TESSERA_RETURN_IF_ERROR(Race(racers, budget, Macs(problem)));
    }
    return DecideRace(racers, budget);
  }

  /// Step 7's end: the raced candidates' summaries, then the noise rule picks the winner.
  absl::Status DecideRace(std::vector<Racer>& racers, double budget) {
    std::vector<Contestant> contestants;
    for (Racer& r : racers) {
      const TimingSummary summary = Summarize(r.samples);
      r.outcome->median_s = summary.median_s;
      r.outcome->spread = summary.spread;
      r.outcome->samples = summary.samples;
      if (summary.samples == 0) {
        r.outcome->reason = "not timed: the budget ran out before its first sample";
        continue;
      }
      contestants.push_back(Contestant{r.id(), summary});
    }
    // Ties go to the compiled lowering (no external dependency), then by id.
    std::vector<std::string> tie_order;
    for (const CandidateOutcome& o : outcomes_) tie_order.push_back(o.candidate.id);
    std::stable_sort(tie_order.begin(), tie_order.end(),
                     [](const std::string& a, const std::string& b) {
                       const bool a_compiled = a == kCompiledCandidate;
                       const bool b_compiled = b == kCompiledCandidate;
                       return a_compiled != b_compiled ? a_compiled : a < b;
                     });
    if (contestants.empty()) {
      untimed_ = true;  // not a measurement: not cached
      for (const std::string& id : tie_order) {
        CandidateOutcome* o = Outcome(id);
        if (o->gate.empty()) {
          Win(*o, absl::StrCat("the budget (", Duration(budget),
                               ") ran out before any candidate was timed: the stable order "
                               "picks ",
                               id));
          break;
        }
      }
      return absl::OkStatus();
    }
    const Ranking ranking = Rank(contestants, incumbent_, tie_order);
    record_.separation = ranking.separation;
    record_.noise = ranking.noise;
    Win(*Outcome(ranking.winner), ranking.reason);
    return absl::OkStatus();
  }

  /// Runs `seconds` of candidate time when it fits the budget; false when it does not.
  bool Fits(double seconds, double budget) const { return spent_ + seconds <= budget; }

  /// Warm-up, then samples round robin (so a drift in machine speed hits every candidate
  /// alike) until every racer has settled, been dropped or been stopped by the budget.
  absl::Status Race(std::vector<Racer>& racers, double budget, double macs) {
    const double count = static_cast<double>(racers.size());
    const double warmup = std::min(kWarmupSeconds, budget / (8 * count));
    const double sample = std::min(kSampleSeconds, budget / (4 * count * kMinSamples));
    // The checked runs happened already; they count at their estimated cost.
    for (Racer& r : racers) {
      auto it = seconds_per_mac_.find(r.id());
      if (it != seconds_per_mac_.end()) spent_ += it->second * macs;
    }
    for (Racer& r : racers) {
      double warm = 0;
      // The first run's cost is the gate's estimate; later ones, the run before.
      auto estimate = seconds_per_mac_.find(r.id());
      const double predicted = estimate != seconds_per_mac_.end() ? estimate->second * macs : 0;
      // (Bounded: a timer that reports 0 would otherwise never warm up.)
      for (int runs = 0; runs < kMaxWarmupRuns && (runs == 0 || warm < warmup); ++runs) {
        const double next = r.per_run > 0 ? r.per_run : predicted;
        if (next > 0 && !Fits(next, budget)) break;
        absl::StatusOr<double> seconds = r.kernel->Time(1);
        if (!seconds.ok()) return seconds.status();
        r.per_run = *seconds;
        spent_ += *seconds;
        warm += *seconds;
      }
      r.repetitions =
          r.per_run > 0
              ? static_cast<int>(std::clamp(std::ceil(sample / r.per_run), 1.0,
                                            static_cast<double>(kMaxRepetitions)))
              : 1000;
    }
    for (bool more = true; more;) {
      for (Racer& r : racers) {
        if (!r.running) continue;
        if (!Fits(r.repetitions * r.per_run, budget)) {
          r.Stop(absl::StrCat("stopped: the ", Duration(budget), " budget ran out after ",
                              r.samples.size(), " samples"));
          continue;
        }
        absl::StatusOr<double> seconds = r.kernel->Time(r.repetitions);
        if (!seconds.ok()) return seconds.status();
        r.samples.push_back(*seconds);
        r.per_run = *seconds;
        spent_ += *seconds * r.repetitions;
      }
      Settle(racers);
      more = false;
      for (const Racer& r : racers) more |= r.running;
    }
    return absl::OkStatus();
  }

  /// After a round: a racer whose median is known well enough settles; one whose best sample
  /// cannot beat the leader's median by the noise rule is dropped; one at kMaxSamples stops.
  void Settle(std::vector<Racer>& racers) {
    const Racer* leader = nullptr;
    double leader_median = 0;
    for (const Racer& r : racers) {
      if (static_cast<int>(r.samples.size()) < kMinSamples) continue;
      const double median = Summarize(r.samples).median_s;
      if (leader == nullptr || median < leader_median) {
        leader = &r;
        leader_median = median;
      }
    }
    for (Racer& r : racers) {
      const int n = static_cast<int>(r.samples.size());
      if (!r.running || n < kMinSamples) continue;
      const TimingSummary summary = Summarize(r.samples);
      if (leader != nullptr && &r != leader) {
        const TimingSummary lead = Summarize(leader->samples);
        const double noise =
            std::max({MedianNoise(lead), MedianNoise(summary), kNoiseFloor});
        const double high = MedianConfidence95(leader->samples).high;
        const double best = *std::min_element(r.samples.begin(), r.samples.end());
        if (best > high * (1 + 2 * noise)) {
          r.Stop(absl::StrCat("dropped after ", n, " samples: its best ", Duration(best),
                              " cannot beat ", leader->id(), "'s median (95% CI up to ",
                              Duration(high), ") by the noise rule"));
          continue;
        }
      }
      if (n >= kConfidenceSamples) {
        const double half = MedianConfidence95(r.samples).HalfWidth();
        if (half <= std::max(kSettledRelative * summary.median_s, kSettledAbsolute)) {
          r.Stop(absl::StrFormat("settled after %d samples: 95%% CI of the median ±%s (%.2f%%)",
                                 n, Duration(half),
                                 summary.median_s > 0 ? 100 * half / summary.median_s : 0));
          continue;
        }
      }
      if (n >= kMaxSamples) {
        r.Stop(absl::StrCat("stopped: the sample limit (", kMaxSamples, ")"));
      }
    }
  }

  const ArbitrationPoint& point_;
  const ArbitrationContext& context_;
  std::vector<CandidateOutcome> outcomes_;
  DecisionRecord record_;
  bool probed_ = false;
  bool untimed_ = false;  ///< the budget ran out before any sample: the record is not kept
  /// Decided unprobed for a reason the same op, toolchain and device give again (its probe
  /// cannot bind, its reference does not compile): kept, so that it is not deferred and
  /// tried again by every process.
  bool settled_unprobed_ = false;
  std::string incumbent_;  ///< the winner of a stale record, kept when within noise
  /// The accuracy gate's estimate of each survivor's cost (seconds per multiply-add).
  std::map<std::string, double> seconds_per_mac_;
  double spent_ = 0;  ///< seconds candidates ran under the budget
};

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
  for (const Candidate& c : candidates) absl::StrAppend(&full, "candidate=", ContractText(c), "\n");
  keys.full = Sha256Hex(full);
  return keys;
}

absl::StatusOr<DecisionRecord> Arbitrate(const ArbitrationPoint& point,
                                         const std::vector<Candidate>& candidates,
                                         const ArbitrationContext& context) {
  return Selection(point, candidates, context).Run();
}

}  // namespace tessera::arbiter
