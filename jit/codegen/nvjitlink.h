// PTX → cubin in process with nvJitLink (no ptxas subprocess on the compile path).
#ifndef TESSERA_JIT_CODEGEN_NVJITLINK_H_
#define TESSERA_JIT_CODEGEN_NVJITLINK_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessera::jit {

/// Assembles and links `ptx` into a cubin for `arch` (e.g. "sm_90"); `opt_level` 0 maps to
/// ptxas -O0, anything higher to -O3 (the only levels nvJitLink accepts). A failure is Internal and
/// carries nvJitLink's error log. Thread-safe.
absl::StatusOr<std::string> LinkPtxToCubin(absl::string_view ptx, absl::string_view arch,
                                           int opt_level);

/// Assembles several PTX modules and links them into one cubin (every kernel of a compiled
/// module, whose kernels are separate images): as LinkPtxToCubin. Thread-safe.
absl::StatusOr<std::string> LinkPtxToCubin(const std::vector<absl::string_view>& ptx,
                                           absl::string_view arch, int opt_level);

/// "nvJitLink 13.0", the version of the library actually loaded.
std::string NvJitLinkVersion();

}  // namespace tessera::jit

#endif  // TESSERA_JIT_CODEGEN_NVJITLINK_H_
