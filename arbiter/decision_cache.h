// The decision cache (docs/design.md §7): decision records by key, in memory and optionally on disk
// (`<dir>/<base key>/<key>.json`, written atomically). A record made with another toolchain or
// other candidate identities has the same base key and a different key: it misses, is kept, and
// is returned as `stale` so the arbiter can say what changed and keep its winner as incumbent.
// With a remote tier (cache/remote_cache.h) a fleet shares its records: a key neither memory
// nor disk holds is looked up there (and copied to disk), every new record is stored there, so
// a fleet measures each new shape once per device kind. Stale records are searched locally only.
#ifndef TESSERA_ARBITER_DECISION_CACHE_H_
#define TESSERA_ARBITER_DECISION_CACHE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "arbiter/decision_record.h"

namespace tessera::cache {
class RemoteCache;  // cache/remote_cache.h
}  // namespace tessera::cache

namespace tessera::arbiter {

struct DecisionCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t stale = 0;  ///< misses that found a record of the same base key
  uint64_t stores = 0;
  uint64_t damaged = 0;      ///< unreadable files on disk (removed)
  uint64_t disk_errors = 0;  ///< records that could not be written to disk (kept in memory)
  uint64_t remote_hits = 0;  ///< of `hits`: found in the remote tier
};

/// The payload format of a decision record in the remote tier (its JSON).
inline constexpr int kDecisionRecordFormat = 1;

/// Thread-safe.
class DecisionCache {
 public:
  /// `directory` "" keeps records in memory only; otherwise it is created when first written
  /// (a directory that cannot be written leaves the cache memory-only, counted, never an error).
  explicit DecisionCache(std::string directory = "",
                         std::shared_ptr<cache::RemoteCache> remote = nullptr);

  struct Lookup {
    std::optional<DecisionRecord> fresh;  ///< same key
    std::optional<DecisionRecord> stale;  ///< the newest record with the same base key
  };
  Lookup Find(const std::string& key, const std::string& base_key);

  /// Keeps `record` (by record.key) in memory, on disk and in the remote tier.
  void Store(const DecisionRecord& record);

  /// Every record this cache holds in memory and on disk, newest first.
  std::vector<DecisionRecord> Records();

  DecisionCacheStats stats() const;
  const std::string& directory() const { return directory_; }

 private:
  std::optional<DecisionRecord> Load(const std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Called without mu_ (network I/O).
  std::optional<DecisionRecord> LoadRemote(const std::string& key, const std::string& base_key);
  void WriteToDisk(const DecisionRecord& record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string directory_;
  const std::shared_ptr<cache::RemoteCache> remote_;
  mutable absl::Mutex mu_;
  std::map<std::string, DecisionRecord> memory_ ABSL_GUARDED_BY(mu_);  // key → record
  DecisionCacheStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tessera::arbiter

#endif  // TESSERA_ARBITER_DECISION_CACHE_H_
