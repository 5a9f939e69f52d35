// The race: the survivors of the gates timed round robin under the time budget, each stopped
// once its median is known well enough or dropped once it cannot win; the noise rule decides.
#include "arbiter/race.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "arbiter/gates.h"
#include "arbiter/matmul_probe.h"
#include "arbiter/op_probe.h"
#include "arbiter/prober.h"
#include "arbiter/timing.h"
#include "base/status_macros.h"

namespace tessera::arbiter::internal {
namespace {

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

/// Runs `seconds` of candidate time when it fits the budget; false when it does not.
bool Fits(const Selection& s, double seconds, double budget) { return s.spent + seconds <= budget; }

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
      const double noise = std::max({MedianNoise(lead), MedianNoise(summary), kNoiseFloor});
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
        r.Stop(absl::StrFormat("settled after %d samples: 95%% CI of the median ±%s (%.2f%%)", n,
                               Duration(half),
                               summary.median_s > 0 ? 100 * half / summary.median_s : 0));
        continue;
      }
    }
    if (n >= kMaxSamples) {
      r.Stop(absl::StrCat("stopped: the sample limit (", kMaxSamples, ")"));
    }
  }
}

/// Warm-up, then samples round robin (so a drift in machine speed hits every candidate
/// alike) until every racer has settled, been dropped or been stopped by the budget.
absl::Status Race(Selection& s, std::vector<Racer>& racers, double budget, double macs) {
  const double count = static_cast<double>(racers.size());
  const double warmup = std::min(kWarmupSeconds, budget / (8 * count));
  const double sample = std::min(kSampleSeconds, budget / (4 * count * kMinSamples));
  // The checked runs happened already; they count at their estimated cost.
  for (Racer& r : racers) {
    auto it = s.seconds_per_mac.find(r.id());
    if (it != s.seconds_per_mac.end()) s.spent += it->second * macs;
  }
  for (Racer& r : racers) {
    double warm = 0;
    // The first run's cost is the gate's estimate; later ones, the run before.
    auto estimate = s.seconds_per_mac.find(r.id());
    const double predicted = estimate != s.seconds_per_mac.end() ? estimate->second * macs : 0;
    // (Bounded: a timer that reports 0 would otherwise never warm up.)
    for (int runs = 0; runs < kMaxWarmupRuns && (runs == 0 || warm < warmup); ++runs) {
      const double next = r.per_run > 0 ? r.per_run : predicted;
      if (next > 0 && !Fits(s, next, budget)) break;
      absl::StatusOr<double> seconds = r.kernel->Time(1);
      if (!seconds.ok()) return seconds.status();
      r.per_run = *seconds;
      s.spent += *seconds;
      warm += *seconds;
    }
    r.repetitions = r.per_run > 0
                        ? static_cast<int>(std::clamp(std::ceil(sample / r.per_run), 1.0,
                                                      static_cast<double>(kMaxRepetitions)))
                        : 1000;
  }
  for (bool more = true; more;) {
    for (Racer& r : racers) {
      if (!r.running) continue;
      if (!Fits(s, r.repetitions * r.per_run, budget)) {
        r.Stop(absl::StrCat("stopped: the ", Duration(budget), " budget ran out after ",
                            r.samples.size(), " samples"));
        continue;
      }
      absl::StatusOr<double> seconds = r.kernel->Time(r.repetitions);
      if (!seconds.ok()) return seconds.status();
      r.samples.push_back(*seconds);
      r.per_run = *seconds;
      s.spent += *seconds * r.repetitions;
    }
    Settle(racers);
    more = false;
    for (const Racer& r : racers) more |= r.running;
  }
  return absl::OkStatus();
}

/// Step 7's end: the raced candidates' summaries, then the noise rule picks the winner.
absl::Status DecideRace(Selection& s, std::vector<Racer>& racers, double budget) {
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
  return DecideByNoiseRule(s, contestants, budget);
}

/// The most multiply-adds a timed run may have so that every survivor's minimum (the checked
/// run, one warm-up run and kMinSamples one-run samples) fits half of what is left of the
/// budget, from the estimates of the accuracy gate.
double MaxTimedMacs(const Selection& s, const std::vector<CandidateOutcome*>& alive) {
  double seconds_per_mac = 0;
  for (const CandidateOutcome* o : alive) {
    auto it = s.seconds_per_mac.find(o->candidate.id);
    if (it != s.seconds_per_mac.end()) seconds_per_mac += it->second;
  }
  if (seconds_per_mac <= 0) return std::numeric_limits<double>::infinity();
  return std::max(0.0, s.Budget() - s.spent) / 2 / ((2 + kMinSamples) * seconds_per_mac);
}

}  // namespace

absl::Status Measure(Selection& s, const std::vector<CandidateOutcome*>& alive) {
  const double budget = s.Budget();
  std::string capped_why;
  const MatmulProblem problem = TimedProblem(s.point, MaxTimedMacs(s, alive), &capped_why);
  const MatmulInputs inputs = MakeInputs(problem, 7);
  const bool check = problem.m * problem.n * problem.k <= kCheckTimedProblemLimit;
  const std::vector<double> reference = check ? ReferenceMatmul(inputs) : std::vector<double>();
  s.record.measured_shape = problem.ShapeText();
  if (!capped_why.empty()) absl::StrAppend(&s.record.measured_shape, " (", capped_why, ")");
  s.record.timing_source = s.context.prober->TimingSource();
  std::vector<Racer> racers;
  for (CandidateOutcome* o : alive) {
    absl::StatusOr<std::unique_ptr<ProbeKernel>> kernel =
        s.context.prober->Prepare(s.point, o->candidate, &problem);
    if (!kernel.ok()) {
      Remove(*o, "availability",
             absl::StrCat("its timed kernel failed to build: ", kernel.status().message()));
      continue;
    }
    absl::StatusOr<std::vector<float>> out = (*kernel)->Run(inputs);
    if (!out.ok()) {
      Remove(*o, "availability", absl::StrCat("its timed kernel failed: ", out.status().message()));
      continue;
    }
    if (check) {
      Judge(*o, problem, *out, reference);
      if (!o->gate.empty()) continue;
    }
    racers.push_back(Racer{o, std::move(*kernel)});
  }
  TESSERA_RETURN_IF_ERROR(s.CheckForced());
  if (s.Alive().empty()) return s.NoSurvivor();
  {
    // Timings of concurrent arbitrations would disturb each other.
    absl::MutexLock lock(&MeasurementMutex());
    TESSERA_RETURN_IF_ERROR(Race(s, racers, budget, Macs(problem)));
  }
  return DecideRace(s, racers, budget);
}

absl::Status ChooseByOpProbes(Selection& s) {
  CandidateOutcome* compiled = s.Outcome(kCompiledCandidate);
  absl::StatusOr<std::unique_ptr<ProbeKernel>> reference =
      s.context.prober->Prepare(s.point, compiled->candidate, nullptr);
  // Without its reference the contest cannot run: decided unprobed (kept only when the
  // failure would repeat: ChooseUnprobedFor).
  if (!reference.ok()) {
    return ChooseUnprobedFor(s, reference.status(),
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
    if (!out.ok()) return ChooseUnprobedFor(s, out.status(), std::string(out.status().message()));
    references.push_back(*std::move(out));
    segments.push_back((*reference)->OutputSegments());
    shapes.push_back((*reference)->BoundShape());
  }
  // Gate 5 on the accuracy probes, then the timed size's run (bound for Time), checked too.
  std::vector<Racer> racers;
  for (CandidateOutcome* o : s.Alive()) {
    std::unique_ptr<ProbeKernel> kernel;
    if (o->candidate.compiled()) {
      o->error_ratio = 0;
      o->worst_probe = shapes.back();
      kernel = *std::move(reference);  // already bound to the timed size, its last run
    } else {
      absl::StatusOr<std::unique_ptr<ProbeKernel>> built =
          s.context.prober->Prepare(s.point, o->candidate, nullptr);
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
          Remove(*o, "availability",
                 absl::StrCat("it failed on probe ", shapes[i], ": ", out.status().message()));
          break;
        }
        JudgeOp(
            *o, shapes[i],
            CompareOutputs(*out, references[i], budget, segments[i], AtolScale::kOutputMagnitude),
            references[i], budget);
      }
      if (!o->gate.empty()) continue;
    }
    if (s.point.batch_invariant) {
      if (o->candidate.BatchInvariantByConstruction()) {
        o->batch_invariance = kByConstruction;
      } else {
        Remove(*o, "batch invariance",
               absl::StrCat("only tile.matmul has a batch-invariance replay probe; ", s.point.op,
                            " candidates must be invariant by construction"));
        continue;
      }
    }
    // The estimate for the race: the timed problem's run just made.
    const double run = kernel->LastRunSeconds();
    if (run > 0) {
      s.seconds_per_mac[o->candidate.id] = run;
    } else {
      absl::MutexLock lock(&MeasurementMutex());
      absl::StatusOr<double> seconds = kernel->Time(1);
      if (seconds.ok() && *seconds > 0) {
        s.seconds_per_mac[o->candidate.id] = *seconds;
        s.spent += *seconds;
      }
    }
    racers.push_back(Racer{o, std::move(kernel)});
  }
  TESSERA_RETURN_IF_ERROR(s.CheckForced());
  if (s.Alive().empty()) return s.NoSurvivor();
  if (SoleSurvivor(s)) return absl::OkStatus();
  s.record.measured_shape = shapes.back();
  s.record.timing_source = s.context.prober->TimingSource();
  {
    absl::MutexLock lock(&MeasurementMutex());
    TESSERA_RETURN_IF_ERROR(Race(s, racers, s.Budget(), 1.0));
  }
  return DecideRace(s, racers, s.Budget());
}

}  // namespace tessera::arbiter::internal
