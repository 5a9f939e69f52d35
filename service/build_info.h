// What this build of the service is made from and what it finds on this machine: for the C API's
// build info and its debug log.
#ifndef TESSERA_SERVICE_BUILD_INFO_H_
#define TESSERA_SERVICE_BUILD_INFO_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tessera::service {

/// One JSON object: the versions the build was made with (tessera, `api`, LLVM, the CUDA
/// headers, the host CPU), the CUDA components found (NVRTC, nvJitLink, libdevice) and whether
/// the CUDA driver loads.
std::string BuildInfoJson(absl::string_view api);

/// How NVRTC, nvJitLink and libdevice were searched for ("<component>: <step>"), once per
/// process.
std::vector<std::string> CudaComponentSearch();

}  // namespace tessera::service

#endif  // TESSERA_SERVICE_BUILD_INFO_H_
