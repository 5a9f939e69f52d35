// What the delegates a caller registers are, as data: which memory a library's pointers
// address, who a loaded delegate is (an input to caches and decision records), and the contract
// a matmul provider declares. The registry that loads and resolves them is the compiler's
// (jit/delegates/registry.h); the C API and the service hand these across. No MLIR.
#ifndef TESSERA_RUNTIME_DELEGATE_IDENTITY_H_
#define TESSERA_RUNTIME_DELEGATE_IDENTITY_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "runtime/target.h"

namespace tessera::runtime {

/// Which memory a library's pointer parameters address: host memory (OpenBLAS: it serves host
/// compiles only) or device memory (cuBLAS: nvptx compiles only).
enum class PointerSpace { kInferred, kHost, kDevice };

/// "host" or "device" ("inferred" before registration decides).
absl::string_view PointerSpaceName(PointerSpace space);

/// Who a resolved delegate is: an input to caches and decision records.
struct DelegateIdentity {
  std::string name;  ///< the registered name ("openblas", "my_kernels")
  std::string kind;  ///< "library" or "kernel_image"
  /// Libraries: which memory their pointers address (kernel images: device).
  PointerSpace pointers = PointerSpace::kDevice;
  std::string path;    ///< the file actually loaded (libraries), or "" for images
  std::string soname;  ///< DT_SONAME of the loaded library (its file name if it has none)
  std::string
      version;  ///< what the library reports (e.g. "OpenBLAS 0.3.21"), else from the file name
  std::string sha256;  ///< content hash of the loaded file or image bytes

  /// One line, e.g. "openblas (library, host pointers) libopenblas.so.0 OpenBLAS 0.3.21
  /// sha256:1a2b… /usr/lib/…".
  std::string ToString() const;
};

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

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_DELEGATE_IDENTITY_H_
