#include "arbiter/arbiter.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "arbiter/matmul_probe.h"
#include "arbiter/timing.h"
#include "base/sha256.h"
#include "base/status_macros.h"

namespace tessera::arbiter {
namespace {

/// Bumped when the selection procedure changes what a decision means.
constexpr char kArbiterVersion[] = "arbiter-1";

/// Measurement policy: warm up for at least kWarmupSeconds; a sample times enough back-to-back
/// runs to last kSampleSeconds; each candidate gets at least kMinSamples, kSteadySamples when
/// it fits in kLongBudgetSeconds, and up to kMaxSamples while under kShortBudgetSeconds.
constexpr double kWarmupSeconds = 0.01;
constexpr double kSampleSeconds = 0.001;
constexpr int kMinSamples = 3;
constexpr int kSteadySamples = 9;
constexpr int kMaxSamples = 41;
constexpr double kShortBudgetSeconds = 0.15;
constexpr double kLongBudgetSeconds = 1.0;
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

/// A kernel being timed.
struct Timed {
  CandidateOutcome* outcome;
  std::unique_ptr<ProbeKernel> kernel;
  int repetitions = 1;
  std::vector<double> samples;
  double elapsed = 0;

  bool NeedsMore() const {
    const int n = static_cast<int>(samples.size());
    return n < kMinSamples ||
           (elapsed < kLongBudgetSeconds &&
            (n < kSteadySamples || (elapsed < kShortBudgetSeconds && n < kMaxSamples)));
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
      std::vector<std::string> ids;
      for (const Candidate& c : candidates) ids.push_back(c.id);
      return Error(point_, absl::StrCat(point_.op, ": the forced candidate '", point_.forced,
                                        "' (", point_.forced_by, ") is unknown; candidates: ",
                                        absl::StrJoin(ids, ", ")));
    }
    TESSERA_RETURN_IF_ERROR(FilterByContract());
    std::vector<CandidateOutcome*> alive = Alive();
    if (alive.size() == 1 && alive[0]->candidate.compiled()) {
      // The compiled lowering is the reference lowering: nothing to check it against or race,
      // and nothing worth caching.
      alive[0]->reason = "not probed: no contest";
      Win(*alive[0], Forced() ? absl::StrCat("forced (", point_.forced_by, ")")
                              : "the only candidate left after applicability, availability, "
                                "determinism and forcing");
      record_.source = Forced() ? "forced" : "sole candidate";
      return Finish(start);
    }
    DecisionCache::Lookup found;
    if (context_.cache != nullptr) found = context_.cache->Find(keys.full, keys.base);
    if (found.fresh) {
      DecisionRecord reused = *found.fresh;
      reused.point.location = point_.location;
      reused.point.function = point_.function;
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
    TESSERA_RETURN_IF_ERROR(Choose());
    if (probed_) {
      record_.source = stale_note.empty() ? "measured" : absl::StrCat("measured; ", stale_note);
    }
    return Finish(start);
  }

  DecisionRecord Finish(std::chrono::steady_clock::time_point start) {
    record_.candidates = outcomes_;
    record_.arbitration_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
    record_.created = Now();
    if (probed_ && context_.cache != nullptr) context_.cache->Store(record_);
    return record_;
  }

 private:
  CandidateOutcome* Outcome(const std::string& id) {
    for (CandidateOutcome& o : outcomes_) {
      if (o.candidate.id == id) return &o;
    }
    return nullptr;
  }

  std::vector<CandidateOutcome*> Alive() {
    std::vector<CandidateOutcome*> alive;
    for (CandidateOutcome& o : outcomes_) {
      if (o.gate.empty()) alive.push_back(&o);
    }
    return alive;
  }

  bool Forced() const { return !point_.forced.empty(); }

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
    if (point_.deterministic) {
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

  absl::Status Choose() {
    std::vector<CandidateOutcome*> alive = Alive();
    const std::string forced_text =
        Forced() ? absl::StrCat("forced (", point_.forced_by, ")") : "";
    const std::string cannot_probe =
        context_.prober == nullptr ? "no prober for this target" : context_.prober->Unavailable();
    if (!cannot_probe.empty()) {
      for (CandidateOutcome* o : alive) o->reason = absl::StrCat("not probed: ", cannot_probe);
      record_.source = "unprobed";
      if (Forced()) {
        Win(*alive[0], absl::StrCat(forced_text, "; taken as declared: accuracy and timing "
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
    probed_ = true;
    TESSERA_RETURN_IF_ERROR(AccuracyGate(alive));
    alive = Alive();
    if (alive.size() == 1) {
      alive[0]->reason = "not timed: no contest after the accuracy gate";
      Win(*alive[0], Forced() ? absl::StrCat(forced_text, "; within its accuracy budget")
                              : "the only candidate left after the accuracy gate");
      return absl::OkStatus();
    }
    return Measure(alive);
  }

  /// Gate 5: every survivor against the host reference on the probes.
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
      for (size_t i = 0; i < probes.size() && o->gate.empty(); ++i) {
        absl::StatusOr<std::vector<float>> out = (*kernel)->Run(inputs[i]);
        if (!out.ok()) {
          Remove(*o, "availability",
                 absl::StrCat("it failed on probe ", probes[i].ShapeText(), ": ",
                              out.status().message()));
          break;
        }
        Judge(*o, probes[i], *out, references[i]);
      }
    }
    TESSERA_RETURN_IF_ERROR(CheckForced());
    if (Alive().empty()) return NoSurvivor();
    return absl::OkStatus();
  }

  /// Folds one probe's result into `o`; removes it when over budget.
  void Judge(CandidateOutcome& o, const MatmulProblem& probe, const std::vector<float>& out,
             const std::vector<double>& reference) {
    const AccuracyCheck check = CheckAccuracy(out, reference, o.candidate.budget);
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
                           "atol + rtol*|ref| = %.3g (%s: atol %g, rtol %g)",
                           probe.ShapeText(), check.max_abs_error, row, column, ref,
                           o.candidate.budget.atol + o.candidate.budget.rtol * std::fabs(ref),
                           o.candidate.accuracy, o.candidate.budget.atol,
                           o.candidate.budget.rtol));
  }

  /// Step 6: warm-up, interleaved samples, then the noise rule.
  absl::Status Measure(const std::vector<CandidateOutcome*>& alive) {
    std::string capped_from;
    const MatmulProblem problem = TimedProblem(point_, &capped_from);
    const MatmulInputs inputs = MakeInputs(problem, 7);
    const bool check = problem.m * problem.n * problem.k <= kCheckTimedProblemLimit;
    const std::vector<double> reference = check ? ReferenceMatmul(inputs) : std::vector<double>();
    record_.measured_shape = problem.ShapeText();
    if (!capped_from.empty()) {
      absl::StrAppend(&record_.measured_shape, " (capped from ", capped_from,
                      ": probe buffers are limited to 64 MiB)");
    }
    record_.timing_source = context_.prober->TimingSource();
    std::vector<Timed> timed;
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
      timed.push_back(Timed{o, std::move(*kernel)});
    }
    TESSERA_RETURN_IF_ERROR(CheckForced());
    if (Alive().empty()) return NoSurvivor();

    {
      // Timings of concurrent arbitrations would disturb each other.
      absl::MutexLock lock(&MeasurementMutex());
      for (Timed& t : timed) {
        double warm = 0;
        double last = 0;
        do {
          absl::StatusOr<double> seconds = t.kernel->Time(1);
          if (!seconds.ok()) return seconds.status();
          last = *seconds;
          warm += last;
        } while (warm < kWarmupSeconds);
        t.repetitions = last > 0 ? std::max(1, static_cast<int>(std::ceil(kSampleSeconds / last)))
                                 : 1000;
      }
      // Round robin, so a drift in machine speed hits every candidate alike.
      for (bool more = true; more;) {
        more = false;
        for (Timed& t : timed) {
          if (!t.NeedsMore()) continue;
          absl::StatusOr<double> seconds = t.kernel->Time(t.repetitions);
          if (!seconds.ok()) return seconds.status();
          t.samples.push_back(*seconds);
          t.elapsed += *seconds * t.repetitions;
          more |= t.NeedsMore();
        }
      }
    }
    std::vector<Contestant> contestants;
    for (Timed& t : timed) {
      const TimingSummary summary = Summarize(t.samples);
      t.outcome->median_s = summary.median_s;
      t.outcome->spread = summary.spread;
      t.outcome->samples = summary.samples;
      contestants.push_back(Contestant{t.outcome->candidate.id, summary});
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
    const Ranking ranking = Rank(contestants, incumbent_, tie_order);
    record_.separation = ranking.separation;
    record_.noise = ranking.noise;
    Win(*Outcome(ranking.winner), ranking.reason);
    return absl::OkStatus();
  }

  const ArbitrationPoint& point_;
  const ArbitrationContext& context_;
  std::vector<CandidateOutcome> outcomes_;
  DecisionRecord record_;
  bool probed_ = false;
  std::string incumbent_;  ///< the winner of a stale record, kept when within noise
};

}  // namespace

DecisionKeys KeysFor(const ArbitrationPoint& p, const std::vector<Candidate>& candidates,
                     const std::string& device, const std::string& toolchain) {
  DecisionKeys keys;
  const std::string base = absl::StrCat(
      kArbiterVersion, "\nop=", p.op, "\nbucket=", p.ShapeBucket(), "\ndtype=", p.DtypeText(),
      "\ntarget=", p.target, "\narch=", p.arch, "\ndevice=", device, "\nlayout=", p.layout,
      "\npolicy=", p.numeric_policy, "\nmovement=", p.Movement(),
      "\ndeterministic=", p.deterministic ? "yes" : "no", "\nforced=", p.forced, "\n");
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
