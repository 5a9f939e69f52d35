#include "jit/admission/source_limits.h"

#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"

namespace tessera::jit {
namespace {

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c == '.' || c == '-';
}

/// A character that continues an MLIR bare identifier or keyword (`[a-zA-Z0-9_$.]`; unlike
/// IsIdentifierChar, `-` ends one: `index-1` lexes as `index`, `-`, `1`).
bool IsKeywordChar(char c) { return c != '-' && IsIdentifierChar(c); }

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

class Scanner {
 public:
  Scanner(absl::string_view source, absl::string_view name) : source_(source), name_(name) {}

  absl::Status Run() {
    for (; at_ < source_.size(); ++at_) {
      const char c = source_[at_];
      if (c == '\n') {
        ++line_;
        line_start_ = at_ + 1;
        continue;
      }
      if (IsSpace(c)) continue;
      if (c != '-') minus_run_ = 0;
      if (c == '"') {
        SkipString();
        continue;
      }
      if (c == '/' && Next(1) == '/') {
        while (at_ + 1 < source_.size() && source_[at_ + 1] != '\n') ++at_;
        continue;
      }
      if ((c == '!' || c == '#') && IsAliasDefinition()) {
        return Error(absl::StrCat("type and attribute aliases ('", std::string(1, c),
                                  "name = ...') are not accepted: write the type or attribute "
                                  "where it is used"));
      }
      if (IsWordStart()) {
        if (absl::Status status = CheckWord(); !status.ok()) return status;
        continue;
      }
      switch (c) {
        case '(':
        case '[':
        case '{':
          if (absl::Status status = Open(); !status.ok()) return status;
          break;
        case '<':
          if (Next(1) == '=') break;  // `<=`
          if (absl::Status status = Open(); !status.ok()) return status;
          break;
        case '>':
          if ((at_ > 0 && source_[at_ - 1] == '-') || Next(1) == '=') break;  // `->`, `>=`
          [[fallthrough]];
        case ')':
        case ']':
        case '}':
          if (depth_ > 0) --depth_;
          break;
        case '-':
          if (Next(1) == '>') break;
          // Unary minus signs in a row nest in the expression parsers.
          if (++minus_run_ + depth_ > kMaxSourceNesting) return TooDeep();
          break;
        default:
          break;
      }
    }
    return absl::OkStatus();
  }

 private:
  char Next(size_t offset) const {
    return at_ + offset < source_.size() ? source_[at_ + offset] : '\0';
  }

  void SkipString() {
    for (++at_; at_ < source_.size() && source_[at_] != '"'; ++at_) {
      if (source_[at_] == '\\') ++at_;
      if (at_ < source_.size() && source_[at_] == '\n') {
        ++line_;
        line_start_ = at_ + 1;
      }
    }
  }

  absl::Status Open() {
    if (++depth_ > kMaxSourceNesting) return TooDeep();
    return absl::OkStatus();
  }

  absl::Status TooDeep() {
    return Error(absl::StrCat("the IR nests deeper than ", kMaxSourceNesting,
                              " levels of brackets, braces, parentheses or angle brackets; "
                              "refused before parsing (the parser would exhaust its stack)"));
  }

  /// `!name =` or `#name =` (after the sigil, an identifier or a quoted name, then `=`).
  bool IsAliasDefinition() const {
    size_t i = at_ + 1;
    while (i < source_.size() && IsIdentifierChar(source_[i])) ++i;
    if (i == at_ + 1) return false;
    while (i < source_.size() && (source_[i] == ' ' || source_[i] == '\t')) ++i;
    return i < source_.size() && source_[i] == '=' &&
           (i + 1 >= source_.size() || source_[i + 1] != '=');
  }

  bool IsWordStart() const {
    const char c = source_[at_];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    return letter && (at_ == 0 || !IsIdentifierChar(source_[at_ - 1]));
  }

  /// Reads the word at `at_` (leaving `at_` on its last character) and checks it.
  absl::Status CheckWord() {
    const size_t start = at_;
    size_t end = at_;
    while (end < source_.size() && IsIdentifierChar(source_[end]) && source_[end] != '-') ++end;
    const absl::string_view word = source_.substr(start, end - start);
    if (word == "affine_map" || word == "affine_set") {
      return Error(absl::StrCat("'", word,
                                "' is not part of Tessera IR (memrefs take the identity "
                                "layout; see docs/ir.md)"));
    }
    if (word == "array") {
      size_t i = end;
      while (i < source_.size() && IsSpace(source_[i])) ++i;
      if (i < source_.size() && source_[i] == '<') {
        ++i;
        while (i < source_.size() && IsSpace(source_[i])) ++i;
        if (source_.compare(i, 5, "index") == 0 &&
            (i + 5 >= source_.size() || !IsKeywordChar(source_[i + 5]))) {
          return Error(
              "dense arrays of index (`array<index: ...>`) are not supported: they crash MLIR "
              "22.1's parser (llvm/llvm-project#179045); use array<i64: ...>");
        }
      }
    }
    at_ = end - 1;
    return absl::OkStatus();
  }

  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ":", line_, ":", at_ - line_start_ + 1, ": error: ", message));
  }

  absl::string_view source_;
  absl::string_view name_;
  size_t at_ = 0;
  size_t line_ = 1;
  size_t line_start_ = 0;
  int depth_ = 0;
  int minus_run_ = 0;
};

}  // namespace

absl::Status CheckSourceBeforeParsing(absl::string_view source, absl::string_view source_name) {
  return Scanner(source, source_name).Run();
}

}  // namespace tessera::jit
