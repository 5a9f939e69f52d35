#include "jit/admission/tile_forms.h"

#include <cstddef>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tessera::jit {
namespace {

constexpr const char* kOwnOps[] = {"map",     "yield", "reduce",    "matmul",
                                   "softmax", "norm",  "attention", "rope"};
constexpr const char* kLaunchKernels[] = {"matmul_kernel",    "reduce_kernel",
                                          "softmax_kernel",   "norm_kernel",
                                          "attention_kernel", "attention_backward_kernel"};
constexpr const char* kLaunchAttributes[] = {"mma_desc", "epilogue"};
// The original's fragment-level form: its ops, types and attributes (the part of a name before
// the first `.`, so `tma.copy_async` counts as `tma`).
constexpr const char* kFragmentForm[] = {"view",
                                         "mma",
                                         "store",
                                         "async_copy",
                                         "wait_async",
                                         "packed_load",
                                         "packed_store",
                                         "fragment_pack",
                                         "fragment_zero",
                                         "fragment_unpack",
                                         "alloc",
                                         "dealloc",
                                         "pipeline_init",
                                         "pipeline_advance",
                                         "tma",
                                         "mbarrier",
                                         "cta_sync",
                                         "fence",
                                         "buffer_write",
                                         "tmem",
                                         "tcgen05",
                                         "role",
                                         "memory",
                                         "memory_layout",
                                         "fragment",
                                         "buffer",
                                         "pipeline_state",
                                         "tma_descriptor",
                                         "mbarrier_token",
                                         "async_token",
                                         "tile",
                                         "scale_layout",
                                         "pipeline_depths",
                                         "typed_layout"};

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c == '.';
}

template <size_t N>
bool OneOf(absl::string_view name, const char* const (&names)[N]) {
  for (const char* candidate : names) {
    if (name == candidate) return true;
  }
  return false;
}

enum class Use { kOp, kAttribute, kType };

/// Why `tile.<name>` used as `use` is refused; empty when it is accepted.
std::string Refusal(absl::string_view name, Use use) {
  const std::string full = absl::StrCat(use == Use::kAttribute ? "#"
                                        : use == Use::kType    ? "!"
                                                               : "",
                                        "tile.", name);
  if (use == Use::kOp && (OneOf(name, kOwnOps) || OneOf(name, kLaunchKernels))) return "";
  if (use == Use::kAttribute && OneOf(name, kLaunchAttributes)) return "";
  if (use == Use::kOp && (name == "training_kernel" || absl::StartsWith(name, "control_"))) {
    return absl::StrCat("'", full,
                        "' is a marker-only op of the original Tessera (it carries no "
                        "computation to compile); this project does not accept it");
  }
  if (use == Use::kAttribute && name == "packed_format") {
    return absl::StrCat(
        "'", full,
        "': packed and block-scaled matmuls (int4, nvfp4, mx formats) of the original Tessera are "
        "not supported; the imported 'tile.matmul_kernel' takes unpacked operands (f16, bf16, "
        "tf32, f32)");
  }
  if (use == Use::kOp && absl::EndsWith(name, "_kernel")) {
    return absl::StrCat("'", full,
                        "' is a launch-level kernel of the original Tessera that this project "
                        "does not import (it imports tile.matmul_kernel, reduce_kernel, "
                        "softmax_kernel, norm_kernel, attention_kernel and "
                        "attention_backward_kernel)");
  }
  if (!OneOf(name.substr(0, name.find('.')), kFragmentForm)) return "";  // the parser decides
  return absl::StrCat("'", full,
                      "' belongs to the original Tessera's fragment-level form (tile.view, "
                      "tile.mma, !tile.fragment, ...), which this project does not accept; it "
                      "imports the launch-level kernels (tile.matmul_kernel, ...) and its own Tile "
                      "ops");
}

class Scanner {
 public:
  Scanner(absl::string_view source, absl::string_view name) : source_(source), name_(name) {}

  absl::Status Run() {
    for (at_ = 0; at_ < source_.size(); ++at_) {
      const char c = source_[at_];
      if (c == '\n') {
        ++line_;
        line_start_ = at_ + 1;
        continue;
      }
      if (c == '/' && Next(1) == '/') {
        while (at_ + 1 < source_.size() && source_[at_ + 1] != '\n') ++at_;
        continue;
      }
      if (c == '"') {
        if (absl::Status status = String(); !status.ok()) return status;
        continue;
      }
      if (source_.compare(at_, 5, "tile.") != 0) continue;
      const char before = at_ > 0 ? source_[at_ - 1] : ' ';
      Use use = Use::kOp;
      if (before == '#') {
        use = Use::kAttribute;
      } else if (before == '!') {
        use = Use::kType;
      } else if (IsNameChar(before) || before == '%' || before == '@' || before == '^' ||
                 before == '-') {
        continue;  // part of another name (`%tile.x`, `@my_tile.f`)
      }
      const size_t start = at_;
      size_t end = at_ + 5;
      while (end < source_.size() && IsNameChar(source_[end])) ++end;
      if (use == Use::kOp && IsAttributeKey(end)) {
        at_ = end - 1;
        continue;  // `{tile.view = 1}`: an attribute name, not an op
      }
      const std::string refusal = Refusal(source_.substr(at_ + 5, end - at_ - 5), use);
      if (!refusal.empty()) return Error(start - (use == Use::kOp ? 0 : 1), refusal);
      at_ = end - 1;
    }
    return absl::OkStatus();
  }

 private:
  /// Whether the name ending before `end` is followed (after blanks) by a single `=`.
  bool IsAttributeKey(size_t end) const {
    while (end < source_.size() && (source_[end] == ' ' || source_[end] == '\t')) ++end;
    return end < source_.size() && source_[end] == '=' &&
           (end + 1 >= source_.size() || source_[end + 1] != '=');
  }

  char Next(size_t offset) const {
    return at_ + offset < source_.size() ? source_[at_ + offset] : '\0';
  }

  /// A string literal at `at_` (left on its closing quote): a generic op name `"tile.x"(` is
  /// checked like a custom one; any other text is skipped.
  absl::Status String() {
    const size_t open = at_;
    for (++at_; at_ < source_.size() && source_[at_] != '"'; ++at_) {
      if (source_[at_] == '\\') ++at_;
      if (at_ < source_.size() && source_[at_] == '\n') {
        ++line_;
        line_start_ = at_ + 1;
      }
    }
    if (at_ >= source_.size()) return absl::OkStatus();
    // A quoted symbol (`@"tile.mma"`) or a named location (`loc("tile.view"(...))`) is no op.
    if (open > 0 && source_[open - 1] == '@') return absl::OkStatus();
    if (open >= 4 && source_.substr(open - 4, 4) == "loc(") return absl::OkStatus();
    const absl::string_view text = source_.substr(open + 1, at_ - open - 1);
    if (!absl::StartsWith(text, "tile.")) return absl::OkStatus();
    for (char c : text) {
      if (!IsNameChar(c)) return absl::OkStatus();
    }
    size_t next = at_ + 1;
    while (next < source_.size() && (source_[next] == ' ' || source_[next] == '\t')) ++next;
    if (next >= source_.size() || source_[next] != '(') return absl::OkStatus();
    const std::string refusal = Refusal(text.substr(5), Use::kOp);
    return refusal.empty() ? absl::OkStatus() : Error(open, refusal);
  }

  absl::Status Error(size_t at, absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ":", line_, ":", at - line_start_ + 1, ": error: ", message));
  }

  absl::string_view source_;
  absl::string_view name_;
  size_t at_ = 0;
  size_t line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

absl::Status CheckTileForms(absl::string_view source, absl::string_view source_name) {
  return Scanner(source, source_name).Run();
}

}  // namespace tessera::jit
