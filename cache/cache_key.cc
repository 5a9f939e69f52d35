// Cache keys and toolchain identity.
#include "cache/cache_key.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/sha256.h"
#include "jit/toolchain.h"

namespace tessera::cache {
ToolchainIdentity ToolchainIdentity::Current() {
  ToolchainIdentity identity;
  static_cast<jit::Toolchain&>(identity) = jit::Toolchain::Current();
  return identity;
}

std::string Sha256Hex(const std::string& data) { return tessera::Sha256Hex(data); }

CacheKey MakeCacheKey(const std::string& canonical_ir, const jit::CompileOptions& options,
                      const ToolchainIdentity& toolchain) {
  CacheKey key;
  key.components = {
      {"ir", Sha256Hex(canonical_ir)},
      {"target", std::string(jit::TargetName(options.target))},
      {"arch", options.target == jit::Target::kNvptx ? options.arch : "-"},
      {"opt_level", absl::StrCat(options.opt_level)},
      {"deterministic", options.deterministic ? "yes" : "no"},
      {"link_cubin", options.link_cubin ? "yes" : "no"},
      {"matmul_delegate", options.matmul_delegate.empty() ? "-" : options.matmul_delegate},
      {"arbitrate", options.arbitrate ? "yes" : "no"},
  };
  const size_t base_size = key.components.size();
  key.components.insert(key.components.end(),
                        {{"tessera", toolchain.tessera},
                         {"llvm", toolchain.llvm},
                         {"cuda", toolchain.cuda},
                         {"nvjitlink", toolchain.nvjitlink},
                         {"delegates", absl::StrJoin(toolchain.delegates, "; ")}});
  auto join = [&](size_t count) {
    std::string text;
    for (size_t i = 0; i < count; ++i) {
      absl::StrAppend(&text, key.components[i].first, "=", key.components[i].second, "\n");
    }
    return text;
  };
  key.base_digest = Sha256Hex(join(base_size));
  key.digest = Sha256Hex(join(key.components.size()));
  return key;
}

std::string DescribeChange(const std::vector<std::pair<std::string, std::string>>& before,
                           const std::vector<std::pair<std::string, std::string>>& after) {
  std::map<std::string, std::string> old_values(before.begin(), before.end());
  std::vector<std::string> changes;
  for (const auto& [name, value] : after) {
    auto it = old_values.find(name);
    std::string old_value = it == old_values.end() ? "(none)" : it->second;
    if (old_value != value) {
      changes.push_back(absl::StrCat(name, " ", old_value.empty() ? "(none)" : old_value, " → ",
                                     value.empty() ? "(none)" : value));
    }
  }
  return absl::StrJoin(changes, ", ");
}

}  // namespace tessera::cache
