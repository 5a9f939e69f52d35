// The disk tier: bytes under a key, in one directory per key under a root shared by processes.
// Entries are published atomically (payload and manifest written to a private directory, the
// manifest last, then renamed into place); a per-key file lock, with a timeout, lets
// concurrent processes produce a key once; the total size is bounded with least-recently-used
// eviction. A stale, truncated, bit-flipped, foreign-format or half-written entry is a miss
// that says why, never an error. An unwritable or full disk turns the tier off with one
// warning; a read-only root (a prebuilt cache in a container image) serves hits and stores
// nothing.
#ifndef TESSERA_CACHE_DISK_CACHE_H_
#define TESSERA_CACHE_DISK_CACHE_H_

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/log.h"
#include "cache/cache_key.h"
#include "cache/miss.h"

namespace tessera::cache {

/// One entry as `ls` shows it.
struct DiskEntry {
  std::string digest;
  uint64_t bytes = 0;
  int64_t last_used_unix = 0;
  KeyComponents components;
  std::string source_name;
};

struct DiskCacheOptions {
  std::string root;
  uint64_t max_bytes = uint64_t{1} << 30;
  /// Serve hits only: never write, touch, evict or remove (also chosen by itself when the root
  /// exists but cannot be written).
  bool read_only = false;
  /// How long Lock() waits for another process producing the same key; then the caller goes
  /// ahead unlocked (at worst the key is produced twice; publication stays atomic).
  absl::Duration lock_timeout = absl::Seconds(120);
  Logger logger;
};

/// What went wrong without failing anything, since the tier was made.
struct DiskCounters {
  uint64_t lock_timeouts = 0;  ///< Lock() gave up waiting
  uint64_t lock_failures = 0;  ///< the lock file could not be opened or locked
  uint64_t discarded = 0;      ///< damaged entries removed
  uint64_t evicted = 0;        ///< entries evicted beyond the size bound
};

/// Thread-safe, and safe for processes sharing the root.
class DiskCache {
 public:
  /// $TESSERA_JIT_CACHE_DIR, else $XDG_CACHE_HOME/tessera-jit, else $HOME/.cache/tessera-jit.
  static std::string DefaultRoot();

  explicit DiskCache(DiskCacheOptions options);

  /// Hits can be served (the tier is on, maybe read-only).
  bool enabled() const { return enabled_.load(); }
  bool read_only() const { return read_only_.load(); }
  const std::string& root() const { return options_.root; }

  /// The payload stored under `key` in payload format `format`, or nullopt with `miss` set
  /// (kNotCached, kStale "llvm 22.1.8 → 22.1.9", kFormat "4 → 5", kDamaged "checksum
  /// mismatch" / "truncated payload (…)" / "manifest missing (half-written entry)", …). A
  /// damaged entry is removed.
  std::optional<std::string> Load(const CacheKey& key, int format, Miss& miss);

  /// Removes the entry under `digest` whose payload its reader found unusable.
  void Discard(const std::string& digest);

  /// Publishes `payload` under `key` (a no-op if another process already has), then evicts the
  /// least recently used entries beyond the size bound. Failures switch the tier off.
  void Store(const CacheKey& key, int format, const std::string& payload,
             const std::string& source_name);

  /// The digest recorded for a source text (`text_digest`: SHA-256 of the text and what else
  /// names the request), so a fresh process can find an entry without parsing; empty when none.
  std::string LookupText(const std::string& text_digest) const;
  void RecordText(const std::string& text_digest, const std::string& digest);

  /// Holds the cross-process lock of one key while alive.
  class KeyLock {
   public:
    explicit KeyLock(int fd) : fd_(fd) {}
    ~KeyLock();
    KeyLock(const KeyLock&) = delete;
    KeyLock& operator=(const KeyLock&) = delete;

   private:
    int fd_;
  };
  /// Waits up to the lock timeout until this process holds `digest`'s lock; null when the
  /// tier is off or read-only, or on a timeout or failure (counted).
  std::unique_ptr<KeyLock> Lock(const std::string& digest);

  std::vector<DiskEntry> List() const;
  uint64_t TotalBytes() const;
  /// Removes every entry and index, every lock no process holds, and every temporary older than
  /// a minute (younger ones may be entries other processes are staging).
  absl::Status Clear();
  DiskCounters counters() const;

 private:
  struct Sized {
    std::string digest;
    uint64_t bytes;
    std::filesystem::file_time_type last_used;  ///< the manifest's time, at full precision
  };
  std::string EntryDir(const std::string& digest) const;
  std::string Path(const char* sub) const;
  void Disable(const std::string& why);
  void Evict(const std::string& keep, uint64_t stored_bytes);
  void Remove(const std::string& directory);
  std::vector<Sized> Sizes() const;

  const DiskCacheOptions options_;
  std::atomic<bool> enabled_{true};
  std::atomic<bool> read_only_{false};
  std::atomic<uint64_t> lock_timeouts_{0};
  std::atomic<uint64_t> lock_failures_{0};
  std::atomic<uint64_t> discarded_{0};
  std::atomic<uint64_t> evicted_{0};

  absl::Mutex mu_;  // eviction within the process
  /// The total size this process believes the tier has: a full scan when it is unknown or
  /// passes the bound, and every kRescanStores stores (other processes store too); otherwise
  /// a store only adds its own bytes.
  std::optional<uint64_t> estimated_bytes_ ABSL_GUARDED_BY(mu_);
  uint64_t stores_since_scan_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tessera::cache

#endif  // TESSERA_CACHE_DISK_CACHE_H_
