// The C signatures of known vendor entry points (cblas_*gemm, cublas*gemm*): a `c_abi`
// kernel_call's operands are checked against these (or against a `signature` the IR declares
// for callees the catalogue does not know).
#ifndef TESSERA_JIT_DELEGATES_C_SIGNATURES_H_
#define TESSERA_JIT_DELEGATES_C_SIGNATURES_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tessera::jit::delegates {

/// The enumerators of cblas.h and cublas_api.h that GEMM calls pass.
inline constexpr int kCblasRowMajor = 101;
inline constexpr int kCblasColMajor = 102;
inline constexpr int kCblasNoTrans = 111;
inline constexpr int kCblasTrans = 112;
inline constexpr int kCblasConjTrans = 113;
inline constexpr int kCublasOpN = 0;
inline constexpr int kCublasOpT = 1;
inline constexpr int kCublasOpC = 2;

/// One C parameter and the kernel_call operand that supplies it.
enum class AbiParam {
  kI32,           ///< operand i32
  kF32,           ///< operand f32
  kF64,           ///< operand f64
  kF32Array,      ///< operand memref of f32 → `float*` (its first element)
  kF64Array,      ///< operand memref of f64 → `double*`
  kAnyArray,      ///< operand memref of any element type → `void*`
  kF32ByPointer,  ///< operand f32 → `const float*` to a copy (cuBLAS alpha/beta, host pointer mode)
  kF64ByPointer,  ///< operand f64 → `const double*` to a copy
  kCublasHandle,  ///< no operand: the runtime's handle, bound to the caller's stream
};

/// What the C function returns.
enum class AbiResult {
  kVoid,
  kStatus,  ///< an int status; non-zero fails the invocation, naming the callee
};

struct AbiSignature {
  std::vector<AbiParam> params;
  AbiResult result = AbiResult::kVoid;
};

/// The signature of a catalogued callee (cblas_sgemm, cblas_dgemm, cublasSgemm_v2,
/// cublasDgemm_v2, cublasGemmEx), or null.
const AbiSignature* KnownSignature(absl::string_view callee);

/// Text of a parameter kind for error messages, e.g. "memref of f32 (float*)".
std::string Describe(AbiParam param);

}  // namespace tessera::jit::delegates

#endif  // TESSERA_JIT_DELEGATES_C_SIGNATURES_H_
