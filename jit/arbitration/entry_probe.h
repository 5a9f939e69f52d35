// One entry function run on seeded inputs: every dynamic size bound to one value, a buffer per
// tensor argument (f32, f16, bf16: uniform in [-1, 1), rounded to the type) and fixed scalars.
// The composed accuracy check runs whole entries so; the arbiter's prober runs the probe
// function of one Tile op so (ArbitrationPoint::probe_source), on the host or the device.
#ifndef TESSERA_JIT_ARBITRATION_ENTRY_PROBE_H_
#define TESSERA_JIT_ARBITRATION_ENTRY_PROBE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "arbiter/op_probe.h"
#include "jit/compiled_module.h"
#include "runtime/memref_descriptor.h"

namespace tessera::jit {

/// The most bytes one probe's tensors may take, and what MakeEntryProbe says beyond it.
inline constexpr double kMaxEntryProbeBytes = 64.0 * 1024 * 1024;
inline constexpr char kEntryProbeTooLarge[] = "its probe would take more than 64 MiB";

/// An entry's probe: per argument, the bound shape and its bytes as stored (empty for scalars).
struct EntryProbe {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::vector<uint8_t>> buffers;
  int64_t dynamic_size = 0;
};

/// Fills `probe` for `entry` with every dynamic size `dynamic_size` and inputs from `seed`;
/// returns why it cannot be probed ("" when it can): a tensor of a type other than f32, f16
/// or bf16, a scalar other than f32, f64 or an integer, more than kMaxEntryProbeBytes, or a
/// shape contract the bound sizes break.
std::string MakeEntryProbe(const EntryFunction& entry, int64_t dynamic_size, uint32_t seed,
                           EntryProbe& probe);

/// The arguments of one call over tensor data at `data` (one pointer per argument, ignored
/// for scalars): memref descriptors and scalars (f32/f64 0.5, integers 1), packed.
struct PackedEntryArguments {
  std::vector<runtime::MemRefDescriptor> descriptors;
  std::vector<std::array<unsigned char, 8>> scalars;
  std::vector<void*> packed;

  PackedEntryArguments(const EntryFunction& entry, const EntryProbe& probe,
                       const std::vector<void*>& data);
};

/// The written tensors of `probe`'s buffers (as `entry` stores them), widened to float and
/// concatenated in argument order.
std::vector<float> WrittenValues(const EntryFunction& entry,
                                 const std::vector<std::vector<uint8_t>>& buffers);

/// The written tensors of `probe` as WrittenValues concatenates them: each one's element
/// count and storage type.
std::vector<arbiter::OutputSegment> WrittenSegments(const EntryFunction& entry,
                                                    const EntryProbe& probe);

/// One call of a probe module's entry point `entry` (host code; on a GPU it launches the
/// kernels). A failed run-time check is FailedPrecondition naming it, never an abort.
absl::Status CallProbeEntry(const CompiledModule& module, runtime::PackedEntry entry, void** args);

/// Runs `entry` of the host module `module` on a copy of `probe`; its written tensors.
/// FailedPrecondition when a run-time check fails.
absl::StatusOr<std::vector<float>> RunEntryOnHost(const CompiledModule& module,
                                                  const EntryFunction& entry,
                                                  const EntryProbe& probe);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_ARBITRATION_ENTRY_PROBE_H_
