// The disk tier: <root>/v1/{entries/<digest>/{payload.bin,manifest.txt}, index/<base>, locks/,
// tmp/}.
#include "cache/disk_cache.h"

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

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/files.h"
#include "cache/artifact.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/xxhash.h"

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

struct Manifest {
  int format = 0;
  std::string digest;
  std::string payload_xxh3;
  uint64_t payload_bytes = 0;
  std::string source_name;
  std::vector<std::pair<std::string, std::string>> components;
};

std::string WriteManifest(const Manifest& m) {
  std::string text = absl::StrCat("format=", m.format, "\ndigest=", m.digest,
                                  "\npayload_xxh3=", m.payload_xxh3,
                                  "\npayload_bytes=", m.payload_bytes,
                                  "\nsource_name=", m.source_name, "\n");
  for (const auto& [name, value] : m.components) {
    absl::StrAppend(&text, "component.", name, "=", value, "\n");
  }
  return text;
}

bool ParseManifest(const std::string& text, Manifest& m) {
  bool has_format = false;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    size_t eq = line.find('=');
    if (eq == absl::string_view::npos) return false;
    std::string name(line.substr(0, eq));
    std::string value(line.substr(eq + 1));
    if (name == "format") {
      has_format = absl::SimpleAtoi(value, &m.format);
    } else if (name == "digest") {
      m.digest = value;
    } else if (name == "payload_xxh3") {
      m.payload_xxh3 = value;
    } else if (name == "payload_bytes") {
      if (!absl::SimpleAtoi(value, &m.payload_bytes)) return false;
    } else if (name == "source_name") {
      m.source_name = value;
    } else if (absl::StartsWith(name, "component.")) {
      m.components.emplace_back(name.substr(10), value);
    }
  }
  return has_format && !m.digest.empty();
}

int64_t ModifiedUnix(const fs::path& path) {
  std::error_code error;
  auto time = fs::last_write_time(path, error);
  if (error) return 0;
  auto system = std::chrono::time_point_cast<std::chrono::seconds>(
      time - fs::file_time_type::clock::now() + std::chrono::system_clock::now());
  return system.time_since_epoch().count();
}

/// The payload checksum: XXH3-64, which detects truncation and bit flips at memory speed (the
/// SHA-256 of the key already names the content).
std::string PayloadChecksum(const std::string& payload) {
  uint64_t hash = llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t*>(payload.data()), payload.size()));
  return absl::StrCat(absl::Hex(hash, absl::kZeroPad16));
}

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

DiskCache::DiskCache(std::string root, uint64_t max_bytes)
    : root_(std::move(root)), max_bytes_(max_bytes) {
  std::error_code error;
  for (const char* sub : {"entries", "index", "text", "locks", "tmp"}) {
    fs::create_directories(fs::path(root_) / kLayout / sub, error);
    if (error) {
      Disable(absl::StrCat("cannot create ", (fs::path(root_) / kLayout / sub).string(), ": ",
                           error.message()));
      return;
    }
  }
  // Writable? A read-only directory may still exist.
  fs::path probe = fs::path(root_) / kLayout / "tmp" / absl::StrCat("probe.", UniqueSuffix());
  if (!WriteFile(probe, "ok")) {
    Disable(absl::StrCat(root_, " is not writable"));
    return;
  }
  fs::remove(probe, error);
}

void DiskCache::Disable(const std::string& why) {
  if (enabled_.exchange(false)) {
    std::fprintf(stderr, "tessera-jit: warning: compile cache on disk is off (%s); caching in "
                         "memory only\n",
                 why.c_str());
  }
}

std::string DiskCache::EntryDir(const std::string& digest) const {
  return (fs::path(root_) / kLayout / "entries" / digest).string();
}

void DiskCache::Remove(const std::string& directory) {
  // Rename first so no reader sees a half-removed entry.
  std::error_code error;
  fs::path doomed = fs::path(root_) / kLayout / "tmp" / absl::StrCat("doomed.", UniqueSuffix());
  fs::rename(directory, doomed, error);
  fs::remove_all(error ? fs::path(directory) : doomed, error);
}

std::unique_ptr<jit::CompiledModule> DiskCache::Load(const CacheKey& key,
                                                      std::string& miss_reason) {
  if (!enabled()) {
    miss_reason = "disk cache off";
    return nullptr;
  }
  const fs::path dir = EntryDir(key.digest);
  std::error_code error;
  if (!fs::exists(dir, error)) {
    miss_reason = "not cached";
    std::string previous;
    if (ReadFile(fs::path(root_) / kLayout / "index" / key.base_digest, previous) &&
        previous != key.digest) {
      std::string manifest_text;
      Manifest old;
      if (ReadFile(fs::path(EntryDir(previous)) / kManifest, manifest_text) &&
          ParseManifest(manifest_text, old)) {
        std::string change = DescribeChange(old.components, key.components);
        if (!change.empty()) miss_reason = absl::StrCat("stale: ", change);
      }
    }
    return nullptr;
  }
  std::string manifest_text;
  Manifest manifest;
  if (!ReadFile(dir / kManifest, manifest_text)) {
    miss_reason = "manifest missing (half-written entry)";
    Remove(dir.string());
    return nullptr;
  }
  if (!ParseManifest(manifest_text, manifest) || manifest.digest != key.digest) {
    miss_reason = "manifest unreadable";
    Remove(dir.string());
    return nullptr;
  }
  if (manifest.format != kArtifactFormatVersion) {
    miss_reason = absl::StrCat("artifact format ", manifest.format, " → ", kArtifactFormatVersion);
    Remove(dir.string());
    return nullptr;
  }
  std::string payload;
  if (!ReadFile(dir / kPayload, payload)) {
    miss_reason = "payload missing";
    Remove(dir.string());
    return nullptr;
  }
  if (payload.size() != manifest.payload_bytes) {
    miss_reason = absl::StrCat("truncated payload (", payload.size(), " of ",
                               manifest.payload_bytes, " bytes)");
    Remove(dir.string());
    return nullptr;
  }
  if (PayloadChecksum(payload) != manifest.payload_xxh3) {
    miss_reason = "checksum mismatch";
    Remove(dir.string());
    return nullptr;
  }
  auto module = DeserializeArtifact(payload);
  if (!module.ok()) {
    miss_reason = absl::StrCat("corrupt payload: ", module.status().message());
    Remove(dir.string());
    return nullptr;
  }
  fs::last_write_time(dir / kManifest, fs::file_time_type::clock::now(), error);  // LRU
  return std::move(*module);
}

void DiskCache::Store(const CacheKey& key, const jit::CompiledModule& module) {
  if (!enabled()) return;
  std::error_code error;
  const fs::path final_dir = EntryDir(key.digest);
  if (fs::exists(final_dir / kManifest, error)) return;  // another process published it
  const fs::path staging = fs::path(root_) / kLayout / "tmp" / absl::StrCat(key.digest, ".", UniqueSuffix());
  fs::create_directories(staging, error);
  if (error) return Disable(absl::StrCat("cannot create ", staging.string(), ": ", error.message()));
  const std::string payload = SerializeArtifact(module);
  Manifest manifest{kArtifactFormatVersion, key.digest, PayloadChecksum(payload), payload.size(),
                    module.options.source_name, key.components};
  // The manifest goes last: an entry without one is never trusted.
  if (!WriteFile(staging / kPayload, payload) ||
      !WriteFile(staging / kManifest, WriteManifest(manifest))) {
    fs::remove_all(staging, error);
    return Disable(absl::StrCat("cannot write to ", staging.string(), " (disk full?)"));
  }
  if (fs::exists(final_dir, error)) Remove(final_dir.string());  // a damaged leftover
  fs::rename(staging, final_dir, error);
  if (error) {
    fs::remove_all(staging, error);  // lost a race to an identical entry
    return;
  }
  const fs::path index = fs::path(root_) / kLayout / "index" / key.base_digest;
  const fs::path index_staging = fs::path(index.string() + "." + UniqueSuffix());
  if (WriteFile(index_staging, key.digest)) fs::rename(index_staging, index, error);
  Evict(key.digest);
}

void DiskCache::Evict(const std::string& keep) {
  absl::MutexLock lock(&mu_);
  std::vector<DiskEntry> entries = List();
  uint64_t total = 0;
  for (const DiskEntry& entry : entries) total += entry.bytes;
  if (total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(), [](const DiskEntry& a, const DiskEntry& b) {
    return a.last_used_unix < b.last_used_unix;
  });
  for (const DiskEntry& entry : entries) {
    if (total <= max_bytes_) break;
    if (entry.digest == keep) continue;
    Remove(EntryDir(entry.digest));
    total -= entry.bytes;
  }
}

std::string DiskCache::LookupText(const std::string& text_digest) const {
  if (!enabled()) return "";
  std::string digest;
  if (!ReadFile(fs::path(root_) / kLayout / "text" / text_digest, digest)) return "";
  return digest.size() == 64 ? digest : "";
}

void DiskCache::RecordText(const std::string& text_digest, const std::string& digest) {
  if (!enabled()) return;
  const fs::path path = fs::path(root_) / kLayout / "text" / text_digest;
  const fs::path staging = fs::path(path.string() + "." + UniqueSuffix());
  std::error_code error;
  if (WriteFile(staging, digest)) fs::rename(staging, path, error);
}

DiskCache::KeyLock::~KeyLock() {
  flock(fd_, LOCK_UN);
  close(fd_);
}

std::unique_ptr<DiskCache::KeyLock> DiskCache::Lock(const std::string& digest) {
  if (!enabled()) return nullptr;
  std::string path = (fs::path(root_) / kLayout / "locks" / (digest + ".lock")).string();
  int fd = open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0) return nullptr;
  if (flock(fd, LOCK_EX) != 0) {
    close(fd);
    return nullptr;
  }
  return std::make_unique<KeyLock>(fd);
}

std::vector<DiskEntry> DiskCache::List() const {
  std::vector<DiskEntry> entries;
  std::error_code error;
  for (const fs::directory_entry& dir :
       fs::directory_iterator(fs::path(root_) / kLayout / "entries", error)) {
    DiskEntry entry;
    entry.digest = dir.path().filename().string();
    std::string text;
    Manifest manifest;
    if (ReadFile(dir.path() / kManifest, text) && ParseManifest(text, manifest)) {
      entry.components = manifest.components;
      entry.source_name = manifest.source_name;
    }
    std::error_code size_error;
    for (const fs::directory_entry& file : fs::directory_iterator(dir.path(), size_error)) {
      entry.bytes += file.file_size(size_error);
    }
    entry.last_used_unix = ModifiedUnix(dir.path() / kManifest);
    entries.push_back(std::move(entry));
  }
  return entries;
}

uint64_t DiskCache::TotalBytes() const {
  uint64_t total = 0;
  for (const DiskEntry& entry : List()) total += entry.bytes;
  return total;
}

absl::Status DiskCache::Clear() {
  std::error_code error;
  for (const DiskEntry& entry : List()) {
    fs::remove_all(EntryDir(entry.digest), error);
    if (error) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot clear ", root_, ": ", error.message()));
    }
  }
  for (const char* sub : {"index", "text"}) {
    fs::remove_all(fs::path(root_) / kLayout / sub, error);
    fs::create_directories(fs::path(root_) / kLayout / sub, error);
  }
  return absl::OkStatus();
}

}  // namespace tessera::cache
