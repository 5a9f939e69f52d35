// Registration of the Tessera dialects and the upstream dialects Tessera IR uses.
#include "dialect/Registration.h"

#include "dialect/NVIDIAOps.h"
#include "dialect/TesseraDialect.h"
#include "dialect/TileOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace tessera {

void registerTesseraDialects(mlir::DialectRegistry& registry) {
  registry.insert<TesseraDialect, tile::TileDialect, nvidia::NVIDIADialect,
                  mlir::arith::ArithDialect, mlir::func::FuncDialect, mlir::gpu::GPUDialect,
                  mlir::LLVM::LLVMDialect, mlir::math::MathDialect, mlir::memref::MemRefDialect>();
}

}  // namespace tessera
