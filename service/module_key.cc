// Module keys: components from the IR, the options and the toolchain — one list
// (ForEachComponent) for the key and for the request text.
#include "service/module_key.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "arbiter/plan.h"
#include "jit/arbitration/probe_device.h"
#include "jit/delegates/registry.h"

namespace tessera::service {
namespace {

/// Calls `add(name, value)` for every component, in order: `ir` (given) and the options (the
/// first kContentComponents), then the producer.
/// `exact_toolkit`: the toolkit's identity (reads libdevice once per process); otherwise its
/// stat fingerprint (for the request text, which a fresh process looks up before anything).
template <typename Add>
void ForEachComponent(absl::string_view ir, const jit::CompileOptions& options,
                      const ToolchainIdentity& toolchain, bool exact_toolkit, Add&& add) {
  const bool nvptx = options.target == runtime::Target::kNvptx;
  add("ir", ir);
  add("target", runtime::TargetName(options.target));
  add("arch", nvptx ? absl::string_view(options.arch) : "-");
  add("opt_level", options.opt_level);
  add("deterministic", options.deterministic ? "yes" : "no");
  add("link_cubin", options.link_cubin ? "yes" : "no");
  add("matmul_delegate",
      options.matmul_delegate.empty() ? absl::string_view("-") : options.matmul_delegate);
  add("batch_invariant", options.batch_invariant ? "yes" : "no");
  add("plan", options.plan == nullptr
                  ? std::string("-")
                  : absl::StrCat(options.plan->Digest(), options.plan_strict ? " strict" : ""));
  // Where nvptx decisions are measured: one taken without a device (unprobed) is not reused
  // on a machine that has one, nor one measured on an H100 on an H200. (The host CPU is part
  // of the producer below.)
  add("probe_device", nvptx ? jit::GpuProbeDevice(options.arch).description : std::string("-"));
  // The producer.
  add("tessera", toolchain.tessera);
  add("llvm", toolchain.llvm);
  add("cuda", toolchain.cuda);
  add("nvjitlink", toolchain.nvjitlink);
  // The cache stores host machine code: for this machine's CPU unless the compile names one —
  // then for that CPU, with its Tile ops decided (measured or not) on this machine.
  add("host_cpu", !nvptx && !options.host_cpu.empty() && options.host_cpu != "native"
                      ? absl::StrCat(options.host_cpu, ", decided on ", toolchain.host_cpu)
                      : toolchain.host_cpu);
  // Only device code reads the toolkit at compile time (libdevice).
  if (!nvptx) {
    add("cuda_toolkit", "-");
    add("libdevice", "-");
  } else if (exact_toolkit) {
    const jit::CudaToolkitIdentity toolkit =
        jit::DescribeCudaToolkit(jit::ResolveCudaToolkit(options));
    add("cuda_toolkit", toolkit.version);
    add("libdevice", toolkit.libdevice);
  } else {
    add("cuda_toolkit", jit::CudaToolkitFingerprint(jit::ResolveCudaToolkit(options)));
  }
  add("delegates", absl::StrJoin(toolchain.delegates, "; "));
}

/// The number of content components (`ir` and the options, through `probe_device`)
/// ForEachComponent starts with.
constexpr size_t kContentComponents = 10;

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
  for (runtime::Target target : {runtime::Target::kHost, runtime::Target::kNvptx}) {
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
  cache::KeyComponents components;
  ForEachComponent(cache::Sha256Hex(canonical_ir), options, toolchain, /*exact_toolkit=*/true,
                   [&](absl::string_view name, const absl::AlphaNum& value) {
                     components.emplace_back(std::string(name), std::string(value.Piece()));
                   });
  const cache::KeyComponents content(components.begin(), components.begin() + kContentComponents);
  const cache::KeyComponents producer(components.begin() + kContentComponents, components.end());
  return cache::MakeCacheKey(content, producer);
}

std::string RemoteNamespace(const ToolchainIdentity& toolchain) {
  return cache::Sha256Hex(absl::StrCat("tessera=", toolchain.tessera, "|llvm=", toolchain.llvm))
      .substr(0, 16);
}

std::string RequestText(absl::string_view source, const jit::CompileOptions& options,
                        const ToolchainIdentity& toolchain) {
  std::string text;
  text.reserve(source.size() + 512);
  // The key's components with the text itself in place of its canonical form's digest.
  ForEachComponent("(the source below)", options, toolchain, /*exact_toolkit=*/false,
                   [&](absl::string_view name, const absl::AlphaNum& value) {
                     absl::StrAppend(&text, name, "=", value, "|");
                   });
  text.append(source.data(), source.size());
  return text;
}

}  // namespace tessera::service
