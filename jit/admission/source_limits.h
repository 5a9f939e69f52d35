// Limits on Tessera IR text, checked before MLIR's parser sees it. MLIR 22.1's parser is
// recursive descent without a depth limit, and some constructs crash it outright; user text
// that would exhaust its stack or hit a known crash is refused with a location instead.
#ifndef TESSERA_JIT_ADMISSION_SOURCE_LIMITS_H_
#define TESSERA_JIT_ADMISSION_SOURCE_LIMITS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tessera::jit {

/// The deepest nesting of brackets, braces, parentheses and angle brackets accepted (~4,000
/// nested `module {`, ~6,800 nested array attributes or ~16,000 nested `tuple<>` overflow an
/// 8 MiB stack; real programs nest < 20). A run of unary minus signs counts as nesting too.
inline constexpr int kMaxSourceNesting = 256;

/// InvalidArgument `name:line:col: error: …` at the first hazard, outside string literals and
/// `//` comments:
/// * nesting deeper than kMaxSourceNesting (`->`, `>=` and `<=` open or close nothing);
/// * `affine_map` / `affine_set` (not Tessera IR; their expression parser recurses once per
///   operator, so a long expression overflows the stack however flat its text);
/// * type and attribute alias definitions (`!t = …`, `#a = …`: chains of aliases nest types
///   arbitrarily deep in flat text);
/// * dense arrays of `index` (`array<index: …>`), which crash the parser
///   (llvm/llvm-project#179045).
absl::Status CheckSourceBeforeParsing(absl::string_view source, absl::string_view source_name);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_ADMISSION_SOURCE_LIMITS_H_
