// The cache subcommands.
#include "tools/tessera-jit/cache_command.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "cache/disk_cache.h"
#include "service/compile_service.h"
#include "tools/tessera-jit/flags.h"

namespace tessera::tools {
namespace {

constexpr char kUsage[] = R"(usage:
  tessera-jit cache stats [--dir DIR]          entries and bytes on disk
  tessera-jit cache ls [--dir DIR]             one line per entry
  tessera-jit cache explain FILE [--dir DIR] [--target T] [--arch A] [-O N] [--deterministic]
                                               the key of compiling FILE and whether it would hit
  tessera-jit cache clear [--dir DIR]          remove every entry
DIR defaults to $TESSERA_JIT_CACHE_DIR, else ~/.cache/tessera-jit.
)";

std::string Value(const std::vector<std::pair<std::string, std::string>>& components,
                  const std::string& name) {
  for (const auto& [key, value] : components) {
    if (key == name) return value;
  }
  return "?";
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
  jit::CompileOptions options;
  Flags flags;
  flags.String("--dir", &dir, "a path")
      .Value("--target", "host or nvptx",
             [&](const std::string& value) {
               auto target = jit::ParseTarget(value);
               if (!target.ok()) return std::string(target.status().message());
               options.target = *target;
               return std::string();
             })
      .String("--arch", &options.arch)
      .Int("-O", &options.opt_level, 0, "a level 0-3")
      .Switch("--deterministic", &options.deterministic);
  if (verb == "explain") flags.Positional(&file);
  if (std::string error = flags.Parse(argc, argv, 3); !error.empty()) {
    err << error << "\n" << kUsage;
    return 2;
  }
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
    out << "removed " << count << " entr" << (count == 1 ? "y" : "ies") << " from " << dir
        << "\n";
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
