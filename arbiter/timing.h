// Timing statistics and the noise rule of measurement (selection step 6): a candidate wins on
// speed only when it is separated from the runner-up by more than twice the noise.
#ifndef TESSERA_ARBITER_TIMING_H_
#define TESSERA_ARBITER_TIMING_H_

#include <string>
#include <vector>

namespace tessera::arbiter {

/// The smallest noise the rule assumes (1 %): clock granularity and scheduling jitter make two
/// medians closer than this indistinguishable even when their samples agree perfectly.
inline constexpr double kNoiseFloor = 0.01;

struct TimingSummary {
  double median_s = 0;
  double spread = 0;  ///< interquartile range / median
  int samples = 0;
};

/// Median and relative interquartile spread of `samples` (seconds); zeros for no samples.
TimingSummary Summarize(std::vector<double> samples);

/// A distribution-free 95 % confidence interval of the median of `samples` (seconds), from
/// order statistics: [x_(j), x_(k)] with j = ⌊(n − 1.96√n) / 2⌋, k = ⌈1 + (n + 1.96√n) / 2⌉
/// (1-based, clamped to the samples), so it holds whatever the distribution of the samples.
/// {0, 0} for no samples.
struct MedianInterval {
  double low = 0;
  double high = 0;
  double HalfWidth() const { return (high - low) / 2; }
};
MedianInterval MedianConfidence95(std::vector<double> samples);

/// One measured contestant.
struct Contestant {
  std::string id;
  TimingSummary timing;
};

/// The noise of a median: its relative standard error, estimated as spread / √samples (for
/// normally distributed samples the standard error of the median is 0.93 · IQR / √n).
double MedianNoise(const TimingSummary& summary);

struct Ranking {
  std::string winner;
  double separation = 0;  ///< (runner-up median − fastest median) / fastest median
  double noise = 0;       ///< max(MedianNoise of the two, kNoiseFloor)
  std::string reason;
};

/// Applies the rule to at least one contestant. The fastest wins when separation > 2 × noise.
/// Otherwise, among the contestants within 2 × noise of the fastest, `incumbent` stays when it
/// is one of them; else the first of them in `tie_order` (a fixed order, so that independent
/// processes converge).
Ranking Rank(const std::vector<Contestant>& contestants, const std::string& incumbent,
             const std::vector<std::string>& tie_order);

}  // namespace tessera::arbiter

#endif  // TESSERA_ARBITER_TIMING_H_
