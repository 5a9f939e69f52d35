// Compile options: target names, supported archs, the CUDA toolkit location.
#include "jit/compile_options.h"

#include <cstdlib>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tessera::jit {

absl::string_view TargetName(Target target) {
  switch (target) {
    case Target::kHost:
      return "host";
    case Target::kNvptx:
      return "nvptx";
  }
  return "unknown";
}

absl::StatusOr<Target> ParseTarget(absl::string_view name) {
  if (name == "host") return Target::kHost;
  if (name == "nvptx") return Target::kNvptx;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown target '", name, "'; expected 'host' or 'nvptx'"));
}

const std::vector<std::string>& SupportedArchs() {
  static const auto* archs = new std::vector<std::string>{"sm_75", "sm_80", "sm_86",
                                                          "sm_87", "sm_89", "sm_90"};
  return *archs;
}

absl::Status ValidateArch(absl::string_view arch) {
  if (absl::c_linear_search(SupportedArchs(), arch)) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat("unsupported arch '", arch, "'; supported: ",
                                               absl::StrJoin(SupportedArchs(), ", ")));
}

std::string ResolveCudaToolkit(const CompileOptions& options) {
  if (!options.cuda_toolkit.empty()) return options.cuda_toolkit;
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0') {
    return home;
  }
  return "/usr/local/cuda";
}

}  // namespace tessera::jit
