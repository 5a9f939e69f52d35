// How to reach and use the remote tier (cache/remote_cache.h): the server, this toolchain's
// namespace, the TTL and the lease times, from a `redis://` URL with defaults.
#ifndef TESSERA_CACHE_REMOTE_CACHE_OPTIONS_H_
#define TESSERA_CACHE_REMOTE_CACHE_OPTIONS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/log.h"
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

}  // namespace tessera::cache

#endif  // TESSERA_CACHE_REMOTE_CACHE_OPTIONS_H_
