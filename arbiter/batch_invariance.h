// Batch invariance (docs/design.md §5, the batch_invariant determinism level): a candidate may
// serve only when each row of its result is the same, bit for bit, whatever the number of rows (M)
// of the call — what LLM serving needs when requests are batched together, and what a vendor
// GEMM that changes algorithm with M does not give. A delegate proves it by a replay probe.
#ifndef TESSERA_ARBITER_BATCH_INVARIANCE_H_
#define TESSERA_ARBITER_BATCH_INVARIANCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "arbiter/arbitration_point.h"
#include "arbiter/prober.h"

namespace tessera::arbiter {

/// The batch sizes (M) the replay probe runs: around the power-of-two thresholds where GEMM
/// libraries switch kernels.
inline constexpr int64_t kProbeBatchSizes[] = {1, 7, 64, 255, 256, 257};

struct BatchInvarianceProof {
  bool invariant = false;
  /// The batch sizes whose rows differ from the same rows at the largest batch size.
  std::vector<int64_t> differing;
  /// "rows bitwise identical at batch sizes 1, 7, …" or where the first difference is.
  std::string text;
};

/// Runs `kernel` (a probe kernel of `point`'s op with every size dynamic) on the first b rows
/// of one fixed-seed problem for each of kProbeBatchSizes (N and K from the op, clipped to 64
/// and 512; 64 and 256 when dynamic) and compares every row bitwise with the same row at the
/// largest batch size. An error only when the kernel fails.
absl::StatusOr<BatchInvarianceProof> ProveBatchInvariance(ProbeKernel& kernel,
                                                          const ArbitrationPoint& point);

}  // namespace tessera::arbiter

#endif  // TESSERA_ARBITER_BATCH_INVARIANCE_H_
