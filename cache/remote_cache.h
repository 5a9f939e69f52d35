// The remote tier: the disk tier's entries — the same payload bytes, format version, manifest
// and checksum — in a Redis server a fleet shares, under this toolchain's namespace, with a TTL
// (eviction beyond that is the server's: `maxmemory` and an LRU policy). A per-key lease makes
// one process in the fleet compile a new key while the others wait for its value (bounded),
// and take over when the holder died. Faults never fail anything: a server that is down,
// refuses, is slow, out of memory or refuses our password, and a value that is corrupted,
// truncated, foreign or from another toolchain, are misses (or stores not made) with the reason
// counted and one warning per kind; the connection comes back with backoff.
#ifndef TESSERA_CACHE_REMOTE_CACHE_H_
#define TESSERA_CACHE_REMOTE_CACHE_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/log.h"
#include "cache/cache_key.h"
#include "cache/miss.h"
#include "cache/redis_client.h"
#include "cache/remote_cache_options.h"
#include "cache/remote_cache_stats.h"

namespace tessera::cache {

/// Thread-safe; many processes on many machines share one server.
class RemoteCache {
 public:
  /// What a value is: a compiled module, or an arbiter decision record.
  enum class Kind { kArtifact, kDecision };

  explicit RemoteCache(RemoteCacheOptions options);
  ~RemoteCache();  // flushes the fleet counters

  /// False after the server refused our credentials (for good).
  bool enabled() const;
  /// "redis://host:port" (no password).
  std::string Describe() const { return options_.endpoint.Describe(); }
  const RemoteCacheOptions& options() const { return options_; }

  struct Entry {
    std::string payload;
    std::string source_name;
  };
  /// The value under `key`, checked like a disk entry (manifest, key, components, format,
  /// size, checksum); nullopt with `miss` set otherwise.
  std::optional<Entry> Load(Kind kind, const CacheKey& key, int format, Miss& miss);
  /// Publishes the whole value with the TTL (overwriting a damaged one). False when it was not
  /// stored (counted, warned once).
  bool Store(Kind kind, const CacheKey& key, int format, const std::string& payload,
             const std::string& source_name);

  /// This process's lease on one key: renewed in the background while alive, released (only
  /// if still ours) when destroyed. The RemoteCache must outlive it (the compile service
  /// holds a lease only inside one compile).
  class Lease {
   public:
    Lease(RemoteCache* owner, std::string name, std::string token);
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

   private:
    void Renew();
    RemoteCache* const owner_;
    const std::string name_;
    const std::string token_;
    // std:: rather than absl:: here: ThreadSanitizer sees through pthread's waits, not through
    // the system abseil's (base/tsan_absl_sync.cc).
    std::mutex mu_;
    std::condition_variable stop_;
    bool stopping_ = false;  // guarded by mu_
    std::thread renewer_;
  };

  /// Either the artifact (maybe after waiting for another process's compile), or the key's
  /// lease (compile it, Store, then drop the lease), or neither (the server is unreachable,
  /// or the wait timed out: compile locally). `miss` says why there was no artifact.
  struct Claim {
    std::optional<Entry> entry;
    std::unique_ptr<Lease> lease;
    Miss miss;
  };
  Claim LoadOrLease(const CacheKey& key, int format);

  /// Removes every key of this toolchain's namespace; the number removed.
  absl::StatusOr<uint64_t> Clear();
  absl::StatusOr<RemoteFleetStats> FleetStats();
  RemoteCounters counters() const;
  /// Writes this process's counters since the last flush into the fleet's (also done about
  /// once a second by the operations themselves, and at destruction).
  void FlushCounters();

  /// Test hooks: the server key a value of `kind` under `digest` lives at, and its lease's.
  std::string ValueName(Kind kind, const std::string& digest) const;
  std::string LeaseName(const std::string& digest) const;
  RedisClient& client() { return client_; }

 private:
  void Failed(const absl::Status& status, absl::string_view doing);
  void CountMiss(const Miss& miss);
  void Bump(const std::string& field, int64_t by = 1) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RecordLatency(absl::Duration latency);
  void MaybeFlush();
  /// `duration` in whole milliseconds, at least 1: a PX or PEXPIRE argument.
  static int64_t Ms(absl::Duration duration);
  /// Checks and unwraps a value; nullopt with `miss` set.
  std::optional<Entry> Decode(const std::string& value, const CacheKey& key, int format,
                              Miss& miss) const;
  /// Calls `visit` with every batch of this namespace's key names (SCAN); its first error ends it.
  absl::Status ForEachKeyBatch(
      const std::function<absl::Status(const std::vector<RedisReply>&)>& visit);
  /// SET NX: true when the lease is ours; nullopt on a server error.
  std::optional<bool> TryLease(const std::string& name, const std::string& token);

  const RemoteCacheOptions options_;
  RedisClient client_;
  const std::string prefix_;  ///< "tessera-jit:<tag>:"

  mutable absl::Mutex mu_;
  RemoteCounters counters_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> unflushed_ ABSL_GUARDED_BY(mu_);
  std::vector<double> latencies_us_ ABSL_GUARDED_BY(mu_);  ///< a ring of the last 4096
  size_t next_latency_ ABSL_GUARDED_BY(mu_) = 0;
  std::set<std::string> warned_ ABSL_GUARDED_BY(mu_);
  absl::Time last_flush_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tessera::cache

#endif  // TESSERA_CACHE_REMOTE_CACHE_H_
