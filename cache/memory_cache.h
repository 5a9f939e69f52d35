// The memory tier of the compile cache: compiled modules by key, least recently used evicted
// beyond a byte bound.
#ifndef TESSERA_CACHE_MEMORY_CACHE_H_
#define TESSERA_CACHE_MEMORY_CACHE_H_

#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "jit/compiled_module.h"

namespace tessera::cache {

/// Thread-safe.
class MemoryCache {
 public:
  explicit MemoryCache(uint64_t max_bytes) : max_bytes_(max_bytes) {}

  /// The module under `digest`, marked most recently used; null when absent.
  std::shared_ptr<const jit::CompiledModule> Get(const std::string& digest);

  /// Inserts (or replaces) `module` under `digest`, then evicts beyond the bound (never the
  /// entry just inserted). Evicted modules stay alive while their users hold them.
  void Put(const std::string& digest, std::shared_ptr<const jit::CompiledModule> module);

  uint64_t bytes() const;
  size_t entries() const;

  /// The bytes a module accounts for: its artifacts and host code.
  static uint64_t SizeOf(const jit::CompiledModule& module);

 private:
  struct Entry {
    std::shared_ptr<const jit::CompiledModule> module;
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
