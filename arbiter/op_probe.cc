#include "arbiter/op_probe.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "arbiter/element_storage.h"
#include "arbiter/prober.h"

namespace tessera::arbiter {

absl::StatusOr<std::vector<float>> ProbeKernel::RunOp(int64_t, uint32_t) {
  return absl::UnimplementedError("this prober runs tile.matmul probes only");
}

namespace {

/// `budget` as it applies to one output of `segment`'s type whose reference is `ref`.
AccuracyBudget SegmentBudget(const AccuracyBudget& budget, const OutputSegment& segment,
                             const float* ref, AtolScale scale) {
  AccuracyBudget applied = budget;
  if (segment.element == "f16" || segment.element == "bf16") {
    applied.rtol += StorageUlp(segment.element);
  }
  if (scale == AtolScale::kOutputMagnitude) {
    double magnitude = 0;
    for (int64_t i = 0; i < segment.count; ++i) {
      if (std::isfinite(ref[i])) magnitude = std::max(magnitude, std::fabs(double{ref[i]}));
    }
    // Never below the smallest normal float: a device that flushes subnormals to zero
    // differs by less (an output of zeros keeps that much).
    if (applied.atol > 0 && std::isfinite(applied.atol)) {  // an unbounded atol stays so
      applied.atol = std::max(applied.atol * std::min(magnitude, 1.0),
                              double{std::numeric_limits<float>::min()});
    }
  }
  return applied;
}

}  // namespace

AccuracyCheck CompareOutputs(const std::vector<float>& out, const std::vector<float>& ref,
                             const AccuracyBudget& budget,
                             const std::vector<OutputSegment>& segments, AtolScale scale) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  AccuracyCheck check;
  std::vector<OutputSegment> outputs = segments;
  if (outputs.empty()) outputs.push_back({static_cast<int64_t>(ref.size()), "f32"});
  bool sizes_match = out.size() == ref.size();
  size_t remaining = ref.size();
  for (const OutputSegment& segment : outputs) {
    sizes_match &= segment.count >= 0 && static_cast<size_t>(segment.count) <= remaining;
    if (!sizes_match) break;
    remaining -= static_cast<size_t>(segment.count);
  }
  if (!sizes_match || remaining != 0) {
    check.ratio = kInf;
    check.max_abs_error = kInf;
    return check;
  }
  size_t i = 0;
  for (const OutputSegment& segment : outputs) {
    const AccuracyBudget applied = SegmentBudget(budget, segment, ref.data() + i, scale);
    for (const size_t end = i + static_cast<size_t>(segment.count); i < end; ++i) {
      const double o = out[i], r = ref[i];
      const double allowed = applied.atol + applied.rtol * std::fabs(r);
      double ratio = 0, error = 0;
      if (std::isnan(o) || std::isnan(r)) {
        if (std::isnan(o) != std::isnan(r)) ratio = error = kInf;
      } else if (o != r) {  // equal infinities match
        error = std::fabs(o - r);
        ratio = !(allowed > 0) || std::isinf(error) ? kInf : error / allowed;
      }
      if (ratio > check.ratio || check.worst_index < 0) {
        check.ratio = ratio;
        check.max_abs_error = error;
        check.worst_index = static_cast<int64_t>(i);
        check.allowed = allowed;
      }
    }
  }
  return check;
}

}  // namespace tessera::arbiter
