// Decision records shared through the remote tier (a real redis-server): another "machine"
// (another directory, another connection) finds a record one measured; a record the server
// hands back under our key but naming another base key — which becomes a folder on disk — is
// a miss, never a path the server chose.
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "arbiter/decision_cache.h"
#include "arbiter/decision_record.h"
#include "cache/cache_key.h"
#include "cache/remote_cache.h"
#include "gtest/gtest.h"
#include "tests/redis/redis_server.h"

namespace tessera::arbiter {
namespace {

std::shared_ptr<cache::RemoteCache> Remote(const testing::RedisServer& server) {
  auto options = cache::RemoteCacheOptions::FromUrl(server.Url());
  EXPECT_TRUE(options.ok()) << options.status();
  options->tag = "decisions-test";
  return std::make_shared<cache::RemoteCache>(*options);
}

std::string Dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/remote_decisions_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

DecisionRecord Record(const std::string& key, const std::string& base_key) {
  DecisionRecord record;
  record.key = key;
  record.base_key = base_key;
  record.point.op = "tile.matmul";
  record.point.shape = {64, 64, 64};
  record.winner = "compiled";
  record.created = "2026-12-01T00:00:00Z";
  return record;
}

TEST(RemoteDecisionsTest, AnotherMachineFindsTheRecordAndKeepsItOnItsDisk) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  const std::string key = cache::Sha256Hex("key"), base = cache::Sha256Hex("base");
  DecisionCache first(Dir("first"), Remote(server));
  first.Store(Record(key, base));
  const std::string second_dir = Dir("second");
  DecisionCache second(second_dir, Remote(server));
  DecisionCache::Lookup lookup = second.Find(key, base);
  ASSERT_TRUE(lookup.fresh.has_value());
  EXPECT_EQ(lookup.fresh->winner, "compiled");
  EXPECT_EQ(second.stats().hits, 1u);
  EXPECT_EQ(second.stats().remote_hits, 1u);
  EXPECT_TRUE(std::filesystem::exists(absl::StrCat(second_dir, "/", base, "/", key, ".json")));
  // A third cache on the second's directory reads its disk, not the server.
  DecisionCache third(second_dir, nullptr);
  EXPECT_TRUE(third.Find(key, base).fresh.has_value());
}

TEST(RemoteDecisionsTest, ARecordNamingAnotherBaseKeyIsAMissAndNoPath) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  const std::string key = cache::Sha256Hex("planted"), base = cache::Sha256Hex("base");
  auto remote = Remote(server);
  cache::CacheKey name;
  name.digest = key;
  // Whole and checksummed, under our key, but its base key is a path.
  ASSERT_TRUE(remote->Store(cache::RemoteCache::Kind::kDecision, name, kDecisionRecordFormat,
                            ToJson(Record(key, "../../escaped")), ""));
  const std::string dir = Dir("planted");
  DecisionCache cache(dir, remote);
  EXPECT_FALSE(cache.Find(key, base).fresh.has_value());
  EXPECT_EQ(cache.stats().remote_hits, 0u);
  EXPECT_FALSE(std::filesystem::exists(dir + "/../../escaped"));
  EXPECT_FALSE(std::filesystem::exists(dir));  // nothing written at all
}

}  // namespace
}  // namespace tessera::arbiter
