#include "cache/redis_client.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace tessera::cache {
namespace {

constexpr absl::Duration kFirstBackoff = absl::Milliseconds(100);
constexpr absl::Duration kMaxBackoff = absl::Seconds(5);

timeval Timeval(absl::Duration duration) {
  return absl::ToTimeval(std::max(duration, absl::Milliseconds(1)));
}

absl::StatusOr<std::string> PercentDecode(absl::string_view text, absl::string_view what) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    int value = 0;
    if (i + 2 >= text.size() || !absl::ascii_isxdigit(text[i + 1]) ||
        !absl::ascii_isxdigit(text[i + 2])) {
      return absl::InvalidArgumentError(absl::StrCat("a '%' without two hex digits in the ", what));
    }
    for (int k = 1; k <= 2; ++k) {
      const char c = absl::ascii_tolower(text[i + k]);
      value = value * 16 + (c <= '9' ? c - '0' : c - 'a' + 10);
    }
    out.push_back(static_cast<char>(value));
    i += 2;
  }
  return out;
}

/// Only decimal digits (SimpleAtoi alone also takes "+6379" and " 6379").
bool Digits(absl::string_view text) {
  return !text.empty() && text.size() <= 12 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

absl::StatusOr<absl::Duration> Milliseconds(absl::string_view name, absl::string_view value) {
  int64_t ms = 0;
  if (!Digits(value) || !absl::SimpleAtoi(value, &ms) || ms <= 0 || ms > 3600 * 1000) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " must be a number of milliseconds in [1, 3600000], found '", value, "'"));
  }
  return absl::Milliseconds(ms);
}

/// hiredis writes with write(2): a server that closed the connection would raise SIGPIPE, whose
/// default action kills the host process. Blocked on this thread for the call; one raised
/// meanwhile is consumed (unless one was pending already, which stays the caller's).
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
  }
  ~ScopedSigpipeBlock() {
    if (!was_pending_) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const timespec now = {0, 0};
        sigtimedwait(&pipe_, nullptr, &now);
      }
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t pipe_;
  sigset_t previous_;
  bool was_pending_ = false;
};

RedisReply Copy(const redisReply& reply) {
  RedisReply out;
  switch (reply.type) {
    case REDIS_REPLY_STRING:
      out.kind = RedisReply::Kind::kString;
      out.text.assign(reply.str, reply.len);
      break;
    case REDIS_REPLY_STATUS:
      out.kind = RedisReply::Kind::kStatus;
      out.text.assign(reply.str, reply.len);
      break;
    case REDIS_REPLY_INTEGER:
      out.kind = RedisReply::Kind::kInteger;
      out.integer = reply.integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.kind = RedisReply::Kind::kArray;
      for (size_t i = 0; i < reply.elements; ++i) out.elements.push_back(Copy(*reply.element[i]));
      break;
    default:
      out.kind = RedisReply::Kind::kNil;
      break;
  }
  return out;
}

/// An error reply as a status: OOM is ResourceExhausted, refused credentials Unauthenticated, a
/// key holding another type than the command needs (WRONGTYPE: any client may overwrite a key)
/// FailedPrecondition, anything else Internal.
absl::Status ErrorReply(absl::string_view text) {
  if (absl::StartsWith(text, "OOM")) return absl::ResourceExhaustedError(text);
  if (absl::StartsWith(text, "WRONGTYPE")) return absl::FailedPreconditionError(text);
  // NOPERM (an ACL that forbids one command) is that command's failure, not the credentials'.
  if (absl::StartsWith(text, "NOAUTH") || absl::StartsWith(text, "WRONGPASS") ||
      absl::StrContains(text, "invalid password") ||
      absl::StrContains(text, "without any password configured") ||
      absl::StrContains(text, "but no password is set") ||                // Redis < 6
      absl::StrContains(text, "wrong number of arguments for 'auth'") ||  // a user, Redis < 6
      absl::StrContains(text, "invalid username-password")) {
    return absl::UnauthenticatedError(text);
  }
  return absl::InternalError(text);
}

absl::StatusOr<RedisReply> Take(redisReply* reply) {
  if (reply->type == REDIS_REPLY_ERROR) {
    absl::Status status = ErrorReply(absl::string_view(reply->str, reply->len));
    freeReplyObject(reply);
    return status;
  }
  RedisReply copy = Copy(*reply);
  freeReplyObject(reply);
  return copy;
}

void ToArgv(const std::vector<absl::string_view>& argv, std::vector<const char*>& pointers,
            std::vector<size_t>& lengths) {
  pointers.clear();
  lengths.clear();
  for (absl::string_view arg : argv) {
    pointers.push_back(arg.data());
    lengths.push_back(arg.size());
  }
}

}  // namespace

std::string RedisEndpoint::Describe() const {
  std::string credentials;
  if (!user.empty() || !password.empty()) {
    credentials = absl::StrCat(user, password.empty() ? "" : ":***", "@");
  }
  const bool v6 = absl::StrContains(host, ':');
  return absl::StrCat("redis://", credentials, v6 ? "[" : "", host, v6 ? "]" : "", ":", port,
                      db != 0 ? absl::StrCat("/", db) : "");
}

absl::StatusOr<RedisEndpoint> ParseRedisUrl(absl::string_view url) {
  auto invalid = [&](absl::string_view why) {
    // The password never appears in a message.
    return absl::InvalidArgumentError(
        absl::StrCat("remote cache URL: ", why,
                     " (expected redis://[user:password@]host:port[/db][?timeout_ms=N&…])"));
  };
  absl::string_view rest = url;
  if (!absl::ConsumePrefix(&rest, "redis://")) return invalid("the scheme is not redis://");
  RedisEndpoint endpoint;
  // Credentials first, up to the last '@': a password may hold '/', '?' or ':', and no part of
  // it may reach a message.
  if (size_t at = rest.rfind('@'); at != absl::string_view::npos) {
    absl::string_view credentials = rest.substr(0, at);
    rest = rest.substr(at + 1);
    absl::string_view user = credentials, password;
    if (size_t colon = credentials.find(':'); colon != absl::string_view::npos) {
      user = credentials.substr(0, colon);
      password = credentials.substr(colon + 1);
    } else {
      // redis://secret@host: a password alone, as redis-cli -u reads it.
      password = credentials;
      user = {};
    }
    auto decoded_user = PercentDecode(user, "user name");
    if (!decoded_user.ok()) return invalid(decoded_user.status().message());
    auto decoded_password = PercentDecode(password, "password");
    if (!decoded_password.ok()) return invalid(decoded_password.status().message());
    endpoint.user = *std::move(decoded_user);
    endpoint.password = *std::move(decoded_password);
  }
  absl::string_view query;
  if (size_t q = rest.find('?'); q != absl::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  absl::string_view path;
  if (size_t slash = rest.find('/'); slash != absl::string_view::npos) {
    path = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
  }
  absl::string_view host = rest, port;
  if (absl::StartsWith(rest, "[")) {
    size_t close = rest.find(']');
    if (close == absl::string_view::npos) return invalid("an IPv6 host without ']'");
    host = rest.substr(1, close - 1);
    absl::string_view after = rest.substr(close + 1);
    if (!after.empty() && !absl::ConsumePrefix(&after, ":")) return invalid("junk after ']'");
    port = after;
  } else if (size_t colon = rest.rfind(':'); colon != absl::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty()) return invalid("no host");
  if (!absl::StartsWith(rest, "[") && absl::StrContains(host, ':')) {
    return invalid("an IPv6 host needs brackets: redis://[::1]:6379");
  }
  endpoint.host = std::string(host);
  if (!port.empty() && (!Digits(port) || !absl::SimpleAtoi(port, &endpoint.port) ||
                        endpoint.port < 1 || endpoint.port > 65535)) {
    return invalid(absl::StrCat("the port '", port, "' is not in [1, 65535]"));
  }
  if (!path.empty() &&
      (!Digits(path) || !absl::SimpleAtoi(path, &endpoint.db) || endpoint.db > 1 << 20)) {
    return invalid(absl::StrCat("the database '", path, "' is not a number in [0, 1048576]"));
  }
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(pair, '=');
    absl::StatusOr<absl::Duration> duration = Milliseconds(kv.first, kv.second);
    if (kv.first == "connect_timeout_ms" || kv.first == "timeout_ms") {
      if (!duration.ok()) return invalid(duration.status().message());
      (kv.first == "timeout_ms" ? endpoint.command_timeout : endpoint.connect_timeout) = *duration;
    } else {
      endpoint.options.emplace_back(std::string(kv.first), std::string(kv.second));
    }
  }
  return endpoint;
}

RedisClient::RedisClient(RedisEndpoint endpoint)
    : endpoint_(std::move(endpoint)), backoff_(kFirstBackoff) {}

RedisClient::~RedisClient() {
  absl::MutexLock lock(&mu_);
  Drop();
}

void RedisClient::Drop() {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

absl::Status RedisClient::Broken(absl::string_view during) {
  absl::Status status;
  // hiredis reports a timeout as an I/O error with errno's text (EAGAIN, ETIMEDOUT).
  const bool timed_out = context_ != nullptr && context_->err == REDIS_ERR_IO &&
                         (absl::StrContains(context_->errstr, "temporarily unavailable") ||
                          absl::StrContains(context_->errstr, "timed out"));
  const std::string what = context_ != nullptr && context_->errstr[0] != '\0'
                               ? std::string(context_->errstr)
                               : std::string("connection lost");
  if (timed_out) {
    status =
        absl::DeadlineExceededError(absl::StrCat(endpoint_.Describe(), ": ", during, " timed out"));
  } else {
    status = absl::UnavailableError(absl::StrCat(endpoint_.Describe(), ": ", during, ": ", what));
  }
  Drop();
  next_attempt_ = absl::Now() + backoff_;
  backoff_ = std::min(backoff_ * 2, kMaxBackoff);
  last_failure_ = status;
  return status;
}

absl::Status RedisClient::Connect() {
  const timeval connect_timeout = Timeval(endpoint_.connect_timeout);
  context_ = redisConnectWithTimeout(endpoint_.host.c_str(), endpoint_.port, connect_timeout);
  if (context_ == nullptr) {
    next_attempt_ = absl::Now() + backoff_;
    backoff_ = std::min(backoff_ * 2, kMaxBackoff);
    last_failure_ = absl::ResourceExhaustedError("cannot allocate a Redis context");
    return last_failure_;
  }
  if (context_->err != 0) return Broken("connect");
  redisSetTimeout(context_, Timeval(endpoint_.command_timeout));
  redisEnableKeepAlive(context_);
  ++connects_;
  auto run = [&](const std::vector<absl::string_view>& argv)
                 ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::Status {
    std::vector<const char*> pointers;
    std::vector<size_t> lengths;
    ToArgv(argv, pointers, lengths);
    auto* reply = static_cast<redisReply*>(
        redisCommandArgv(context_, static_cast<int>(argv.size()), pointers.data(), lengths.data()));
    if (reply == nullptr) return Broken(argv[0]);
    return Take(reply).status();
  };
  if (!endpoint_.password.empty()) {
    absl::Status auth = endpoint_.user.empty() ? run({"AUTH", endpoint_.password})
                                               : run({"AUTH", endpoint_.user, endpoint_.password});
    if (!auth.ok()) {
      if (absl::IsUnauthenticated(auth)) {  // the credentials: retrying cannot help
        auth_failed_ = true;
        last_failure_ = absl::UnauthenticatedError(
            absl::StrCat(endpoint_.Describe(), ": authentication failed (", auth.message(), ")"));
        Drop();
        return last_failure_;
      }
      // Anything else (`-ERR max number of clients reached`, `-LOADING`, a lost connection
      // that Broken() already dropped): passing; back off and try again later.
      if (context_ != nullptr) {
        Drop();
        next_attempt_ = absl::Now() + backoff_;
        backoff_ = std::min(backoff_ * 2, kMaxBackoff);
        last_failure_ = absl::Status(
            auth.code(), absl::StrCat(endpoint_.Describe(), ": AUTH: ", auth.message()));
      }
      return last_failure_;
    }
  }
  if (endpoint_.db != 0) {
    const std::string db = absl::StrCat(endpoint_.db);
    if (absl::Status select = run({"SELECT", db}); !select.ok()) {
      if (absl::IsUnauthenticated(select)) auth_failed_ = true;  // NOAUTH: we have no password
      Drop();
      next_attempt_ = absl::Now() + kMaxBackoff;
      last_failure_ = absl::Status(select.code(), absl::StrCat(endpoint_.Describe(), ": SELECT ",
                                                               db, ": ", select.message()));
      return last_failure_;
    }
  }
  owner_pid_ = getpid();
  return absl::OkStatus();
}

absl::Status RedisClient::Ready() {
  if (auth_failed_) return last_failure_;
  // A forked child shares the parent's socket: replies would interleave. It connects anew.
  if (context_ != nullptr && owner_pid_ != getpid()) Drop();
  if (context_ != nullptr) return absl::OkStatus();
  if (absl::Now() < next_attempt_) {
    // The same kind as the failure that started the backoff (one warning per kind above).
    return absl::Status(
        last_failure_.ok() ? absl::StatusCode::kUnavailable : last_failure_.code(),
        absl::StrCat(last_failure_.message(), "; backing off until the next reconnect attempt"));
  }
  return Connect();
}

absl::StatusOr<RedisReply> RedisClient::Command(const std::vector<absl::string_view>& argv) {
  absl::MutexLock lock(&mu_);
  ScopedSigpipeBlock no_sigpipe;
  if (absl::Status ready = Ready(); !ready.ok()) return ready;
  std::vector<const char*> pointers;
  std::vector<size_t> lengths;
  ToArgv(argv, pointers, lengths);
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(context_, static_cast<int>(argv.size()), pointers.data(), lengths.data()));
  if (reply == nullptr) return Broken(argv.empty() ? "command" : argv[0]);
  // A reply came: the server is alive (a connect alone does not say so: a paused server
  // accepts connections and never answers).
  backoff_ = kFirstBackoff;
  absl::StatusOr<RedisReply> result = Take(reply);
  if (absl::IsUnauthenticated(result.status())) {
    // The server wants a password we do not have (or it changed): permanent.
    auth_failed_ = true;
    last_failure_ = absl::UnauthenticatedError(absl::StrCat(
        endpoint_.Describe(), ": authentication failed (", result.status().message(), ")"));
    Drop();
    return last_failure_;
  }
  return result;
}

absl::StatusOr<std::vector<absl::StatusOr<RedisReply>>> RedisClient::Pipeline(
    const std::vector<std::vector<absl::string_view>>& commands) {
  absl::MutexLock lock(&mu_);
  ScopedSigpipeBlock no_sigpipe;
  if (absl::Status ready = Ready(); !ready.ok()) return ready;
  std::vector<const char*> pointers;
  std::vector<size_t> lengths;
  for (const auto& argv : commands) {
    ToArgv(argv, pointers, lengths);
    if (redisAppendCommandArgv(context_, static_cast<int>(argv.size()), pointers.data(),
                               lengths.data()) != REDIS_OK) {
      return Broken("pipeline");
    }
  }
  std::vector<absl::StatusOr<RedisReply>> replies;
  for (size_t i = 0; i < commands.size(); ++i) {
    void* reply = nullptr;
    if (redisGetReply(context_, &reply) != REDIS_OK || reply == nullptr) {
      return Broken("pipeline");
    }
    replies.push_back(Take(static_cast<redisReply*>(reply)));
  }
  backoff_ = kFirstBackoff;
  return replies;
}

bool RedisClient::auth_failed() const {
  absl::MutexLock lock(&mu_);
  return auth_failed_;
}

uint64_t RedisClient::connects() const { return connects_.load(); }

}  // namespace tessera::cache
