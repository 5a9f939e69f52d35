#include "jit/admission/guarded_parse.h"

#include <string>

#include "absl/status/status.h"
#include "jit/admission/source_limits.h"
#include "jit/admission/tile_forms.h"
#include "jit/admission/verifier_guards.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

namespace tessera::jit {

mlir::OwningOpRef<mlir::ModuleOp> ParseWithoutVerifying(mlir::MLIRContext& context,
                                                        absl::string_view source,
                                                        absl::string_view source_name) {
  const std::string terminated(source);
  mlir::ParserConfig config(&context, /*verifyAfterParse=*/false);
  return mlir::parseSourceString<mlir::ModuleOp>(
      llvm::StringRef(terminated.data(), terminated.size()), config,
      llvm::StringRef(source_name.data(), source_name.size()));
}

absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> ParseGuarded(mlir::MLIRContext& context,
                                                               absl::string_view source,
                                                               absl::string_view source_name) {
  if (absl::Status forms = CheckTileForms(source, source_name); !forms.ok()) return forms;
  if (absl::Status limits = CheckSourceBeforeParsing(source, source_name); !limits.ok()) {
    return limits;
  }
  mlir::OwningOpRef<mlir::ModuleOp> module = ParseWithoutVerifying(context, source, source_name);
  if (!module) return absl::InvalidArgumentError("invalid Tessera IR");
  if (absl::Status guards = CheckBeforeVerifying(*module); !guards.ok()) return guards;
  if (mlir::failed(mlir::verify(*module))) {
    return absl::InvalidArgumentError("invalid Tessera IR");
  }
  return module;
}

}  // namespace tessera::jit
