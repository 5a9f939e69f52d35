#include "arbiter/element_storage.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/float16.h"

namespace tessera::arbiter {

size_t StorageBytes(absl::string_view element) {
  if (element == "f32") return 4;
  if (element == "f16" || element == "bf16") return 2;
  return 0;
}

absl::StatusOr<std::vector<uint8_t>> EncodeStorage(const std::vector<float>& values,
                                                   absl::string_view element) {
  const size_t bytes = StorageBytes(element);
  if (bytes == 0) {
    return absl::InvalidArgumentError(absl::StrCat("probes do not store '", element, "'"));
  }
  std::vector<uint8_t> out(values.size() * bytes);
  const bool bf16 = element == "bf16";
  for (size_t i = 0; i < values.size(); ++i) {
    const float value = values[i];
    bool exact = std::isfinite(value);
    if (exact && bytes == 4) {
      std::memcpy(&out[i * 4], &value, 4);
      continue;
    }
    // Rounded, then exact only when it reads back as the same value (the sign of zero too).
    const uint16_t narrow = bf16 ? FloatToBfloat(value) : FloatToHalf(value);
    const float back = bf16 ? BfloatToFloat(narrow) : HalfToFloat(narrow);
    exact = exact && back == value && std::signbit(back) == std::signbit(value);
    if (!exact) {
      return absl::InvalidArgumentError(absl::StrCat("probe value ", value, " at index ", i,
                                                     " is not exactly representable in ", element));
    }
    out[i * 2] = static_cast<uint8_t>(narrow & 0xff);
    out[i * 2 + 1] = static_cast<uint8_t>(narrow >> 8);
  }
  return out;
}

std::vector<float> DecodeStorage(const void* data, size_t count, absl::string_view element) {
  const size_t bytes = StorageBytes(element);
  if (bytes == 0) return {};
  std::vector<float> out(count);
  const auto* in = static_cast<const uint8_t*>(data);
  if (bytes == 4) {
    if (count > 0) std::memcpy(out.data(), in, count * 4);
    return out;
  }
  const bool bf16 = element == "bf16";
  for (size_t i = 0; i < count; ++i) {
    const uint16_t narrow = static_cast<uint16_t>(in[i * 2] | in[i * 2 + 1] << 8);
    out[i] = bf16 ? BfloatToFloat(narrow) : HalfToFloat(narrow);
  }
  return out;
}

double StorageUlp(absl::string_view element) {
  if (element == "f16") return std::ldexp(1.0, -10);
  if (element == "bf16") return std::ldexp(1.0, -7);
  return std::ldexp(1.0, -23);
}

}  // namespace tessera::arbiter
