// Which kernel schedules exist for a Tile op and when each applies; see KernelSchedules.h.
#include "dialect/conversion/tile_to_gpu/KernelSchedules.h"

#include "dialect/ArchEnvelope.h"
#include "dialect/TileOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

namespace tessera::device {
namespace {

constexpr char kPerRow[] =
    "each row is reduced by its own warp or block in one fixed order, whatever the number of "
    "rows";

unsigned bitWidth(mlir::Type type) {
  return type.isIntOrFloat() ? type.getIntOrFloatBitWidth() : 0;
}

std::string mapDeclines(tile::MapOp op) {
  auto output = llvm::cast<mlir::MemRefType>(op.getOutputs().front().getType());
  if (output.getRank() == 0) return "a rank-0 map has one element";
  const unsigned bits = bitWidth(output.getElementType());
  llvm::SmallVector<mlir::Value> memrefs(op.getOutputs().begin(), op.getOutputs().end());
  for (mlir::Value input : op.getInputs()) {
    if (llvm::isa<mlir::MemRefType>(input.getType())) memrefs.push_back(input);
  }
  for (mlir::Value value : memrefs) {
    auto type = llvm::cast<mlir::MemRefType>(value.getType());
    if (!type.getLayout().isIdentity()) return "it needs dense row-major operands";
    if (bitWidth(type.getElementType()) != bits || (bits != 16 && bits != 32)) {
      return "it needs every tensor operand 16-bit or every one 32-bit (one vector width)";
    }
    if (type.getRank() != output.getRank()) return "it needs operands of the output's shape";
    for (int64_t d = 0; d < type.getRank(); ++d) {
      const int64_t size = type.getDimSize(d);
      const int64_t out = output.getDimSize(d);
      if (!mlir::ShapedType::isDynamic(size) && !mlir::ShapedType::isDynamic(out) && size != out) {
        return "it needs operands of the output's shape (no broadcasting)";
      }
    }
  }
  return "";
}

std::string matmulDeclines(tile::MatmulOp op, llvm::StringRef arch) {
  if (!arch.empty()) {
    std::optional<GpuArch> gpu = ParseGpuArch(arch.str());
    if (!gpu || gpu->version < 80) {
      return "mma.sync with f32 accumulators needs sm_80 or newer; this compile is for " +
             arch.str();
    }
  }
  auto element = [](mlir::Value value) {
    return llvm::cast<mlir::MemRefType>(value.getType()).getElementType();
  };
  mlir::Type a = element(op.getLhs());
  mlir::Type b = element(op.getRhs());
  const tile::NumericPolicy policy = op.getNumericPolicyOrDefault();
  if (a != b) return "it needs A and B of one element type";
  // f16 and bf16 products are exact in f32: policies f32 and fma are the same function there.
  const bool f32Accumulator =
      policy == tile::NumericPolicy::f32 || policy == tile::NumericPolicy::fma;
  if (f32Accumulator && (a.isF16() || a.isBF16())) return "";
  if (policy == tile::NumericPolicy::tf32 && a.isF32()) return "";
  return "it multiplies f16 or bf16 inputs (policy f32 or fma: f32 accumulators) or f32 inputs "
         "under policy tf32";
}

}  // namespace

std::vector<KernelSchedule> schedulesFor(mlir::Operation* op) {
  if (llvm::isa<tile::MapOp>(op)) {
    return {{kVectorized,
             "128-bit vector loads and stores, grid-stride, several elements per thread (the "
             "baseline runs when an operand is not 16-byte aligned or sizes differ)",
             "elementwise: each element is computed alone"}};
  }
  if (llvm::isa<tile::ReduceOp>(op)) {
    return {
        {kWarpPerRow, "one warp per output element, a fixed butterfly of warp shuffles", kPerRow}};
  }
  if (llvm::isa<tile::SoftmaxOp>(op)) {
    return {
        {kWarpPerRow, "one warp per row, fixed butterflies of warp shuffles", kPerRow},
        {kOnline, "one block per row, running max and sum in one pass, then the write", kPerRow}};
  }
  if (llvm::isa<tile::NormOp>(op)) {
    return {{kWarpPerRow,
             "one warp per row: its sums by a fixed butterfly of warp shuffles, then the write",
             kPerRow}};
  }
  if (llvm::isa<tile::AttentionBackwardOp>(op)) {
    return {{kWarpPerRow,
             "one warp per row of dQ and per row of dK and dV: each pair's dot products by lanes "
             "and a fixed butterfly of warp shuffles, 4 columns per lane per pass, the pairs in "
             "the baseline's order",
             "each row of dQ, dK and dV is accumulated by its own warp in one fixed order, "
             "whatever the batch"}};
  }
  if (llvm::isa<tile::MatmulOp>(op)) {
    constexpr char kAlongK[] =
        "each output element accumulates over K in one fixed order; rows only split the grid";
    return {{kMmaSync,
             "tensor cores: mma.sync m16n8k16 (f16/bf16 -> f32) or m16n8k8 (tf32), 64x64 block "
             "tiles of 4 warps, K in order",
             kAlongK},
            {kMmaAsync,
             "mma_sync's tensor-core tiles fed by a 3-stage pipeline of 16-byte cp.async copies "
             "(the mma_sync kernel runs when A or B is not 16-byte aligned or its rows are not "
             "a multiple of 16 bytes)",
             kAlongK}};
  }
  return {};
}

std::string scheduleDeclines(mlir::Operation* op, llvm::StringRef schedule, llvm::StringRef arch) {
  bool known = false;
  for (const KernelSchedule& s : schedulesFor(op)) known |= s.name == schedule;
  if (!known) {
    return ("there is no schedule '" + schedule + "' for " + op->getName().getStringRef()).str();
  }
  if (auto map = llvm::dyn_cast<tile::MapOp>(op)) return mapDeclines(map);
  if (auto reduce = llvm::dyn_cast<tile::ReduceOp>(op)) {
    if (reduce.isArgReduction()) return "argmax and argmin keep the baseline's index tree";
    return "";
  }
  if (auto matmul = llvm::dyn_cast<tile::MatmulOp>(op)) {
    std::string declines = matmulDeclines(matmul, arch);
    if (declines.empty() && schedule == kMmaAsync) {
      auto dense = [](mlir::Value value) {
        return llvm::cast<mlir::MemRefType>(value.getType()).getLayout().isIdentity();
      };
      if (matmul.getTransposeA() || matmul.getTransposeB()) {
        declines = "its copies stage A and B as stored: it needs neither transposed";
      } else if (!dense(matmul.getLhs()) || !dense(matmul.getRhs())) {
        declines = "its copies address A and B as dense row-major memrefs";
      }
    }
    return declines;
  }
  return "";
}

llvm::StringRef scheduleOf(mlir::Operation* op) {
  if (auto name = op->getAttrOfType<mlir::StringAttr>(kScheduleAttr)) return name.getValue();
  return "";
}

}  // namespace tessera::device
