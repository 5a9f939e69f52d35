// Run-time checks of a user-written GEMM kernel_call: its size operands must fit its buffers.
#ifndef TESSERA_JIT_DELEGATES_GEMM_EXTENTS_H_
#define TESSERA_JIT_DELEGATES_GEMM_EXTENTS_H_

#include "dialect/NVIDIAOps.h"
#include "mlir/IR/Builders.h"

namespace tessera::jit::delegates {

/// For a kernel_call of cblas_sgemm, cblas_dgemm, cublasSgemm_v2 or cublasDgemm_v2 (operands as
/// the C signature catalogue lists them, without cuBLAS's handle), inserts `cf.assert`s before
/// `call`: M, N, K ≥ 0; layout and transpose codes valid; each leading dimension ≥ max(1, the
/// stored matrix's contiguous length); and the elements A, B and C span — (outer − 1)·ld + inner —
/// within their buffers. Failures end the invocation with the call's location
/// (jit/codegen/runtime_checks.h). Returns false (and inserts nothing) for other callees.
bool GuardGemmExtents(mlir::OpBuilder& b, nvidia::KernelCallOp call);

}  // namespace tessera::jit::delegates

#endif  // TESSERA_JIT_DELEGATES_GEMM_EXTENTS_H_
