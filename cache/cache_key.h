// The compile cache key: a SHA-256 over the canonical IR, the compile options, and the identity
// of everything that shapes the artifact (Tessera, LLVM, the CUDA toolkit, nvJitLink, resolved
// delegates). Its named components make a miss explainable.
#ifndef TESSERA_CACHE_CACHE_KEY_H_
#define TESSERA_CACHE_CACHE_KEY_H_

#include <string>
#include <utility>
#include <vector>

#include "jit/compile_options.h"
#include "jit/toolchain.h"

namespace tessera::cache {

/// What produced an artifact, besides the IR and the options. A change here makes every entry
/// it produced stale.
struct ToolchainIdentity : jit::Toolchain {
  /// Identities of the registered delegates and declared matmul providers.
  std::vector<std::string> delegates;

  /// The identity of this build and process.
  static ToolchainIdentity Current();
};

/// A cache key. `digest` names the entry; `base_digest` leaves the toolchain out, so a miss can
/// find the entry an older toolchain made and say what changed.
struct CacheKey {
  std::string digest;       ///< 64 hex digits
  std::string base_digest;  ///< 64 hex digits
  /// (name, value) of every input, in order — e.g. ("target", "nvptx"), ("llvm", "22.1.8").
  std::vector<std::pair<std::string, std::string>> components;
};

/// The key of compiling `canonical_ir` (jit::CanonicalSource) with `options` by `toolchain`.
CacheKey MakeCacheKey(const std::string& canonical_ir, const jit::CompileOptions& options,
                      const ToolchainIdentity& toolchain);

/// Lowercase hex SHA-256 of `data`.
std::string Sha256Hex(const std::string& data);

/// Human-readable difference between two component lists, e.g. "llvm 22.1.8 → 22.1.9"; empty
/// when they agree.
std::string DescribeChange(const std::vector<std::pair<std::string, std::string>>& before,
                           const std::vector<std::pair<std::string, std::string>>& after);

}  // namespace tessera::cache

#endif  // TESSERA_CACHE_CACHE_KEY_H_
