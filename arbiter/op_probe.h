// Probes of the Tile ops other than tile.matmul (map, reduce, softmax, …): the op alone in a
// function (ArbitrationPoint::probe_source) run with every dynamic size bound to one value.
// No formula covers an arbitrary map region, so the reference is the compiled lowering's own
// output on the same device and inputs: every other candidate (the kernel variants) must
// match it within its budget.
#ifndef TESSERA_ARBITER_OP_PROBE_H_
#define TESSERA_ARBITER_OP_PROBE_H_

#include <cstdint>
#include <string>
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

/// One written tensor of a probe's output: how many of the concatenated values are its, and
/// the type it is stored in ("f32", "f16", "bf16").
struct OutputSegment {
  int64_t count = 0;
  std::string element = "f32";
};

/// How CompareOutputs applies a budget's atol.
enum class AtolScale {
  kAbsolute,  ///< as declared
  /// Times each output's largest finite |ref| where that is below 1 (never looser than
  /// declared): an output of probabilities near 1e-3 is held to 1e-3 of its own scale, not
  /// to 1e-3 absolute, which every value of it would pass.
  kOutputMagnitude,
};

/// `out` against the reference `ref` elementwise, each output (`segments`, in order; empty:
/// one f32 output of every value) under `budget` with one ulp of its storage type added to
/// rtol when that is f16 or bf16 (two orders of f32 arithmetic may round to neighbours
/// there) and atol scaled per `scale`. Equal values (equal infinities too) and NaN against
/// NaN match; a NaN against a number, an infinite error, a zero budget with any error, or
/// sizes that do not match (the segments' counts included) is +inf.
AccuracyCheck CompareOutputs(const std::vector<float>& out, const std::vector<float>& ref,
                             const AccuracyBudget& budget,
                             const std::vector<OutputSegment>& segments = {},
                             AtolScale scale = AtolScale::kAbsolute);

}  // namespace tessera::arbiter

#endif  // TESSERA_ARBITER_OP_PROBE_H_
