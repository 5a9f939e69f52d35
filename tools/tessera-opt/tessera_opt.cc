// tessera-opt: parses, verifies, transforms and prints Tessera IR (MlirOptMain with the Tessera
// dialects, every pass of dialect/Passes.td and jit/Passes.td, the lowering pipelines next to every
// upstream dialect and pass). Its input passes the same guards as the C API's
// (jit/admission/guarded_parse.h) before MLIR parses it: text nested too deeply or known to crash
// the parser, and ops whose verifier would crash, are refused with a location and exit code 1.
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "dialect/Passes.h"
#include "dialect/Registration.h"
#include "jit/admission/guarded_parse.h"
#include "jit/admission/source_limits.h"
#include "jit/admission/tile_forms.h"
#include "jit/admission/verifier_guards.h"
#include "jit/passes.h"
#include "jit/pipeline.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace {

/// The C API's guards over the whole input, and over each chunk that parses (chunks that do
/// not parse or verify are left to MlirOptMain, which reports them, or matches them against
/// `expected-error`s under -verify-diagnostics).
absl::Status CheckInput(const llvm::MemoryBuffer& input, llvm::StringRef split_marker,
                        mlir::DialectRegistry& registry) {
  const absl::string_view name(input.getBufferIdentifier().data(),
                               input.getBufferIdentifier().size());
  const absl::string_view text(input.getBufferStart(), input.getBufferSize());
  if (absl::Status forms = tessera::jit::CheckTileForms(text, name); !forms.ok()) return forms;
  if (absl::Status limits = tessera::jit::CheckSourceBeforeParsing(text, name); !limits.ok()) {
    return limits;
  }
  absl::Status guards = absl::OkStatus();
  std::string ignored;
  llvm::raw_string_ostream sink(ignored);
  (void)mlir::splitAndProcessBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(input.getBuffer(), input.getBufferIdentifier()),
      [&](std::unique_ptr<llvm::MemoryBuffer> chunk, llvm::raw_ostream&) {
        mlir::MLIRContext context(registry);
        context.allowUnregisteredDialects(false);
        mlir::ScopedDiagnosticHandler quiet(&context,
                                            [](mlir::Diagnostic&) { return mlir::success(); });
        mlir::OwningOpRef<mlir::ModuleOp> module = tessera::jit::ParseWithoutVerifying(
            context, absl::string_view(chunk->getBufferStart(), chunk->getBufferSize()), name);
        if (module && guards.ok()) guards = tessera::jit::CheckBeforeVerifying(*module);
        return mlir::success();
      },
      sink, split_marker);
  return guards;
}

}  // namespace

int main(int argc, char** argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR inside the pipeline.
  mlir::registerAllToLLVMIRTranslations(registry);
  tessera::registerTesseraDialects(registry);
  mlir::registerAllPasses();
  tessera::registerTesseraPasses();
  tessera::jit::registerTesseraJitPasses();
  tessera::jit::RegisterPipelines();

  auto [input_name, output_name] =
      mlir::registerAndParseCLIOptions(argc, argv, "Tessera IR optimizer driver\n", registry);
  const mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects()) {  // reads no input
    return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, input_name, output_name, registry));
  }
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = mlir::openInputFile(input_name, &error);
  if (input == nullptr) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (absl::Status guards = CheckInput(*input, config.inputSplitMarker(), registry); !guards.ok()) {
    llvm::errs() << std::string(guards.message()) << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output = mlir::openOutputFile(output_name, &error);
  if (output == nullptr) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry, config))) {
    return 1;
  }
  output->keep();
  return 0;
}
