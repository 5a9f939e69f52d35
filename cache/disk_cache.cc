// The disk tier: <root>/v1/{entries/<digest>/{payload.bin,manifest.txt}, index/<base>,
// text/<text digest>, locks/, tmp/}.
#include "cache/disk_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/files.h"
#include "cache/manifest.h"

namespace tessera::cache {
namespace {

namespace fs = std::filesystem;

constexpr char kLayout[] = "v1";
constexpr char kPayload[] = "payload.bin";
constexpr char kManifest[] = "manifest.txt";

bool ReadFile(const fs::path& path, std::string& contents) {
  return tessera::ReadFile(path.string(), contents);
}

bool WriteFile(const fs::path& path, const std::string& contents) {
  return tessera::WriteFile(path.string(), contents);
}

fs::file_time_type Modified(const fs::path& path) {
  std::error_code error;
  fs::file_time_type time = fs::last_write_time(path, error);
  return error ? fs::file_time_type::min() : time;
}

int64_t ToUnixSeconds(fs::file_time_type time) {
  if (time == fs::file_time_type::min()) return 0;
  auto system = std::chrono::time_point_cast<std::chrono::seconds>(
      time - fs::file_time_type::clock::now() + std::chrono::system_clock::now());
  return system.time_since_epoch().count();
}

int64_t ModifiedUnix(const fs::path& path) { return ToUnixSeconds(Modified(path)); }

/// How old a file in tmp/ must be before `clear` removes it (younger ones may be another
/// process's entry being staged).
constexpr int64_t kStaleTemporarySeconds = 60;

std::string UniqueSuffix() {
  static std::atomic<uint64_t> counter{0};
  return absl::StrCat(getpid(), ".", counter++, ".",
                      std::chrono::steady_clock::now().time_since_epoch().count());
}

}  // namespace

std::string DiskCache::DefaultRoot() {
  if (const char* dir = std::getenv("TESSERA_JIT_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return absl::StrCat(xdg, "/tessera-jit");
  }
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr ? home : "/tmp", "/.cache/tessera-jit");
}

DiskCache::DiskCache(DiskCacheOptions options) : options_(std::move(options)) {
  std::error_code error;
  const bool prebuilt = fs::is_directory(Path("entries"), error);
  if (options_.read_only) {
    read_only_ = true;
    if (!prebuilt) Disable(absl::StrCat(options_.root, " holds no cache to read"));
    return;
  }
  for (const char* sub : {"entries", "index", "text", "locks", "tmp"}) {
    fs::create_directories(Path(sub), error);
    if (error) {
      if (prebuilt) break;  // probed below
      Disable(absl::StrCat("cannot create ", Path(sub), ": ", error.message()));
      return;
    }
  }
  // Writable? A read-only directory may still exist, and then serves what it holds.
  fs::path probe = fs::path(Path("tmp")) / absl::StrCat("probe.", UniqueSuffix());
  if (!WriteFile(probe, "ok")) {
    if (prebuilt) {
      read_only_ = true;
      options_.logger.Info(absl::StrCat("compile cache on disk at ", options_.root,
                                        " is read-only: serving hits, storing nothing"));
      return;
    }
    Disable(absl::StrCat(options_.root, " is not writable"));
    return;
  }
  fs::remove(probe, error);
}

void DiskCache::Disable(const std::string& why) {
  if (enabled_.exchange(false)) {
    options_.logger.Warning(
        absl::StrCat("compile cache on disk is off (", why, "); caching in memory only"));
  }
}

std::string DiskCache::Path(const char* sub) const {
  return (fs::path(options_.root) / kLayout / sub).string();
}

std::string DiskCache::EntryDir(const std::string& digest) const {
  return (fs::path(Path("entries")) / digest).string();
}

void DiskCache::Remove(const std::string& directory) {
  if (read_only()) return;
  // Rename first so no reader sees a half-removed entry.
  std::error_code error;
  fs::path doomed = fs::path(Path("tmp")) / absl::StrCat("doomed.", UniqueSuffix());
  fs::rename(directory, doomed, error);
  fs::remove_all(error ? fs::path(directory) : doomed, error);
}

void DiskCache::Discard(const std::string& digest) {
  if (read_only() || !IsDigest(digest)) return;
  ++discarded_;
  Remove(EntryDir(digest));
}

std::optional<std::string> DiskCache::Load(const CacheKey& key, int format, Miss& miss) {
  if (!enabled()) {
    miss = {MissReason::kTierOff, ""};
    return std::nullopt;
  }
  if (!IsDigest(key.digest)) {
    miss = {MissReason::kNotCached, ""};
    return std::nullopt;
  }
  const fs::path dir = EntryDir(key.digest);
  auto damaged = [&](std::string what) -> std::optional<std::string> {
    miss = {MissReason::kDamaged, std::move(what)};
    Discard(key.digest);
    return std::nullopt;
  };
  std::error_code error;
  if (!fs::exists(dir, error)) {
    miss = {MissReason::kNotCached, ""};
    std::string previous;
    if (ReadFile(fs::path(Path("index")) / key.base_digest, previous) && previous != key.digest) {
      std::string manifest_text;
      Manifest old;
      if (ReadFile(fs::path(EntryDir(previous)) / kManifest, manifest_text) &&
          ParseManifest(manifest_text, old)) {
        std::string change = DescribeChange(old.components, key.components);
        if (!change.empty()) miss = {MissReason::kStale, std::move(change)};
      }
    }
    return std::nullopt;
  }
  std::string manifest_text;
  Manifest manifest;
  if (!ReadFile(dir / kManifest, manifest_text)) {
    return damaged("manifest missing (half-written entry)");
  }
  if (!ParseManifest(manifest_text, manifest) || manifest.digest != key.digest) {
    return damaged("manifest unreadable");
  }
  if (manifest.format != format) {
    miss = {MissReason::kFormat, absl::StrCat(manifest.format, " → ", format)};
    Discard(key.digest);
    return std::nullopt;
  }
  std::string payload;
  if (!ReadFile(dir / kPayload, payload)) return damaged("payload missing");
  if (payload.size() != manifest.payload_bytes) {
    return damaged(absl::StrCat("truncated payload (", payload.size(), " of ",
                                manifest.payload_bytes, " bytes)"));
  }
  if (PayloadChecksum(payload) != manifest.payload_xxh3) return damaged("checksum mismatch");
  if (!read_only()) {
    fs::last_write_time(dir / kManifest, fs::file_time_type::clock::now(), error);  // LRU
  }
  return payload;
}

void DiskCache::Store(const CacheKey& key, int format, const std::string& payload,
                      const std::string& source_name) {
  if (!enabled() || read_only() || !IsDigest(key.digest)) return;
  std::error_code error;
  const fs::path final_dir = EntryDir(key.digest);
  if (fs::exists(final_dir / kManifest, error)) return;  // another process published it
  const fs::path staging = fs::path(Path("tmp")) / absl::StrCat(key.digest, ".", UniqueSuffix());
  fs::create_directories(staging, error);
  if (error)
    return Disable(absl::StrCat("cannot create ", staging.string(), ": ", error.message()));
  const std::string manifest_text = WriteManifest(ManifestFor(key, format, payload, source_name));
  // The manifest goes last: an entry without one is never trusted.
  if (!WriteFile(staging / kPayload, payload) || !WriteFile(staging / kManifest, manifest_text)) {
    if (!fs::exists(staging, error)) return;  // removed under us (`cache clear`): not a full disk
    fs::remove_all(staging, error);
    return Disable(absl::StrCat("cannot write to ", staging.string(), " (disk full?)"));
  }
  if (fs::exists(final_dir, error)) {
    if (fs::exists(final_dir / kManifest, error)) {
      fs::remove_all(staging, error);  // another process published it meanwhile
      return;
    }
    Remove(final_dir.string());  // a damaged leftover
  }
  fs::rename(staging, final_dir, error);
  if (error) {
    fs::remove_all(staging, error);  // lost a race to an identical entry
    return;
  }
  const fs::path index = fs::path(Path("index")) / key.base_digest;
  const fs::path index_staging = fs::path(index.string() + "." + UniqueSuffix());
  if (WriteFile(index_staging, key.digest)) fs::rename(index_staging, index, error);
  Evict(key.digest, payload.size() + manifest_text.size());
}

std::vector<DiskCache::Sized> DiskCache::Sizes() const {
  std::vector<Sized> sizes;
  std::error_code error;
  for (const fs::directory_entry& dir : fs::directory_iterator(Path("entries"), error)) {
    Sized entry{dir.path().filename().string(), 0, Modified(dir.path() / kManifest)};
    std::error_code size_error;
    for (const fs::directory_entry& file : fs::directory_iterator(dir.path(), size_error)) {
      entry.bytes += file.file_size(size_error);
    }
    sizes.push_back(std::move(entry));
  }
  return sizes;
}

void DiskCache::Evict(const std::string& keep, uint64_t stored_bytes) {
  constexpr uint64_t kRescanStores = 64;
  absl::MutexLock lock(&mu_);
  if (estimated_bytes_.has_value() && ++stores_since_scan_ < kRescanStores &&
      *estimated_bytes_ + stored_bytes <= options_.max_bytes) {
    *estimated_bytes_ += stored_bytes;
    return;
  }
  // Sizes and times only: no manifest is read.
  std::vector<Sized> entries = Sizes();
  stores_since_scan_ = 0;
  uint64_t total = 0;
  for (const Sized& entry : entries) total += entry.bytes;
  if (total > options_.max_bytes) {
    std::sort(entries.begin(), entries.end(), [](const Sized& a, const Sized& b) {
      // Full-precision times: entries stored within one second still evict oldest first.
      return a.last_used != b.last_used ? a.last_used < b.last_used : a.digest < b.digest;
    });
    for (const Sized& entry : entries) {
      if (total <= options_.max_bytes) break;
      if (entry.digest == keep) continue;
      Remove(EntryDir(entry.digest));
      ++evicted_;
      total -= entry.bytes;
    }
  }
  estimated_bytes_ = total;
}

std::string DiskCache::LookupText(const std::string& text_digest) const {
  if (!enabled()) return "";
  std::string digest;
  if (!IsDigest(text_digest) || !ReadFile(fs::path(Path("text")) / text_digest, digest)) {
    return "";
  }
  return IsDigest(digest) ? digest : "";
}

void DiskCache::RecordText(const std::string& text_digest, const std::string& digest) {
  if (!enabled() || read_only() || !IsDigest(text_digest) || !IsDigest(digest)) return;
  const fs::path path = fs::path(Path("text")) / text_digest;
  const fs::path staging = fs::path(path.string() + "." + UniqueSuffix());
  std::error_code error;
  if (WriteFile(staging, digest)) fs::rename(staging, path, error);
}

DiskCache::KeyLock::~KeyLock() {
  flock(fd_, LOCK_UN);
  close(fd_);
}

std::unique_ptr<DiskCache::KeyLock> DiskCache::Lock(const std::string& digest) {
  if (!enabled() || read_only() || !IsDigest(digest)) return nullptr;
  const std::string path = (fs::path(Path("locks")) / (digest + ".lock")).string();
  int fd = open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0) {
    ++lock_failures_;
    return nullptr;
  }
  const absl::Time deadline = absl::Now() + options_.lock_timeout;
  absl::Duration pause = absl::Milliseconds(1);
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      ++lock_failures_;
      close(fd);
      return nullptr;
    }
    if (absl::Now() >= deadline) {
      ++lock_timeouts_;
      options_.logger.Warning(absl::StrCat("waited ", absl::FormatDuration(options_.lock_timeout),
                                           " for another process to ", "compile cache key ",
                                           digest.substr(0, 12), "; compiling it here too"));
      close(fd);
      return nullptr;
    }
    absl::SleepFor(pause);
    pause = std::min(pause * 2, absl::Milliseconds(50));
  }
  return std::make_unique<KeyLock>(fd);
}

std::vector<DiskEntry> DiskCache::List() const {
  std::vector<DiskEntry> entries;
  for (Sized& sized : Sizes()) {
    DiskEntry entry;
    entry.digest = std::move(sized.digest);
    entry.bytes = sized.bytes;
    entry.last_used_unix = ToUnixSeconds(sized.last_used);
    std::string text;
    Manifest manifest;
    if (ReadFile(fs::path(EntryDir(entry.digest)) / kManifest, text) &&
        ParseManifest(text, manifest)) {
      entry.components = std::move(manifest.components);
      entry.source_name = std::move(manifest.source_name);
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

uint64_t DiskCache::TotalBytes() const {
  uint64_t total = 0;
  for (const Sized& entry : Sizes()) total += entry.bytes;
  return total;
}

absl::Status DiskCache::Clear() {
  if (read_only()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot clear ", options_.root, ": the cache is read-only"));
  }
  std::error_code error;
  for (const char* sub : {"entries", "index", "text"}) {
    fs::remove_all(Path(sub), error);
    if (error) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot clear ", Path(sub), ": ", error.message()));
    }
    fs::create_directories(Path(sub), error);
  }
  // A lock another process holds stays (unlinking it would let a third process lock a new file
  // and compile the same key); a free one is removed while held, so nobody is using it.
  for (const fs::directory_entry& file : fs::directory_iterator(Path("locks"), error)) {
    const int fd = open(file.path().c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      std::error_code ignored;
      fs::remove(file.path(), ignored);
      flock(fd, LOCK_UN);
    }
    close(fd);
  }
  // Temporaries: what a writer that died left; a young one may be an entry being staged.
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  for (const fs::directory_entry& file : fs::directory_iterator(Path("tmp"), error)) {
    if (now - ModifiedUnix(file.path()) >= kStaleTemporarySeconds) {
      std::error_code ignored;
      fs::remove_all(file.path(), ignored);
    }
  }
  absl::MutexLock lock(&mu_);
  estimated_bytes_.reset();
  return absl::OkStatus();
}

DiskCounters DiskCache::counters() const {
  return DiskCounters{lock_timeouts_.load(), lock_failures_.load(), discarded_.load(),
                      evicted_.load()};
}

}  // namespace tessera::cache
