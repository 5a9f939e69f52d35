#include "cache/manifest.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/xxhash.h"

namespace tessera::cache {

Manifest ManifestFor(const CacheKey& key, int format, const std::string& payload,
                     const std::string& source_name) {
  return Manifest{format,         key.digest,  PayloadChecksum(payload),
                  payload.size(), source_name, key.components};
}

std::string WriteManifest(const Manifest& m) {
  std::string text =
      absl::StrCat("format=", m.format, "\ndigest=", m.digest, "\npayload_xxh3=", m.payload_xxh3,
                   "\npayload_bytes=", m.payload_bytes, "\nsource_name=", m.source_name, "\n");
  for (const auto& [name, value] : m.components) {
    absl::StrAppend(&text, "component.", name, "=", value, "\n");
  }
  return text;
}

bool ParseManifest(absl::string_view text, Manifest& m) {
  bool has_format = false;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    size_t eq = line.find('=');
    if (eq == absl::string_view::npos) return false;
    absl::string_view name = line.substr(0, eq);
    absl::string_view value = line.substr(eq + 1);
    if (name == "format") {
      has_format = absl::SimpleAtoi(value, &m.format);
    } else if (name == "digest") {
      m.digest = std::string(value);
    } else if (name == "payload_xxh3") {
      m.payload_xxh3 = std::string(value);
    } else if (name == "payload_bytes") {
      if (!absl::SimpleAtoi(value, &m.payload_bytes)) return false;
    } else if (name == "source_name") {
      m.source_name = std::string(value);
    } else if (absl::StartsWith(name, "component.")) {
      m.components.emplace_back(std::string(name.substr(10)), std::string(value));
    }
  }
  return has_format && !m.digest.empty();
}

std::string PayloadChecksum(absl::string_view payload) {
  uint64_t hash = llvm::xxh3_64bits(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(payload.data()), payload.size()));
  return absl::StrCat(absl::Hex(hash, absl::kZeroPad16));
}

bool IsDigest(absl::string_view text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace tessera::cache
