// The CPU host machine code is generated for: this machine's, with every feature it has, or a
// named x86-64 CPU (an LLVM -mcpu name: x86-64-v3, skylake-avx512, znver4), whose code runs on
// any machine with that CPU's features. Named CPUs are how one ahead-of-time package carries
// host code for machines other than the one it was made on (service/package.h).
#ifndef TESSERA_RUNTIME_HOST_TARGET_H_
#define TESSERA_RUNTIME_HOST_TARGET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessera::runtime {

/// This machine's CPU as LLVM's host detection sees it, which is what host machine code is
/// generated for unless a compile names another (HostTarget):
/// its name and an XXH3-64 of its enabled features, e.g. "sapphirerapids+1f0c9a3b5d7e2468".
/// Computed once. Thread-safe.
const std::string& HostCpu();

struct HostTarget {
  /// What HostObject::cpu records: HostCpu() for this machine ("znver3+1f0c…", exact), the
  /// name for a named CPU ("x86-64-v3", runs wherever its features are).
  std::string id;
  /// The LLVM CPU name code is generated for.
  std::string cpu;
  /// LLVM's feature string: this machine's detected features; "" for a named CPU (its own).
  std::string features;
  /// The widest vector register in bits (512 with AVX-512F, 256 with AVX, else 128): sizes
  /// the host matmul's register tile.
  int64_t vector_bits = 128;
};

/// This machine's CPU (LLVM's host detection; computed once).
const HostTarget& ThisMachineHostTarget();

/// `name` = "" or "native": this machine's; else a 64-bit x86 CPU LLVM knows
/// (INVALID_ARGUMENT naming the valid ones otherwise).
absl::StatusOr<HostTarget> ResolveHostTarget(absl::string_view name);

/// Whether host code generated for the CPU `id` (HostObject::cpu) runs on this machine: the
/// same identity as HostCpu(), or a named CPU none of whose features this CPU lacks.
/// FAILED_PRECONDITION naming the missing features otherwise.
absl::Status CheckHostCodeRunsHere(absl::string_view id);

/// The features of the named CPU `id` this CPU has not (empty for this machine's own id and
/// for a named CPU that runs here); INVALID_ARGUMENT for an id that is neither.
absl::StatusOr<std::vector<std::string>> MissingHostFeatures(absl::string_view id);

/// How many features the named CPU `id` implies (0 for anything else): after the vector width,
/// what picks among several package entries that run here.
int HostFeatureCount(absl::string_view id);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_HOST_TARGET_H_
