// Limits on Tessera IR text checked before MLIR's parser sees it.
#ifndef TESSERA_JIT_SOURCE_LIMITS_H_
#define TESSERA_JIT_SOURCE_LIMITS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tessera::jit {

/// The deepest nesting of brackets, braces, parentheses and angle brackets accepted. MLIR's
/// parser is recursive descent without a depth limit: a few thousand nested `module {`, array
/// attributes or `tuple<>` overflow an 8 MiB stack (TOOLCHAIN.md). Real programs nest < 20.
inline constexpr int kMaxSourceNesting = 256;

/// InvalidArgument `name:line:col: error: …` at the first bracket that nests deeper than
/// kMaxSourceNesting (string literals and `//` comments are skipped; `->` closes nothing).
absl::Status CheckSourceNesting(absl::string_view source, absl::string_view source_name);

/// InvalidArgument at the first construct known to crash MLIR 22.1's parser: dense arrays of
/// `index` (`array<index: …>`, llvm/llvm-project#179045; segfaults in parsing).
absl::Status CheckKnownParserCrashes(absl::string_view source, absl::string_view source_name);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_SOURCE_LIMITS_H_
