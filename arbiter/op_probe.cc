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

AccuracyBudget OpResultBudget(const AccuracyBudget& budget, const ArbitrationPoint& point) {
  double ulp = 0;
  for (const std::string& element : point.element_types) {
    if (element == "f16" || element == "bf16") ulp = std::max(ulp, StorageUlp(element));
  }
  AccuracyBudget widened = budget;
  widened.rtol += ulp;
  return widened;
}

AccuracyCheck CompareOutputs(const std::vector<float>& out, const std::vector<float>& ref,
                             const AccuracyBudget& budget) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  AccuracyCheck check;
  if (out.size() != ref.size()) {
    check.ratio = kInf;
    check.max_abs_error = kInf;
    return check;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const double o = out[i], r = ref[i];
    double ratio = 0, error = 0;
    if (std::isnan(o) || std::isnan(r)) {
      if (std::isnan(o) != std::isnan(r)) ratio = error = kInf;
    } else if (o != r) {  // equal infinities match
      const double allowed = budget.atol + budget.rtol * std::fabs(r);
      error = std::fabs(o - r);
      ratio = !(allowed > 0) || std::isinf(error) ? kInf : error / allowed;
    }
    if (ratio > check.ratio || check.worst_index < 0) {
      check.ratio = ratio;
      check.max_abs_error = error;
      check.worst_index = static_cast<int64_t>(i);
    }
  }
  return check;
}

}  // namespace tessera::arbiter
