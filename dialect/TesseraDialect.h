// The `tessera` dialect: verifies the `tessera.*` attributes Tessera places on upstream ops, and
// reads them back for the passes and the compiler.
#ifndef TESSERA_DIALECT_TESSERADIALECT_H_
#define TESSERA_DIALECT_TESSERADIALECT_H_

#include <cstdint>
#include <optional>

#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include "dialect/TesseraDialect.h.inc"

namespace tessera {

/// Name of the attribute marking an entry function deterministic: `tessera.deterministic` (unit)
/// or `tessera.deterministic = {seed = N, level = "run_to_run" | "batch_invariant"}` (both
/// keys optional; the level defaults to run_to_run).
inline constexpr llvm::StringLiteral kDeterministicAttrName = "tessera.deterministic";

/// Name of the attribute with which a raw `gpu.func` kernel declares its determinism:
/// `tessera.determinism = "deterministic"` or `"nondeterministic"`. A deterministic compile, or
/// a deterministic function that launches the kernel, requires it.
inline constexpr llvm::StringLiteral kDeterminismAttrName = "tessera.determinism";

/// The determinism a raw kernel declares ("deterministic" / "nondeterministic"); nullopt when
/// `op` declares none.
std::optional<llvm::StringRef> getDeclaredDeterminism(mlir::Operation* op);

/// True when `op` carries `tessera.deterministic`.
bool isDeterministic(mlir::Operation* op);

/// True when `op` is deterministic at the batch_invariant level: each row of a Tile op's result
/// may not depend on the number of rows of the call.
bool isBatchInvariant(mlir::Operation* op);

/// The seed of a `tessera.deterministic = {seed = N}` attribute; nullopt when `op` is not
/// deterministic or declares no seed.
std::optional<uint64_t> getDeterministicSeed(mlir::Operation* op);

}  // namespace tessera

#endif  // TESSERA_DIALECT_TESSERADIALECT_H_
