// The remote tier against a real redis-server: values checked like disk entries, every fault a
// miss (never an error), leases that make one process compile, and a namespace per toolchain.
#include "cache/remote_cache.h"

#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cache/cache_key.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/redis/redis_server.h"

namespace tessera::cache {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Kind = RemoteCache::Kind;

constexpr int kFormat = 7;

CacheKey Key(const std::string& what, const std::string& llvm = "22.1.8") {
  return MakeCacheKey({{"ir", what}}, {{"llvm", llvm}});
}

RemoteCacheOptions Options(const std::string& url, const std::string& tag = "test") {
  auto options = RemoteCacheOptions::FromUrl(url);
  EXPECT_TRUE(options.ok()) << options.status();
  options->tag = tag;
  return *options;
}

std::string Payload(size_t bytes, char seed = 'p') {
  std::string payload(bytes, '\0');
  for (size_t i = 0; i < bytes; ++i) payload[i] = static_cast<char>(seed + i * 131);
  return payload;
}

uint64_t Reason(const RemoteCounters& counters, const std::string& reason) {
  auto it = counters.misses_by_reason.find(reason);
  return it == counters.misses_by_reason.end() ? 0 : it->second;
}

uint64_t ErrorsOf(const RemoteCounters& counters, const std::string& kind) {
  auto it = counters.errors_by_kind.find(kind);
  return it == counters.errors_by_kind.end() ? 0 : it->second;
}

TEST(RedisUrlTest, ParsesEveryPartAndNamesWhatIsWrong) {
  auto full = ParseRedisUrl("redis://alice:p%40ss@cache.internal:6380/3?timeout_ms=50");
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(full->host, "cache.internal");
  EXPECT_EQ(full->port, 6380);
  EXPECT_EQ(full->user, "alice");
  EXPECT_EQ(full->password, "p@ss");
  EXPECT_EQ(full->db, 3);
  EXPECT_EQ(full->command_timeout, absl::Milliseconds(50));
  EXPECT_EQ(full->Describe(), "redis://alice:***@cache.internal:6380/3");
  auto bare = ParseRedisUrl("redis://127.0.0.1");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->port, 6379);
  EXPECT_EQ(bare->password, "");
  auto password_only = ParseRedisUrl("redis://:secret@[::1]:7000");
  ASSERT_TRUE(password_only.ok()) << password_only.status();
  EXPECT_EQ(password_only->host, "::1");
  EXPECT_EQ(password_only->user, "");
  EXPECT_EQ(password_only->password, "secret");
  for (const char* bad :
       {"http://host:1", "redis://", "redis://h:0", "redis://h:70000", "redis://h:12x",
        "redis://h:1/db", "redis://u:pw%4@h:1", "redis://h:1?timeout_ms=0", "redis://[::1:1"}) {
    auto parsed = ParseRedisUrl(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("remote cache URL")) << bad;
  }
  auto secret = ParseRedisUrl("redis://u:hunter2@h:99999");
  EXPECT_THAT(std::string(secret.status().message()), Not(HasSubstr("hunter2")));
  // The password never reaches a message, whatever it holds.
  for (const char* leaky :
       {"redis://u:se/cret@h:99999", "redis://u:12/cret@h:x", "redis://u:a?b@h:1?timeout_ms=x"}) {
    auto parsed = ParseRedisUrl(leaky);
    EXPECT_FALSE(parsed.ok()) << leaky;
    EXPECT_THAT(std::string(parsed.status().message()), Not(HasSubstr("cret"))) << leaky;
  }
  auto slash = ParseRedisUrl("redis://u:se/cr?et@h:7/2");
  ASSERT_TRUE(slash.ok()) << slash.status();
  EXPECT_EQ(slash->password, "se/cr?et");
  EXPECT_EQ(slash->db, 2);
  // IPv6 needs brackets; numbers are digits only.
  for (const char* bad : {"redis://::1", "redis://fe80::1:6379", "redis://h:+6379",
                          "redis://h: 6379", "redis://h:1/-1"}) {
    EXPECT_FALSE(ParseRedisUrl(bad).ok()) << bad;
  }
  EXPECT_FALSE(RemoteCacheOptions::FromUrl("redis://h:1?lease_ms=5").ok());
  EXPECT_FALSE(RemoteCacheOptions::FromUrl("redis://h:1?colour=blue").ok());
  // A lease must outlast three command timeouts: too short is an error, unset grows.
  auto short_lease = RemoteCacheOptions::FromUrl("redis://h:1?lease_ms=500");
  EXPECT_FALSE(short_lease.ok());
  EXPECT_THAT(std::string(short_lease.status().message()), HasSubstr("at least 3 x timeout_ms"));
  auto slow = RemoteCacheOptions::FromUrl("redis://h:1?timeout_ms=5000");
  ASSERT_TRUE(slow.ok());
  EXPECT_EQ(slow->lease, absl::Seconds(15));
  EXPECT_FALSE(slow->lease_wait_set);
  auto tuned = RemoteCacheOptions::FromUrl(
      "redis://h:1?ttl_s=60&timeout_ms=100&lease_ms=500&lease_wait_ms=9");
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  EXPECT_EQ(tuned->ttl, absl::Seconds(60));
  EXPECT_EQ(tuned->lease, absl::Milliseconds(500));
  EXPECT_EQ(tuned->lease_wait, absl::Milliseconds(9));
  EXPECT_TRUE(tuned->lease_wait_set);
}

TEST(RemoteCacheTest, StoresAndLoadsTheDiskTiersBytesWithATtl) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  RemoteCache remote(Options(server.Url("?ttl_s=3600")));
  const CacheKey key = Key("saxpy");
  Miss miss;
  EXPECT_FALSE(remote.Load(Kind::kArtifact, key, kFormat, miss).has_value());
  EXPECT_EQ(miss.reason, MissReason::kNotCached);
  const std::string payload = Payload(20000);
  ASSERT_TRUE(remote.Store(Kind::kArtifact, key, kFormat, payload, "saxpy.mlir"));
  auto entry = remote.Load(Kind::kArtifact, key, kFormat, miss);
  ASSERT_TRUE(entry.has_value()) << miss.ToString();
  EXPECT_EQ(entry->payload, payload);
  EXPECT_EQ(entry->source_name, "saxpy.mlir");
  // A decision record under the same digest is another value.
  EXPECT_FALSE(remote.Load(Kind::kDecision, key, kFormat, miss).has_value());
  auto ttl = server.Admin().Command({"PTTL", remote.ValueName(Kind::kArtifact, key.digest)});
  ASSERT_TRUE(ttl.ok());
  EXPECT_GT(ttl->integer, 3590 * 1000);
  EXPECT_LE(ttl->integer, 3600 * 1000);
  const RemoteCounters counters = remote.counters();
  EXPECT_EQ(counters.hits, 1u);
  EXPECT_EQ(counters.misses, 2u);
  EXPECT_EQ(counters.stores, 1u);
  EXPECT_EQ(counters.latency_samples, 1u);
  EXPECT_GT(counters.latency_p50_us, 0);
  // The fleet's counters live on the server.
  auto fleet = remote.FleetStats();
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  EXPECT_EQ(fleet->counters["hits"], 1);
  EXPECT_EQ(fleet->counters["misses.not cached"], 2);
  EXPECT_EQ(fleet->artifacts, 1u);
  EXPECT_GT(fleet->artifact_bytes, payload.size());
}

TEST(RemoteCacheTest, DamagedForeignAndOtherToolchainValuesAreMissesThenOverwritten) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  RemoteCache remote(Options(server.Url()));
  const CacheKey key = Key("softmax");
  const std::string payload = Payload(5000);
  const std::string name = remote.ValueName(Kind::kArtifact, key.digest);
  auto expect_miss = [&](MissReason reason, const std::string& detail) {
    Miss miss;
    EXPECT_FALSE(remote.Load(Kind::kArtifact, key, kFormat, miss).has_value());
    EXPECT_EQ(miss.reason, reason) << miss.ToString();
    EXPECT_THAT(miss.ToString(), HasSubstr(detail));
  };
  auto restore = [&] { ASSERT_TRUE(remote.Store(Kind::kArtifact, key, kFormat, payload, "")); };

  restore();
  ASSERT_EQ(server.Cli(absl::StrCat("SETRANGE ", name, " 4900 XYZ")), 0);  // a bit flip
  expect_miss(MissReason::kDamaged, "remote checksum mismatch");
  restore();
  auto value = server.Admin().Command({"GET", name});
  ASSERT_TRUE(value.ok());
  ASSERT_TRUE(
      server.Admin().Command({"SET", name, value->text.substr(0, value->text.size() - 100)}).ok());
  expect_miss(MissReason::kDamaged, "truncated remote payload (4900 of 5000 bytes)");
  ASSERT_EQ(server.Cli(absl::StrCat("SET ", name, " not-an-entry")), 0);
  expect_miss(MissReason::kDamaged, "not a tessera-jit entry");
  ASSERT_EQ(server.Cli(absl::StrCat("SET ", name, " 'tessera-jit remote 1\nmanifest_bytes=99'")),
            0);
  expect_miss(MissReason::kDamaged, "truncated (manifest)");
  // The same digest with other components: another toolchain's value (planted or a collision
  // of namespaces) is never used.
  CacheKey other = key;
  other.components = Key("softmax", "22.1.9").components;
  ASSERT_TRUE(remote.Store(Kind::kArtifact, other, kFormat, payload, ""));
  expect_miss(MissReason::kStale, "another toolchain: llvm 22.1.9 → 22.1.8");
  ASSERT_TRUE(remote.Store(Kind::kArtifact, key, kFormat - 1, payload, ""));
  expect_miss(MissReason::kFormat, "artifact format 6 → 7");
  // Another key's value stored under this name.
  const CacheKey stranger = Key("matmul");
  ASSERT_TRUE(remote.Store(Kind::kArtifact, stranger, kFormat, payload, ""));
  ASSERT_TRUE(server.Admin()
                  .Command({"RENAME", remote.ValueName(Kind::kArtifact, stranger.digest), name})
                  .ok());
  expect_miss(MissReason::kDamaged, "names another key");
  // A store overwrites whatever was there.
  restore();
  Miss miss;
  auto entry = remote.Load(Kind::kArtifact, key, kFormat, miss);
  ASSERT_TRUE(entry.has_value()) << miss.ToString();
  EXPECT_EQ(entry->payload, payload);
  const RemoteCounters counters = remote.counters();
  EXPECT_EQ(Reason(counters, "damaged"), 5u);
  EXPECT_EQ(Reason(counters, "stale"), 1u);
  EXPECT_EQ(Reason(counters, "artifact format"), 1u);
  EXPECT_EQ(counters.errors, 0u);  // none of this is an error
}

TEST(RemoteCacheTest, KeysOverwrittenWithAnotherTypeAreDamagedNotErrors) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  RemoteCache remote(Options(server.Url()));
  const CacheKey kept = Key("kept");
  const CacheKey hashed = Key("hashed");
  const std::string payload = Payload(3000);
  ASSERT_TRUE(remote.Store(Kind::kArtifact, kept, kFormat, payload, ""));
  ASSERT_TRUE(remote.Store(Kind::kArtifact, hashed, kFormat, payload, ""));
  const std::string hashed_name = remote.ValueName(Kind::kArtifact, hashed.digest);
  const std::string prefix =
      hashed_name.substr(0, hashed_name.size() - hashed.digest.size() - std::string("a:").size());
  // Any client can do this: the fleet's counters replaced by a string, an artifact by a hash.
  ASSERT_TRUE(server.Admin().Command({"SET", prefix + "stats", "not a hash"}).ok());
  ASSERT_TRUE(server.Admin().Command({"DEL", hashed_name}).ok());
  ASSERT_TRUE(server.Admin().Command({"HSET", hashed_name, "field", "value"}).ok());

  auto fleet = remote.FleetStats();
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  EXPECT_EQ(fleet->artifacts, 2u);
  EXPECT_GT(fleet->artifact_bytes, payload.size());  // the intact artifact is still measured
  EXPECT_THAT(fleet->damaged_keys, ::testing::UnorderedElementsAre(
                                       ::testing::Pair(prefix + "stats", HasSubstr("WRONGTYPE")),
                                       ::testing::Pair(hashed_name, HasSubstr("WRONGTYPE"))));
  EXPECT_TRUE(fleet->counters.empty());

  // Loading the hash is a damaged miss (not an error that would warn), and a store repairs it.
  Miss miss;
  EXPECT_FALSE(remote.Load(Kind::kArtifact, hashed, kFormat, miss).has_value());
  EXPECT_EQ(miss.reason, MissReason::kDamaged);
  EXPECT_THAT(miss.ToString(), HasSubstr("the remote value is not a string"));
  EXPECT_EQ(remote.counters().errors, 0u);
  ASSERT_TRUE(remote.Store(Kind::kArtifact, hashed, kFormat, payload, ""));
  auto entry = remote.Load(Kind::kArtifact, hashed, kFormat, miss);
  ASSERT_TRUE(entry.has_value()) << miss.ToString();
  EXPECT_EQ(entry->payload, payload);
}

TEST(RemoteCacheTest, AWrongPasswordTurnsTheTierOffWithOneWarning) {
  testing::RedisServer server("right-password");
  ASSERT_TRUE(server.running());
  for (const std::string& url :
       {absl::StrCat("redis://:wrong-password@127.0.0.1:", server.port()),
        absl::StrCat("redis://127.0.0.1:", server.port())}) {  // and no password at all
    ::testing::internal::CaptureStderr();
    RemoteCache remote(Options(url));
    Miss miss;
    EXPECT_FALSE(remote.Load(Kind::kArtifact, Key("a"), kFormat, miss).has_value());
    EXPECT_EQ(miss.reason, MissReason::kTierOff);
    EXPECT_FALSE(remote.enabled());
    EXPECT_FALSE(remote.Store(Kind::kArtifact, Key("a"), kFormat, "x", ""));
    EXPECT_FALSE(remote.Load(Kind::kArtifact, Key("b"), kFormat, miss).has_value());
    const std::string log = ::testing::internal::GetCapturedStderr();
    EXPECT_THAT(log, HasSubstr("remote compile cache is off"));
    EXPECT_THAT(log, HasSubstr("authentication failed"));
    EXPECT_THAT(log, Not(HasSubstr("wrong-password")));
    EXPECT_EQ(log.find("warning"), log.rfind("warning")) << log;  // exactly one
    EXPECT_EQ(ErrorsOf(remote.counters(), "authentication"), 1u);
  }
  RemoteCache right(Options(server.Url()));
  ASSERT_TRUE(right.Store(Kind::kArtifact, Key("a"), kFormat, "x", ""));
}

TEST(RemoteCacheTest, AnAclThatForbidsOneCommandFailsThatCommandOnly) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  ASSERT_TRUE(server.Admin()
                  .Command({"ACL", "SETUSER", "limited", "on", ">pw", "~*", "+@all", "-eval"})
                  .ok());
  ::testing::internal::CaptureStderr();
  RemoteCache remote(Options(absl::StrCat("redis://limited:pw@127.0.0.1:", server.port())));
  const CacheKey key = Key("acl");
  RemoteCache::Claim claim = remote.LoadOrLease(key, kFormat);
  ASSERT_NE(claim.lease, nullptr);
  ASSERT_TRUE(remote.Store(Kind::kArtifact, key, kFormat, "payload", ""));
  claim.lease.reset();  // the release script is refused (NOPERM): the lease expires instead
  ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(remote.enabled());
  Miss miss;
  EXPECT_TRUE(remote.Load(Kind::kArtifact, key, kFormat, miss).has_value()) << miss.ToString();
  EXPECT_EQ(ErrorsOf(remote.counters(), "authentication"), 0u);
}

TEST(RemoteCacheTest, ADeadServerIsAMissAndTheClientReconnectsWithBackoff) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  ::testing::internal::CaptureStderr();
  RemoteCache remote(Options(server.Url()));
  const CacheKey key = Key("relu");
  ASSERT_TRUE(remote.Store(Kind::kArtifact, key, kFormat, "payload", ""));
  server.Kill();
  Miss miss;
  EXPECT_FALSE(remote.Load(Kind::kArtifact, key, kFormat, miss).has_value());
  EXPECT_EQ(miss.reason, MissReason::kTierOff);
  EXPECT_THAT(miss.ToString(), HasSubstr("remote cache unavailable"));
  // Backing off: no new connection attempt, an immediate miss.
  EXPECT_FALSE(remote.Load(Kind::kArtifact, key, kFormat, miss).has_value());
  EXPECT_THAT(miss.ToString(), HasSubstr("backing off"));
  EXPECT_FALSE(remote.Store(Kind::kArtifact, key, kFormat, "payload", ""));
  server.Start();
  ASSERT_TRUE(server.running());
  // Past the backoff (100 ms, doubled per failure: however slow this machine made the calls
  // above, it is at most 5 s), the client reconnects.
  bool stored = false;
  for (int attempt = 0; attempt < 100 && !stored; ++attempt) {
    absl::SleepFor(absl::Milliseconds(100));
    stored = remote.Store(Kind::kArtifact, key, kFormat, "payload", "");
  }
  ASSERT_TRUE(stored);
  auto entry = remote.Load(Kind::kArtifact, key, kFormat, miss);
  ASSERT_TRUE(entry.has_value()) << miss.ToString();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(log.find("warning"), log.rfind("warning")) << log;
  const RemoteCounters counters = remote.counters();
  EXPECT_GE(counters.reconnects, 1u);
  EXPECT_EQ(Reason(counters, "unavailable"), 2u);
  EXPECT_GE(counters.store_failures, 1u);
  EXPECT_GE(ErrorsOf(counters, "unavailable"), 3u);
}

TEST(RemoteCacheTest, AConnectionTheServerClosedIsAFailedStoreNotASigpipe) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  ::testing::internal::CaptureStderr();
  RemoteCache remote(Options(server.Url()));
  ASSERT_TRUE(remote.Store(Kind::kArtifact, Key("first"), kFormat, "payload", ""));
  // The server drops our connection; the next (large) write meets a closed socket: without
  // SIGPIPE blocked, that signal would end this process.
  cache::RedisClient admin = server.Admin();
  ASSERT_TRUE(admin.Command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}).ok());
  absl::SleepFor(absl::Milliseconds(50));
  for (int i = 0; i < 3; ++i) {
    remote.Store(Kind::kArtifact, Key(absl::StrCat("big", i)), kFormat, Payload(16 << 20), "");
    absl::SleepFor(absl::Milliseconds(250));
  }
  ::testing::internal::GetCapturedStderr();
  EXPECT_GE(remote.counters().store_failures, 1u);
  Miss miss;
  EXPECT_TRUE(remote.Load(Kind::kArtifact, Key("first"), kFormat, miss).has_value())
      << miss.ToString();  // reconnected
}

TEST(RemoteCacheTest, AForkedChildConnectsAnewInsteadOfSharingItsParentsSocket) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  RemoteCache remote(Options(server.Url()));
  const CacheKey parent_key = Key("parent"), child_key = Key("child");
  ASSERT_TRUE(remote.Store(Kind::kArtifact, parent_key, kFormat, "from the parent", ""));
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Interleaved replies would hand one process the other's values; a connection of its own
    // cannot.
    Miss miss;
    bool ok = true;
    for (int i = 0; i < 200 && ok; ++i) {
      ok = remote.Store(Kind::kArtifact, child_key, kFormat, absl::StrCat("child ", i), "");
      auto entry = remote.Load(Kind::kArtifact, child_key, kFormat, miss);
      ok = ok && entry.has_value() && entry->payload == absl::StrCat("child ", i);
    }
    _exit(ok && remote.counters().reconnects == 1 ? 0 : 1);
  }
  bool ok = true;
  for (int i = 0; i < 200 && ok; ++i) {
    Miss miss;
    auto entry = remote.Load(Kind::kArtifact, parent_key, kFormat, miss);
    ok = entry.has_value() && entry->payload == "from the parent";
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(ok);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(RemoteCacheTest, ASlowServerTimesOutEveryCommand) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  RemoteCache remote(Options(server.Url("?timeout_ms=150&connect_timeout_ms=150")));
  const CacheKey key = Key("slow");
  ASSERT_TRUE(remote.Store(Kind::kArtifact, key, kFormat, "payload", ""));
  ASSERT_TRUE(server.Admin().Command({"CLIENT", "PAUSE", "3000", "ALL"}).ok());
  ::testing::internal::CaptureStderr();
  Miss miss;
  EXPECT_FALSE(remote.Load(Kind::kArtifact, key, kFormat, miss).has_value());
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(miss.reason, MissReason::kTierOff);
  EXPECT_THAT(miss.ToString(), HasSubstr("timed out"));
  EXPECT_EQ(ErrorsOf(remote.counters(), "timeout"), 1u);
}

TEST(RemoteCacheTest, AServerOutOfMemoryRefusesStoresAndStillServesReads) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  RemoteCache remote(Options(server.Url()));
  const CacheKey small = Key("small");
  ASSERT_TRUE(remote.Store(Kind::kArtifact, small, kFormat, "payload", ""));
  ASSERT_TRUE(server.Admin().Command({"CONFIG", "SET", "maxmemory-policy", "noeviction"}).ok());
  ASSERT_TRUE(server.Admin().Command({"CONFIG", "SET", "maxmemory", "1"}).ok());
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(remote.Store(Kind::kArtifact, Key("big"), kFormat, Payload(1 << 20), ""));
  EXPECT_FALSE(remote.Store(Kind::kArtifact, Key("big2"), kFormat, Payload(1 << 20), ""));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("OOM"));
  EXPECT_EQ(log.find("warning"), log.rfind("warning")) << log;
  Miss miss;
  EXPECT_TRUE(remote.Load(Kind::kArtifact, small, kFormat, miss).has_value()) << miss.ToString();
  const RemoteCounters counters = remote.counters();
  EXPECT_EQ(counters.store_failures, 2u);
  EXPECT_EQ(ErrorsOf(counters, "out of memory"), 2u);
}

TEST(RemoteCacheTest, ALeaseMakesOneClaimantCompileAndTheOthersWait) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  // Renewals every 500 ms: only a stall of a second (a loaded machine) could lose the lease.
  RemoteCache first(Options(server.Url("?timeout_ms=500&lease_ms=1500")));
  RemoteCache second(Options(server.Url("?timeout_ms=500&lease_ms=1500&lease_wait_ms=20000")));
  const CacheKey key = Key("matmul");
  RemoteCache::Claim claim = first.LoadOrLease(key, kFormat);
  ASSERT_FALSE(claim.entry.has_value());
  ASSERT_NE(claim.lease, nullptr);
  EXPECT_EQ(claim.miss.reason, MissReason::kNotCached);
  // The holder "compiles" for longer than the lease's TTL: renewals keep it; then publishes.
  std::thread holder([&] {
    absl::SleepFor(absl::Milliseconds(2500));
    EXPECT_TRUE(first.Store(RemoteCache::Kind::kArtifact, key, kFormat, "compiled", ""));
    claim.lease.reset();
  });
  RemoteCache::Claim waited = second.LoadOrLease(key, kFormat);
  holder.join();
  ASSERT_TRUE(waited.entry.has_value()) << waited.miss.ToString();
  EXPECT_EQ(waited.entry->payload, "compiled");
  EXPECT_EQ(waited.lease, nullptr);
  EXPECT_EQ(second.counters().lease_waits, 1u);
  EXPECT_EQ(second.counters().lease_takeovers, 0u);
  EXPECT_EQ(first.counters().leases_lost, 0u);
  // Released: the lease key is gone.
  auto exists = server.Admin().Command({"EXISTS", first.LeaseName(key.digest)});
  ASSERT_TRUE(exists.ok());
  EXPECT_EQ(exists->integer, 0);
}

TEST(RemoteCacheTest, TheLeaseOfADeadHolderIsTakenOverWhenItExpires) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  RemoteCache remote(Options(server.Url("?lease_wait_ms=10000")));
  const CacheKey key = Key("orphan");
  // A holder that died: its token stays until the lease's TTL runs out.
  ASSERT_TRUE(
      server.Admin().Command({"SET", remote.LeaseName(key.digest), "dead:1:0", "PX", "400"}).ok());
  const absl::Time start = absl::Now();
  RemoteCache::Claim claim = remote.LoadOrLease(key, kFormat);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  ASSERT_NE(claim.lease, nullptr);
  EXPECT_EQ(remote.counters().lease_takeovers, 1u);
  // Releasing deletes only our own token: a lease someone else holds by now stays.
  ASSERT_TRUE(server.Admin().Command({"SET", remote.LeaseName(key.digest), "someone-else"}).ok());
  claim.lease.reset();
  auto holder = server.Admin().Command({"GET", remote.LeaseName(key.digest)});
  ASSERT_TRUE(holder.ok());
  EXPECT_EQ(holder->text, "someone-else");
}

TEST(RemoteCacheTest, AWaitThatTimesOutCompilesLocally) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  RemoteCache holder(Options(server.Url()));
  RemoteCache waiter(Options(server.Url("?lease_wait_ms=200")));
  const CacheKey key = Key("stuck");
  RemoteCache::Claim held = holder.LoadOrLease(key, kFormat);
  ASSERT_NE(held.lease, nullptr);
  ::testing::internal::CaptureStderr();
  RemoteCache::Claim claim = waiter.LoadOrLease(key, kFormat);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(claim.entry.has_value());
  EXPECT_EQ(claim.lease, nullptr);
  EXPECT_EQ(waiter.counters().lease_timeouts, 1u);
  EXPECT_THAT(log, HasSubstr("compiling it here too"));
}

TEST(RemoteCacheTest, ClearRemovesThisToolchainsKeysOnly) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  RemoteCache ours(Options(server.Url(), "ours"));
  RemoteCache theirs(Options(server.Url(), "theirs"));
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(ours.Store(Kind::kArtifact, Key(absl::StrCat(i)), kFormat, "x", ""));
    ASSERT_TRUE(theirs.Store(Kind::kDecision, Key(absl::StrCat(i)), 1, "{}", ""));
  }
  ASSERT_TRUE(server.Admin().Command({"SET", "someone-elses-key", "1"}).ok());
  auto removed = ours.Clear();
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 30u);
  auto size = server.Admin().Command({"DBSIZE"});
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(size->integer, 31);
  auto fleet = theirs.FleetStats();
  ASSERT_TRUE(fleet.ok());
  EXPECT_EQ(fleet->decisions, 30u);
  EXPECT_EQ(fleet->artifacts, 0u);
}

}  // namespace
}  // namespace tessera::cache
