// Module keys: components from the IR, the options and the toolchain.
#include "service/module_key.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jit/delegates/registry.h"

namespace tessera::service {
namespace {

cache::KeyComponents Content(const std::string& ir_digest, const jit::CompileOptions& options) {
  return {
      {"ir", ir_digest},
      {"target", std::string(jit::TargetName(options.target))},
      {"arch", options.target == jit::Target::kNvptx ? options.arch : "-"},
      {"opt_level", absl::StrCat(options.opt_level)},
      {"deterministic", options.deterministic ? "yes" : "no"},
      {"link_cubin", options.link_cubin ? "yes" : "no"},
      {"matmul_delegate", options.matmul_delegate.empty() ? "-" : options.matmul_delegate},
      {"arbitrate", options.arbitrate ? "yes" : "no"},
  };
}

cache::KeyComponents Producer(const jit::CompileOptions& options,
                              const ToolchainIdentity& toolchain) {
  cache::KeyComponents producer = {{"tessera", toolchain.tessera},
                                   {"llvm", toolchain.llvm},
                                   {"cuda", toolchain.cuda},
                                   {"nvjitlink", toolchain.nvjitlink}};
  // Only device code reads the toolkit at compile time (libdevice).
  jit::CudaToolkitIdentity toolkit{"-", "-"};
  if (options.target == jit::Target::kNvptx) {
    toolkit = jit::DescribeCudaToolkit(jit::ResolveCudaToolkit(options));
  }
  producer.insert(producer.end(), {{"cuda_toolkit", toolkit.version},
                                   {"libdevice", toolkit.libdevice},
                                   {"delegates", absl::StrJoin(toolchain.delegates, "; ")}});
  return producer;
}

}  // namespace

ToolchainIdentity ToolchainIdentity::Current() {
  ToolchainIdentity identity;
  static_cast<jit::Toolchain&>(identity) = jit::Toolchain::Current();
  return identity;
}

ToolchainIdentity ToolchainFor(const ToolchainIdentity& base, const jit::CompileOptions& options) {
  ToolchainIdentity toolchain = base;
  if (options.delegates == nullptr) return toolchain;
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
  return toolchain;
}

cache::CacheKey ModuleKey(const std::string& canonical_ir, const jit::CompileOptions& options,
                          const ToolchainIdentity& toolchain) {
  return cache::MakeCacheKey(Content(cache::Sha256Hex(canonical_ir), options),
                             Producer(options, toolchain));
}

std::string RequestText(absl::string_view source, const jit::CompileOptions& options,
                        const ToolchainIdentity& toolchain) {
  // The key's components with the text itself in place of its canonical form's digest.
  std::string text;
  for (const auto& [name, value] : Content("", options)) absl::StrAppend(&text, name, "=", value, "|");
  for (const auto& [name, value] : Producer(options, toolchain)) {
    absl::StrAppend(&text, name, "=", value, "|");
  }
  absl::StrAppend(&text, "source=", source);
  return text;
}

}  // namespace tessera::service
