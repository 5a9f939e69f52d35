// The package format: magic, version, entries, then a SHA-256 of everything before it.
#include "service/package.h"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/sha256.h"
#include "jit/codegen/toolchain.h"
#include "runtime/host_target.h"
#include "service/artifact.h"
#include "service/binary_io.h"

namespace tessera::service {
namespace {

constexpr char kMagic[8] = {'T', 'S', 'R', 'P', 'K', 'G', '\n', '\0'};
constexpr size_t kDigestHexSize = 64;

/// "name: package X, here Y" for each toolchain line that differs.
std::vector<std::string> ToolchainDifferences(const std::string& package) {
  std::vector<std::string> differences;
  const std::vector<std::string> theirs = absl::StrSplit(package, '\n');
  const std::vector<std::string> ours = absl::StrSplit(CurrentPackageToolchain(), '\n');
  for (size_t i = 0; i < std::max(theirs.size(), ours.size()); ++i) {
    const std::string a = i < theirs.size() ? theirs[i] : "(none)";
    const std::string b = i < ours.size() ? ours[i] : "(none)";
    if (a != b) differences.push_back(absl::StrCat(a, " (here ", b, ")"));
  }
  return differences;
}

}  // namespace

std::string CurrentPackageToolchain() {
  const jit::Toolchain& toolchain = jit::Toolchain::Current();
  return absl::StrCat("tessera=", toolchain.tessera, "\nllvm=", toolchain.llvm,
                      "\ncuda_headers=", toolchain.cuda,
                      "\nartifact_format=", kArtifactFormatVersion);
}

PackageEntry MakePackageEntry(const jit::CompiledModule& module) {
  PackageEntry entry;
  entry.target = module.options.target;
  entry.machine = module.options.target == runtime::Target::kHost ? module.host_object.cpu
                                                                  : module.options.arch;
  entry.toolchain = CurrentPackageToolchain();
  entry.artifact = SerializeArtifact(module);
  return entry;
}

absl::StatusOr<std::string> WritePackage(const std::vector<PackageEntry>& entries) {
  if (entries.empty() || entries.size() > kMaxPackageEntries) {
    return absl::InvalidArgumentError(absl::StrCat("a package holds 1 to ", kMaxPackageEntries,
                                                   " targets, not ", entries.size()));
  }
  std::set<std::pair<runtime::Target, std::string>> seen;
  Writer w;
  w.String(std::string(kMagic, sizeof(kMagic)));
  w.I64(kPackageFormatVersion);
  w.U64(entries.size());
  for (const PackageEntry& entry : entries) {
    if (!seen.emplace(entry.target, entry.machine).second) {
      return absl::InvalidArgumentError(absl::StrCat("the package already holds ",
                                                     runtime::TargetName(entry.target),
                                                     " code for ", entry.machine));
    }
    w.I64(static_cast<int64_t>(entry.target));
    w.String(entry.machine);
    w.String(entry.toolchain);
    w.String(entry.artifact);
  }
  std::string bytes = w.Take();
  bytes += Sha256Hex(bytes);
  return bytes;
}

absl::StatusOr<std::vector<PackageEntry>> ReadPackage(absl::string_view bytes) {
  const std::string magic(kMagic, sizeof(kMagic));
  // The magic is written as a length-prefixed string: 8 + 8 bytes.
  if (bytes.size() < 16 || bytes.substr(8, magic.size()) != magic) {
    return absl::InvalidArgumentError(
        "not a Tessera package (no TSRPKG magic at its start; make one with "
        "`tessera-jit compile --emit package` or tessera_jit_module_get_text(…PACKAGE…))");
  }
  if (bytes.size() < 16 + 8 + kDigestHexSize) {
    return absl::DataLossError(
        absl::StrCat("a damaged Tessera package: ", bytes.size(), " bytes is too short"));
  }
  const absl::string_view body = bytes.substr(0, bytes.size() - kDigestHexSize);
  if (Sha256Hex(body) != bytes.substr(body.size())) {
    return absl::DataLossError(
        "a damaged Tessera package: its SHA-256 does not match its contents (truncated or "
        "altered bytes)");
  }
  Reader r(body);
  auto broken = [&](absl::string_view what) {
    return absl::DataLossError(
        absl::StrCat("a malformed Tessera package (", what, " at byte ", r.at(), ")"));
  };
  std::string read_magic;
  int version = 0;
  if (!r.String(read_magic) || read_magic != magic) return broken("magic");
  if (!r.Int(version)) return broken("version");
  if (version != kPackageFormatVersion) {
    return absl::InvalidArgumentError(absl::StrCat("a Tessera package of format ", version,
                                                   "; this library reads format ",
                                                   kPackageFormatVersion));
  }
  uint64_t count = 0;
  if (!r.Count(count) || count == 0 || count > kMaxPackageEntries) return broken("entry count");
  std::vector<PackageEntry> entries(count);
  for (PackageEntry& entry : entries) {
    int64_t target = 0;
    if (!r.I64(target) || (target != static_cast<int64_t>(runtime::Target::kHost) &&
                           target != static_cast<int64_t>(runtime::Target::kNvptx))) {
      return broken("target");
    }
    entry.target = static_cast<runtime::Target>(target);
    if (!r.String(entry.machine) || !r.String(entry.toolchain) || !r.String(entry.artifact)) {
      return broken("entry");
    }
  }
  if (!r.AtEnd()) return broken("trailing bytes");
  return entries;
}

absl::StatusOr<const PackageEntry*> SelectPackageEntry(const std::vector<PackageEntry>& entries,
                                                       runtime::Target target,
                                                       const std::string& arch) {
  const std::string toolchain = CurrentPackageToolchain();
  const bool host = target == runtime::Target::kHost;
  const std::string machine = host ? runtime::HostCpu() : arch;
  std::vector<std::string> reasons;
  const PackageEntry* best = nullptr;
  int best_rank = -1;
  for (const PackageEntry& entry : entries) {
    std::vector<std::string> differences;
    if (entry.target != target) {
      differences.push_back(absl::StrCat("target ", runtime::TargetName(entry.target)));
    } else if (host) {
      // This machine's own code, else a named CPU whose features this one has.
      absl::StatusOr<std::vector<std::string>> missing =
          runtime::MissingHostFeatures(entry.machine);
      if (!missing.ok()) {
        differences.push_back(absl::StrCat("host CPU ", entry.machine, " (here ", machine, ")"));
      } else if (!missing->empty()) {
        differences.push_back(absl::StrCat("host CPU ", entry.machine, " needs ",
                                           absl::StrJoin(*missing, ", "), ", which this CPU (",
                                           machine, ") lacks"));
      }
    } else if (entry.machine != machine) {
      differences.push_back(absl::StrCat("arch ", entry.machine, " (here ", machine, ")"));
    }
    if (entry.toolchain != toolchain) {
      for (std::string& difference : ToolchainDifferences(entry.toolchain)) {
        differences.push_back(std::move(difference));
      }
    }
    if (!differences.empty()) {
      reasons.push_back(absl::StrCat(runtime::TargetName(entry.target), " ", entry.machine, ": ",
                                     absl::StrJoin(differences, ", ")));
      continue;
    }
    // Of several that run here: this machine's own code, else the widest vectors, then the
    // most features (x86-64-v4 before znver3, znver3 before x86-64-v3).
    int rank = 0;  // (nvptx: the one entry for the arch)
    if (host && entry.machine == machine) {
      rank = std::numeric_limits<int>::max();
    } else if (host) {  // a named CPU (runtime::MissingHostFeatures accepted it)
      rank = static_cast<int>(runtime::ResolveHostTarget(entry.machine)->vector_bits) * 1000 +
             runtime::HostFeatureCount(entry.machine);
    }
    if (rank > best_rank) {
      best = &entry;
      best_rank = rank;
    }
  }
  if (best != nullptr) return best;
  return absl::FailedPreconditionError(
      absl::StrCat("no entry of the package fits ", runtime::TargetName(target), " ", machine,
                   " with this build: ", absl::StrJoin(reasons, "; ")));
}

}  // namespace tessera::service
