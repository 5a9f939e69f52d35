// Packing and unpacking device images.
#include "runtime/device_image.h"

#include <cstdint>
#include <cstring>

namespace tessera::runtime {
namespace {

constexpr char kImageMagic[8] = {'T', 'S', 'R', 'I', 'M', 'G', '0', '1'};

}  // namespace

std::string PackDeviceImage(absl::string_view cubin, absl::string_view ptx) {
  std::string packed(kImageMagic, sizeof(kImageMagic));
  uint64_t sizes[2] = {cubin.size(), ptx.size() + 1};
  packed.append(reinterpret_cast<const char*>(sizes), sizeof(sizes));
  packed.append(cubin.data(), cubin.size());
  packed.append(ptx.data(), ptx.size());
  packed.push_back('\0');  // the driver's PTX JIT reads a C string
  return packed;
}

bool UnpackDeviceImage(absl::string_view data, absl::string_view& cubin, absl::string_view& ptx) {
  constexpr size_t kHeader = sizeof(kImageMagic) + 2 * sizeof(uint64_t);
  if (data.size() < kHeader || std::memcmp(data.data(), kImageMagic, sizeof(kImageMagic)) != 0) {
    return false;
  }
  uint64_t sizes[2];
  std::memcpy(sizes, data.data() + sizeof(kImageMagic), sizeof(sizes));
  if (sizes[0] > data.size() - kHeader || sizes[1] > data.size() - kHeader - sizes[0]) {
    return false;
  }
  cubin = data.substr(kHeader, sizes[0]);
  ptx = data.substr(kHeader + sizes[0], sizes[1]);
  if (!ptx.empty()) ptx.remove_suffix(1);  // the NUL
  return true;
}

}  // namespace tessera::runtime
