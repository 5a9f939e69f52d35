// The original bridge's launch ABIs for registered PTX, keyed by entry name: how a kernel's host
// buffers are sized from its dims, which are copied back, how its parameters are laid out and
// what grid and block it launches with. Pure logic (no driver): unit-tested without a GPU.
#ifndef TESSERA_BRIDGE_PTX_ABI_H_
#define TESSERA_BRIDGE_PTX_ABI_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::bridge {

/// One launch of a registered PTX entry.
struct PtxLaunchPlan {
  std::vector<size_t> buffer_bytes;  ///< per buffer, in the call's order
  std::vector<bool> copied_back;     ///< per buffer: the kernel writes it (device → host after)
  bool dims_as_i64 = true;           ///< the dims follow the buffers as i64 (else i32)
  bool pass_dims = true;             ///< false: the kernel takes its buffers only
  unsigned grid_x = 1, grid_y = 1;
  unsigned block_x = 1, block_y = 1;
};

/// Fills `plan` for a call of entry `name` with these buffer and dim counts and returns true, or
/// returns false with `why` when the call does not fit the name's ABI (the original's code 5):
/// a count, a dim out of [1, 2^31), a buffer past 2^31 elements, a grid past the device's
/// limits. The table holds the ABIs of the ops this project imports (the mma GEMMs, the tile
/// matmuls direct/shared/fused, softmax, reduce, norm); the original's other ABIs (packed,
/// block-scaled, attention, MoE, paged KV, training, dynamic shared memory) are refused by name.
bool PlanPtxLaunch(const std::string& name, size_t num_buffers, const int64_t* dims,
                   size_t num_dims, PtxLaunchPlan& plan, std::string& why);

}  // namespace tessera::bridge

#endif  // TESSERA_BRIDGE_PTX_ABI_H_
