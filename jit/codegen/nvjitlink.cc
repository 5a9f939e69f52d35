// PTX → cubin with nvJitLink.
#include "jit/codegen/nvjitlink.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "jit/codegen/cuda_libraries.h"

namespace tessera::jit {
namespace {

struct HandleDeleter {
  const NvJitLinkApi* api;
  void operator()(nvJitLinkHandle handle) const { api->nvJitLinkDestroy(&handle); }
};
using Handle = std::unique_ptr<std::remove_pointer_t<nvJitLinkHandle>, HandleDeleter>;

std::string ErrorLog(const NvJitLinkApi& api, nvJitLinkHandle handle) {
  size_t size = 0;
  if (api.nvJitLinkGetErrorLogSize(handle, &size) != NVJITLINK_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  if (api.nvJitLinkGetErrorLog(handle, log.data()) != NVJITLINK_SUCCESS) return "";
  log.resize(size - 1);  // drop the terminating NUL
  return log;
}

absl::Status Failure(const NvJitLinkApi& api, absl::string_view call, nvJitLinkResult result,
                     nvJitLinkHandle handle) {
  std::string log = handle != nullptr ? ErrorLog(api, handle) : "";
  return absl::InternalError(absl::StrCat(call, " failed (nvJitLinkResult ",
                                          static_cast<int>(result), ")", log.empty() ? "" : ": ",
                                          log));
}

}  // namespace

absl::StatusOr<std::string> LinkPtxToCubin(absl::string_view ptx, absl::string_view arch,
                                           int opt_level) {
  return LinkPtxToCubin(std::vector<absl::string_view>{ptx}, arch, opt_level);
}

absl::StatusOr<std::string> LinkPtxToCubin(const std::vector<absl::string_view>& ptx,
                                           absl::string_view arch, int opt_level) {
  TESSERA_ASSIGN_OR_RETURN(const NvJitLinkApi* api, LoadNvJitLink("linking PTX into a cubin"));
  std::string arch_option = absl::StrCat("-arch=", arch);
  // nvJitLink accepts only -O0 and -O3.
  std::string opt_option = opt_level == 0 ? "-O0" : "-O3";
  const char* options[] = {arch_option.c_str(), opt_option.c_str()};
  nvJitLinkHandle raw = nullptr;
  nvJitLinkResult result = api->nvJitLinkCreate(&raw, 2, options);
  if (result != NVJITLINK_SUCCESS) return Failure(*api, "nvJitLinkCreate", result, raw);
  Handle handle(raw, HandleDeleter{api});
  for (size_t i = 0; i < ptx.size(); ++i) {
    const std::string name = absl::StrCat("tessera", i, ".ptx");
    result =
        api->nvJitLinkAddData(raw, NVJITLINK_INPUT_PTX, ptx[i].data(), ptx[i].size(), name.c_str());
    if (result != NVJITLINK_SUCCESS) return Failure(*api, "nvJitLinkAddData", result, raw);
  }
  result = api->nvJitLinkComplete(raw);
  if (result != NVJITLINK_SUCCESS) return Failure(*api, "nvJitLinkComplete", result, raw);
  size_t size = 0;
  result = api->nvJitLinkGetLinkedCubinSize(raw, &size);
  if (result != NVJITLINK_SUCCESS) return Failure(*api, "nvJitLinkGetLinkedCubinSize", result, raw);
  std::string cubin(size, '\0');
  result = api->nvJitLinkGetLinkedCubin(raw, cubin.data());
  if (result != NVJITLINK_SUCCESS) return Failure(*api, "nvJitLinkGetLinkedCubin", result, raw);
  return cubin;
}

std::string NvJitLinkVersion() {
  const CudaComponent& component = NvJitLinkComponent();
  return component.found() ? absl::StrCat("nvJitLink ", component.version) : "nvJitLink missing";
}

}  // namespace tessera::jit
