// Matmul providers: delegates that can serve tile.matmul — arbiter candidates — and the
// contract each declares (built in: openblas, cublas; others declared by the host).
#ifndef TESSERA_JIT_DELEGATES_MATMUL_PROVIDER_H_
#define TESSERA_JIT_DELEGATES_MATMUL_PROVIDER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "jit/compile_options.h"

namespace tessera::jit::delegates {

/// A delegate that can serve tile.matmul — an arbiter candidate — and the contract it declares.
struct MatmulProvider {
  std::string name;     ///< the candidate id: "openblas", "cublas", or a declared name
  std::string library;  ///< the registered library that defines `callee`
  Target target;
  std::string callee;  ///< the C symbol called
  /// The calling convention of `callee`: "cblas_sgemm" (row-major CBLAS, host) or
  /// "cublasSgemm_v2" (column-major cuBLAS, nvptx).
  std::string abi;
  std::string arch;                           ///< the contract's arch envelope
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

#endif  // TESSERA_JIT_DELEGATES_MATMUL_PROVIDER_H_
