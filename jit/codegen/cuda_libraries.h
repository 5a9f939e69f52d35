// Where NVRTC, nvJitLink and libdevice come from. They are found at run time, like the driver,
// so the library loads — and the host target works fully — on a machine without them. Only an
// nvptx compile (libdevice, and nvJitLink for a cubin), a CUDA C++ kernel registration (NVRTC)
// or a cubin link needs them, and those fail with FAILED_PRECONDITION naming what is missing and
// every place that was searched.
//
// Search order (docs/building.md), the first that has the file wins, per component:
//   1. $TESSERA_JIT_CUDA_HOME
//   2. NVIDIA's PyPI wheels (nvidia-cuda-nvrtc, nvidia-nvjitlink, nvidia-nvvm), whose
//      site-packages/nvidia/cu<major> is laid out like a toolkit: beside this library (a wheel
//      installs both into one site-packages), then $VIRTUAL_ENV's and $CONDA_PREFIX's
//   3. the toolkit: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda
//   4. libraries only: the system loader's path (a bare dlopen of the soname)
// A root's libraries are in lib64/ or lib/, libdevice in nvvm/libdevice/libdevice.10.bc.
#ifndef TESSERA_JIT_CODEGEN_CUDA_LIBRARIES_H_
#define TESSERA_JIT_CODEGEN_CUDA_LIBRARIES_H_

#include <nvJitLink.h>
#include <nvrtc.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessera::jit {

/// A directory laid out like a CUDA toolkit, and why it is searched.
struct CudaRoot {
  std::string origin;  ///< "$TESSERA_JIT_CUDA_HOME", "NVIDIA wheel", "$CUDA_HOME", "toolkit", …
  std::string path;
};

/// The roots of steps 1–3, in order, from the environment as it is now (duplicates removed).
std::vector<CudaRoot> CudaSearchRoots();

/// One component as found (or not): what the search did, for messages, logs and build info.
struct CudaComponent {
  std::string name;                ///< "NVRTC", "nvJitLink", "libdevice"
  std::string path;                ///< the file in use; empty when missing
  std::string root;                ///< the root it came from (empty for the system loader's path)
  std::string origin;              ///< that root's origin, or "system loader path"
  std::string version;             ///< libraries: "13.0" as the library reports it; libdevice: ""
  std::vector<std::string> steps;  ///< every place looked and what was there, in order

  bool found() const { return !path.empty(); }
  /// FAILED_PRECONDITION: "<what> needs <name>, which was not found; looked in: …".
  absl::Status Missing(absl::string_view what) const;
};

/// NVRTC's entry points this project calls (resolved from the loaded library).
struct NvrtcApi {
  decltype(&::nvrtcVersion) nvrtcVersion;
  decltype(&::nvrtcGetErrorString) nvrtcGetErrorString;
  decltype(&::nvrtcCreateProgram) nvrtcCreateProgram;
  decltype(&::nvrtcCompileProgram) nvrtcCompileProgram;
  decltype(&::nvrtcDestroyProgram) nvrtcDestroyProgram;
  decltype(&::nvrtcGetProgramLogSize) nvrtcGetProgramLogSize;
  decltype(&::nvrtcGetProgramLog) nvrtcGetProgramLog;
  decltype(&::nvrtcGetPTXSize) nvrtcGetPTXSize;
  decltype(&::nvrtcGetPTX) nvrtcGetPTX;
  decltype(&::nvrtcGetCUBINSize) nvrtcGetCUBINSize;
  decltype(&::nvrtcGetCUBIN) nvrtcGetCUBIN;
};

/// nvJitLink's entry points (the versioned symbols its header's inline wrappers call).
struct NvJitLinkApi {
  decltype(&::nvJitLinkVersion) nvJitLinkVersion;
  decltype(&::__nvJitLinkCreate_13_0) nvJitLinkCreate;
  decltype(&::__nvJitLinkDestroy_13_0) nvJitLinkDestroy;
  decltype(&::__nvJitLinkAddData_13_0) nvJitLinkAddData;
  decltype(&::__nvJitLinkComplete_13_0) nvJitLinkComplete;
  decltype(&::__nvJitLinkGetLinkedCubinSize_13_0) nvJitLinkGetLinkedCubinSize;
  decltype(&::__nvJitLinkGetLinkedCubin_13_0) nvJitLinkGetLinkedCubin;
  decltype(&::__nvJitLinkGetErrorLogSize_13_0) nvJitLinkGetErrorLogSize;
  decltype(&::__nvJitLinkGetErrorLog_13_0) nvJitLinkGetErrorLog;
};

/// Each searched for on its first call, once per process (thread-safe), and never unloaded.
const CudaComponent& NvrtcComponent();
const CudaComponent& NvJitLinkComponent();
const CudaComponent& LibdeviceComponent();

/// The loaded library's entry points, or FAILED_PRECONDITION naming `what` needed it and where
/// the search looked.
absl::StatusOr<const NvrtcApi*> LoadNvrtc(absl::string_view what);
absl::StatusOr<const NvJitLinkApi*> LoadNvJitLink(absl::string_view what);

/// The three components (searching for any not yet searched for), as a JSON object
/// {"nvrtc": {...}, "nvjitlink": {...}, "libdevice": {...}} for build info.
std::string CudaComponentsJson();

}  // namespace tessera::jit

#endif  // TESSERA_JIT_CODEGEN_CUDA_LIBRARIES_H_
