// The device image embedded in nvptx host code: the cubin (loaded first) and the PTX (the
// driver-JIT fallback) in one blob.
#ifndef TESSERA_RUNTIME_DEVICE_IMAGE_H_
#define TESSERA_RUNTIME_DEVICE_IMAGE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tessera::runtime {

/// Packs a device image for embedding in host code: the cubin (loaded first) and the PTX (the
/// driver-JIT fallback). Either may be empty.
std::string PackDeviceImage(absl::string_view cubin, absl::string_view ptx);

/// Splits a packed image; false when `data` is not one (then it is treated as a raw cubin).
bool UnpackDeviceImage(absl::string_view data, absl::string_view& cubin, absl::string_view& ptx);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_DEVICE_IMAGE_H_
