// The decision cache (DESIGN.md §7): decision records by key, in memory and optionally on disk
// (`<dir>/<base key>/<key>.json`, written atomically). A record made with another toolchain or
// other candidate identities has the same base key and a different key: it misses, is kept, and
// is returned as `stale` so the arbiter can say what changed and keep its winner as incumbent.
#ifndef TESSERA_ARBITER_DECISION_CACHE_H_
#define TESSERA_ARBITER_DECISION_CACHE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "arbiter/decision_record.h"

namespace tessera::arbiter {

struct DecisionCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t stale = 0;    ///< misses that found a record of the same base key
  uint64_t stores = 0;
  uint64_t damaged = 0;      ///< unreadable files on disk (removed)
  uint64_t disk_errors = 0;  ///< records that could not be written to disk (kept in memory)
};

/// Thread-safe.
class DecisionCache {
 public:
  /// `directory` "" keeps records in memory only; otherwise it is created when first written
  /// (a directory that cannot be written leaves the cache memory-only, counted, never an error).
  explicit DecisionCache(std::string directory = "");

  struct Lookup {
    std::optional<DecisionRecord> fresh;  ///< same key
    std::optional<DecisionRecord> stale;  ///< the newest record with the same base key
  };
  Lookup Find(const std::string& key, const std::string& base_key);

  /// Keeps `record` (by record.key) in memory and on disk.
  void Store(const DecisionRecord& record);

  /// Every record this cache holds in memory and on disk, newest first.
  std::vector<DecisionRecord> Records();

  DecisionCacheStats stats() const;
  const std::string& directory() const { return directory_; }

 private:
  std::optional<DecisionRecord> Load(const std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string directory_;
  mutable absl::Mutex mu_;
  std::map<std::string, DecisionRecord> memory_ ABSL_GUARDED_BY(mu_);  // key → record
  DecisionCacheStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tessera::arbiter

#endif  // TESSERA_ARBITER_DECISION_CACHE_H_
