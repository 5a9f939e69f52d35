// The device the arbiter's probes run on for a compile: the host CPU, or the first GPU of the
// compile's arch — named by model, arch and SM count, because a decision measured on one is
// no evidence for another (it keys decisions, and for nvptx the compile cache too).
#ifndef TESSERA_JIT_ARBITRATION_PROBE_DEVICE_H_
#define TESSERA_JIT_ARBITRATION_PROBE_DEVICE_H_

#include <string>

namespace tessera::jit {

struct ProbeDevice {
  /// e.g. "AMD EPYC 7B13 (2 threads)" or "NVIDIA H200 (sm_90, 132 SMs, device 0)"; "no
  /// device" when none of the arch is present.
  std::string description;
  int ordinal = -1;  ///< the GPU's ordinal; -1 for the host or none
  /// "" when probes can run; else why not ("no sm_90 device to probe on (found: sm_80)").
  std::string unavailable;
};

/// The host CPU (model and hardware threads, from /proc/cpuinfo).
const ProbeDevice& HostProbeDevice();

/// The first device of `arch`. Looks the devices up once per process and arch.
ProbeDevice GpuProbeDevice(const std::string& arch);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_ARBITRATION_PROBE_DEVICE_H_
