// The cache subcommands.
#include "tools/tessera-jit/cache_command.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "cache/disk_cache.h"
#include "cache/remote_cache.h"
#include "service/compile_service.h"
#include "service/module_key.h"
#include "tools/tessera-jit/flags.h"

namespace tessera::tools {
namespace {

constexpr char kUsage[] = R"(usage:
  tessera-jit cache stats [--dir DIR]          entries and bytes on disk
  tessera-jit cache ls [--dir DIR]             one line per entry
  tessera-jit cache explain FILE [--dir DIR] [--target T] [--arch A] [-O N] [--deterministic]
                             [--remote-url URL]
                                               the key of compiling FILE and whether it would hit
                                               (memory, disk, or the remote tier)
  tessera-jit cache clear [--dir DIR]          remove every entry
  tessera-jit cache stats --remote [--remote-url URL]
                                               the remote tier: what this toolchain's keys hold
                                               and what the fleet's processes counted
  tessera-jit cache clear --remote [--remote-url URL]
                                               remove this toolchain's keys from the server
DIR defaults to $TESSERA_JIT_CACHE_DIR, else ~/.cache/tessera-jit; URL to
$TESSERA_JIT_REMOTE_CACHE (redis://[user:password@]host:port[/db]).
)";

std::string Value(const std::vector<std::pair<std::string, std::string>>& components,
                  const std::string& name) {
  for (const auto& [key, value] : components) {
    if (key == name) return value;
  }
  return "?";
}

int64_t Counter(const cache::RemoteFleetStats& stats, const std::string& name) {
  auto it = stats.counters.find(name);
  return it == stats.counters.end() ? 0 : it->second;
}

/// "a 3, b 1" for the counters named prefix.*; "none" without any.
std::string ByKind(const cache::RemoteFleetStats& stats, absl::string_view prefix) {
  std::string text;
  for (const auto& [name, value] : stats.counters) {
    absl::string_view rest = name;
    if (!absl::ConsumePrefix(&rest, prefix)) continue;
    absl::StrAppend(&text, text.empty() ? "" : ", ", rest, " ", value);
  }
  return text.empty() ? "none" : text;
}

int RunRemote(const std::string& verb, const std::string& url, std::ostream& out,
              std::ostream& err) {
  if (url.empty()) {
    err << "no remote cache: give --remote-url URL or set TESSERA_JIT_REMOTE_CACHE\n";
    return 2;
  }
  auto options = cache::RemoteCacheOptions::FromUrl(url);
  if (!options.ok()) return err << options.status().message() << "\n", 2;
  options->tag = service::RemoteNamespace(service::ToolchainIdentity::Current());
  cache::RemoteCache remote(*std::move(options));
  const std::string where =
      absl::StrCat(remote.Describe(), " (namespace tessera-jit:", remote.options().tag, ")");
  if (verb == "clear") {
    auto removed = remote.Clear();
    if (!removed.ok()) return err << where << ": " << removed.status().message() << "\n", 1;
    out << "removed " << *removed << " key" << (*removed == 1 ? "" : "s") << " from " << where
        << "\n";
    return 0;
  }
  if (verb != "stats") return err << "--remote goes with stats or clear\n" << kUsage, 2;
  auto stats = remote.FleetStats();
  if (!stats.ok()) return err << where << ": " << stats.status().message() << "\n", 1;
  out << "remote:        " << where << "\n"
      << "artifacts:     " << stats->artifacts << " (" << stats->artifact_bytes << " bytes)\n"
      << "decisions:     " << stats->decisions << "\n"
      << "compiling now: " << stats->leases << " (leases held)\n"
      << "server memory: " << stats->used_memory << " used, maxmemory "
      << (stats->max_memory.empty() ? "?" : stats->max_memory) << ", policy "
      << (stats->eviction_policy.empty() ? "?" : stats->eviction_policy) << "\n"
      << "fleet counters (every process, since the namespace's first use):\n"
      << "  hits:        " << Counter(*stats, "hits") << "\n"
      << "  misses:      " << ByKind(*stats, "misses.") << "\n"
      << "  stores:      " << Counter(*stats, "stores") << " (failed "
      << Counter(*stats, "store_failures") << ")\n"
      << "  leases:      waits " << Counter(*stats, "lease_waits") << ", takeovers "
      << Counter(*stats, "lease_takeovers") << ", timeouts " << Counter(*stats, "lease_timeouts")
      << ", lost " << Counter(*stats, "leases_lost") << "\n"
      << "  errors:      " << ByKind(*stats, "errors.") << "\n";
  const int64_t samples = Counter(*stats, "latency_count");
  if (samples > 0) {
    out << absl::StrFormat(
        "  hit latency: mean %.0f us, p50 <= %.0f us, p99 <= %.0f us (%d hits)\n",
        static_cast<double>(Counter(*stats, "latency_us_sum")) / static_cast<double>(samples),
        stats->latency_p50_us, stats->latency_p99_us, samples);
  }
  for (const auto& [key, what] : stats->damaged_keys) {
    out << "damaged key:   " << key << " (" << what
        << "; another client overwrote it; `cache clear --remote` removes it)\n";
  }
  return 0;
}

}  // namespace

int RunCacheCommand(int argc, char** argv, std::ostream& out, std::ostream& err) {
  if (argc < 3) {
    err << kUsage;
    return 2;
  }
  const std::string verb = argv[2];
  std::string dir = cache::DiskCache::DefaultRoot();
  std::string file;
  service::CompileRequest options;
  bool remote = false;
  std::string remote_url = cache::RemoteCacheOptions::DefaultUrl();
  Flags flags;
  flags.String("--dir", &dir, "a path")
      .Value("--target", "host or nvptx",
             [&](const std::string& value) {
               auto target = runtime::ParseTarget(value);
               if (!target.ok()) return std::string(target.status().message());
               options.target = *target;
               return std::string();
             })
      .String("--arch", &options.arch)
      .Int("-O", &options.opt_level, 0, "a level 0-3")
      .Switch("--deterministic", &options.deterministic)
      .Switch("--remote", &remote)
      .Value("--remote-url", "a redis:// URL", [&](const std::string& value) {
        remote_url = value;
        remote = true;
        return std::string();
      });
  if (verb == "explain") flags.Positional(&file);
  if (std::string error = flags.Parse(argc, argv, 3); !error.empty()) {
    err << error << "\n" << kUsage;
    return 2;
  }
  if (remote && verb != "explain") return RunRemote(verb, remote_url, out, err);
  cache::DiskCacheOptions disk_options;
  disk_options.root = dir;
  disk_options.max_bytes = uint64_t{1} << 62;
  cache::DiskCache disk(disk_options);
  if (verb == "stats" || verb == "ls") {
    std::vector<cache::DiskEntry> entries = disk.List();
    uint64_t total = 0;
    for (const cache::DiskEntry& entry : entries) total += entry.bytes;
    if (verb == "stats") {
      out << "directory: " << dir << (disk.enabled() ? "" : " (not usable)") << "\n"
          << "entries:   " << entries.size() << "\n"
          << "bytes:     " << total << "\n";
      return 0;
    }
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    out << absl::StrFormat("%-16s %10s %8s %-6s %-6s %s\n", "key", "bytes", "used", "target",
                           "arch", "source");
    for (const cache::DiskEntry& entry : entries) {
      out << absl::StrFormat("%-16s %10d %7ds %-6s %-6s %s\n", entry.digest.substr(0, 16),
                             entry.bytes, now - entry.last_used_unix,
                             Value(entry.components, "target"), Value(entry.components, "arch"),
                             entry.source_name);
    }
    return 0;
  }
  if (verb == "clear") {
    size_t count = disk.List().size();
    absl::Status status = disk.Clear();
    if (!status.ok()) return err << status.message() << "\n", 1;
    out << "removed " << count << " entr" << (count == 1 ? "y" : "ies") << " from " << dir << "\n";
    return 0;
  }
  if (verb == "explain") {
    if (file.empty()) return err << "explain needs a FILE\n" << kUsage, 2;
    std::ifstream in(file);
    if (!in) return err << "cannot read '" << file << "'\n", 1;
    std::stringstream source;
    source << in.rdbuf();
    service::CompileServiceOptions service_options;
    service_options.disk_root = dir;
    service_options.remote_url = remote_url;  // --remote-url, else $TESSERA_JIT_REMOTE_CACHE
    service::CompileService service(service_options);
    auto explanation = service.Explain(source.str(), options);
    if (!explanation.ok()) return err << explanation.status().message() << "\n", 1;
    out << "key: " << explanation->key.digest << "\n";
    for (const auto& [name, value] : explanation->key.components) {
      out << absl::StrFormat("  %-13s %s\n", name, value);
    }
    out << "verdict: " << explanation->verdict << "\n";
    return 0;
  }
  err << "unknown cache command '" << verb << "'\n" << kUsage;
  return 2;
}

}  // namespace tessera::tools
