// The original bridge's name-keyed launch geometry (its
// runtime/cuda/tessera_nvidia_ptx_launch.cpp), as data: each entry name's buffers, parameters, grid
// and block.
#include "bridge/ptx_abi.h"

#include <cstring>
#include <string>
#include <vector>

namespace tessera::bridge {
namespace {

constexpr int64_t kMaxExtent = int64_t{1} << 31;  // each dim below, each operand at most
constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxGridY = 65535;

bool StartsWith(const std::string& name, const char* prefix) {
  return name.compare(0, std::strlen(prefix), prefix) == 0;
}

/// The `_`-separated words of a name.
std::vector<std::string> Words(const std::string& name) {
  std::vector<std::string> words;
  size_t start = 0;
  for (size_t end; (end = name.find('_', start)) != std::string::npos; start = end + 1) {
    words.push_back(name.substr(start, end - start));
  }
  words.push_back(name.substr(start));
  return words;
}

bool HasWord(const std::string& name, const char* word) {
  for (const std::string& w : Words(name)) {
    if (w == word) return true;
  }
  return false;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The GEMM family: buffers {A [M,K], B [K,N] (column-major), D [M,N]}, dims {M, N, K}.
struct Gemm {
  int64_t tile_m = 16, tile_n = 8;
  unsigned threads = 32;
  bool ragged = false;             // dims need not be multiples of the mma shape
  bool column_major_grid = false;  // grid.x over N (else over M)
  bool dims_i64 = false;
  size_t element_bytes = 2, output_bytes = 4;
};

class Planner {
 public:
  Planner(size_t num_buffers, const int64_t* dims, size_t num_dims, PtxLaunchPlan& plan,
          std::string& why)
      : num_buffers_(num_buffers), dims_(dims), num_dims_(num_dims), plan_(plan), why_(why) {}

  bool Refuse(std::string reason) {
    why_ = std::move(reason);
    return false;
  }

  /// The call passes `buffers` buffers and `count` dims, each in [1, 2^31).
  bool Counts(size_t buffers, size_t count) {
    if (num_buffers_ != buffers || num_dims_ != count) {
      return Refuse("the ABI takes " + std::to_string(buffers) + " buffer(s) and " +
                    std::to_string(count) + " dim(s); the call passes " +
                    std::to_string(num_buffers_) + " and " + std::to_string(num_dims_));
    }
    for (size_t d = 0; d < count; ++d) {
      if (dims_[d] <= 0 || dims_[d] >= kMaxExtent) {
        return Refuse("dim #" + std::to_string(d) + " is " + std::to_string(dims_[d]) +
                      "; each dim must be in [1, 2^31)");
      }
    }
    return true;
  }

  /// `a · b` elements: at most 2^31 (the original's PTX indexes with 32-bit integers).
  bool Elements(int64_t a, int64_t b, const char* what, int64_t& out) {
    if (a > kMaxExtent / b) {
      return Refuse(std::string(what) + " holds more than 2^31 elements");
    }
    out = a * b;
    return true;
  }

  bool Grid(int64_t x, int64_t y, unsigned block_x, unsigned block_y = 1) {
    if (x > kMaxGridX || y > kMaxGridY) {
      return Refuse("the launch needs a grid of " + std::to_string(x) + " x " + std::to_string(y) +
                    " blocks, past the device's limits");
    }
    plan_.grid_x = static_cast<unsigned>(x);
    plan_.grid_y = static_cast<unsigned>(y);
    plan_.block_x = block_x;
    plan_.block_y = block_y;
    return true;
  }

  bool PlanGemm(const Gemm& gemm) {
    if (!Counts(3, 3)) return false;
    const int64_t m = dims_[0], n = dims_[1], k = dims_[2];
    if (!gemm.ragged && (m % 16 != 0 || n % 8 != 0 || k % 16 != 0)) {
      return Refuse("this aligned GEMM needs M % 16 == 0, N % 8 == 0 and K % 16 == 0");
    }
    int64_t a = 0, b = 0, d = 0;
    if (!Elements(m, k, "A [M, K]", a) || !Elements(k, n, "B [K, N]", b) ||
        !Elements(m, n, "D [M, N]", d)) {
      return false;
    }
    plan_.buffer_bytes = {static_cast<size_t>(a) * gemm.element_bytes,
                          static_cast<size_t>(b) * gemm.element_bytes,
                          static_cast<size_t>(d) * gemm.output_bytes};
    plan_.copied_back = {false, false, true};
    plan_.dims_as_i64 = gemm.dims_i64;
    const int64_t rows = CeilDiv(m, gemm.tile_m), columns = CeilDiv(n, gemm.tile_n);
    return gemm.column_major_grid ? Grid(columns, rows, gemm.threads)
                                  : Grid(rows, columns, gemm.threads);
  }

  /// tessera_tile_matmul_fused_*: {A, B, [bias f32 [N]], [residual f32 [M,N]], D f32 [M,N]}.
  bool PlanFused(const std::string& name) {
    const bool bias = HasWord(name, "b1");
    const bool residual = HasWord(name, "r1");
    if (!Counts(3 + size_t{bias} + size_t{residual}, 3)) return false;
    const int64_t m = dims_[0], n = dims_[1], k = dims_[2];
    const bool tf32 = HasWord(name, "tf32");
    const bool direct = tf32 || HasWord(name, "e4m3") || HasWord(name, "e5m2");
    const size_t input_bytes = tf32 ? 4 : direct ? 1 : 2;
    int64_t a = 0, b = 0, d = 0;
    if (!Elements(m, k, "A [M, K]", a) || !Elements(k, n, "B [K, N]", b) ||
        !Elements(m, n, "D [M, N]", d)) {
      return false;
    }
    plan_.buffer_bytes = {static_cast<size_t>(a) * input_bytes,
                          static_cast<size_t>(b) * input_bytes};
    if (bias) plan_.buffer_bytes.push_back(static_cast<size_t>(n) * 4);
    if (residual) plan_.buffer_bytes.push_back(static_cast<size_t>(d) * 4);
    plan_.buffer_bytes.push_back(static_cast<size_t>(d) * 4);
    plan_.copied_back.assign(plan_.buffer_bytes.size(), false);
    plan_.copied_back.back() = true;
    plan_.dims_as_i64 = true;
    return Grid(CeilDiv(n, direct ? 8 : 32), CeilDiv(m, direct ? 16 : 32), direct ? 32 : 128);
  }

  /// softmax and norm: {X, O} [rows, K] in the storage type, dims {rows, K}; a thread per row.
  bool PlanRows(size_t element_bytes) {
    if (!Counts(2, 2)) return false;
    int64_t elements = 0;
    if (!Elements(dims_[0], dims_[1], "X [rows, K]", elements)) return false;
    const size_t bytes = static_cast<size_t>(elements) * element_bytes;
    plan_.buffer_bytes = {bytes, bytes};
    plan_.copied_back = {false, true};
    return Grid(CeilDiv(dims_[0], 128), 1, 128);
  }

  /// reduce: X [outer, axis, inner] in the storage type, O f32 [outer, inner].
  bool PlanReduce(size_t element_bytes, bool cooperative) {
    if (!Counts(2, 3)) return false;
    int64_t outer_axis = 0, input = 0;
    if (!Elements(dims_[0], dims_[1], "X [outer, axis, inner]", outer_axis) ||
        !Elements(outer_axis, dims_[2], "X [outer, axis, inner]", input)) {
      return false;
    }
    const int64_t outputs = dims_[0] * dims_[2];
    plan_.buffer_bytes = {static_cast<size_t>(input) * element_bytes,
                          static_cast<size_t>(outputs) * 4};
    plan_.copied_back = {false, true};
    return Grid(cooperative ? outputs : CeilDiv(outputs, 128), 1, 128);
  }

 private:
  size_t num_buffers_;
  const int64_t* dims_;
  size_t num_dims_;
  PtxLaunchPlan& plan_;
  std::string& why_;
};

/// The storage bytes a reduce or norm entry names by a whole word (f16, bf16, f32), or 0 when
/// it names none or several: the buffers cannot be sized, and guessing could overrun them.
size_t StorageBytes(const std::string& name) {
  const bool half = HasWord(name, "f16") || HasWord(name, "bf16");
  const bool single = HasWord(name, "f32");
  if (half == single) return 0;
  return half ? 2 : 4;
}

}  // namespace

bool PlanPtxLaunch(const std::string& name, size_t num_buffers, const int64_t* dims,
                   size_t num_dims, PtxLaunchPlan& plan, std::string& why) {
  plan = PtxLaunchPlan{};
  why.clear();
  if (dims == nullptr && num_dims > 0) {
    why = "dims is NULL";
    return false;
  }
  Planner planner(num_buffers, dims, num_dims, plan, why);
  if (name == "tessera_mma_m16n8k16_bf16") {
    if (!planner.Counts(3, 3)) return false;
    if (dims[0] != 16 || dims[1] != 8 || dims[2] != 16) {
      return planner.Refuse("this single-tile kernel takes dims {16, 8, 16}");
    }
    plan.buffer_bytes = {16 * 16 * 2, 16 * 8 * 2, 16 * 8 * 4};
    plan.copied_back = {false, false, true};
    plan.pass_dims = false;
    return planner.Grid(1, 1, 32);
  }
  if (name == "tessera_mma_gemm_bf16" || name == "tessera_mma_gemm_f16") {
    return planner.PlanGemm(Gemm{});
  }
  Gemm direct;
  direct.ragged = direct.column_major_grid = direct.dims_i64 = true;
  if (name == "tessera_tile_matmul_direct_f16" || name == "tessera_tile_matmul_direct_bf16") {
    return planner.PlanGemm(direct);
  }
  if (name == "tessera_tile_matmul_direct_tf32") {
    direct.element_bytes = 4;
    return planner.PlanGemm(direct);
  }
  if (name == "tessera_tile_matmul_direct_f64") {
    direct.tile_m = 8;
    direct.element_bytes = direct.output_bytes = 8;
    return planner.PlanGemm(direct);
  }
  if (name == "tessera_tile_matmul_direct_e4m3" || name == "tessera_tile_matmul_direct_e5m2" ||
      name == "tessera_tile_matmul_direct_s8") {
    direct.element_bytes = 1;
    return planner.PlanGemm(direct);
  }
  if (name == "tessera_tile_matmul_shared_f16" || name == "tessera_tile_matmul_shared_bf16") {
    direct.tile_m = direct.tile_n = 32;
    direct.threads = 128;
    return planner.PlanGemm(direct);
  }
  if (StartsWith(name, "tessera_tile_matmul_fused_")) return planner.PlanFused(name);
  if (name == "tessera_tile_softmax_f16" || name == "tessera_tile_softmax_bf16") {
    return planner.PlanRows(2);
  }
  if (name == "tessera_tile_softmax_f32") return planner.PlanRows(4);
  if (StartsWith(name, "tessera_tile_reduce_") || StartsWith(name, "tessera_tile_norm_")) {
    const size_t bytes = StorageBytes(name);
    if (bytes == 0) {
      return planner.Refuse("'" + name +
                            "' names no single storage type (a word f16, bf16 "
                            "or f32): its buffers cannot be sized");
    }
    if (StartsWith(name, "tessera_tile_norm_")) return planner.PlanRows(bytes);
    return planner.PlanReduce(bytes, HasWord(name, "cooperative"));
  }
  for (const char* family :
       {"tessera_tile_matmul_int4", "tessera_tile_matmul_nvfp4", "tessera_tile_matmul_mx_",
        "tessera_tile_cuda_intrinsic_", "tessera_tile_packed_decode_", "tessera_tile_attention_",
        "tessera_tile_paged_", "tessera_tile_moe_", "tessera_tile_grouped_gemm_",
        "tessera_cuda_training_", "tessera_cuda_dynamic_smem_"}) {
    if (StartsWith(name, family)) {
      return planner.Refuse("the original's " + std::string(family) +
                            "* launch ABI is not carried by this bridge (register the Tile IR "
                            "instead; docs/original-ir.md)");
    }
  }
  return planner.Refuse("no launch ABI is known for the PTX entry '" + name +
                        "' (the original's bridge keys its geometry by entry name)");
}

}  // namespace tessera::bridge
