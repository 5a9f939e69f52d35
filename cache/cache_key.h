// A cache key: a SHA-256 over named components. The storage layer does not know what the
// components mean — the compile service (service/module_key.h) says what goes in — only that
// the `content` components name what is stored and the `producer` components what made it, so
// a miss can find the entry an older producer made and say what changed.
#ifndef TESSERA_CACHE_CACHE_KEY_H_
#define TESSERA_CACHE_CACHE_KEY_H_

#include <string>
#include <utility>
#include <vector>

namespace tessera::cache {

/// (name, value) pairs, in order — e.g. ("target", "nvptx"), ("llvm", "22.1.8").
using KeyComponents = std::vector<std::pair<std::string, std::string>>;

struct CacheKey {
  std::string digest;        ///< 64 hex digits: names the entry
  std::string base_digest;   ///< 64 hex digits over the content components alone
  KeyComponents components;  ///< content, then producer
};

/// The key of `content` as produced by `producer`.
CacheKey MakeCacheKey(const KeyComponents& content, const KeyComponents& producer);

/// Lowercase hex SHA-256 of `data`.
std::string Sha256Hex(const std::string& data);

/// Human-readable difference between two component lists, e.g. "llvm 22.1.8 → 22.1.9"; empty
/// when they agree.
std::string DescribeChange(const KeyComponents& before, const KeyComponents& after);

}  // namespace tessera::cache

#endif  // TESSERA_CACHE_CACHE_KEY_H_
