// The targets code is compiled for and runs on, and the GPU architectures of the nvptx target
// with the PTX ISA each is compiled with. No MLIR: the C API links it.
#ifndef TESSERA_RUNTIME_TARGET_H_
#define TESSERA_RUNTIME_TARGET_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessera::runtime {

/// The two targets that compile the same IR: NVIDIA GPUs (PTX + cubin) and the host CPU (native
/// code through LLVM ORC; also the accuracy reference).
enum class Target { kHost, kNvptx };

/// "host" or "nvptx".
absl::string_view TargetName(Target target);

/// Parses "host" / "nvptx"; anything else is InvalidArgument naming what was expected.
absl::StatusOr<Target> ParseTarget(absl::string_view name);

/// The GPU architectures the nvptx target compiles for, oldest first: sm_75 … sm_90a (Turing
/// to Hopper) and the Blackwell generation sm_100, sm_103, sm_110, sm_120, sm_121 with their
/// arch-specific `a` variants (CUDA 13 supports sm_75 and newer).
const std::vector<std::string>& SupportedArchs();

/// OK for a supported arch; Unimplemented naming the supported ones otherwise.
absl::Status ValidateArch(absl::string_view arch);

/// The NVPTX feature string that selects the PTX ISA `arch` is compiled with, e.g. "+ptx80"
/// for sm_90, "+ptx86" for sm_100; "" for an unsupported arch.
std::string PtxFeatures(absl::string_view arch);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_TARGET_H_
