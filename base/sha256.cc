// SHA-256 through LLVM's implementation.
#include "base/sha256.h"

#include <array>
#include <cstdint>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/SHA256.h"

namespace tessera {

std::string Sha256Hex(absl::string_view data) {
  std::array<uint8_t, 32> hash = llvm::SHA256::hash(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(data.data()), data.size()));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  text.reserve(64);
  for (uint8_t byte : hash) {
    text.push_back(kHex[byte >> 4]);
    text.push_back(kHex[byte & 15]);
  }
  return text;
}

}  // namespace tessera
