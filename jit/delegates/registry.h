// Vendor libraries and hand-written kernel images the host registers, and the only places a
// delegate callee resolves (docs/design.md §6): a `c_abi` callee inside a registered library, never
// in the process's global symbols; a `cuda_kernel` callee as an `.entry` of a registered image.
#ifndef TESSERA_JIT_DELEGATES_REGISTRY_H_
#define TESSERA_JIT_DELEGATES_REGISTRY_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "jit/compile_options.h"
#include "jit/delegates/matmul_provider.h"
#include "runtime/delegate_identity.h"
#include "runtime/delegate_state.h"

namespace tessera::jit::delegates {

using runtime::DelegateIdentity;
using runtime::MatmulProvider;
using runtime::PointerSpace;
using runtime::PointerSpaceName;

/// The memory a compile for `target` passes: host memory (host) or device memory (nvptx).
PointerSpace PointerSpaceFor(Target target);

/// The space of a library known by its soname: the CUDA libraries (libcublas, libcublasLt,
/// libcudnn, libcufft, libcurand, libcusparse, libcusolver, libnccl, libcudart, libnvshmem)
/// take device pointers; any other library host pointers.
PointerSpace InferPointerSpace(absl::string_view soname);

/// A registered kernel image.
struct KernelImage {
  std::string name;
  std::string ptx;    ///< PTX text (given, or from NVRTC); may be empty for cubin images
  std::string cubin;  ///< cubin bytes; may be empty for PTX images
  std::vector<std::string> entries;
  DelegateIdentity identity;
};

/// A `c_abi` callee found in a registered library.
struct ResolvedSymbol {
  void* address = nullptr;
  DelegateIdentity library;
};

/// Thread-safe.
class DelegateRegistry {
 public:
  DelegateRegistry() = default;
  ~DelegateRegistry();
  DelegateRegistry(const DelegateRegistry&) = delete;
  DelegateRegistry& operator=(const DelegateRegistry&) = delete;

  /// Loads `path` (dlopen, RTLD_LOCAL: nothing it exports becomes global) under `name`; its
  /// callees take `pointers` (kInferred: InferPointerSpace of its soname). InvalidArgument when
  /// it cannot be loaded or the name is taken.
  absl::Status RegisterLibrary(const std::string& name, const std::string& path,
                               PointerSpace pointers = PointerSpace::kInferred);

  /// The default set for a target, which a user opts into: `openblas` → libopenblas.so.0
  /// (host), `cublas` → libcublas.so.13 (nvptx).
  absl::Status RegisterDefaultLibraries(Target target);

  /// Registers PTX text or cubin bytes; their `.entry` / function symbols become callable.
  absl::Status RegisterPtx(const std::string& name, std::string ptx);
  absl::Status RegisterCubin(const std::string& name, std::string cubin);

  /// Compiles CUDA C++ with NVRTC for `arch` (e.g. "sm_90", to PTX for compute_90) and
  /// registers the result; InvalidArgument carries NVRTC's log. Compiles of the same source and
  /// arch are reused.
  absl::Status RegisterCudaSource(const std::string& name, const std::string& source,
                                  const std::string& arch);

  /// `callee` in the registered libraries only. NotFound names what was searched:
  /// "'system' not found in registered libraries (searched: openblas …)".
  absl::StatusOr<ResolvedSymbol> ResolveCAbi(absl::string_view callee) const;

  /// The registered image with `callee` as an entry; NotFound lists the images searched.
  absl::StatusOr<KernelImage> ResolveKernel(absl::string_view callee) const;

  /// Declares that `provider.library` (registered) serves tile.matmul through
  /// `provider.callee`: the provider becomes an arbiter candidate. InvalidArgument for a
  /// malformed contract (ValidateMatmulProvider), an unregistered library, a callee that
  /// library does not define, or a name already taken.
  absl::Status DeclareMatmulProvider(const MatmulProvider& provider);

  /// The matmul providers for `target`: the built-in ones (whether or not their library is
  /// registered — the arbiter reports them unavailable) and the declared ones.
  std::vector<MatmulProvider> MatmulProviders(Target target) const;

  /// Whether a library is registered under `name`.
  bool HasLibrary(absl::string_view name) const;

  /// `callee` in the library registered as `library` only; NotFound otherwise.
  absl::StatusOr<ResolvedSymbol> ResolveCAbiIn(absl::string_view library,
                                               absl::string_view callee) const;

  /// Every registered library and image.
  std::vector<DelegateIdentity> Identities() const;

  /// What this registry's delegates need at run time (kernel images, cuBLAS handles); handed
  /// to each invocation of a module compiled against it. Thread-safe.
  runtime::DelegateRuntime* runtime() const { return runtime_.get(); }

 private:
  struct Library {
    void* handle = nullptr;
    DelegateIdentity identity;
  };

  absl::Status AddImage(KernelImage image);
  /// `name` when the file of `library` itself defines it (not one of its dependencies).
  static void* DefinedIn(const Library& library, const std::string& name);

  const std::unique_ptr<runtime::DelegateRuntime> runtime_ =
      std::make_unique<runtime::DelegateRuntime>();
  mutable absl::Mutex mu_;
  std::map<std::string, Library> libraries_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, KernelImage> images_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> nvrtc_cache_ ABSL_GUARDED_BY(mu_);  // hash → PTX
  std::vector<MatmulProvider> providers_ ABSL_GUARDED_BY(mu_);           // declared
};

/// The `.entry` names of a PTX text, in order.
std::vector<std::string> PtxEntries(absl::string_view ptx);

}  // namespace tessera::jit::delegates

#endif  // TESSERA_JIT_DELEGATES_REGISTRY_H_
