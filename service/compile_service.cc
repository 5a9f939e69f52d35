// The compile service: the path of one compile request, top to bottom in Compile().
#include "service/compile_service.h"

#include <new>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "jit/compiler.h"
#include "runtime/host_target.h"
#include "service/artifact.h"
#include "service/package.h"

namespace tessera::service {
namespace {

/// The text index is a convenience for repeated identical sources; it is dropped wholesale when
/// it grows past this many texts (the memory tier still finds them by canonical key).
constexpr size_t kMaxIndexedTexts = 4096;

/// The bytes a module accounts for in memory: its artifacts and host code.
uint64_t MemoryFootprint(const jit::CompiledModule& module) {
  // Plus the linked code and the JIT's own tables.
  uint64_t bytes = module.host_llvm_ir.size() + 2 * module.host_object.object.size() + 1024;
  for (const jit::DeviceImage& image : module.device_images) {
    bytes += image.ptx.size() + image.cubin.size();
  }
  return bytes;
}

/// A module from the cache made ready for this caller: its delegates resolve in the caller's
/// registry, its diagnostics use the caller's source name, and host code is linked (no code
/// generation) — unless it was compiled for a CPU whose code does not run here, as a package's
/// (jit/compile_options.h host_cpu); then it stays unlinked, as its compile left it.
/// (nvptx modules load their launch code when a function is first looked up:
/// service/loaded_module.cc.)
absl::StatusOr<std::shared_ptr<const jit::CompiledModule>> Load(
    std::unique_ptr<jit::CompiledModule> module, const jit::CompileOptions& options) {
  module->options.delegates = options.delegates;
  module->options.source_name = options.source_name;
  bool foreign_cpu = false;
  if (module->options.target == runtime::Target::kHost && !options.host_cpu.empty()) {
    // A compile naming a CPU: the entry must hold code for that CPU (the key says so).
    TESSERA_ASSIGN_OR_RETURN(runtime::HostTarget wanted,
                             runtime::ResolveHostTarget(options.host_cpu));
    if (module->host_object.cpu != wanted.id) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the entry holds host code for CPU ", module->host_object.cpu, ", not ", wanted.id));
    }
    foreign_cpu = !runtime::CheckHostCodeRunsHere(wanted.id).ok();
  }
  if (module->options.target == runtime::Target::kHost && !foreign_cpu) {
    auto host = jit::LoadHostCode(*module);
    if (!host.ok()) return host.status();
    module->host = std::move(*host);
  }
  return std::shared_ptr<const jit::CompiledModule>(std::move(module));
}

}  // namespace

CompileService::CompileService(CompileServiceOptions options)
    : options_(std::move(options)), memory_(options_.memory_max_bytes) {
  if (!options_.disk_root.empty()) {
    cache::DiskCacheOptions disk;
    disk.root = options_.disk_root;
    disk.max_bytes = options_.disk_max_bytes;
    disk.read_only = options_.disk_read_only;
    disk.lock_timeout = options_.disk_lock_timeout;
    disk.logger = options_.logger;
    disk_ = std::make_unique<cache::DiskCache>(std::move(disk));
  }
  if (!options_.remote_url.empty()) {
    absl::StatusOr<cache::RemoteCacheOptions> remote =
        cache::RemoteCacheOptions::FromUrl(options_.remote_url);
    if (!remote.ok()) {
      options_.logger.Warning(absl::StrCat("no remote compile cache: ", remote.status().message()));
    } else {
      remote->tag = RemoteNamespace(options_.toolchain);
      remote->logger = options_.logger;
      if (!remote->lease_wait_set) remote->lease_wait = options_.disk_lock_timeout;
      remote_ = std::make_shared<cache::RemoteCache>(*std::move(remote));
    }
  }
}

absl::StatusOr<CompileResult> CompileService::Compile(absl::string_view source,
                                                      const jit::CompileOptions& options) {
  // The compiler's own allocations are bounded (the arbiter's probes by a budget); running out
  // of memory anyway — parsing a huge source, a payload, the compile — is a status, never an
  // exception out of the service (or through the C API above it).
  try {
    return ServeRequest(source, options);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory while compiling (std::bad_alloc)");
  }
}

absl::StatusOr<CompileResult> CompileService::Compile(absl::string_view source,
                                                      const CompileRequest& request) {
  return Compile(source, ToCompileOptions(request));
}

absl::StatusOr<CompileService::Explanation> CompileService::Explain(absl::string_view source,
                                                                    const CompileRequest& request) {
  return Explain(source, ToCompileOptions(request));
}

absl::StatusOr<std::shared_ptr<const jit::CompiledModule>> CompileService::LoadPackage(
    absl::string_view bytes, const CompileRequest& request) {
  return LoadPackage(bytes, ToCompileOptions(request));
}

absl::StatusOr<CompileResult> CompileService::ServeRequest(absl::string_view source,
                                                           const jit::CompileOptions& options) {
  // 0. The IR after each stage is never stored: a compile that records it is never cached.
  if (options.dump_stages) {
    absl::StatusOr<std::unique_ptr<jit::CompiledModule>> compiled = jit::Compile(source, options);
    if (!compiled.ok()) return compiled.status();
    Count(ModuleSource::kCompiled, nullptr);
    return CompileResult{std::shared_ptr<const jit::CompiledModule>(*std::move(compiled)),
                         "",
                         ModuleSource::kCompiled,
                         {}};
  }
  const ToolchainIdentity toolchain = ToolchainFor(options_.toolchain, options);
  // 1. This exact request was compiled before and memory still holds it: no parsing.
  const std::string request = RequestText(source, options, toolchain);
  if (auto hit = FromMemoryByText(request)) return *std::move(hit);
  // 2. A fresh process: the disk's text index finds the entry, still without parsing.
  const std::string text_digest =
      disk_ != nullptr && disk_->enabled() ? cache::Sha256Hex(request) : std::string();
  std::string text_entry;
  cache::Miss text_miss;
  if (auto hit = FromDiskByText(request, text_digest, options, text_entry, text_miss)) {
    return *std::move(hit);
  }
  // 3. Parse, once (a miss compiles this parse), and print the canonical form: comments,
  // whitespace and SSA names drop out. A syntax error names the caller's source.
  absl::StatusOr<jit::ParsedSource> parsed = jit::Parse(source, options.source_name);
  if (!parsed.ok()) return parsed.status();
  // 4. The key; 5. memory, disk or compile, once per key.
  const cache::CacheKey key = ModuleKey(parsed->canonical(), options, toolchain);
  const bool text_named_this_entry = !text_entry.empty() && text_entry == key.digest;
  absl::StatusOr<CompileResult> result =
      CompileKey(key, *parsed, options, text_named_this_entry ? &text_miss : nullptr);
  // 6. Remember the text, in memory and on disk, for the next request spelled the same.
  if (result.ok() && result->module->PendingDecisions() == 0) {
    if (!text_digest.empty()) disk_->RecordText(text_digest, key.digest);
    RememberText(request, key.digest);
  }
  return result;
}

std::optional<CompileResult> CompileService::FromMemoryByText(const std::string& request) {
  std::string digest;
  {
    absl::MutexLock lock(&mu_);
    auto it = digest_by_text_.find(request);
    if (it == digest_by_text_.end()) return std::nullopt;
    digest = it->second;
  }
  auto module = memory_.Get(digest);
  if (module == nullptr) return std::nullopt;
  Count(ModuleSource::kMemory, nullptr);
  return CompileResult{std::move(module), digest, ModuleSource::kMemory, {}};
}

std::optional<CompileResult> CompileService::FromDiskByText(const std::string& request,
                                                            const std::string& text_digest,
                                                            const jit::CompileOptions& options,
                                                            std::string& digest,
                                                            cache::Miss& miss) {
  if (text_digest.empty()) return std::nullopt;
  digest = disk_->LookupText(text_digest);
  if (digest.empty()) return std::nullopt;
  if (auto module = memory_.Get(digest)) {  // another spelling of it is loaded already
    RememberText(request, digest);
    Count(ModuleSource::kMemory, nullptr);
    return CompileResult{std::move(module), digest, ModuleSource::kMemory, {}};
  }
  cache::CacheKey key;
  key.digest = digest;
  auto module = LoadFromDisk(key, options, miss);
  if (module == nullptr) return std::nullopt;
  memory_.Put(digest, module, MemoryFootprint(*module));
  RememberText(request, digest);
  Count(ModuleSource::kDisk, nullptr);
  return CompileResult{std::move(module), digest, ModuleSource::kDisk, {}};
}

absl::StatusOr<CompileResult> CompileService::CompileKey(const cache::CacheKey& key,
                                                         jit::ParsedSource& source,
                                                         const jit::CompileOptions& options,
                                                         const cache::Miss* known_miss) {
  if (auto module = memory_.Get(key.digest)) {
    Count(ModuleSource::kMemory, nullptr);
    return CompileResult{std::move(module), key.digest, ModuleSource::kMemory, {}};
  }
  // Threads: the first caller for a key does the work; the others wait for its result. A
  // request with background decisions may get a module with pending ones, which no other
  // request may share: it flies apart.
  bool leader = false;
  Outcome outcome = flights_.Do(
      options.background_decisions ? absl::StrCat(key.digest, "/background") : key.digest,
      [&] { return LoadOrCompile(key, source, options, known_miss); }, &leader,
      // A waiter gives its parse (and the compile session it holds) back before it waits.
      [&source] { jit::ParsedSource released = std::move(source); });
  if (leader || !outcome.ok()) return outcome;
  Count(ModuleSource::kMemory, nullptr);
  outcome->source = ModuleSource::kMemory;
  outcome->miss = {};
  return outcome;
}

absl::StatusOr<CompileResult> CompileService::LoadOrCompile(const cache::CacheKey& key,
                                                            jit::ParsedSource& source,
                                                            const jit::CompileOptions& options,
                                                            const cache::Miss* known_miss) {
  cache::Miss miss;
  std::unique_ptr<cache::DiskCache::KeyLock> lock;
  if (disk_ != nullptr && disk_->enabled()) {
    // Processes: whoever holds the key's lock compiles; the others then find it on disk.
    lock = disk_->Lock(key.digest);
    if (auto module = LoadFromDisk(key, options, miss)) {
      memory_.Put(key.digest, module, MemoryFootprint(*module));
      Count(ModuleSource::kDisk, nullptr);
      return CompileResult{std::move(module), key.digest, ModuleSource::kDisk, {}};
    }
    // The entry the text index named was damaged and removed just now: keep that reason.
    if (known_miss != nullptr && miss.reason == cache::MissReason::kNotCached) miss = *known_miss;
  } else if (disk_ != nullptr) {
    miss = {cache::MissReason::kNotCached, "disk cache off"};
  }
  // The fleet: another machine compiled it, or compiles it now (then we wait for its value),
  // or this process takes the key's lease and compiles it for everyone.
  std::unique_ptr<cache::RemoteCache::Lease> lease;
  if (remote_ != nullptr && remote_->enabled() && options.background_decisions) {
    // No lease: this compile publishes nothing when it leaves decisions pending.
    if (auto entry =
            remote_->Load(cache::RemoteCache::Kind::kArtifact, key, kArtifactFormatVersion, miss)) {
      if (auto module = LoadPayload(entry->payload, options, "remote ", miss)) {
        memory_.Put(key.digest, module, MemoryFootprint(*module));
        Count(ModuleSource::kRemote, nullptr);
        return CompileResult{std::move(module), key.digest, ModuleSource::kRemote, {}};
      }
    }
  } else if (remote_ != nullptr && remote_->enabled()) {
    cache::Miss remote_miss;
    if (auto module = LoadFromRemote(key, options, remote_miss, lease)) {
      memory_.Put(key.digest, module, MemoryFootprint(*module));
      Count(ModuleSource::kRemote, nullptr);
      return CompileResult{std::move(module), key.digest, ModuleSource::kRemote, {}};
    }
    // Say the more telling of the two: a local "not cached" yields to a remote reason.
    if (miss.reason == cache::MissReason::kNotCached &&
        remote_miss.reason != cache::MissReason::kNotCached) {
      miss = remote_miss;
    }
  }
  auto compiled = jit::Compile(std::move(source), options);  // the parse from step 3
  if (!compiled.ok()) return compiled.status();
  std::shared_ptr<const jit::CompiledModule> module = std::move(*compiled);
  // Before the lease goes: waiters find the value. A module with pending decisions is this
  // caller's only (the compile that measures them publishes the module under the same key).
  if (module->PendingDecisions() == 0) Publish(key, module);
  Count(ModuleSource::kCompiled, &miss);
  return CompileResult{std::move(module), key.digest, ModuleSource::kCompiled, miss};
}

std::shared_ptr<const jit::CompiledModule> CompileService::LoadFromRemote(
    const cache::CacheKey& key, const jit::CompileOptions& options, cache::Miss& miss,
    std::unique_ptr<cache::RemoteCache::Lease>& lease) {
  cache::RemoteCache::Claim claim = remote_->LoadOrLease(key, kArtifactFormatVersion);
  lease = std::move(claim.lease);
  miss = std::move(claim.miss);
  if (!claim.entry.has_value()) return nullptr;
  // Whole and checksummed, yet maybe not an artifact this build reads: then compile, and the
  // store overwrites it.
  auto loaded = LoadPayload(claim.entry->payload, options, "remote ", miss);
  if (loaded == nullptr) return nullptr;
  // A remote hit fills the local tiers: the next process on this machine reads its disk.
  if (disk_ != nullptr) {
    disk_->Store(key, kArtifactFormatVersion, claim.entry->payload, claim.entry->source_name);
  }
  return loaded;
}

std::shared_ptr<const jit::CompiledModule> CompileService::LoadPayload(
    const std::string& payload, const jit::CompileOptions& options, absl::string_view tier,
    cache::Miss& miss) {
  auto module = DeserializeArtifact(payload);
  if (!module.ok()) {
    miss = {cache::MissReason::kDamaged,
            absl::StrCat("corrupt ", tier, "payload: ", module.status().message())};
    return nullptr;
  }
  auto loaded = Load(std::move(*module), options);
  if (!loaded.ok()) {
    miss = {cache::MissReason::kUnloadable,
            absl::StrCat(tier, "host code does not load: ", loaded.status().message())};
    return nullptr;
  }
  return *std::move(loaded);
}

absl::StatusOr<std::shared_ptr<const jit::CompiledModule>> CompileService::LoadPackage(
    absl::string_view bytes, const jit::CompileOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<PackageEntry> entries, ReadPackage(bytes));
  TESSERA_ASSIGN_OR_RETURN(const PackageEntry* entry,
                           SelectPackageEntry(entries, options.target, options.arch));
  absl::StatusOr<std::unique_ptr<jit::CompiledModule>> module =
      DeserializeArtifact(entry->artifact);
  if (!module.ok()) {
    return absl::DataLossError(absl::StrCat("a damaged Tessera package: its ",
                                            runtime::TargetName(entry->target), " ", entry->machine,
                                            " module: ", module.status().message()));
  }
  // Its diagnostics keep the name of the source it was compiled from.
  jit::CompileOptions ready = options;
  ready.source_name = (*module)->options.source_name;
  return Load(std::move(*module), ready);
}

std::shared_ptr<const jit::CompiledModule> CompileService::LoadFromDisk(
    const cache::CacheKey& key, const jit::CompileOptions& options, cache::Miss& miss) {
  std::optional<std::string> payload = disk_->Load(key, kArtifactFormatVersion, miss);
  if (!payload.has_value()) return nullptr;
  auto loaded = LoadPayload(*payload, options, "", miss);
  if (loaded == nullptr && miss.reason == cache::MissReason::kDamaged) disk_->Discard(key.digest);
  return loaded;
}

void CompileService::Publish(const cache::CacheKey& key,
                             std::shared_ptr<const jit::CompiledModule> module) {
  if (disk_ != nullptr || remote_ != nullptr) {
    const std::string payload = SerializeArtifact(*module);
    if (disk_ != nullptr) {
      disk_->Store(key, kArtifactFormatVersion, payload, module->options.source_name);
    }
    if (remote_ != nullptr) {
      remote_->Store(cache::RemoteCache::Kind::kArtifact, key, kArtifactFormatVersion, payload,
                     module->options.source_name);
    }
  }
  const uint64_t bytes = MemoryFootprint(*module);
  memory_.Put(key.digest, std::move(module), bytes);
}

void CompileService::RememberText(const std::string& request, const std::string& digest) {
  absl::MutexLock lock(&mu_);
  if (digest_by_text_.size() >= kMaxIndexedTexts) digest_by_text_.clear();
  digest_by_text_[request] = digest;
}

void CompileService::Count(ModuleSource source, const cache::Miss* miss) {
  absl::MutexLock lock(&mu_);
  switch (source) {
    case ModuleSource::kMemory:
      ++stats_.memory_hits;
      break;
    case ModuleSource::kDisk:
      ++stats_.disk_hits;
      break;
    case ModuleSource::kRemote:
      ++stats_.remote_hits;
      break;
    case ModuleSource::kCompiled:
      ++stats_.compiles;
      if (miss != nullptr) ++stats_.misses_by_reason[miss->reason];
      break;
  }
}

std::shared_ptr<const jit::CompiledModule> CompileService::LookupByKey(const std::string& digest) {
  return memory_.Get(digest);
}

absl::StatusOr<CompileService::Explanation> CompileService::Explain(
    absl::string_view source, const jit::CompileOptions& options) {
  absl::StatusOr<std::string> canonical = jit::CanonicalSource(source);
  if (!canonical.ok()) return canonical.status();
  Explanation explanation;
  explanation.key = ModuleKey(*canonical, options, ToolchainFor(options_.toolchain, options));
  if (memory_.Get(explanation.key.digest) != nullptr) {
    explanation.verdict = "memory hit";
    return explanation;
  }
  cache::Miss miss{cache::MissReason::kNotCached, "no disk tier"};
  if (disk_ != nullptr) {
    std::optional<std::string> payload = disk_->Load(explanation.key, kArtifactFormatVersion, miss);
    if (payload.has_value()) {
      if (auto module = DeserializeArtifact(*payload); module.ok()) {
        explanation.verdict = "disk hit";
        return explanation;
      } else {
        miss = {cache::MissReason::kDamaged,
                absl::StrCat("corrupt payload: ", module.status().message())};
        disk_->Discard(explanation.key.digest);
      }
    }
  }
  if (remote_ != nullptr && remote_->enabled()) {
    cache::Miss remote_miss;
    if (auto entry = remote_->Load(cache::RemoteCache::Kind::kArtifact, explanation.key,
                                   kArtifactFormatVersion, remote_miss)) {
      if (auto module = DeserializeArtifact(entry->payload); module.ok()) {
        explanation.verdict = "remote hit";
        return explanation;
      } else {
        remote_miss = {cache::MissReason::kDamaged,
                       absl::StrCat("corrupt remote payload: ", module.status().message())};
      }
    }
    if (miss.reason == cache::MissReason::kNotCached &&
        remote_miss.reason != cache::MissReason::kNotCached) {
      miss = remote_miss;
    }
  }
  explanation.verdict = absl::StrCat("miss: ", miss.ToString());
  explanation.miss = std::move(miss);
  return explanation;
}

std::shared_ptr<arbiter::DecisionCache> CompileService::MakeDecisionCache() const {
  const bool on_disk = disk_ != nullptr && disk_->enabled() && !disk_->read_only();
  return std::make_shared<arbiter::DecisionCache>(on_disk ? disk_->root() + "/decisions" : "",
                                                  remote_);
}

ServiceStats CompileService::stats() const {
  ServiceStats stats;
  {
    absl::MutexLock lock(&mu_);
    stats = stats_;
  }
  stats.memory_entries = memory_.entries();
  stats.memory_bytes = memory_.bytes();
  if (disk_ != nullptr) {
    stats.disk_enabled = disk_->enabled();
    stats.disk_read_only = disk_->read_only();
    stats.disk_root = disk_->root();
    stats.disk = disk_->counters();
  }
  if (remote_ != nullptr) {
    stats.remote_enabled = remote_->enabled();
    stats.remote_url = remote_->Describe();
    stats.remote = remote_->counters();
  }
  return stats;
}

}  // namespace tessera::service
