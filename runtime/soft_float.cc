#include "runtime/soft_float.h"

#include <cmath>
#include <cstring>

namespace tessera::runtime {
namespace {

uint32_t Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float FromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// The x86-64 psABI passes and returns __bf16 like _Float16: in the low 16 bits of an XMM
// register. GCC 12 has no __bf16 in C++, so _Float16 carries the bits.
_Float16 Carry(uint16_t bits) {
  _Float16 value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint16_t Carried(_Float16 value) {
  uint16_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

extern "C" {
// Not exported (the library exports only tessera_jit_*): reached through SoftFloatHelper.
_Float16 tessera_truncsfbf2(float value) { return Carry(FloatToBf16Bits(value)); }
_Float16 tessera_truncdfbf2(double value) { return Carry(DoubleToBf16Bits(value)); }
float tessera_extendbfsf2(_Float16 value) {
  return FromBits(static_cast<uint32_t>(Carried(value)) << 16);
}
}

}  // namespace

uint16_t FloatToBf16Bits(float value) {
  const uint32_t bits = Bits(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x0040u);  // quiet
  const uint32_t rounded = bits + 0x7FFFu + ((bits >> 16) & 1u);                // to nearest even
  return static_cast<uint16_t>(rounded >> 16);
}

uint16_t DoubleToBf16Bits(double value) {
  if (std::isnan(value)) return FloatToBf16Bits(static_cast<float>(value));
  // Round to odd into f32 (24 bits ≥ 8 + 2), then to nearest even into bf16: the same as one
  // rounding of the double, where f64 → f32 → bf16 with two roundings to nearest is not.
  float narrow = static_cast<float>(value);
  if (static_cast<double>(narrow) != value) {
    if (std::fabs(static_cast<double>(narrow)) > std::fabs(value)) {
      narrow = std::nextafter(narrow, 0.0f);
    }
    narrow = FromBits(Bits(narrow) | 1u);
  }
  return FloatToBf16Bits(narrow);
}

void* SoftFloatHelper(absl::string_view name) {
  if (name == "__truncsfbf2") return reinterpret_cast<void*>(&tessera_truncsfbf2);
  if (name == "__truncdfbf2") return reinterpret_cast<void*>(&tessera_truncdfbf2);
  if (name == "__extendbfsf2") return reinterpret_cast<void*>(&tessera_extendbfsf2);
  return nullptr;
}

}  // namespace tessera::runtime
