// SHA-256 as lowercase hex (content addressing: cache keys, delegate identities).
#ifndef TESSERA_BASE_SHA256_H_
#define TESSERA_BASE_SHA256_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tessera {

/// Lowercase hex SHA-256 of `data` (64 characters).
std::string Sha256Hex(absl::string_view data);

}  // namespace tessera

#endif  // TESSERA_BASE_SHA256_H_
