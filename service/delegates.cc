// The service's delegates: the compiler's registry behind the seam.
#include "service/delegates.h"

#include <utility>

#include "jit/delegates/registry.h"

namespace tessera::service {

Delegates::Delegates() : registry_(std::make_shared<jit::delegates::DelegateRegistry>()) {}

Delegates::~Delegates() = default;

absl::Status Delegates::RegisterLibrary(const std::string& name, const std::string& path,
                                        runtime::PointerSpace pointers) {
  return registry_->RegisterLibrary(name, path, pointers);
}

absl::Status Delegates::RegisterDefaultLibraries(runtime::Target target) {
  return registry_->RegisterDefaultLibraries(target);
}

absl::Status Delegates::RegisterPtx(const std::string& name, std::string ptx) {
  return registry_->RegisterPtx(name, std::move(ptx));
}

absl::Status Delegates::RegisterCubin(const std::string& name, std::string cubin) {
  return registry_->RegisterCubin(name, std::move(cubin));
}

absl::Status Delegates::RegisterCudaSource(const std::string& name, const std::string& source,
                                           const std::string& arch) {
  return registry_->RegisterCudaSource(name, source, arch);
}

absl::Status Delegates::DeclareMatmulProvider(const runtime::MatmulProvider& provider) {
  return registry_->DeclareMatmulProvider(provider);
}

std::vector<runtime::DelegateIdentity> Delegates::Identities() const {
  return registry_->Identities();
}

}  // namespace tessera::service
