// The compile service: where a compile request goes, in order. Text → (the same text again?)
// → parse (once) and canonical form → key → memory → (one compile per key across threads and
// processes) → disk → remote (one compile per key across the fleet) → compile → publish → load. The
// compiler (jit/) compiles; the cache (cache/) stores bytes; the service decides and owns the
// order.
#ifndef TESSERA_SERVICE_COMPILE_SERVICE_H_
#define TESSERA_SERVICE_COMPILE_SERVICE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "arbiter/decision_cache.h"
#include "base/log.h"
#include "cache/cache_key.h"
#include "cache/disk_cache.h"
#include "cache/memory_cache.h"
#include "cache/miss.h"
#include "cache/remote_cache.h"
#include "cache/single_flight.h"
#include "jit/compile_options.h"
#include "jit/compiled_module.h"
#include "jit/compiler.h"
#include "service/compile_request.h"
#include "service/module_key.h"

namespace tessera::service {

struct CompileServiceOptions {
  /// The disk tier's root; empty: no disk tier (memory only).
  std::string disk_root = cache::DiskCache::DefaultRoot();
  uint64_t disk_max_bytes = uint64_t{1} << 30;
  /// Serve disk hits only, never write (a prebuilt cache).
  bool disk_read_only = false;
  /// How long a compile waits for another process compiling the same key.
  absl::Duration disk_lock_timeout = absl::Seconds(120);
  uint64_t memory_max_bytes = uint64_t{256} << 20;
  /// The remote tier shared by a fleet (docs/cache.md), `redis://…`; empty: none. A URL that
  /// does not parse is warned about and ignored (the C API refuses it instead).
  std::string remote_url = cache::RemoteCacheOptions::DefaultUrl();
  /// What keys are made of besides IR and options (tests inject other versions).
  ToolchainIdentity toolchain = ToolchainIdentity::Current();
  Logger logger;
};

/// Where a compile's module came from.
enum class ModuleSource { kMemory, kDisk, kRemote, kCompiled };

struct CompileResult {
  std::shared_ptr<const jit::CompiledModule> module;
  std::string digest;  ///< the key: a handle for LookupByKey
  ModuleSource source = ModuleSource::kCompiled;
  /// Why memory, disk and the remote tier missed (kCompiled only).
  cache::Miss miss;
};

struct ServiceStats {
  uint64_t memory_hits = 0;
  uint64_t disk_hits = 0;
  uint64_t remote_hits = 0;
  uint64_t compiles = 0;
  std::map<cache::MissReason, uint64_t> misses_by_reason;
  uint64_t memory_entries = 0;
  uint64_t memory_bytes = 0;
  bool disk_enabled = false;
  bool disk_read_only = false;
  std::string disk_root;
  cache::DiskCounters disk;
  bool remote_enabled = false;  ///< configured, and the server has not refused our credentials
  std::string remote_url;       ///< without the password
  cache::RemoteCounters remote;
};

/// Thread-safe; many services (in many processes) may share one disk root.
class CompileService {
 public:
  explicit CompileService(CompileServiceOptions options = {});

  /// The compiled module for `source` under `options`: from memory (the same text, or IR that
  /// differs only in comments, whitespace or SSA names), from disk, or compiled now — once per
  /// key however many threads and processes ask at the same time. Host-target modules come
  /// back loaded (their entries callable). A compile that records its stages
  /// (CompileOptions::dump_stages) compiles afresh and is not stored. Compile errors pass
  /// through; running out of memory is ResourceExhausted.
  absl::StatusOr<CompileResult> Compile(absl::string_view source,
                                        const jit::CompileOptions& options);
  /// The same, for a caller's request (service/compile_request.h).
  absl::StatusOr<CompileResult> Compile(absl::string_view source, const CompileRequest& request);

  /// The module a previous Compile returned under `digest`, if memory still holds it.
  std::shared_ptr<const jit::CompiledModule> LookupByKey(const std::string& digest);

  /// What Compile would do for `source`, without compiling: the key and its components, and
  /// whether memory, disk or the remote tier holds it (and if not, why).
  struct Explanation {
    cache::CacheKey key;
    std::optional<cache::Miss> miss;  ///< nullopt: a hit
    std::string verdict;  ///< "memory hit", "disk hit", "remote hit", or "miss: <reason>"
  };
  absl::StatusOr<Explanation> Explain(absl::string_view source, const jit::CompileOptions& options);
  absl::StatusOr<Explanation> Explain(absl::string_view source, const CompileRequest& request);

  /// The module a package (service/package.h) holds for `target` (nvptx: `arch`) on this
  /// machine, made ready like a cache hit (delegates resolve in `options.delegates`, host code
  /// linked from its machine code): no code generation, no cache tier touched. Damaged or
  /// foreign bytes are DATA_LOSS or INVALID_ARGUMENT; a package that fits nothing here is
  /// FAILED_PRECONDITION naming what differs. Thread-safe.
  absl::StatusOr<std::shared_ptr<const jit::CompiledModule>> LoadPackage(
      absl::string_view bytes, const jit::CompileOptions& options);
  absl::StatusOr<std::shared_ptr<const jit::CompiledModule>> LoadPackage(
      absl::string_view bytes, const CompileRequest& request);

  ServiceStats stats() const;
  /// Null without a disk tier.
  cache::DiskCache* disk() { return disk_.get(); }
  /// The arbiter's decision cache for compiles through this service: beside the disk tier
  /// (`<root>/decisions`; memory only when the tier is off or read-only) and in the remote tier.
  std::shared_ptr<arbiter::DecisionCache> MakeDecisionCache() const;
  /// Null without a remote tier.
  const std::shared_ptr<cache::RemoteCache>& remote() const { return remote_; }

 private:
  using Outcome = absl::StatusOr<CompileResult>;

  /// Compile() without its out-of-memory guard.
  Outcome ServeRequest(absl::string_view source, const jit::CompileOptions& options);

  std::optional<CompileResult> FromMemoryByText(const std::string& request);
  std::optional<CompileResult> FromDiskByText(const std::string& request,
                                              const std::string& text_digest,
                                              const jit::CompileOptions& options,
                                              std::string& digest, cache::Miss& miss);
  /// `source` is compiled (consumed) only on a miss.
  Outcome CompileKey(const cache::CacheKey& key, jit::ParsedSource& source,
                     const jit::CompileOptions& options, const cache::Miss* known_miss);
  Outcome LoadOrCompile(const cache::CacheKey& key, jit::ParsedSource& source,
                        const jit::CompileOptions& options, const cache::Miss* known_miss);
  /// The remote entry under `key` (maybe after another process's compile), deserialized,
  /// loaded and copied to disk; null with `miss` set and maybe `lease` taken otherwise.
  std::shared_ptr<const jit::CompiledModule> LoadFromRemote(
      const cache::CacheKey& key, const jit::CompileOptions& options, cache::Miss& miss,
      std::unique_ptr<cache::RemoteCache::Lease>& lease);
  /// `payload` (from `tier`: "" for disk, "remote ") deserialized and loaded; null with `miss`
  /// set (damaged, unloadable) otherwise.
  std::shared_ptr<const jit::CompiledModule> LoadPayload(const std::string& payload,
                                                         const jit::CompileOptions& options,
                                                         absl::string_view tier, cache::Miss& miss);
  /// The disk entry under `key`, deserialized and loaded; null with `miss` set otherwise.
  std::shared_ptr<const jit::CompiledModule> LoadFromDisk(const cache::CacheKey& key,
                                                          const jit::CompileOptions& options,
                                                          cache::Miss& miss);
  void Publish(const cache::CacheKey& key, std::shared_ptr<const jit::CompiledModule> module);
  void RememberText(const std::string& request, const std::string& digest);
  void Count(ModuleSource source, const cache::Miss* miss);

  const CompileServiceOptions options_;
  cache::MemoryCache<jit::CompiledModule> memory_;
  std::unique_ptr<cache::DiskCache> disk_;
  std::shared_ptr<cache::RemoteCache> remote_;
  cache::SingleFlight<Outcome> flights_;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::string> digest_by_text_ ABSL_GUARDED_BY(mu_);
  ServiceStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tessera::service

#endif  // TESSERA_SERVICE_COMPILE_SERVICE_H_
