// The compile cache every compile goes through: memory (by key handle, or by source text) →
// disk → compile, with per-key single flight across threads and processes, and statistics.
#ifndef TESSERA_CACHE_COMPILE_CACHE_H_
#define TESSERA_CACHE_COMPILE_CACHE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "cache/cache_key.h"
#include "cache/disk_cache.h"
#include "cache/memory_cache.h"
#include "jit/compile_options.h"
#include "jit/compiled_module.h"

namespace tessera::cache {

struct CompileCacheOptions {
  /// The disk tier's root; empty: no disk tier (memory only).
  std::string disk_root = DiskCache::DefaultRoot();
  uint64_t disk_max_bytes = uint64_t{1} << 30;
  uint64_t memory_max_bytes = uint64_t{256} << 20;
  /// What keys are made of besides IR and options (tests inject other versions).
  ToolchainIdentity toolchain = ToolchainIdentity::Current();
};

/// Where a compile's module came from.
enum class CacheSource { kMemory, kDisk, kCompiled };

struct CacheResult {
  std::shared_ptr<const jit::CompiledModule> module;
  std::string digest;       ///< the key: a handle for LookupByKey
  CacheSource source;
  std::string miss_reason;  ///< why memory and disk missed (kCompiled only)
};

struct CacheStats {
  uint64_t memory_hits = 0;
  uint64_t disk_hits = 0;
  uint64_t compiles = 0;
  std::map<std::string, uint64_t> misses_by_reason;
  uint64_t memory_entries = 0;
  uint64_t memory_bytes = 0;
  bool disk_enabled = false;
  std::string disk_root;
};

/// Thread-safe; many caches (in many processes) may share one disk root.
class CompileCache {
 public:
  explicit CompileCache(CompileCacheOptions options = {});

  /// The compiled module for `source` under `options`: from memory (the same text, or IR that
  /// differs only in comments, whitespace or SSA names), from disk, or compiled now — once per
  /// key however many threads and processes ask at the same time. Compile errors pass through.
  absl::StatusOr<CacheResult> Compile(absl::string_view source, const jit::CompileOptions& options);

  /// The module a previous Compile returned under `digest`, if memory still holds it.
  std::shared_ptr<const jit::CompiledModule> LookupByKey(const std::string& digest);

  /// What Compile would do for `source`, without compiling: the key and its components, and
  /// whether memory or disk holds it (and if not, why).
  struct Explanation {
    CacheKey key;
    std::string verdict;  ///< "memory hit", "disk hit", or "miss: <reason>"
  };
  absl::StatusOr<Explanation> Explain(absl::string_view source, const jit::CompileOptions& options);

  CacheStats stats() const;
  DiskCache* disk() { return disk_.get(); }

 private:
  struct Flight;
  /// `known_miss`: why the disk entry of this key already failed to load during this call
  /// (found through the text index), so the miss keeps its real reason.
  absl::StatusOr<CacheResult> CompileKey(const CacheKey& key, absl::string_view source,
                                         const jit::CompileOptions& options,
                                         const std::string& known_miss);
  absl::StatusOr<CacheResult> LoadOrCompile(const CacheKey& key, absl::string_view source,
                                            const jit::CompileOptions& options,
                                            const std::string& known_miss);
  std::string TextKey(absl::string_view source, const jit::CompileOptions& options) const;
  /// The toolchain plus the identities of the delegates `options` can resolve against.
  ToolchainIdentity ToolchainFor(const jit::CompileOptions& options) const;
  /// A disk hit found through the text index (no IR parsing); null on any miss.
  std::shared_ptr<const jit::CompiledModule> LoadByText(const std::string& text_key,
                                                        const jit::CompileOptions& options,
                                                        std::string& digest,
                                                        std::string& miss_reason);
  std::shared_ptr<const jit::CompiledModule> Adopt(std::unique_ptr<jit::CompiledModule> loaded,
                                                   const std::string& digest,
                                                   const jit::CompileOptions& options);

  const CompileCacheOptions options_;
  MemoryCache memory_;
  std::unique_ptr<DiskCache> disk_;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::string> digest_by_text_ ABSL_GUARDED_BY(mu_);
  std::string toolchain_fingerprint_;
  absl::flat_hash_map<std::string, std::shared_ptr<Flight>> in_flight_ ABSL_GUARDED_BY(mu_);
  CacheStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tessera::cache

#endif  // TESSERA_CACHE_COMPILE_CACHE_H_
