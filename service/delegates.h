// The vendor libraries, kernel images and matmul providers a caller's modules resolve kernel_call
// ops against, at the service's seam: the C API's context and the CLI register through it; the
// compiler resolves in the registry behind it (jit/delegates/registry.h). Thread-safe.
#ifndef TESSERA_SERVICE_DELEGATES_H_
#define TESSERA_SERVICE_DELEGATES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/delegate_identity.h"
#include "runtime/target.h"

namespace tessera::jit::delegates {
class DelegateRegistry;
}  // namespace tessera::jit::delegates

namespace tessera::service {

class Delegates {
 public:
  Delegates();
  ~Delegates();
  Delegates(const Delegates&) = delete;
  Delegates& operator=(const Delegates&) = delete;

  /// dlopens the library at `path` under `name`; its pointers address `pointers` (inferred
  /// from its soname by default). Errors name the library and why.
  absl::Status RegisterLibrary(const std::string& name, const std::string& path,
                               runtime::PointerSpace pointers = runtime::PointerSpace::kInferred);
  /// The default vendor libraries of `target` found on this machine (OpenBLAS; cuBLAS).
  absl::Status RegisterDefaultLibraries(runtime::Target target);
  /// A kernel image: PTX text, cubin bytes, or CUDA C++ compiled with NVRTC for `arch`.
  absl::Status RegisterPtx(const std::string& name, std::string ptx);
  absl::Status RegisterCubin(const std::string& name, std::string cubin);
  absl::Status RegisterCudaSource(const std::string& name, const std::string& source,
                                  const std::string& arch);
  /// A registered library's matmul entry point becomes an arbiter candidate.
  absl::Status DeclareMatmulProvider(const runtime::MatmulProvider& provider);
  /// Every registered library and image.
  std::vector<runtime::DelegateIdentity> Identities() const;

  /// The registry compiles resolve in.
  std::shared_ptr<const jit::delegates::DelegateRegistry> registry() const { return registry_; }

 private:
  const std::shared_ptr<jit::delegates::DelegateRegistry> registry_;
};

}  // namespace tessera::service

#endif  // TESSERA_SERVICE_DELEGATES_H_
