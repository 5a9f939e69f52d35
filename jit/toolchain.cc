#include "jit/toolchain.h"

#include <cuda.h>

#include "absl/strings/str_cat.h"
#include "jit/nvjitlink.h"
#include "llvm/Config/llvm-config.h"

namespace tessera::jit {
namespace {

constexpr char kTesseraVersion[] = "0.1.0";

}  // namespace

const Toolchain& Toolchain::Current() {
  static const Toolchain* current = [] {
    auto* toolchain = new Toolchain();
    toolchain->tessera = kTesseraVersion;
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

}  // namespace tessera::jit
