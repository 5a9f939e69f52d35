#include "arbiter/batch_invariance.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "arbiter/matmul_probe.h"

namespace tessera::arbiter {
namespace {

/// The first `rows` rows of op(A) of `all`, stored as `all` stores A.
MatmulInputs FirstRows(const MatmulInputs& all, int64_t rows) {
  MatmulInputs inputs = all;
  const MatmulProblem& p = all.problem;
  inputs.problem.m = rows;
  if (!p.transpose_a) {
    inputs.a.assign(all.a.begin(), all.a.begin() + rows * p.k);
  } else {  // stored K×M
    inputs.a.resize(static_cast<size_t>(p.k * rows));
    for (int64_t l = 0; l < p.k; ++l) {
      for (int64_t i = 0; i < rows; ++i) inputs.a[l * rows + i] = all.a[l * p.m + i];
    }
  }
  return inputs;
}

uint32_t Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

}  // namespace

absl::StatusOr<BatchInvarianceProof> ProveBatchInvariance(ProbeKernel& kernel,
                                                          const ArbitrationPoint& point) {
  auto size = [&](size_t index, int64_t dynamic, int64_t clip) {
    const int64_t value = point.shape.size() > index ? point.shape[index] : -1;
    return value < 0 ? dynamic : std::max<int64_t>(1, std::min(value, clip));
  };
  const int64_t largest =
      *std::max_element(std::begin(kProbeBatchSizes), std::end(kProbeBatchSizes));
  const MatmulInputs all =
      MakeInputs(ProblemFor(point, largest, size(1, 64, 64), size(2, 256, 512)), 2024);
  const int64_t n = all.problem.n;
  absl::StatusOr<std::vector<float>> reference = kernel.Run(all);
  if (!reference.ok()) return reference.status();
  if (static_cast<int64_t>(reference->size()) != largest * n) {
    return absl::InternalError(absl::StrCat("the probe kernel returned ", reference->size(),
                                            " elements for ", largest, "x", n));
  }
  BatchInvarianceProof proof;
  std::string first_difference;
  for (int64_t rows : kProbeBatchSizes) {
    if (rows == largest) continue;
    absl::StatusOr<std::vector<float>> out = kernel.Run(FirstRows(all, rows));
    if (!out.ok()) return out.status();
    if (static_cast<int64_t>(out->size()) != rows * n) {
      return absl::InternalError(
          absl::StrCat("the probe kernel returned ", out->size(), " elements for ", rows, "x", n));
    }
    for (int64_t i = 0; i < rows * n; ++i) {
      if (Bits((*out)[i]) == Bits((*reference)[i])) continue;
      proof.differing.push_back(rows);
      if (first_difference.empty()) {
        first_difference = absl::StrFormat(
            "first at batch size %d, row %d, column %d: %.9g (0x%08x) vs %.9g (0x%08x) at batch "
            "size %d",
            rows, i / n, i % n, (*out)[i], Bits((*out)[i]), (*reference)[i], Bits((*reference)[i]),
            largest);
      }
      break;
    }
  }
  const std::string probe = absl::StrCat("N=", n, ", K=", all.problem.k);
  proof.invariant = proof.differing.empty();
  proof.text = proof.invariant
                   ? absl::StrCat("rows bitwise identical at batch sizes ",
                                  absl::StrJoin(kProbeBatchSizes, ", "), " (", probe, ")")
                   : absl::StrCat("rows at batch sizes ", absl::StrJoin(proof.differing, ", "),
                                  " differ from the same rows at batch size ", largest, " (", probe,
                                  "; ", first_difference, ")");
  return proof;
}

}  // namespace tessera::arbiter
