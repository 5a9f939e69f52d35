// The remote tier's statistics: what this process's tier did (its counters and GET latencies)
// and what the whole fleet did and holds (the counters every process flushes to the server).
#ifndef TESSERA_CACHE_REMOTE_CACHE_STATS_H_
#define TESSERA_CACHE_REMOTE_CACHE_STATS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tessera::cache {

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
  uint64_t leases = 0;        ///< compiles in progress
  double latency_p50_us = 0;  ///< from the fleet's histogram (√2-wide buckets)
  double latency_p99_us = 0;
  std::string used_memory, max_memory, eviction_policy;  ///< the server's INFO / CONFIG
  /// Keys of the namespace holding another kind of value than the tier writes there (any client
  /// can overwrite a key), each with what is wrong; the rest of the statistics is still read.
  std::vector<std::pair<std::string, std::string>> damaged_keys;
};

}  // namespace tessera::cache

#endif  // TESSERA_CACHE_REMOTE_CACHE_STATS_H_
