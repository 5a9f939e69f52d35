// The C signatures of known vendor entry points, and the matmul providers built on them. A
// `c_abi` kernel_call's operands are checked against these (or against a `signature` the IR
// declares for callees the catalogue does not know).
#ifndef TESSERA_JIT_DELEGATES_ABI_CATALOGUE_H_
#define TESSERA_JIT_DELEGATES_ABI_CATALOGUE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

#include "absl/strings/string_view.h"
#include "jit/compile_options.h"

namespace tessera::jit::delegates {

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

/// A delegate that can serve tile.matmul — an arbiter candidate — and the contract it declares.
struct MatmulProvider {
  std::string name;     ///< the candidate id: "openblas", "cublas", or a declared name
  std::string library;  ///< the registered library that defines `callee`
  Target target;
  std::string callee;  ///< the C symbol called
  /// The calling convention of `callee`: "cblas_sgemm" (row-major CBLAS, host) or
  /// "cublasSgemm_v2" (column-major cuBLAS, nvptx).
  std::string abi;
  std::string arch;  ///< the contract's arch envelope
  std::string provenance = "vendor_library";  ///< or "handwritten_kernel"
  std::string covers;  ///< "root_only": declines a matmul with a fused epilogue
  std::string determinism;
  std::string accuracy;
  std::optional<double> tolerance;      ///< absolute bound (tolerance_bounded)
  std::optional<double> tolerance_rel;  ///< relative bound (tolerance_bounded)

  /// The whole declaration on one line (for cache keys and messages).
  std::string ToString() const;
};

/// The built-in providers (openblas → cblas_sgemm on the host, cublas → cublasSgemm_v2 on
/// nvptx): candidates whenever a library is registered under their name.
const std::vector<MatmulProvider>& BuiltinMatmulProviders();

/// The built-in provider called `name`, or null.
const MatmulProvider* BuiltinMatmulProvider(absl::string_view name);

/// OK when `provider` is a well-formed contract (known abi for its target, closed enums, the
/// delegation contract's tolerance rules); InvalidArgument naming the field otherwise.
absl::Status ValidateMatmulProvider(const MatmulProvider& provider);

}  // namespace tessera::jit::delegates

#endif  // TESSERA_JIT_DELEGATES_ABI_CATALOGUE_H_
