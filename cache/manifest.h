// What an entry says about itself: its format, key, payload size and checksum, source name and
// key components. The disk tier writes it beside the payload; the remote tier in front of it.
// A reader trusts a payload only when all of it agrees.
#ifndef TESSERA_CACHE_MANIFEST_H_
#define TESSERA_CACHE_MANIFEST_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "cache/cache_key.h"

namespace tessera::cache {

struct Manifest {
  int format = 0;
  std::string digest;
  std::string payload_xxh3;
  uint64_t payload_bytes = 0;
  std::string source_name;
  KeyComponents components;
};

/// The manifest of `payload` stored under `key` in payload format `format`.
Manifest ManifestFor(const CacheKey& key, int format, const std::string& payload,
                     const std::string& source_name);

/// "name=value" lines.
std::string WriteManifest(const Manifest& manifest);
/// False when `text` is not a manifest (no format or digest, a line without '=').
bool ParseManifest(absl::string_view text, Manifest& manifest);

/// The payload checksum: XXH3-64 in 16 hex digits, which detects truncation and bit flips at
/// memory speed (the SHA-256 of the key already names the content).
std::string PayloadChecksum(absl::string_view payload);

/// A key digest as the tiers write them: 64 lowercase hex digits. Anything else (a damaged or
/// planted index) never becomes a path or a remote key.
bool IsDigest(absl::string_view text);

}  // namespace tessera::cache

#endif  // TESSERA_CACHE_MANIFEST_H_
