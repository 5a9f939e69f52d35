#include "jit/codegen/toolchain.h"

#include <cuda.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "base/files.h"
#include "jit/build_identity.h"
#include "jit/codegen/nvjitlink.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/xxhash.h"
#include "runtime/host_target.h"

namespace tessera::jit {
namespace {

/// The value after `"cuda"`'s `"version"` in version.json, else "".
std::string VersionJsonVersion(const std::string& text) {
  size_t at = text.find("\"cuda\"");
  if (at == std::string::npos) return "";
  at = text.find("\"version\"", at);
  if (at == std::string::npos) return "";
  const size_t open = text.find('"', text.find(':', at) + 1);
  const size_t close = open == std::string::npos ? open : text.find('"', open + 1);
  if (close == std::string::npos) return "";
  return text.substr(open + 1, close - open - 1);
}

/// The toolkit's version: version.json, else CUDA_VERSION from the first 64 KiB of cuda.h.
std::string ToolkitVersion(const std::string& root) {
  std::string text;
  if (ReadFile(root + "/version.json", text)) {
    if (std::string version = VersionJsonVersion(text); !version.empty()) return version;
  }
  std::ifstream header(root + "/include/cuda.h", std::ios::binary);
  std::string head(64 << 10, '\0');
  header.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(header.gcount()));
  constexpr char kDefine[] = "#define CUDA_VERSION ";
  const size_t at = head.find(kDefine);
  int version = 0;
  if (at != std::string::npos &&
      absl::SimpleAtoi(
          absl::StripAsciiWhitespace(absl::string_view(head).substr(
              at + sizeof(kDefine) - 1, head.find('\n', at) - (at + sizeof(kDefine) - 1))),
          &version)) {
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
    toolchain->host_cpu = runtime::HostCpu();
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
  // XXH3-64: an identity of the file's bytes at memory speed (not a defence against a forged
  // file: whoever can replace libdevice can replace the compiler too).
  identity.libdevice =
      ReadFile(root + "/nvvm/libdevice/libdevice.10.bc", libdevice)
          ? absl::StrCat(absl::Hex(
                llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(
                    reinterpret_cast<const uint8_t*>(libdevice.data()), libdevice.size())),
                absl::kZeroPad16))
          : "missing";
  absl::MutexLock lock(&mu);
  known->emplace(root, identity);
  return identity;
}

std::string CudaToolkitFingerprint(const std::string& root) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* known = new std::map<std::string, std::string>();
  {
    absl::MutexLock lock(&mu);
    if (auto it = known->find(root); it != known->end()) return it->second;
  }
  std::string fingerprint;
  for (const char* file : {"/nvvm/libdevice/libdevice.10.bc", "/version.json", "/include/cuda.h"}) {
    struct stat info;
    if (stat((root + file).c_str(), &info) != 0) {
      absl::StrAppend(&fingerprint, "missing;");
      continue;
    }
    absl::StrAppend(&fingerprint, info.st_size, ":", info.st_mtim.tv_sec, ".", info.st_mtim.tv_nsec,
                    ":", info.st_ino, ";");
  }
  absl::MutexLock lock(&mu);
  known->emplace(root, fingerprint);
  return fingerprint;
}

}  // namespace tessera::jit
