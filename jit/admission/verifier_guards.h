// Guards that run between parsing and verifying: an op whose upstream verifier would crash the
// process on hostile attribute values is refused with a location before that verifier runs.
#ifndef TESSERA_JIT_ADMISSION_VERIFIER_GUARDS_H_
#define TESSERA_JIT_ADMISSION_VERIFIER_GUARDS_H_

#include "absl/status/status.h"
#include "mlir/IR/Operation.h"

namespace tessera::jit {

/// The largest matrix extent a warp- or group-level matrix instruction names (wgmma's N and
/// tcgen05's M are 256; mma.sync, wmma, ldmatrix and stmatrix are smaller).
inline constexpr int kMaxMatrixExtent = 256;

/// InvalidArgument `file:line:col: error: …` at the first NVVM op (in a raw `gpu.module`
/// kernel, or anywhere under `root`) whose matrix shape the upstream verifier would size
/// vectors from without checking it: every `#nvvm.shape<m, n, k>` and
/// `#nvvm.ld_st_matrix_shape<m, n>` extent, and the integer `m`/`n`/`k`/`num` attributes of
/// the wmma and ldmatrix ops, must lie in [1, kMaxMatrixExtent]. MLIR 22.1's
/// `NVVM::MmaOp::verify` aborts the process (`SmallVector unable to grow`) on
/// `#nvvm.shape<m = 16, n = 8, k = -2147483648>` and allocates gigabytes for a huge one.
/// Call on IR that was parsed without verification; it reads attributes only.
absl::Status CheckBeforeVerifying(mlir::Operation* root);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_ADMISSION_VERIFIER_GUARDS_H_
