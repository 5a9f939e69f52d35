// Kernel schedules: the device lowerings of a Tile op beyond its baseline (docs/compiler.md
// "Kernel variants"). Each is an arbiter candidate `compiled.<schedule>`; the winner is written
// on the op as `tessera_jit.schedule` and tessera-lower-tile-to-gpu lowers it so. Every schedule
// is deterministic run to run (a fixed order of accumulation per output element, no atomics)
// and states its batch invariance.
#ifndef TESSERA_DIALECT_CONVERSION_TILE_TO_GPU_KERNELSCHEDULES_H_
#define TESSERA_DIALECT_CONVERSION_TILE_TO_GPU_KERNELSCHEDULES_H_

#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "mlir/IR/Operation.h"

namespace tessera::device {

/// The schedule chosen for a Tile op (written by arbitration; absent: the baseline).
inline constexpr char kScheduleAttr[] = "tessera_jit.schedule";

/// map: 128-bit vector loads and stores, grid-stride, several elements per thread.
inline constexpr char kVectorized[] = "vectorized";
/// reduce, softmax, norm, attention_backward: one warp per row, a fixed butterfly of warp
/// shuffles (no shared memory).
inline constexpr char kWarpPerRow[] = "warp_per_row";
/// softmax: one block per row, running max and sum in one pass (an online softmax).
inline constexpr char kOnline[] = "online";
/// matmul: tensor cores (`mma.sync`; f16/bf16 -> f32, tf32) on sm_80+, 64x64 block tiles.
inline constexpr char kMmaSync[] = "mma_sync";
/// matmul: as mma_sync, with a 3-stage pipeline of 16-byte cp.async copies into shared memory.
inline constexpr char kMmaAsync[] = "mma_async";

struct KernelSchedule {
  std::string name;
  std::string summary;           ///< what the kernel does, for records and docs
  std::string batch_invariance;  ///< why a row's result does not depend on the batch size
};

/// The schedules beyond the baseline that exist for `op`'s kind, in a stable order; empty for
/// ops without variants.
std::vector<KernelSchedule> schedulesFor(mlir::Operation* op);

/// Why `schedule` cannot lower `op` for `arch` (a GPU arch such as "sm_90"; "" skips the arch
/// check), or "" when it can.
std::string scheduleDeclines(mlir::Operation* op, llvm::StringRef schedule, llvm::StringRef arch);

/// The schedule written on `op`, or "" for the baseline.
llvm::StringRef scheduleOf(mlir::Operation* op);

}  // namespace tessera::device

#endif  // TESSERA_DIALECT_CONVERSION_TILE_TO_GPU_KERNELSCHEDULES_H_
