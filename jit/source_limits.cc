#include "jit/source_limits.h"

#include <cstddef>

#include "absl/strings/str_cat.h"

namespace tessera::jit {

absl::Status CheckSourceNesting(absl::string_view source, absl::string_view source_name) {
  int depth = 0;
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < source.size(); ++i) {
    const char c = source[i];
    switch (c) {
      case '\n':
        ++line;
        line_start = i + 1;
        break;
      case '"':  // a string literal: skip to its closing quote
        for (++i; i < source.size() && source[i] != '"'; ++i) {
          if (source[i] == '\\') ++i;
          if (i < source.size() && source[i] == '\n') {
            ++line;
            line_start = i + 1;
          }
        }
        break;
      case '/':
        if (i + 1 < source.size() && source[i + 1] == '/') {
          while (i + 1 < source.size() && source[i + 1] != '\n') ++i;
        }
        break;
      case '(':
      case '[':
      case '{':
      case '<':
        if (++depth > kMaxSourceNesting) {
          return absl::InvalidArgumentError(absl::StrCat(
              source_name, ":", line, ":", i - line_start + 1, ": error: the IR nests deeper than ",
              kMaxSourceNesting,
              " levels of brackets, braces, parentheses or angle brackets; refused before "
              "parsing (the parser would exhaust its stack)"));
        }
        break;
      case '>':
        if (i > 0 && source[i - 1] == '-') break;  // `->`
        [[fallthrough]];
      case ')':
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return absl::OkStatus();
}

}  // namespace tessera::jit
