// Cache keys: SHA-256 over named components.
#include "cache/cache_key.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/sha256.h"

namespace tessera::cache {
namespace {

std::string Join(const KeyComponents& components, size_t count) {
  std::string text;
  for (size_t i = 0; i < count; ++i) {
    absl::StrAppend(&text, components[i].first, "=", components[i].second, "\n");
  }
  return text;
}

}  // namespace

std::string Sha256Hex(const std::string& data) { return tessera::Sha256Hex(data); }

CacheKey MakeCacheKey(const KeyComponents& content, const KeyComponents& producer) {
  CacheKey key;
  key.components = content;
  key.components.insert(key.components.end(), producer.begin(), producer.end());
  key.base_digest = Sha256Hex(Join(key.components, content.size()));
  key.digest = Sha256Hex(Join(key.components, key.components.size()));
  return key;
}

std::string DescribeChange(const KeyComponents& before, const KeyComponents& after) {
  std::map<std::string, std::string> old_values(before.begin(), before.end());
  std::vector<std::string> changes;
  for (const auto& [name, value] : after) {
    auto it = old_values.find(name);
    std::string old_value = it == old_values.end() ? "(none)" : it->second;
    if (old_value != value) {
      changes.push_back(absl::StrCat(name, " ", old_value.empty() ? "(none)" : old_value, " → ",
                                     value.empty() ? "(none)" : value));
    }
  }
  return absl::StrJoin(changes, ", ");
}

}  // namespace tessera::cache
