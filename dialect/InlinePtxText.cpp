// inline_ptx's constraint list and operand references.
#include "dialect/InlinePtxText.h"

#include <algorithm>
#include <cctype>

namespace tessera {
namespace {

bool IsRegisterClass(std::string_view text) {
  return text.size() == 1 && !RegisterClassTypeNames(text[0]).empty();
}

}  // namespace

std::vector<std::string_view> RegisterClassTypeNames(char c) {
  switch (c) {
    case 'h':
      return {"i16", "f16", "bf16"};
    case 'r':
      return {"i32"};
    case 'l':
      return {"i64"};
    case 'f':
      return {"f32"};
    case 'd':
      return {"f64"};
  }
  return {};
}

std::string RegisterClassTypes(char c) {
  const std::vector<std::string_view> names = RegisterClassTypeNames(c);
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " or " : ", ";
    text += names[i];
  }
  return text;
}

std::optional<PtxConstraints> ParsePtxConstraints(std::string_view text, std::string* error) {
  PtxConstraints parsed;
  enum class Part { kResults, kOperands, kClobbers } part = Part::kResults;
  size_t index = 0;
  for (size_t begin = 0; begin <= text.size(); ++index) {
    size_t end = text.find(',', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view entry = text.substr(begin, end - begin);
    begin = end + 1;
    const std::string where =
        "`constraints` entry #" + std::to_string(index) + " ('" + std::string(entry) + "')";
    if (entry == "~{memory}") {
      part = Part::kClobbers;
      parsed.clobbers_memory = true;
      continue;
    }
    const bool result = !entry.empty() && entry.front() == '=';
    const std::string_view register_class = result ? entry.substr(1) : entry;
    if (!IsRegisterClass(register_class)) {
      *error = "expected " + where +
               " to be `=` and a register class for a result, a register class for an operand, "
               "or the clobber `~{memory}`, without spaces (register classes: h, r, l, f, d)";
      return std::nullopt;
    }
    if ((result && part != Part::kResults) || (!result && part == Part::kClobbers)) {
      *error =
          "expected `constraints` to list results (`=` entries) first, then operands, then "
          "clobbers; " +
          where + " is out of order";
      return std::nullopt;
    }
    if (result) {
      parsed.results.push_back(register_class[0]);
    } else {
      part = Part::kOperands;
      parsed.operands.push_back(register_class[0]);
    }
  }
  return parsed;
}

std::optional<std::string> CheckPtxOperandReferences(std::string_view ptx, size_t operand_count) {
  for (size_t i = 0; i < ptx.size(); ++i) {
    if (ptx[i] != '$') continue;
    const size_t at = i;
    size_t j = i + 1;
    if (j < ptx.size() && ptx[j] == '$') {  // a literal `$`
      i = j;
      continue;
    }
    const bool braced = j < ptx.size() && ptx[j] == '{';
    if (braced) ++j;
    size_t number = 0;
    size_t digits = 0;
    while (j < ptx.size() && std::isdigit(static_cast<unsigned char>(ptx[j])) && digits < 9) {
      number = number * 10 + static_cast<size_t>(ptx[j] - '0');
      ++digits;
      ++j;
    }
    if (digits == 0 || (braced && (j >= ptx.size() || ptx[j] != '}'))) {
      size_t shown = std::min<size_t>(ptx.size() - at, 8);
      return "expected `$` in `ptx` at offset " + std::to_string(at) +
             " to start an operand reference ($0, ${0}) or to be `$$` (a literal $), found '" +
             std::string(ptx.substr(at, shown)) + "'";
    }
    const bool too_long = j < ptx.size() && std::isdigit(static_cast<unsigned char>(ptx[j]));
    if (too_long || number >= operand_count) {
      while (j < ptx.size() && std::isdigit(static_cast<unsigned char>(ptx[j]))) ++j;
      if (braced && j < ptx.size() && ptx[j] == '}') ++j;
      const std::string reference(ptx.substr(at, j - at));
      if (operand_count == 0) {
        return "`ptx` refers to " + reference + ", but the op has no results or operands";
      }
      return "`ptx` refers to " + reference + ", but the op has " + std::to_string(operand_count) +
             " result(s) and operand(s): $0 … $" + std::to_string(operand_count - 1) +
             ", results first";
    }
    i = braced ? j : j - 1;
  }
  return std::nullopt;
}

}  // namespace tessera
