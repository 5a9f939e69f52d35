// What names a compiled module in the cache: the canonical IR, every compile option that can
// change the output, and the identity of everything that produces it — the compiler's build
// identity, LLVM, the CUDA headers, nvJitLink, the CUDA toolkit and its libdevice (nvptx), and
// the delegates and providers the compile can resolve against. The key-completeness test
// (tests/service/module_key_test.cc) perturbs each alone.
#ifndef TESSERA_SERVICE_MODULE_KEY_H_
#define TESSERA_SERVICE_MODULE_KEY_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cache/cache_key.h"
#include "jit/codegen/toolchain.h"
#include "jit/compile_options.h"

namespace tessera::service {

/// What produced an artifact, besides the IR and the options. A change here makes every entry
/// it produced stale.
struct ToolchainIdentity : jit::Toolchain {
  /// Identities of the registered delegates and declared matmul providers.
  std::vector<std::string> delegates;

  /// The identity of this build and process (no delegates).
  static ToolchainIdentity Current();
};

/// `base` plus the identities of the delegates and declared providers `options` can resolve
/// against.
ToolchainIdentity ToolchainFor(const ToolchainIdentity& base, const jit::CompileOptions& options);

/// The key of compiling `canonical_ir` (jit::CanonicalSource) with `options` by `toolchain`
/// (from ToolchainFor).
cache::CacheKey ModuleKey(const std::string& canonical_ir, const jit::CompileOptions& options,
                          const ToolchainIdentity& toolchain);

/// Names this toolchain's keys in a remote cache (16 hex digits over the compiler's build
/// identity and LLVM): `cache clear --remote` removes exactly those. Machine-specific parts of
/// the toolchain (the CPU, nvJitLink) stay in each key, not in the namespace.
std::string RemoteNamespace(const ToolchainIdentity& toolchain);

/// The request as the caller spelled it: the key's components with the source text itself in
/// place of its canonical form. Finds a known module without parsing (in memory as is, on
/// disk by its SHA-256).
std::string RequestText(absl::string_view source, const jit::CompileOptions& options,
                        const ToolchainIdentity& toolchain);

}  // namespace tessera::service

#endif  // TESSERA_SERVICE_MODULE_KEY_H_
