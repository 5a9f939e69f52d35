// The compile cache: text index → memory → (single flight) → disk → compile.
#include "cache/compile_cache.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "jit/compiler.h"
#include "jit/delegates/registry.h"

namespace tessera::cache {
namespace {

/// The text index is a convenience for repeated identical sources; it is dropped wholesale when
/// it grows past this many texts (the memory tier still finds them by canonical key).
constexpr size_t kMaxIndexedTexts = 4096;

}  // namespace

struct CompileCache::Flight {
  absl::Notification done;
  absl::StatusOr<CacheResult> result = absl::UnknownError("in flight");
};

CompileCache::CompileCache(CompileCacheOptions options)
    : options_(std::move(options)), memory_(options_.memory_max_bytes) {
  const ToolchainIdentity& t = options_.toolchain;
  toolchain_fingerprint_ = absl::StrCat(t.tessera, "|", t.llvm, "|", t.cuda, "|", t.nvjitlink, "|",
                                        absl::StrJoin(t.delegates, ","));
  if (!options_.disk_root.empty()) {
    disk_ = std::make_unique<DiskCache>(options_.disk_root, options_.disk_max_bytes);
  }
}

ToolchainIdentity CompileCache::ToolchainFor(const jit::CompileOptions& options) const {
  ToolchainIdentity toolchain = options_.toolchain;
  if (options.delegates != nullptr) {
    for (const auto& identity : options.delegates->Identities()) {
      toolchain.delegates.push_back(identity.ToString());
    }
    // Declared providers are arbiter candidates: a new one can change a decision.
    for (jit::Target target : {jit::Target::kHost, jit::Target::kNvptx}) {
      for (const auto& provider : options.delegates->MatmulProviders(target)) {
        if (jit::delegates::BuiltinMatmulProvider(provider.name) == nullptr) {
          toolchain.delegates.push_back(provider.ToString());
        }
      }
    }
  }
  return toolchain;
}

std::string CompileCache::TextKey(absl::string_view source,
                                  const jit::CompileOptions& o) const {
  std::string delegates;
  for (const std::string& identity : ToolchainFor(o).delegates) {
    absl::StrAppend(&delegates, identity, ";");
  }
  return absl::StrCat(toolchain_fingerprint_, "|", delegates, "|", jit::TargetName(o.target), "|",
                      o.arch, "|", o.opt_level, "|", o.deterministic, "|", o.link_cubin, "|",
                      o.cuda_toolkit, "|", o.matmul_delegate, "|", o.arbitrate, "|", source);
}

std::shared_ptr<const jit::CompiledModule> CompileCache::Adopt(
    std::unique_ptr<jit::CompiledModule> loaded, const std::string& digest,
    const jit::CompileOptions& options) {
  // The registry is the caller's: its libraries resolve the module's c_abi callees.
  loaded->options.delegates = options.delegates;
  if (loaded->options.target == jit::Target::kHost) {
    auto host = jit::LoadHostCode(*loaded);
    if (!host.ok()) return nullptr;
    loaded->host = std::move(*host);
  }
  loaded->options.source_name = options.source_name;
  std::shared_ptr<const jit::CompiledModule> module = std::move(loaded);
  memory_.Put(digest, module);
  return module;
}

std::shared_ptr<const jit::CompiledModule> CompileCache::LoadByText(
    const std::string& text_key, const jit::CompileOptions& options, std::string& digest,
    std::string& miss_reason) {
  if (disk_ == nullptr || !disk_->enabled()) return nullptr;
  digest = disk_->LookupText(Sha256Hex(text_key));
  if (digest.empty()) return nullptr;
  CacheKey key;
  key.digest = digest;
  std::unique_ptr<jit::CompiledModule> loaded = disk_->Load(key, miss_reason);
  if (loaded == nullptr) return nullptr;
  return Adopt(std::move(loaded), digest, options);
}

absl::StatusOr<CacheResult> CompileCache::Compile(absl::string_view source,
                                                  const jit::CompileOptions& options) {
  // Fast path: this exact text was compiled before and memory still holds it.
  const std::string text_key = TextKey(source, options);
  std::string digest;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = digest_by_text_.find(text_key); it != digest_by_text_.end()) digest = it->second;
  }
  if (!digest.empty()) {
    if (auto module = memory_.Get(digest)) {
      absl::MutexLock lock(&mu_);
      ++stats_.memory_hits;
      return CacheResult{std::move(module), digest, CacheSource::kMemory, ""};
    }
  }
  // A fresh process: the disk's text index finds the entry without parsing the IR.
  std::string text_miss;
  if (auto module = LoadByText(text_key, options, digest, text_miss)) {
    absl::MutexLock lock(&mu_);
    ++stats_.disk_hits;
    if (digest_by_text_.size() >= kMaxIndexedTexts) digest_by_text_.clear();
    digest_by_text_[text_key] = digest;
    return CacheResult{std::move(module), digest, CacheSource::kDisk, ""};
  }
  absl::StatusOr<std::string> canonical = jit::CanonicalSource(source);
  if (!canonical.ok()) {
    // Let the compiler report the error with the caller's source name.
    auto compiled = jit::Compile(source, options);
    if (!compiled.ok()) return compiled.status();
    return canonical.status();
  }
  CacheKey key = MakeCacheKey(*canonical, options, ToolchainFor(options));
  const bool same_entry = !digest.empty() && digest == key.digest;
  absl::StatusOr<CacheResult> result =
      CompileKey(key, source, options, same_entry ? text_miss : std::string());
  if (result.ok()) {
    if (disk_ != nullptr) disk_->RecordText(Sha256Hex(text_key), key.digest);
    absl::MutexLock lock(&mu_);
    if (digest_by_text_.size() >= kMaxIndexedTexts) digest_by_text_.clear();
    digest_by_text_[text_key] = key.digest;
  }
  return result;
}

absl::StatusOr<CacheResult> CompileCache::CompileKey(const CacheKey& key, absl::string_view source,
                                                     const jit::CompileOptions& options,
                                                     const std::string& known_miss) {
  if (auto module = memory_.Get(key.digest)) {
    absl::MutexLock lock(&mu_);
    ++stats_.memory_hits;
    return CacheResult{std::move(module), key.digest, CacheSource::kMemory, ""};
  }
  // Single flight: the first caller for a key does the work; the others wait for its result.
  std::shared_ptr<Flight> flight;
  bool leader = false;
  {
    absl::MutexLock lock(&mu_);
    std::shared_ptr<Flight>& slot = in_flight_[key.digest];
    if (slot == nullptr) {
      slot = std::make_shared<Flight>();
      leader = true;
    }
    flight = slot;
  }
  if (!leader) {
    flight->done.WaitForNotification();
    if (flight->result.ok()) {
      absl::MutexLock lock(&mu_);
      ++stats_.memory_hits;
      CacheResult shared = *flight->result;
      shared.source = CacheSource::kMemory;
      shared.miss_reason.clear();
      return shared;
    }
    return flight->result;
  }
  flight->result = LoadOrCompile(key, source, options, known_miss);
  {
    absl::MutexLock lock(&mu_);
    in_flight_.erase(key.digest);
  }
  flight->done.Notify();
  return flight->result;
}

absl::StatusOr<CacheResult> CompileCache::LoadOrCompile(const CacheKey& key,
                                                        absl::string_view source,
                                                        const jit::CompileOptions& options,
                                                        const std::string& known_miss) {
  std::string miss_reason = "not cached";
  std::unique_ptr<DiskCache::KeyLock> lock;
  if (disk_ != nullptr && disk_->enabled()) {
    // Across processes: whoever holds the key's lock compiles; the others then find it on disk.
    lock = disk_->Lock(key.digest);
    std::unique_ptr<jit::CompiledModule> loaded = disk_->Load(key, miss_reason);
    if (loaded != nullptr) {
      if (auto module = Adopt(std::move(loaded), key.digest, options)) {
        absl::MutexLock stats_lock(&mu_);
        ++stats_.disk_hits;
        return CacheResult{std::move(module), key.digest, CacheSource::kDisk, ""};
      }
      miss_reason = "host code does not load";
    } else if (!known_miss.empty() && absl::StartsWith(miss_reason, "not cached")) {
      miss_reason = known_miss;  // the entry this text names was damaged and removed just now
    }
  } else if (disk_ != nullptr) {
    miss_reason = "not cached (disk cache off)";
  }
  auto compiled = jit::Compile(source, options);
  if (!compiled.ok()) return compiled.status();
  std::shared_ptr<const jit::CompiledModule> module = std::move(*compiled);
  if (disk_ != nullptr) disk_->Store(key, *module);
  memory_.Put(key.digest, module);
  {
    absl::MutexLock stats_lock(&mu_);
    ++stats_.compiles;
    ++stats_.misses_by_reason[miss_reason.substr(0, miss_reason.find(':'))];
  }
  return CacheResult{std::move(module), key.digest, CacheSource::kCompiled, miss_reason};
}

std::shared_ptr<const jit::CompiledModule> CompileCache::LookupByKey(const std::string& digest) {
  return memory_.Get(digest);
}

absl::StatusOr<CompileCache::Explanation> CompileCache::Explain(
    absl::string_view source, const jit::CompileOptions& options) {
  absl::StatusOr<std::string> canonical = jit::CanonicalSource(source);
  if (!canonical.ok()) return canonical.status();
  Explanation explanation{MakeCacheKey(*canonical, options, ToolchainFor(options)), ""};
  if (memory_.Get(explanation.key.digest) != nullptr) {
    explanation.verdict = "memory hit";
    return explanation;
  }
  if (disk_ == nullptr) {
    explanation.verdict = "miss: not cached (no disk tier)";
    return explanation;
  }
  std::string reason;
  explanation.verdict =
      disk_->Load(explanation.key, reason) != nullptr ? "disk hit" : absl::StrCat("miss: ", reason);
  return explanation;
}

CacheStats CompileCache::stats() const {
  CacheStats stats;
  {
    absl::MutexLock lock(&mu_);
    stats = stats_;
  }
  stats.memory_entries = memory_.entries();
  stats.memory_bytes = memory_.bytes();
  stats.disk_enabled = disk_ != nullptr && disk_->enabled();
  stats.disk_root = disk_ != nullptr ? disk_->root() : "";
  return stats;
}

}  // namespace tessera::cache
