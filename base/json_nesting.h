// How deeply a JSON text nests, found without parsing it: llvm::json::parse recurses once per
// level, so a text read from a file or the network is measured before it is parsed (a deep
// enough `[[[[…` would overflow the stack otherwise).
#ifndef TESSERA_BASE_JSON_NESTING_H_
#define TESSERA_BASE_JSON_NESTING_H_

#include <cstddef>
#include <string_view>

namespace tessera {

/// True when no array or object of `text` nests deeper than `max_depth` (brackets inside
/// strings, escapes included, do not count). Malformed text is left to the parser.
inline bool JsonNestingWithin(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

}  // namespace tessera

#endif  // TESSERA_BASE_JSON_NESTING_H_
