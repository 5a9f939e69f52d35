// The `tessera` dialect: verifies the `tessera.*` attributes Tessera places on upstream ops, and
// reads them back for the passes and the compiler.
#ifndef TESSERA_DIALECT_TESSERADIALECT_H_
#define TESSERA_DIALECT_TESSERADIALECT_H_

#include <cstdint>
#include <optional>
#include <utility>

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

/// Name of the attribute declaring an entry function's accuracy budget, which the composed
/// accuracy check holds its outputs to: `tessera.accuracy = {atol = 1.0e-3, rtol = 1.0e-5}`
/// (`|out − ref| ≤ atol + rtol·|ref|` per element against the reference plan; an absent key
/// is 0; at least one key).
inline constexpr llvm::StringLiteral kAccuracyAttrName = "tessera.accuracy";

/// On a Tile op: `tessera.candidate = "<id>"` restricts its arbitration to that candidate
/// (`compiled`, a kernel variant `compiled.<schedule>`, or a matmul provider), as tile.matmul's
/// `delegate` does.
inline constexpr llvm::StringLiteral kCandidateAttrName = "tessera.candidate";

/// The (atol, rtol) a function declares with `tessera.accuracy`; nullopt without it.
std::optional<std::pair<double, double>> getDeclaredAccuracy(mlir::Operation* op);

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
