// Server keys: tessera-jit:<tag>:a:<digest> (artifacts), :d:<key> (decision records),
// :lease:<digest> (a compile in progress: the owner's token), :stats (the fleet's counters).
#include "cache/remote_cache.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <system_error>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "cache/manifest.h"

namespace tessera::cache {
namespace {

constexpr absl::string_view kMagic = "tessera-jit remote 1\n";

/// Deletes the key only if it still holds our token (a lease that expired and was taken over
/// is someone else's now).
constexpr char kReleaseScript[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
    "else return 0 end";
/// Extends the key only if it still holds our token.
constexpr char kRenewScript[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";

/// The error kind a status counts as.
std::string ErrorKind(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kDeadlineExceeded:
      return "timeout";
    case absl::StatusCode::kUnauthenticated:
      return "authentication";
    case absl::StatusCode::kResourceExhausted:
      return "out of memory";
    case absl::StatusCode::kUnavailable:
      return "unavailable";
    default:
      return "server error";
  }
}

std::string Token() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::random_device random;
  return absl::StrCat(host, ":", getpid(), ":", absl::Hex(random(), absl::kZeroPad8),
                      absl::Hex(random(), absl::kZeroPad8));
}

}  // namespace

int64_t RemoteCache::Ms(absl::Duration duration) {
  return std::max<int64_t>(1, absl::ToInt64Milliseconds(duration));
}

RemoteCache::RemoteCache(RemoteCacheOptions options)
    : options_(std::move(options)),
      client_(options_.endpoint),
      prefix_(absl::StrCat("tessera-jit:", options_.tag, ":")),
      last_flush_(absl::Now()) {}

RemoteCache::~RemoteCache() { FlushCounters(); }

bool RemoteCache::enabled() const { return !client_.auth_failed(); }

std::string RemoteCache::ValueName(Kind kind, const std::string& digest) const {
  return absl::StrCat(prefix_, kind == Kind::kArtifact ? "a:" : "d:", digest);
}

std::string RemoteCache::LeaseName(const std::string& digest) const {
  return absl::StrCat(prefix_, "lease:", digest);
}

void RemoteCache::Failed(const absl::Status& status, absl::string_view doing) {
  const std::string kind = ErrorKind(status);
  bool warn = false;
  {
    absl::MutexLock lock(&mu_);
    ++counters_.errors;
    ++counters_.errors_by_kind[kind];
    Bump("errors." + kind);
    // A server that is down, then slow, then backing off is one fault to a reader of the log.
    const bool transport = kind == "unavailable" || kind == "timeout";
    warn = warned_.insert(transport ? "transport" : kind).second;
  }
  if (!warn) return;
  if (kind == "authentication") {
    options_.logger.Warning(
        absl::StrCat("remote compile cache is off: ", status.message(), "; caching locally only"));
  } else {
    options_.logger.Warning(absl::StrCat("remote compile cache ", Describe(), ": ", doing,
                                         " failed (", status.message(),
                                         "); compiling and caching locally (warned once)"));
  }
}

std::optional<RemoteCache::Entry> RemoteCache::Decode(const std::string& value, const CacheKey& key,
                                                      int format, Miss& miss) const {
  absl::string_view rest = value;
  if (!absl::ConsumePrefix(&rest, kMagic)) {
    miss = {MissReason::kDamaged, "remote value is not a tessera-jit entry"};
    return std::nullopt;
  }
  uint64_t manifest_bytes = 0;
  const size_t newline = rest.find('\n');
  absl::string_view header = rest.substr(0, newline);
  if (newline == absl::string_view::npos || !absl::ConsumePrefix(&header, "manifest_bytes=") ||
      !absl::SimpleAtoi(header, &manifest_bytes) || manifest_bytes > rest.size() - newline - 1) {
    miss = {MissReason::kDamaged, "remote value truncated (manifest)"};
    return std::nullopt;
  }
  rest.remove_prefix(newline + 1);
  Manifest manifest;
  if (!ParseManifest(rest.substr(0, manifest_bytes), manifest)) {
    miss = {MissReason::kDamaged, "remote manifest unreadable"};
    return std::nullopt;
  }
  rest.remove_prefix(manifest_bytes);
  if (manifest.digest != key.digest) {
    miss = {MissReason::kDamaged, "remote value names another key"};
    return std::nullopt;
  }
  if (!key.components.empty() && manifest.components != key.components) {
    std::string change = DescribeChange(manifest.components, key.components);
    miss = {MissReason::kStale, absl::StrCat("remote value from another toolchain",
                                             change.empty() ? "" : ": ", change)};
    return std::nullopt;
  }
  if (manifest.format != format) {
    miss = {MissReason::kFormat, absl::StrCat(manifest.format, " → ", format, " (remote)")};
    return std::nullopt;
  }
  if (rest.size() != manifest.payload_bytes) {
    miss = {MissReason::kDamaged, absl::StrCat("truncated remote payload (", rest.size(), " of ",
                                               manifest.payload_bytes, " bytes)")};
    return std::nullopt;
  }
  if (PayloadChecksum(rest) != manifest.payload_xxh3) {
    miss = {MissReason::kDamaged, "remote checksum mismatch"};
    return std::nullopt;
  }
  return Entry{std::string(rest), std::move(manifest.source_name)};
}

std::optional<RemoteCache::Entry> RemoteCache::Load(Kind kind, const CacheKey& key, int format,
                                                    Miss& miss) {
  MaybeFlush();
  if (!IsDigest(key.digest)) {
    miss = {MissReason::kNotCached, ""};
    return std::nullopt;
  }
  if (!enabled()) {
    miss = {MissReason::kTierOff, "remote cache off (authentication failed)"};
    CountMiss(miss);
    return std::nullopt;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string name = ValueName(kind, key.digest);
  absl::StatusOr<RedisReply> reply = client_.Command({"GET", name});
  if (absl::IsFailedPrecondition(reply.status())) {  // not a string: a damaged value
    miss = {MissReason::kDamaged,
            absl::StrCat("the remote value is not a string (", reply.status().message(), ")")};
    CountMiss(miss);
    return std::nullopt;
  }
  if (!reply.ok()) {
    Failed(reply.status(), "GET");
    miss = {MissReason::kTierOff,
            absl::StrCat("remote cache unavailable: ", reply.status().message())};
    CountMiss(miss);
    return std::nullopt;
  }
  if (reply->kind != RedisReply::Kind::kString) {
    miss = {MissReason::kNotCached, ""};
    CountMiss(miss);
    return std::nullopt;
  }
  std::optional<Entry> entry = Decode(reply->text, key, format, miss);
  if (!entry.has_value()) {
    CountMiss(miss);
    return std::nullopt;
  }
  RecordLatency(absl::FromChrono(std::chrono::steady_clock::now() - start));
  absl::MutexLock lock(&mu_);
  ++counters_.hits;
  Bump("hits");
  return entry;
}

bool RemoteCache::Store(Kind kind, const CacheKey& key, int format, const std::string& payload,
                        const std::string& source_name) {
  if (!IsDigest(key.digest) || !enabled()) return false;
  const std::string manifest = WriteManifest(ManifestFor(key, format, payload, source_name));
  std::string value = absl::StrCat(kMagic, "manifest_bytes=", manifest.size(), "\n", manifest);
  value.append(payload);
  const std::string ttl = absl::StrCat(Ms(options_.ttl));
  // One SET: the server publishes the value whole or not at all.
  absl::StatusOr<RedisReply> reply =
      client_.Command({"SET", ValueName(kind, key.digest), value, "PX", ttl});
  if (!reply.ok()) {
    Failed(reply.status(), "SET");
    absl::MutexLock lock(&mu_);
    ++counters_.store_failures;
    Bump("store_failures");
    return false;
  }
  absl::MutexLock lock(&mu_);
  ++counters_.stores;
  Bump("stores");
  return true;
}

std::optional<bool> RemoteCache::TryLease(const std::string& name, const std::string& token) {
  absl::StatusOr<RedisReply> reply =
      client_.Command({"SET", name, token, "NX", "PX", absl::StrCat(Ms(options_.lease))});
  if (!reply.ok()) {
    Failed(reply.status(), "SET NX (lease)");
    return std::nullopt;
  }
  return reply->kind == RedisReply::Kind::kStatus;  // "OK"; nil when another process holds it
}

RemoteCache::Claim RemoteCache::LoadOrLease(const CacheKey& key, int format) {
  Claim claim;
  claim.entry = Load(Kind::kArtifact, key, format, claim.miss);
  if (claim.entry.has_value() || claim.miss.reason == MissReason::kTierOff || !enabled()) {
    return claim;
  }
  const Miss first_miss = claim.miss;
  const std::string name = LeaseName(key.digest);
  const std::string token = Token();
  const absl::Time deadline = absl::Now() + options_.lease_wait;
  absl::Duration pause = absl::Milliseconds(5);
  bool waited = false;
  while (true) {
    std::optional<bool> ours = TryLease(name, token);
    if (!ours.has_value()) return claim;  // unreachable: compile locally
    if (*ours) {
      auto lease = std::make_unique<Lease>(this, name, token);
      // Another process may have published and released between our last look and the lease
      // (also on the first try: between our GET and our SET NX).
      absl::StatusOr<RedisReply> exists =
          client_.Command({"EXISTS", ValueName(Kind::kArtifact, key.digest)});
      if (!exists.ok()) Failed(exists.status(), "EXISTS");
      if (exists.ok() && exists->integer == 1) {
        Miss again;
        if (auto entry = Load(Kind::kArtifact, key, format, again)) {
          claim.entry = std::move(entry);
          return claim;  // the lease is released here
        }
      }
      if (waited) {
        absl::MutexLock lock(&mu_);
        ++counters_.lease_takeovers;
        Bump("lease_takeovers");
      }
      claim.lease = std::move(lease);
      claim.miss = first_miss;
      return claim;
    }
    if (!waited) {
      waited = true;
      absl::MutexLock lock(&mu_);
      ++counters_.lease_waits;
      Bump("lease_waits");
    }
    if (absl::Now() >= deadline) {
      bool warn = false;
      {
        absl::MutexLock lock(&mu_);
        ++counters_.lease_timeouts;
        Bump("lease_timeouts");
        warn = warned_.insert("lease timeout").second;
      }
      if (warn) {
        options_.logger.Warning(
            absl::StrCat("waited ", absl::FormatDuration(options_.lease_wait),
                         " for another process's compile of cache key ", key.digest.substr(0, 12),
                         " (remote lease); compiling it here too (warned once)"));
      }
      claim.miss = first_miss;
      return claim;
    }
    absl::SleepFor(std::min(pause, std::max(deadline - absl::Now(), absl::ZeroDuration())));
    pause = std::min(pause * 3 / 2, absl::Milliseconds(100));
    absl::StatusOr<RedisReply> exists =
        client_.Command({"EXISTS", ValueName(Kind::kArtifact, key.digest)});
    if (exists.ok() && exists->integer == 1) {
      Miss miss;
      if (auto entry = Load(Kind::kArtifact, key, format, miss)) {
        claim.entry = std::move(entry);
        return claim;
      }
      // A damaged value: the holder is gone or will overwrite it; keep waiting for the lease.
    } else if (!exists.ok()) {
      Failed(exists.status(), "EXISTS");
      return claim;
    }
  }
}

RemoteCache::Lease::Lease(RemoteCache* owner, std::string name, std::string token)
    : owner_(owner), name_(std::move(name)), token_(std::move(token)) {
  try {
    renewer_ = std::thread([this] { Renew(); });
  } catch (const std::system_error&) {
    // No thread to spare: the lease still holds for lease_ms, after which another process
    // may compile the key too (never wrongly). Not an exception out of a compile.
  }
}

void RemoteCache::Lease::Renew() {
  const auto every =
      std::chrono::milliseconds(std::max<int64_t>(1, Ms(owner_->options_.lease) / 3));
  const std::string ms = absl::StrCat(Ms(owner_->options_.lease));
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_.wait_for(lock, every, [this] { return stopping_; })) {
    lock.unlock();
    absl::StatusOr<RedisReply> reply =
        owner_->client_.Command({"EVAL", kRenewScript, "1", name_, token_, ms});
    if (!reply.ok()) owner_->Failed(reply.status(), "lease renewal");
    lock.lock();
    if (reply.ok() && reply->kind == RedisReply::Kind::kInteger && reply->integer == 0) {
      absl::MutexLock counters(&owner_->mu_);
      ++owner_->counters_.leases_lost;
      owner_->Bump("leases_lost");
      return;  // expired and maybe taken over: not ours to extend
    }
  }
}

RemoteCache::Lease::~Lease() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_.notify_all();
  if (renewer_.joinable()) renewer_.join();
  owner_->client_.Command({"EVAL", kReleaseScript, "1", name_, token_}).IgnoreError();
}

absl::Status RemoteCache::ForEachKeyBatch(
    const std::function<absl::Status(const std::vector<RedisReply>&)>& visit) {
  std::string cursor = "0";
  const std::string pattern = absl::StrCat(prefix_, "*");
  do {
    absl::StatusOr<RedisReply> reply =
        client_.Command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
    if (!reply.ok()) return reply.status();
    if (reply->kind != RedisReply::Kind::kArray || reply->elements.size() != 2) {
      return absl::InternalError("SCAN: unexpected reply");
    }
    cursor = reply->elements[0].text;
    if (absl::Status status = visit(reply->elements[1].elements); !status.ok()) return status;
  } while (cursor != "0");
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> RemoteCache::Clear() {
  uint64_t removed = 0;
  absl::Status status = ForEachKeyBatch([&](const std::vector<RedisReply>& names) {
    if (names.empty()) return absl::OkStatus();
    std::vector<absl::string_view> argv = {"UNLINK"};
    for (const RedisReply& name : names) argv.push_back(name.text);
    absl::StatusOr<RedisReply> unlinked = client_.Command(argv);
    if (!unlinked.ok()) return unlinked.status();
    removed += static_cast<uint64_t>(unlinked->integer);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  absl::MutexLock lock(&mu_);
  unflushed_.clear();
  return removed;
}

}  // namespace tessera::cache
