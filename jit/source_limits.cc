#include "jit/source_limits.h"

#include <cstddef>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tessera::jit {

namespace {

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c == '.';
}

/// Line and column (1-based) of byte `at`.
std::pair<size_t, size_t> LineColumn(absl::string_view source, size_t at) {
  size_t line = 1, start = 0;
  for (size_t i = 0; i < at; ++i) {
    if (source[i] == '\n') {
      ++line;
      start = i + 1;
    }
  }
  return {line, at - start + 1};
}

}  // namespace

absl::Status CheckKnownParserCrashes(absl::string_view source, absl::string_view source_name) {
  for (size_t i = 0; i < source.size(); ++i) {
    const char c = source[i];
    if (c == '"') {  // skip string literals
      for (++i; i < source.size() && source[i] != '"'; ++i) {
        if (source[i] == '\\') ++i;
      }
      continue;
    }
    if (c == '/' && i + 1 < source.size() && source[i + 1] == '/') {
      while (i < source.size() && source[i] != '\n') ++i;
      continue;
    }
    if (source.compare(i, 5, "array") != 0 || (i > 0 && IsIdentifierChar(source[i - 1]))) {
      continue;
    }
    size_t at = i + 5;
    auto skip_space = [&] {
      while (at < source.size() && (source[at] == ' ' || source[at] == '\t' ||
                                    source[at] == '\n' || source[at] == '\r')) {
        ++at;
      }
    };
    skip_space();
    if (at >= source.size() || source[at] != '<') continue;
    ++at;
    skip_space();
    if (source.compare(at, 5, "index") != 0 ||
        (at + 5 < source.size() && IsIdentifierChar(source[at + 5]))) {
      continue;
    }
    const auto [line, column] = LineColumn(source, i);
    return absl::InvalidArgumentError(absl::StrCat(
        source_name, ":", line, ":", column,
        ": error: dense arrays of index (`array<index: ...>`) are not supported: they crash "
        "MLIR 22.1's parser (llvm/llvm-project#179045); use array<i64: ...>"));
  }
  return absl::OkStatus();
}

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
