// PTX → cubin with nvJitLink.
#include "jit/nvjitlink.h"

#include <nvJitLink.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tessera::jit {
namespace {

struct HandleDeleter {
  void operator()(nvJitLinkHandle handle) const { nvJitLinkDestroy(&handle); }
};
using Handle = std::unique_ptr<std::remove_pointer_t<nvJitLinkHandle>, HandleDeleter>;

std::string ErrorLog(nvJitLinkHandle handle) {
  size_t size = 0;
  if (nvJitLinkGetErrorLogSize(handle, &size) != NVJITLINK_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  if (nvJitLinkGetErrorLog(handle, log.data()) != NVJITLINK_SUCCESS) return "";
  log.resize(size - 1);  // drop the terminating NUL
  return log;
}

absl::Status Failure(absl::string_view call, nvJitLinkResult result, nvJitLinkHandle handle) {
  std::string log = handle != nullptr ? ErrorLog(handle) : "";
  return absl::InternalError(absl::StrCat(call, " failed (nvJitLinkResult ",
                                          static_cast<int>(result), ")",
                                          log.empty() ? "" : ": ", log));
}

}  // namespace

absl::StatusOr<std::string> LinkPtxToCubin(absl::string_view ptx, absl::string_view arch,
                                           int opt_level) {
  return LinkPtxToCubin(std::vector<absl::string_view>{ptx}, arch, opt_level);
}

absl::StatusOr<std::string> LinkPtxToCubin(const std::vector<absl::string_view>& ptx,
                                           absl::string_view arch, int opt_level) {
  std::string arch_option = absl::StrCat("-arch=", arch);
  // nvJitLink accepts only -O0 and -O3.
  std::string opt_option = opt_level == 0 ? "-O0" : "-O3";
  const char* options[] = {arch_option.c_str(), opt_option.c_str()};
  nvJitLinkHandle raw = nullptr;
  nvJitLinkResult result = nvJitLinkCreate(&raw, 2, options);
  if (result != NVJITLINK_SUCCESS) return Failure("nvJitLinkCreate", result, raw);
  Handle handle(raw);
  for (size_t i = 0; i < ptx.size(); ++i) {
    const std::string name = absl::StrCat("tessera", i, ".ptx");
    result = nvJitLinkAddData(raw, NVJITLINK_INPUT_PTX, ptx[i].data(), ptx[i].size(),
                              name.c_str());
    if (result != NVJITLINK_SUCCESS) return Failure("nvJitLinkAddData", result, raw);
  }
  result = nvJitLinkComplete(raw);
  if (result != NVJITLINK_SUCCESS) return Failure("nvJitLinkComplete", result, raw);
  size_t size = 0;
  result = nvJitLinkGetLinkedCubinSize(raw, &size);
  if (result != NVJITLINK_SUCCESS) return Failure("nvJitLinkGetLinkedCubinSize", result, raw);
  std::string cubin(size, '\0');
  result = nvJitLinkGetLinkedCubin(raw, cubin.data());
  if (result != NVJITLINK_SUCCESS) return Failure("nvJitLinkGetLinkedCubin", result, raw);
  return cubin;
}

std::string NvJitLinkVersion() {
  unsigned major = 0;
  unsigned minor = 0;
  if (nvJitLinkVersion(&major, &minor) != NVJITLINK_SUCCESS) return "nvJitLink unknown";
  return absl::StrCat("nvJitLink ", major, ".", minor);
}

}  // namespace tessera::jit
