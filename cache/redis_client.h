// A Redis connection for the remote tier, on hiredis: connect and command timeouts, AUTH
// (password or ACL user), SELECT, and after any failure a reconnect with exponential backoff
// (100 ms doubling to 5 s) — while backing off, commands fail at once instead of waiting on a
// dead server. A failed AUTH switches the client off for good (retrying cannot help).
#ifndef TESSERA_CACHE_REDIS_CLIENT_H_
#define TESSERA_CACHE_REDIS_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

struct redisContext;

namespace tessera::cache {

/// Where the server is: `redis://[user:password@]host:port[/db]`.
struct RedisEndpoint {
  std::string host;
  int port = 6379;
  std::string user;      ///< empty: the default user (AUTH password)
  std::string password;  ///< empty: no AUTH
  int db = 0;
  absl::Duration connect_timeout = absl::Milliseconds(250);
  absl::Duration command_timeout = absl::Milliseconds(1000);
  /// The URL's other query parameters, in order, for the layer above (ttl_s, lease_ms, …).
  std::vector<std::pair<std::string, std::string>> options;

  /// The URL without the password ("redis://user:***@host:port/db"), for messages.
  std::string Describe() const;
};

/// Parses the URL's scheme, credentials (percent-decoded), host, port and database;
/// InvalidArgument naming what is wrong otherwise.
absl::StatusOr<RedisEndpoint> ParseRedisUrl(absl::string_view url);

/// One reply, copied out of hiredis.
struct RedisReply {
  enum class Kind { kNil, kString, kStatus, kInteger, kArray };
  Kind kind = Kind::kNil;
  std::string text;  ///< kString, kStatus
  int64_t integer = 0;
  std::vector<RedisReply> elements;
};

/// Thread-safe (one connection, one command at a time).
///
/// Errors: Unavailable (cannot connect, the connection broke, or backing off after that),
/// DeadlineExceeded (a connect, or a read or write of a command, timed out; the connection is
/// dropped), Unauthenticated (AUTH refused, or the server wants a password: permanent),
/// ResourceExhausted (the server is out of memory: "-OOM …"), FailedPrecondition (the key holds
/// another type than the command needs: "-WRONGTYPE …"), Internal (any other error reply).
class RedisClient {
 public:
  explicit RedisClient(RedisEndpoint endpoint);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  absl::StatusOr<RedisReply> Command(const std::vector<absl::string_view>& argv);
  /// The commands in one round trip; the replies in order (an error reply is that command's
  /// status, the others still run).
  absl::StatusOr<std::vector<absl::StatusOr<RedisReply>>> Pipeline(
      const std::vector<std::vector<absl::string_view>>& commands);

  const RedisEndpoint& endpoint() const { return endpoint_; }
  /// AUTH was refused: every command fails with Unauthenticated.
  bool auth_failed() const;
  /// Connections made (the first one included): reconnects are this minus one.
  uint64_t connects() const;

 private:
  absl::Status Connect() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Ready() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// The context's I/O error as a status; drops the connection and schedules the reconnect.
  absl::Status Broken(absl::string_view during) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Drop() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const RedisEndpoint endpoint_;
  mutable absl::Mutex mu_;
  redisContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
  absl::Time next_attempt_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Duration backoff_ ABSL_GUARDED_BY(mu_);
  absl::Status last_failure_ ABSL_GUARDED_BY(mu_);
  bool auth_failed_ ABSL_GUARDED_BY(mu_) = false;
  int owner_pid_ ABSL_GUARDED_BY(mu_) = 0;  ///< the process that made the connection
  std::atomic<uint64_t> connects_{0};
};

}  // namespace tessera::cache

#endif  // TESSERA_CACHE_REDIS_CLIENT_H_
