// tessera-opt: parses, verifies, transforms and prints Tessera IR (MlirOptMain with the Tessera
// dialects, passes and lowering pipelines next to every upstream dialect and pass).
#include "dialect/Passes.h"
#include "dialect/Registration.h"
#include "jit/pipeline.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char** argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR inside the pipeline.
  mlir::registerAllToLLVMIRTranslations(registry);
  tessera::registerTesseraDialects(registry);
  mlir::registerAllPasses();
  tessera::registerTesseraPasses();
  tessera::jit::RegisterPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Tessera IR optimizer driver\n", registry));
}
