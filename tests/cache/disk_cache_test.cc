// The disk tier on its own, bytes in and bytes out: round trip, typed misses, a read-only
// root, the lock's timeout, eviction without reading manifests, clear, and digests that are
// the only strings that become paths.
#include "cache/disk_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace tessera::cache {
namespace {

namespace fs = std::filesystem;

std::string Scratch(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  fs::path dir = fs::path(tmp != nullptr ? tmp : "/tmp") / ("disk_cache_test_" + name);
  fs::remove_all(dir);
  return dir.string();
}

DiskCacheOptions At(const std::string& root) {
  DiskCacheOptions options;
  options.root = root;
  return options;
}

CacheKey Key(const std::string& content, const std::string& producer = "1") {
  return MakeCacheKey({{"content", content}}, {{"producer", producer}});
}

size_t FilesUnder(const fs::path& dir) {
  size_t count = 0;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(dir, error);
       it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_regular_file()) ++count;
  }
  return count;
}

TEST(DiskCacheTest, StoresAndLoadsBytes) {
  DiskCache disk(At(Scratch("roundtrip")));
  ASSERT_TRUE(disk.enabled());
  Miss miss;
  EXPECT_FALSE(disk.Load(Key("a"), 7, miss).has_value());
  EXPECT_EQ(miss.reason, MissReason::kNotCached);
  disk.Store(Key("a"), 7, std::string("pay\0load", 8), "a.mlir");
  auto payload = disk.Load(Key("a"), 7, miss);
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(*payload, std::string("pay\0load", 8));
  ASSERT_EQ(disk.List().size(), 1u);
  EXPECT_EQ(disk.List()[0].source_name, "a.mlir");
}

TEST(DiskCacheTest, MissesAreTyped) {
  const std::string root = Scratch("typed");
  DiskCache disk(At(root));
  disk.Store(Key("a"), 7, "payload", "");
  Miss miss;
  EXPECT_FALSE(disk.Load(Key("a", "2"), 7, miss).has_value());
  EXPECT_EQ(miss.reason, MissReason::kStale);
  EXPECT_EQ(miss.ToString(), "stale: producer 1 → 2");
  EXPECT_FALSE(disk.Load(Key("a"), 8, miss).has_value());
  EXPECT_EQ(miss.reason, MissReason::kFormat);
  EXPECT_EQ(miss.ToString(), "artifact format 7 → 8");
  disk.Store(Key("b"), 7, "payload", "");
  std::ofstream(fs::path(root) / "v1" / "entries" / Key("b").digest / "payload.bin") << "paxload";
  EXPECT_FALSE(disk.Load(Key("b"), 7, miss).has_value());
  EXPECT_EQ(miss.reason, MissReason::kDamaged);
  EXPECT_EQ(miss.ToString(), "checksum mismatch");
  EXPECT_EQ(disk.counters().discarded, 2u);  // the foreign format and the damaged entry
}

TEST(DiskCacheTest, AReadOnlyRootServesHitsAndWritesNothing) {
  const std::string root = Scratch("read_only");
  {
    DiskCache writer(At(root));
    writer.Store(Key("a"), 7, "payload", "");
    writer.RecordText(Key("t").digest, Key("a").digest);
  }
  const size_t files = FilesUnder(root);
  DiskCacheOptions options = At(root);
  options.read_only = true;
  DiskCache reader(options);
  EXPECT_TRUE(reader.enabled());
  EXPECT_TRUE(reader.read_only());
  Miss miss;
  auto payload = reader.Load(Key("a"), 7, miss);
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(*payload, "payload");
  EXPECT_EQ(reader.LookupText(Key("t").digest), Key("a").digest);
  reader.Store(Key("b"), 7, "other", "");
  reader.RecordText(Key("u").digest, Key("b").digest);
  EXPECT_EQ(reader.Lock(Key("b").digest), nullptr);
  EXPECT_FALSE(reader.Load(Key("a"), 8, miss).has_value());  // foreign format: not removed
  EXPECT_FALSE(reader.Clear().ok());
  EXPECT_EQ(FilesUnder(root), files);
  EXPECT_TRUE(reader.Load(Key("a"), 7, miss).has_value());
}

TEST(DiskCacheTest, ALockHeldElsewhereTimesOutAndIsCounted) {
  const std::string root = Scratch("lock");
  DiskCacheOptions options = At(root);
  options.lock_timeout = absl::Milliseconds(50);
  options.logger = Logger(LogLevel::kError);
  DiskCache disk(options);
  // Another holder of the same key's lock (flock locks belong to open file descriptions).
  const std::string path = root + "/v1/locks/" + Key("a").digest + ".lock";
  int fd = open(path.c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX), 0);
  EXPECT_EQ(disk.Lock(Key("a").digest), nullptr);
  EXPECT_EQ(disk.counters().lock_timeouts, 1u);
  flock(fd, LOCK_UN);
  close(fd);
  EXPECT_NE(disk.Lock(Key("a").digest), nullptr);
  EXPECT_EQ(disk.counters().lock_timeouts, 1u);
}

TEST(DiskCacheTest, EvictsLeastRecentlyUsedBeyondTheBound) {
  DiskCacheOptions options = At(Scratch("evict"));
  options.max_bytes = 3000;
  DiskCache disk(options);
  const std::string kilobyte(1000, 'x');
  for (const char* name : {"a", "b", "c", "d", "e"}) disk.Store(Key(name), 7, kilobyte, "");
  EXPECT_LE(disk.TotalBytes(), 3000u);
  EXPECT_GE(disk.counters().evicted, 2u);
  Miss miss;
  EXPECT_TRUE(disk.Load(Key("e"), 7, miss).has_value());  // the newest stays
  EXPECT_FALSE(disk.Load(Key("a"), 7, miss).has_value());
}

TEST(DiskCacheTest, ClearRemovesEntriesIndexesFreeLocksAndOldTemporaries) {
  const std::string root = Scratch("clear");
  DiskCache disk(At(root));
  disk.Store(Key("a"), 7, "payload", "");
  disk.RecordText(Key("t").digest, Key("a").digest);
  {
    auto lock = disk.Lock(Key("a").digest);
  }  // free again: its file is removed
  auto held = disk.Lock(Key("b").digest);  // held (as by another process): it stays
  ASSERT_NE(held, nullptr);
  const fs::path tmp = fs::path(root) / "v1" / "tmp";
  std::ofstream(tmp / "leftover.1.2") << "half";  // a writer that died long ago
  fs::last_write_time(tmp / "leftover.1.2",
                      fs::file_time_type::clock::now() - std::chrono::minutes(5));
  std::ofstream(tmp / "staging.3.4") << "in use";  // another process staging right now
  ASSERT_TRUE(disk.Clear().ok());
  EXPECT_TRUE(disk.List().empty());
  EXPECT_EQ(disk.LookupText(Key("t").digest), "");
  EXPECT_FALSE(fs::exists(fs::path(root) / "v1" / "locks" / (Key("a").digest + ".lock")));
  EXPECT_TRUE(fs::exists(fs::path(root) / "v1" / "locks" / (Key("b").digest + ".lock")));
  EXPECT_FALSE(fs::exists(tmp / "leftover.1.2"));
  EXPECT_TRUE(fs::exists(tmp / "staging.3.4"));
  disk.Store(Key("a"), 7, "payload", "");  // still usable
  Miss miss;
  EXPECT_TRUE(disk.Load(Key("a"), 7, miss).has_value());
}

// A text index file (or a digest from anywhere) that is not a digest never becomes a path: a
// planted `../..` would otherwise make a damaged-entry removal delete outside the root.
TEST(DiskCacheTest, OnlyDigestsBecomePaths) {
  const std::string root = Scratch("digests");
  const fs::path outside = fs::path(root).parent_path() / "disk_cache_test_outside";
  fs::remove_all(outside);
  fs::create_directories(outside / "keep");
  DiskCache disk(At(root));
  const std::string planted = "../../../disk_cache_test_outside/keep/" + std::string(26, '/');
  ASSERT_EQ(planted.size(), 64u);
  std::ofstream(fs::path(root) / "v1" / "text" / Key("t").digest) << planted;
  EXPECT_EQ(disk.LookupText(Key("t").digest), "");
  CacheKey forged = Key("x");
  forged.digest = planted;
  Miss miss;
  EXPECT_FALSE(disk.Load(forged, 7, miss).has_value());
  disk.Discard(planted);
  disk.Store(forged, 7, "payload", "");
  EXPECT_EQ(disk.Lock(planted), nullptr);
  EXPECT_TRUE(fs::exists(outside / "keep"));
  EXPECT_TRUE(disk.List().empty());
}

}  // namespace
}  // namespace tessera::cache
