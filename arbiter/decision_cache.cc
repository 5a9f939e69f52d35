#include "arbiter/decision_cache.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "cache/remote_cache.h"

namespace tessera::arbiter {
namespace fs = std::filesystem;

DecisionCache::DecisionCache(std::string directory, std::shared_ptr<cache::RemoteCache> remote)
    : directory_(std::move(directory)), remote_(std::move(remote)) {}

std::optional<DecisionRecord> DecisionCache::LoadRemote(const std::string& key,
                                                        const std::string& base_key) {
  if (remote_ == nullptr || !remote_->enabled()) return std::nullopt;
  cache::CacheKey name;
  name.digest = key;
  cache::Miss miss;
  std::optional<cache::RemoteCache::Entry> entry =
      remote_->Load(cache::RemoteCache::Kind::kDecision, name, kDecisionRecordFormat, miss);
  if (!entry.has_value()) return std::nullopt;
  absl::StatusOr<DecisionRecord> record = RecordFromJson(entry->payload);
  // Whole and checksummed but not a record of this key: a miss (a new one overwrites it). The
  // base key becomes a folder on disk: only ours, never a path the server chose.
  if (!record.ok() || record->key != key || record->base_key != base_key) return std::nullopt;
  return *std::move(record);
}

std::optional<DecisionRecord> DecisionCache::Load(const std::string& path) {
  std::string text;
  if (!tessera::ReadFile(path, text)) return std::nullopt;
  absl::StatusOr<DecisionRecord> record = RecordFromJson(text);
  if (!record.ok()) {
    // Damaged (truncated, foreign, hand-edited): a miss, and the file goes.
    ++stats_.damaged;
    std::error_code ignored;
    fs::remove(path, ignored);
    return std::nullopt;
  }
  return *record;
}

DecisionCache::Lookup DecisionCache::Find(const std::string& key, const std::string& base_key) {
  absl::MutexLock lock(&mu_);
  Lookup lookup;
  if (auto it = memory_.find(key); it != memory_.end()) {
    lookup.fresh = it->second;
  } else if (!directory_.empty()) {
    if (auto record = Load(absl::StrCat(directory_, "/", base_key, "/", key, ".json"))) {
      if (record->key == key) {
        memory_[key] = *record;
        lookup.fresh = std::move(record);
      }
    }
  }
  if (!lookup.fresh && remote_ != nullptr) {
    // Another machine measured it? Network I/O, so without the lock: a slow server must not
    // hold up this context's other lookups. (Relocked on every way out, an exception too.)
    mu_.Unlock();
    std::optional<DecisionRecord> record;
    try {
      record = LoadRemote(key, base_key);
    } catch (...) {
      mu_.Lock();
      throw;
    }
    mu_.Lock();
    if (record) {
      ++stats_.remote_hits;
      // A Store of this key meanwhile wins (the same measurement, made here).
      auto [it, inserted] = memory_.try_emplace(key, *std::move(record));
      if (inserted) WriteToDisk(it->second);
      lookup.fresh = it->second;
    }
  }
  if (lookup.fresh) {
    ++stats_.hits;
    return lookup;
  }
  ++stats_.misses;
  auto newer = [&](const DecisionRecord& candidate) {
    if (candidate.base_key != base_key || candidate.key == key) return;
    if (!lookup.stale || candidate.created > lookup.stale->created) lookup.stale = candidate;
  };
  for (const auto& [ignored, record] : memory_) newer(record);
  if (!directory_.empty()) {
    std::error_code error;
    for (const fs::directory_entry& entry :
         fs::directory_iterator(fs::path(directory_) / base_key, error)) {
      if (entry.path().extension() != ".json") continue;
      if (auto record = Load(entry.path().string())) newer(*record);
    }
  }
  if (lookup.stale) ++stats_.stale;
  return lookup;
}

void DecisionCache::Store(const DecisionRecord& record) {
  {
    absl::MutexLock lock(&mu_);
    memory_[record.key] = record;
    ++stats_.stores;
    WriteToDisk(record);
  }
  if (remote_ != nullptr) {  // network I/O, without the lock
    cache::CacheKey name;
    name.digest = record.key;
    remote_->Store(cache::RemoteCache::Kind::kDecision, name, kDecisionRecordFormat, ToJson(record),
                   "");
  }
}

void DecisionCache::WriteToDisk(const DecisionRecord& record) {
  if (directory_.empty()) return;
  std::error_code error;
  const fs::path folder = fs::path(directory_) / record.base_key;
  fs::create_directories(folder, error);
  const fs::path final_path = folder / (record.key + ".json");
  const fs::path temporary = folder / absl::StrCat(".", record.key, ".", getpid(), ".tmp");
  // Written whole, then renamed: a reader sees the old record or the new one, never half.
  if (error || !tessera::WriteFile(temporary.string(), ToJson(record))) {
    ++stats_.disk_errors;
    fs::remove(temporary, error);
    return;
  }
  fs::rename(temporary, final_path, error);
  if (error) {
    ++stats_.disk_errors;
    fs::remove(temporary, error);
  }
}

std::vector<DecisionRecord> DecisionCache::Records() {
  absl::MutexLock lock(&mu_);
  std::map<std::string, DecisionRecord> all = memory_;
  if (!directory_.empty()) {
    std::error_code error;
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(directory_, error)) {
      if (entry.path().extension() != ".json") continue;
      if (auto record = Load(entry.path().string())) all.emplace(record->key, *record);
    }
  }
  std::vector<DecisionRecord> records;
  for (auto& [ignored, record] : all) records.push_back(std::move(record));
  std::stable_sort(
      records.begin(), records.end(),
      [](const DecisionRecord& a, const DecisionRecord& b) { return a.created > b.created; });
  return records;
}

DecisionCacheStats DecisionCache::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace tessera::arbiter
