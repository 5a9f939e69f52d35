#include "arbiter/timing.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tessera::arbiter {
namespace {

/// Linear-interpolated quantile of sorted values.
double Quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(position);
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

std::string Percent(double value) { return absl::StrFormat("%.1f%%", value * 100); }

}  // namespace

TimingSummary Summarize(std::vector<double> samples) {
  TimingSummary summary;
  if (samples.empty()) return summary;
  std::sort(samples.begin(), samples.end());
  summary.samples = static_cast<int>(samples.size());
  summary.median_s = Quantile(samples, 0.5);
  if (summary.median_s > 0) {
    summary.spread = (Quantile(samples, 0.75) - Quantile(samples, 0.25)) / summary.median_s;
  }
  return summary;
}

MedianInterval MedianConfidence95(std::vector<double> samples) {
  MedianInterval interval;
  if (samples.empty()) return interval;
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  const double z = 1.96 * std::sqrt(n);
  const double j = std::floor((n - z) / 2);
  const double k = std::ceil(1 + (n + z) / 2);
  auto at = [&](double rank) {  // 1-based, clamped
    return samples[static_cast<size_t>(std::clamp(rank, 1.0, n)) - 1];
  };
  interval.low = at(j);
  interval.high = at(k);
  return interval;
}

double MedianNoise(const TimingSummary& summary) {
  return summary.samples > 0 ? summary.spread / std::sqrt(static_cast<double>(summary.samples))
                             : summary.spread;
}

Ranking Rank(const std::vector<Contestant>& contestants, const std::string& incumbent,
             const std::vector<std::string>& tie_order) {
  Ranking ranking;
  if (contestants.empty()) return ranking;
  std::vector<const Contestant*> by_speed;
  for (const Contestant& c : contestants) by_speed.push_back(&c);
  std::stable_sort(by_speed.begin(), by_speed.end(), [](const Contestant* a, const Contestant* b) {
    return a->timing.median_s < b->timing.median_s;
  });
  const Contestant& fastest = *by_speed[0];
  if (by_speed.size() == 1) {
    ranking.winner = fastest.id;
    ranking.reason = "the only candidate measured";
    return ranking;
  }
  const Contestant& runner_up = *by_speed[1];
  const double base = fastest.timing.median_s;
  ranking.noise =
      std::max({MedianNoise(fastest.timing), MedianNoise(runner_up.timing), kNoiseFloor});
  ranking.separation = base > 0 ? (runner_up.timing.median_s - base) / base : 0;
  if (ranking.separation > 2 * ranking.noise) {
    ranking.winner = fastest.id;
    ranking.reason = absl::StrCat("fastest: ", Percent(ranking.separation), " ahead of ",
                                  runner_up.id, ", more than 2 × noise ", Percent(ranking.noise));
    return ranking;
  }
  std::vector<std::string> tied;
  for (const Contestant* c : by_speed) {
    if (base <= 0 || (c->timing.median_s - base) / base <= 2 * ranking.noise) tied.push_back(c->id);
  }
  const std::string tie_text = absl::StrCat(
      "within noise (", absl::StrJoin(tied, ", "), " separated by ", Percent(ranking.separation),
      ", not more than 2 × noise ", Percent(ranking.noise), ")");
  if (std::find(tied.begin(), tied.end(), incumbent) != tied.end()) {
    ranking.winner = incumbent;
    ranking.reason = absl::StrCat(tie_text, ": the incumbent ", incumbent, " stays");
    return ranking;
  }
  for (const std::string& id : tie_order) {
    if (std::find(tied.begin(), tied.end(), id) != tied.end()) {
      ranking.winner = id;
      break;
    }
  }
  if (ranking.winner.empty()) ranking.winner = fastest.id;
  ranking.reason = absl::StrCat(tie_text, ": stable tie-break picks ", ranking.winner);
  return ranking;
}

}  // namespace tessera::arbiter
