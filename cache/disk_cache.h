// The disk tier of the compile cache: one directory per key under a root shared by processes.
// Entries are published atomically (payload and manifest written to a private directory, the
// manifest last, then renamed into place); a per-key file lock makes concurrent processes
// compile a key once; the total size is bounded with least-recently-used eviction. A stale,
// truncated, bit-flipped, foreign-format or half-written entry is a miss that says why, never an
// error. An unwritable or full disk turns the tier off with one warning.
#ifndef TESSERA_CACHE_DISK_CACHE_H_
#define TESSERA_CACHE_DISK_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "cache/cache_key.h"
#include "jit/compiled_module.h"

namespace tessera::cache {

/// One entry as `ls` shows it.
struct DiskEntry {
  std::string digest;
  uint64_t bytes = 0;
  int64_t last_used_unix = 0;
  std::vector<std::pair<std::string, std::string>> components;
  std::string source_name;
};

/// Thread-safe, and safe for processes sharing the root.
class DiskCache {
 public:
  /// $TESSERA_JIT_CACHE_DIR, else $XDG_CACHE_HOME/tessera-jit, else $HOME/.cache/tessera-jit.
  static std::string DefaultRoot();

  DiskCache(std::string root, uint64_t max_bytes);

  bool enabled() const { return enabled_.load(); }
  const std::string& root() const { return root_; }

  /// The entry for `key`, or null with `miss_reason` set ("not cached", "stale: llvm 22.1.8 →
  /// 22.1.9", "checksum mismatch", "truncated payload (…)", "manifest missing (half-written
  /// entry)", "artifact format 0 → 1", …). A damaged entry is removed.
  std::unique_ptr<jit::CompiledModule> Load(const CacheKey& key, std::string& miss_reason);

  /// Publishes `module` under `key` (a no-op if another process already has), then evicts the
  /// least recently used entries beyond the size bound. Failures switch the tier off.
  void Store(const CacheKey& key, const jit::CompiledModule& module);

  /// The digest recorded for a source text (`text_digest`: SHA-256 of the text, the options and
  /// the toolchain), so a fresh process can find an entry without parsing the IR; empty when
  /// none is recorded.
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
  /// Blocks until this process holds `digest`'s lock; null when the tier is off.
  std::unique_ptr<KeyLock> Lock(const std::string& digest);

  std::vector<DiskEntry> List() const;
  uint64_t TotalBytes() const;
  absl::Status Clear();

 private:
  std::string EntryDir(const std::string& digest) const;
  void Disable(const std::string& why);
  void Evict(const std::string& keep);
  void Remove(const std::string& directory);

  const std::string root_;
  const uint64_t max_bytes_;
  std::atomic<bool> enabled_{true};
  absl::Mutex mu_;  // serializes eviction within the process
};

}  // namespace tessera::cache

#endif  // TESSERA_CACHE_DISK_CACHE_H_
