// The memory tier: values by key digest, least recently used evicted beyond a byte bound. The
// tier stores whatever the caller hands it (the compile service: live compiled modules) and
// the size the caller says it accounts for.
#ifndef TESSERA_CACHE_MEMORY_CACHE_H_
#define TESSERA_CACHE_MEMORY_CACHE_H_

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace tessera::cache {

/// Thread-safe.
template <typename Value>
class MemoryCache {
 public:
  explicit MemoryCache(uint64_t max_bytes) : max_bytes_(max_bytes) {}

  /// The value under `digest`, marked most recently used; null when absent.
  std::shared_ptr<const Value> Get(const std::string& digest) {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(digest);
    if (it == entries_.end()) return nullptr;
    recency_.splice(recency_.begin(), recency_, it->second.position);
    return it->second.value;
  }

  /// Inserts (or replaces) `value`, accounted as `bytes`, under `digest`, then evicts beyond the
  /// bound (never the entry just inserted). Evicted values stay alive while their users hold
  /// them.
  void Put(const std::string& digest, std::shared_ptr<const Value> value, uint64_t bytes) {
    absl::MutexLock lock(&mu_);
    if (auto it = entries_.find(digest); it != entries_.end()) {
      bytes_ -= it->second.bytes;
      recency_.erase(it->second.position);
      entries_.erase(it);
    }
    recency_.push_front(digest);
    entries_[digest] = Entry{std::move(value), bytes, recency_.begin()};
    bytes_ += bytes;
    while (bytes_ > max_bytes_ && recency_.size() > 1) {
      auto it = entries_.find(recency_.back());
      bytes_ -= it->second.bytes;
      entries_.erase(it);
      recency_.pop_back();
    }
  }

  uint64_t bytes() const {
    absl::MutexLock lock(&mu_);
    return bytes_;
  }
  size_t entries() const {
    absl::MutexLock lock(&mu_);
    return entries_.size();
  }

 private:
  struct Entry {
    std::shared_ptr<const Value> value;
    uint64_t bytes;
    std::list<std::string>::iterator position;
  };

  const uint64_t max_bytes_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::list<std::string> recency_ ABSL_GUARDED_BY(mu_);  // front: most recent
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tessera::cache

#endif  // TESSERA_CACHE_MEMORY_CACHE_H_
