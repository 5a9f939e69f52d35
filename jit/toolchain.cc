#include "jit/toolchain.h"

#include <cuda.h>

#include <map>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/files.h"
#include "base/sha256.h"
#include "jit/build_identity.h"
#include "jit/nvjitlink.h"
#include "llvm/Config/llvm-config.h"

namespace tessera::jit {
namespace {

std::string ToolkitVersion(const std::string& root) {
  std::string text;
  std::smatch match;
  if (ReadFile(root + "/version.json", text) &&
      std::regex_search(text, match,
                        std::regex(R"re("cuda"\s*:\s*\{[^}]*"version"\s*:\s*"([^"]+)")re"))) {
    return match[1].str();
  }
  if (ReadFile(root + "/include/cuda.h", text) &&
      std::regex_search(text, match, std::regex(R"re(#define\s+CUDA_VERSION\s+(\d+))re"))) {
    const int version = std::stoi(match[1].str());
    return absl::StrCat(version / 1000, ".", (version % 1000) / 10);
  }
  return "unknown";
}

}  // namespace

const Toolchain& Toolchain::Current() {
  static const Toolchain* current = [] {
    auto* toolchain = new Toolchain();
    toolchain->tessera = kBuildIdentity;
    toolchain->llvm = LLVM_VERSION_STRING;
    toolchain->cuda = absl::StrCat(CUDA_VERSION / 1000, ".", (CUDA_VERSION % 1000) / 10);
    toolchain->nvjitlink = NvJitLinkVersion();
    return toolchain;
  }();
  return *current;
}

std::string Toolchain::ToString() const {
  return absl::StrCat("tessera ", tessera, ", llvm ", llvm, ", cuda ", cuda, ", nvjitlink ",
                      nvjitlink);
}

CudaToolkitIdentity DescribeCudaToolkit(const std::string& root) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* known = new std::map<std::string, CudaToolkitIdentity>();
  {
    absl::MutexLock lock(&mu);
    if (auto it = known->find(root); it != known->end()) return it->second;
  }
  CudaToolkitIdentity identity;
  identity.version = ToolkitVersion(root);
  std::string libdevice;
  identity.libdevice = ReadFile(root + "/nvvm/libdevice/libdevice.10.bc", libdevice)
                           ? Sha256Hex(libdevice).substr(0, 16)
                           : "missing";
  absl::MutexLock lock(&mu);
  known->emplace(root, identity);
  return identity;
}

}  // namespace tessera::jit
