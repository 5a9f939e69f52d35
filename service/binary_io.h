// The length-prefixed little-endian encoding the service's binary formats share (artifacts,
// packages): 8-byte numbers, strings as a length and their bytes. Reading never trusts a length
// beyond the bytes that are left.
#ifndef TESSERA_SERVICE_BINARY_IO_H_
#define TESSERA_SERVICE_BINARY_IO_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace tessera::service {

class Writer {
 public:
  void U64(uint64_t value) { bytes_.append(reinterpret_cast<const char*>(&value), 8); }
  void I64(int64_t value) { U64(static_cast<uint64_t>(value)); }
  void String(const std::string& value) {
    U64(value.size());
    bytes_.append(value);
  }
  std::string Take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(absl::string_view bytes) : bytes_(bytes) {}
  bool U64(uint64_t& value) {
    if (bytes_.size() - at_ < 8) return false;
    std::memcpy(&value, bytes_.data() + at_, 8);
    at_ += 8;
    return true;
  }
  bool I64(int64_t& value) {
    uint64_t raw;
    if (!U64(raw)) return false;
    value = static_cast<int64_t>(raw);
    return true;
  }
  bool Int(int& value) {
    int64_t raw;
    if (!I64(raw)) return false;
    value = static_cast<int>(raw);
    return true;
  }
  bool String(std::string& value) {
    uint64_t size;
    if (!U64(size) || bytes_.size() - at_ < size) return false;
    value.assign(bytes_.data() + at_, size);
    at_ += size;
    return true;
  }
  // Every element takes at least 8 bytes (a length or a number), so a count beyond what is left
  // is damage — never a huge allocation.
  bool Count(uint64_t& value) { return U64(value) && value <= (bytes_.size() - at_) / 8; }
  bool AtEnd() const { return at_ == bytes_.size(); }
  size_t at() const { return at_; }

 private:
  absl::string_view bytes_;
  size_t at_ = 0;
};

}  // namespace tessera::service

#endif  // TESSERA_SERVICE_BINARY_IO_H_
