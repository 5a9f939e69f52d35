// Reading and rewriting an x86-64 ELF64 (little-endian) object's headers in place, for tests
// that forge host objects the way a damaged or hostile package could.
#ifndef TESSERA_TESTS_RUNTIME_ELF_EDIT_H_
#define TESSERA_TESTS_RUNTIME_ELF_EDIT_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tessera::testing {

class ElfEdit {
 public:
  // ELF64 offsets used by the tests.
  static constexpr size_t kShType = 0x04, kShFlags = 0x08, kShAddr = 0x10, kShOffset = 0x18,
                          kShSize = 0x20, kShLink = 0x28, kShInfo = 0x2c, kShAddralign = 0x30;
  static constexpr uint32_t kSymtab = 2, kRela = 4, kNobits = 8;

  explicit ElfEdit(std::string& object) : object_(object) {
    EXPECT_GE(object_.size(), 64u);
    EXPECT_EQ(object_.compare(0, 4,
                              "\x7f"
                              "ELF"),
              0);
  }

  uint64_t Read(size_t offset, size_t bytes) const {
    uint64_t value = 0;
    EXPECT_LE(offset + bytes, object_.size());
    if (offset + bytes <= object_.size()) std::memcpy(&value, object_.data() + offset, bytes);
    return value;
  }
  void Write(size_t offset, uint64_t value, size_t bytes = 8) {
    ASSERT_LE(offset + bytes, object_.size());
    std::memcpy(object_.data() + offset, &value, bytes);
  }
  /// The offsets of the section headers, in section order.
  std::vector<uint64_t> SectionHeaders() const {
    std::vector<uint64_t> headers;
    const uint64_t first = Read(0x28, 8), size = Read(0x3a, 2), count = Read(0x3c, 2);
    for (uint64_t i = 0; i < count; ++i) headers.push_back(first + i * size);
    return headers;
  }
  /// The header offset of the first section of `type` (0 when there is none).
  uint64_t FirstOfType(uint32_t type) const {
    for (uint64_t header : SectionHeaders()) {
      if (Read(header + kShType, 4) == type) return header;
    }
    return 0;
  }

 private:
  std::string& object_;
};

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_RUNTIME_ELF_EDIT_H_
