// #tile.mma_desc and #tile.epilogue of the original Tessera's launch-level form: storage,
// parsing and printing (generated), registration, and the original's verifiers and messages.
//
// Its own library, compiled without ASan under --config=asan: attribute storage instantiates
// llvm::BumpPtrAllocator's slab code, and an ASan-instrumented copy of it (which poisons fresh
// slabs) can be the one the linker keeps for the uninstrumented MLIR libraries too, whose
// allocations then read as use-after-poison (docs/building.md).
#include <cstdint>

#include "dialect/TileOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

#define GET_ATTRDEF_CLASSES
#include "dialect/TileAttrs.cpp.inc"

namespace tessera::tile {

using mlir::LogicalResult;
using mlir::success;

void TileDialect::registerLaunchAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/TileAttrs.cpp.inc"
      >();
}

LogicalResult MmaDescAttr::verify(llvm::function_ref<mlir::InFlightDiagnostic()> emitError,
                                  llvm::StringRef family, int64_t m, int64_t n, int64_t k,
                                  llvm::StringRef aType, llvm::StringRef bType,
                                  llvm::StringRef accType, llvm::StringRef aLayout,
                                  llvm::StringRef bLayout, int64_t kBlocks) {
  static const llvm::StringSet<> kFamilies = {"auto",    "mma_sync", "wgmma",
                                              "tcgen05", "wmma",     "mfma"};
  if (!kFamilies.contains(family)) {
    return emitError() << "TILE_MMA_DESC_BAD_FAMILY: family \"" << family
                       << "\" is not one of {auto, mma_sync, wgmma, tcgen05, wmma, mfma}";
  }
  if (m <= 0 || n <= 0 || k <= 0) {
    return emitError() << "TILE_MMA_DESC_NONPOSITIVE_SHAPE: m/n/k must be > 0";
  }
  if (kBlocks < 1) return emitError() << "TILE_MMA_DESC_BAD_K_BLOCKS: k_blocks must be >= 1";
  if (aType.empty() || bType.empty() || accType.empty()) {
    return emitError() << "TILE_MMA_DESC_EMPTY_DTYPE: a/b/acc must be named";
  }
  const auto is_layout = [](llvm::StringRef layout) {
    return layout == "row_major" || layout == "col_major";
  };
  if (!is_layout(aLayout) || !is_layout(bLayout)) {
    return emitError() << "TILE_MMA_DESC_BAD_LAYOUT: a_layout and b_layout must be row_major "
                          "or col_major";
  }
  return success();
}

LogicalResult EpilogueAttr::verify(llvm::function_ref<mlir::InFlightDiagnostic()> emitError,
                                   bool /*bias*/, llvm::StringRef activation,
                                   llvm::StringRef outputType) {
  if (activation != "none" && activation != "relu" && activation != "gelu" &&
      activation != "silu") {
    return emitError() << "TILE_EPILOGUE_BAD_ACTIVATION: activation must be none, relu, gelu, "
                          "or silu";
  }
  if (outputType != "f64" && outputType != "f32" && outputType != "f16" && outputType != "i32") {
    return emitError() << "TILE_EPILOGUE_BAD_OUTPUT: output must be f64, f32, f16, or i32";
  }
  return success();
}

}  // namespace tessera::tile
