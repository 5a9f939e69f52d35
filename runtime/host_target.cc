#include "runtime/host_target.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/X86TargetParser.h"

namespace tessera::runtime {
namespace {

template <typename Has>
int64_t VectorBits(const Has& has) {
  if (has("avx512f")) return 512;
  if (has("avx")) return 256;
  return 128;
}

const llvm::StringMap<bool>& HostFeatures() {
  static const auto* features = new llvm::StringMap<bool>(llvm::sys::getHostCPUFeatures());
  return *features;
}

bool IsNamedCpu(absl::string_view name) {
  return !name.empty() && llvm::X86::parseArchX86(llvm::StringRef(name.data(), name.size()),
                                                  /*Only64Bit=*/true) != llvm::X86::CK_None;
}

/// The named CPU's features with everything they imply (x86-64-v4 lists avx512vl, which
/// implies avx512f and avx), sorted.
std::vector<std::string> CpuFeatures(absl::string_view name) {
  llvm::SmallVector<llvm::StringRef, 64> listed;
  llvm::X86::getFeaturesForCPU(llvm::StringRef(name.data(), name.size()), listed);
  llvm::StringMap<bool> closed;
  for (llvm::StringRef feature : listed) {
    closed[feature] = true;
    llvm::X86::updateImpliedFeatures(feature, true, closed);  // sets only what it implies
  }
  std::vector<std::string> features;
  for (const auto& entry : closed) {
    if (entry.getValue()) features.push_back(entry.getKey().str());
  }
  std::sort(features.begin(), features.end());
  return features;
}

}  // namespace

const std::string& HostCpu() {
  static const std::string* cpu = [] {
    // The same detection JITTargetMachineBuilder::detectHost uses for the code itself; the
    // features come as an unordered map.
    std::vector<std::string> enabled;
    for (const auto& entry : llvm::sys::getHostCPUFeatures()) {
      if (entry.getValue()) enabled.push_back(entry.getKey().str());
    }
    std::sort(enabled.begin(), enabled.end());
    const std::string joined = absl::StrJoin(enabled, ",");
    return new std::string(
        absl::StrCat(llvm::sys::getHostCPUName().str(), "+",
                     absl::Hex(llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(
                                   reinterpret_cast<const uint8_t*>(joined.data()), joined.size())),
                               absl::kZeroPad16)));
  }();
  return *cpu;
}

const HostTarget& ThisMachineHostTarget() {
  static const HostTarget* target = [] {
    auto* made = new HostTarget();
    made->id = HostCpu();
    made->cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures features;
    for (const auto& entry : HostFeatures()) features.AddFeature(entry.getKey(), entry.getValue());
    made->features = features.getString();
    made->vector_bits = VectorBits([](const char* name) {
      auto it = HostFeatures().find(name);
      return it != HostFeatures().end() && it->second;
    });
    return made;
  }();
  return *target;
}

absl::StatusOr<HostTarget> ResolveHostTarget(absl::string_view name) {
  if (name.empty() || name == "native") return ThisMachineHostTarget();
  if (!IsNamedCpu(name)) {
    llvm::SmallVector<llvm::StringRef, 128> valid;
    llvm::X86::fillValidCPUArchList(valid, /*Only64Bit=*/true);
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown host CPU '", name, "'; expected native or a 64-bit x86 CPU: ",
        absl::StrJoin(valid, ", ",
                      [](std::string* out, llvm::StringRef cpu) { out->append(cpu.str()); })));
  }
  HostTarget target;
  target.id = std::string(name);
  target.cpu = std::string(name);
  const std::vector<std::string> features = CpuFeatures(name);
  target.vector_bits = VectorBits([&](const char* feature) {
    return std::find(features.begin(), features.end(), feature) != features.end();
  });
  return target;
}

absl::StatusOr<std::vector<std::string>> MissingHostFeatures(absl::string_view id) {
  if (id == HostCpu()) return std::vector<std::string>();
  if (!IsNamedCpu(id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", id, "' is neither this machine's CPU nor a named x86-64 CPU"));
  }
  std::vector<std::string> missing;
  for (const std::string& feature : CpuFeatures(id)) {
    auto it = HostFeatures().find(feature);
    if (it != HostFeatures().end() ? it->second : feature == "x87" || feature == "64bit") {
      continue;  // present (the detection leaves out only what every x86-64 CPU has)
    }
    missing.push_back(feature);
  }
  return missing;
}

absl::Status CheckHostCodeRunsHere(absl::string_view id) {
  absl::StatusOr<std::vector<std::string>> missing = MissingHostFeatures(id);
  if (!missing.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("the host code was generated for CPU ", id,
                                                      ", and this machine's is ", HostCpu()));
  }
  if (missing->empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("the host code was generated for CPU ", id, ", and this machine's (", HostCpu(),
                   ") lacks its features ", absl::StrJoin(*missing, ", ")));
}

int HostFeatureCount(absl::string_view id) {
  return IsNamedCpu(id) ? static_cast<int>(CpuFeatures(id).size()) : 0;
}

}  // namespace tessera::runtime
