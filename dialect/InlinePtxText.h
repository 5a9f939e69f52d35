// The two strings of `tessera_nvidia.inline_ptx`, parsed before LLVM sees them: the constraint
// list and the operand references in the PTX (docs/ir.md "inline_ptx"). LLVM's inline-asm
// printer treats a malformed reference as a fatal error, so nothing malformed may reach it.
// No MLIR.
#ifndef TESSERA_DIALECT_INLINEPTXTEXT_H_
#define TESSERA_DIALECT_INLINEPTXTEXT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

/// A parsed constraint string: the register class of each result and each operand, in order.
struct PtxConstraints {
  std::vector<char> results;   ///< from the `=X` entries
  std::vector<char> operands;  ///< from the `X` entries
  bool clobbers_memory = false;
};

/// Parses `text`: comma-separated `=X` entries (results), then `X` entries (operands), then
/// `~{memory}` clobbers, where X is a register class `h`, `r`, `l`, `f` or `d`; no spaces (LLVM
/// reads an entry's kind from its first character, so " =f" would be an operand). On a fault,
/// nullopt and a sentence in `error`.
std::optional<PtxConstraints> ParsePtxConstraints(std::string_view text, std::string* error);

/// The MLIR types register class `c` holds, as MLIR spells them: {"i16", "f16", "bf16"} for `h`,
/// {"i32"} for `r`, {"i64"} for `l`, {"f32"} for `f`, {"f64"} for `d`; empty for any other `c`.
std::vector<std::string_view> RegisterClassTypeNames(char c);

/// The same for messages: "i16, f16 or bf16", "i32", ….
std::string RegisterClassTypes(char c);

/// Checks the operand references of `ptx` against `operand_count` (results plus operands):
/// `$N` and `${N}` with N below the count, `$$` for a literal `$`. A sentence naming the first
/// bad reference, or nullopt.
std::optional<std::string> CheckPtxOperandReferences(std::string_view ptx, size_t operand_count);

}  // namespace tessera

#endif  // TESSERA_DIALECT_INLINEPTXTEXT_H_
