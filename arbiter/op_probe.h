// Probes of the Tile ops other than tile.matmul (map, reduce, softmax, …): the op alone in a
// function (ArbitrationPoint::probe_source) run with every dynamic size bound to one value.
// No formula covers an arbitrary map region, so the reference is the compiled lowering's own
// output on the same device and inputs: every other candidate (the kernel variants) must
// match it within its budget.
#ifndef TESSERA_ARBITER_OP_PROBE_H_
#define TESSERA_ARBITER_OP_PROBE_H_

#include <cstdint>
#include <vector>

#include "arbiter/arbitration_point.h"
#include "arbiter/candidate.h"
#include "arbiter/matmul_probe.h"

namespace tessera::arbiter {

/// The dynamic sizes of the accuracy probes: a small problem and a long, ragged one (not a
/// multiple of a vector width or a warp).
inline constexpr int64_t kOpProbeSizes[] = {64, 1000};
/// The dynamic size of the timed problem.
inline constexpr int64_t kOpTimedSize = 1024;

/// `budget` for an op's results: one ulp of the narrowest float type among the point's
/// operands is added to rtol (two orders of f32 arithmetic may round to neighbours there).
AccuracyBudget OpResultBudget(const AccuracyBudget& budget, const ArbitrationPoint& point);

/// `out` against the reference `ref` elementwise under `budget`: equal values (equal
/// infinities too) and NaN against NaN match; a NaN against a number, an infinite error, a
/// zero budget with any error or a size mismatch is +inf.
AccuracyCheck CompareOutputs(const std::vector<float>& out, const std::vector<float>& ref,
                             const AccuracyBudget& budget);

}  // namespace tessera::arbiter

#endif  // TESSERA_ARBITER_OP_PROBE_H_
