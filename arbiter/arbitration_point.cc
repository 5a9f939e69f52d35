#include "arbiter/arbitration_point.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tessera::arbiter {
namespace {

std::string JoinShape(const std::vector<int64_t>& shape, bool bucket) {
  std::vector<std::string> parts;
  for (int64_t size : shape) {
    if (size < 0) {
      parts.push_back("?");
      continue;
    }
    int64_t rounded = 1;
    while (bucket && rounded < size) rounded *= 2;
    parts.push_back(absl::StrCat(bucket ? rounded : size));
  }
  return parts.empty() ? "-" : absl::StrJoin(parts, "x");
}

}  // namespace

std::string ArbitrationPoint::ShapeBucket() const { return JoinShape(shape, /*bucket=*/true); }

std::string ArbitrationPoint::ShapeText() const { return JoinShape(shape, /*bucket=*/false); }

std::string ArbitrationPoint::Movement() const {
  std::vector<std::string> parts;
  if (transpose_a) parts.push_back("A^T");
  if (transpose_b) parts.push_back("B^T");
  std::string epilogue;
  if (bias) epilogue = "bias";
  if (activation != "none") epilogue = epilogue.empty() ? activation : epilogue + "+" + activation;
  if (residual) epilogue = epilogue.empty() ? "residual" : epilogue + "+residual";
  if (!epilogue.empty()) parts.push_back(epilogue);
  return parts.empty() ? "plain" : absl::StrJoin(parts, ",");
}

std::string ArbitrationPoint::DeterminismLevel() const {
  if (batch_invariant) return "batch_invariant";
  return deterministic ? "run_to_run" : "none";
}

std::string ArbitrationPoint::DtypeText() const {
  if (element_types.size() < 3) return absl::StrJoin(element_types, ",");
  std::string text = absl::StrCat(element_types[0], ",", element_types[1], "->", element_types[2]);
  if (element_types.size() > 3) absl::StrAppend(&text, " bias ", element_types[3]);
  return text;
}

}  // namespace tessera::arbiter
