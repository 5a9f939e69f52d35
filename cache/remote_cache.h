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

namespace tessera::cache {

struct RemoteCacheOptions {
  RedisEndpoint endpoint;
  /// Names this toolchain's keys: "tessera-jit:<tag>:…" (`clear` removes exactly these).
  std::string tag;
  /// Every value expires after this long unless it is stored again (URL: ttl_s).
  absl::Duration ttl = absl::Hours(7 * 24);
  /// A compile's lease on its key, renewed every third of it while the compile runs
  /// (URL: lease_ms; at least 3 × the command timeout). A holder that dies frees its key after
  /// at most this long.
  absl::Duration lease = absl::Seconds(10);
  /// How long a process waits for another one's compile of the same key before compiling it
  /// too (URL: lease_wait_ms).
  absl::Duration lease_wait = absl::Seconds(120);
  /// The URL set lease_wait (else the compile service uses its lock timeout).
  bool lease_wait_set = false;
  Logger logger;

  /// $TESSERA_JIT_REMOTE_CACHE, else "" (no remote tier).
  static std::string DefaultUrl();
  /// Options from `redis://[user:password@]host:port[/db][?connect_timeout_ms=&timeout_ms=
  /// &ttl_s=&lease_ms=&lease_wait_ms=]`; InvalidArgument for anything else.
  static absl::StatusOr<RemoteCacheOptions> FromUrl(absl::string_view url);
};

/// What this process's tier did since it was made. Miss reasons: "not cached", "unavailable",
/// "stale", "artifact format", "damaged"; error kinds: "unavailable", "timeout",
/// "authentication", "out of memory", "server error".
struct RemoteCounters {
  uint64_t hits = 0;
  uint64_t misses = 0;
  std::map<std::string, uint64_t> misses_by_reason;
  uint64_t stores = 0;
  uint64_t store_failures = 0;
  uint64_t lease_waits = 0;      ///< compiles that waited for another process's lease
  uint64_t lease_takeovers = 0;  ///< … and then took the key over (its holder died or failed)
  uint64_t lease_timeouts = 0;   ///< … and stopped waiting (compiled locally as well)
  uint64_t leases_lost = 0;      ///< a renewal found the lease gone (expired under a slow compile)
  uint64_t errors = 0;
  std::map<std::string, uint64_t> errors_by_kind;
  uint64_t reconnects = 0;
  /// GET latency of hits, in microseconds, over the last 4096.
  uint64_t latency_samples = 0;
  double latency_p50_us = 0;
  double latency_p99_us = 0;
};

/// What the whole fleet did (every process's counters, kept on the server) and holds.
struct RemoteFleetStats {
  std::map<std::string, int64_t> counters;  ///< "hits", "misses.damaged", "latency_us_sum", …
  uint64_t artifacts = 0;
  uint64_t artifact_bytes = 0;
  uint64_t decisions = 0;
  uint64_t leases = 0;  ///< compiles in progress
  double latency_p50_us = 0;  ///< from the fleet's histogram (√2-wide buckets)
  double latency_p99_us = 0;
  std::string used_memory, max_memory, eviction_policy;  ///< the server's INFO / CONFIG
  /// Keys of the namespace holding another kind of value than the tier writes there (any client
  /// can overwrite a key), each with what is wrong; the rest of the statistics is still read.
  std::vector<std::pair<std::string, std::string>> damaged_keys;
};

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
