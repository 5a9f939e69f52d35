#include "jit/arbitration/probe_device.h"

#include <fstream>
#include <map>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "runtime/gpu_runtime.h"

namespace tessera::jit {
namespace {

ProbeDevice FindGpu(const std::string& arch) {
  ProbeDevice device;
  device.description = "no device";
  absl::StatusOr<runtime::GpuRuntime*> runtime = runtime::GpuRuntime::Get();
  if (!runtime.ok()) {
    device.unavailable = absl::StrCat("no GPU to probe on: ", runtime.status().message());
    return device;
  }
  std::vector<std::string> found;
  for (int ordinal = 0; ordinal < (*runtime)->device_count(); ++ordinal) {
    absl::StatusOr<runtime::DeviceInfo> info = (*runtime)->Info(ordinal);
    if (!info.ok()) continue;
    if (info->arch == arch) {
      device.ordinal = ordinal;
      device.description = absl::StrCat(info->name, " (", info->arch, ", ", info->multiprocessors,
                                        " SMs, device ", ordinal, ")");
      return device;
    }
    found.push_back(info->arch);
  }
  device.unavailable = absl::StrCat("no ", arch, " device to probe on (found: ",
                                    found.empty() ? "none" : absl::StrJoin(found, ", "), ")");
  return device;
}

}  // namespace

const ProbeDevice& HostProbeDevice() {
  static const ProbeDevice* device = [] {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    std::string model = "unknown CPU";
    while (std::getline(cpuinfo, line)) {
      if (absl::StartsWith(line, "model name")) {
        model = line.substr(line.find(':') + 2);
        break;
      }
    }
    auto* host = new ProbeDevice();
    host->description = absl::StrCat(model, " (", std::thread::hardware_concurrency(), " threads)");
    return host;
  }();
  return *device;
}

ProbeDevice GpuProbeDevice(const std::string& arch) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* known = new std::map<std::string, ProbeDevice>();
  absl::MutexLock lock(&mu);
  auto it = known->find(arch);
  if (it == known->end()) it = known->emplace(arch, FindGpu(arch)).first;
  return it->second;
}

}  // namespace tessera::jit
