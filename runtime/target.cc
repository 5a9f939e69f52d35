// Target names and the supported GPU architectures.
#include "runtime/target.h"

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tessera::runtime {

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

namespace {

/// Every arch the nvptx target compiles for and the PTX ISA it is compiled with: the lowest
/// that LLVM 22's NVPTX backend and CUDA 13.0's ptxas accept for it, and never below 8.0 (so a
/// PTX image loads on any driver from CUDA 12.0 on). sm_101 is left out: CUDA 13 renamed it
/// sm_110 and its ptxas rejects the old name.
struct ArchPtx {
  const char* arch;
  const char* ptx_features;
};
constexpr ArchPtx kArchs[] = {
    {"sm_75", "+ptx80"},   {"sm_80", "+ptx80"},  {"sm_86", "+ptx80"},   {"sm_87", "+ptx80"},
    {"sm_89", "+ptx80"},   {"sm_90", "+ptx80"},  {"sm_90a", "+ptx80"},  {"sm_100", "+ptx86"},
    {"sm_100a", "+ptx86"}, {"sm_103", "+ptx88"}, {"sm_103a", "+ptx88"}, {"sm_110", "+ptx90"},
    {"sm_110a", "+ptx90"}, {"sm_120", "+ptx87"}, {"sm_120a", "+ptx87"}, {"sm_121", "+ptx88"},
    {"sm_121a", "+ptx88"},
};

}  // namespace

const std::vector<std::string>& SupportedArchs() {
  static const auto* archs = [] {
    auto* list = new std::vector<std::string>();
    for (const ArchPtx& entry : kArchs) list->push_back(entry.arch);
    return list;
  }();
  return *archs;
}

absl::Status ValidateArch(absl::string_view arch) {
  if (absl::c_linear_search(SupportedArchs(), arch)) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      "unsupported arch '", arch, "'; supported: ", absl::StrJoin(SupportedArchs(), ", ")));
}

std::string PtxFeatures(absl::string_view arch) {
  for (const ArchPtx& entry : kArchs) {
    if (arch == entry.arch) return entry.ptx_features;
  }
  return "";
}

}  // namespace tessera::runtime
