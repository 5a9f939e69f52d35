// A fleet warming up, side by side in one run: 8 processes with separate disk roots (separate
// "machines") × 50 distinct nvptx kernels, without and with the remote tier on a local
// redis-server — total compiles and wall time until every process has every kernel — and the
// remote-hit latency (p50/p99) of a 20 KB artifact over loopback. Prints a table and writes JSON.
//
//   bazel run -c opt //bench:fleet_bench -- [--json PATH] [--processes N] [--kernels N]
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cache/remote_cache.h"
#include "service/compile_service.h"
#include "tests/redis/redis_server.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

/// A distinct kernel per `variant`: a chain of elementwise ops around one constant.
std::string Kernel(int variant) {
  std::string body;
  for (int i = 0; i < 8; ++i) {
    absl::StrAppend(&body, "    %m", i, " = arith.mulf %", i == 0 ? "x" : absl::StrCat("a", i - 1),
                    ", %c : f32\n    %a", i, " = arith.addf %m", i, ", %y : f32\n");
  }
  return absl::StrCat(
      "func.func @k(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {\n"
      "  tile.map ins(%in0, %in1 : memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {\n"
      "  ^bb0(%x: f32, %y: f32):\n    %c = arith.constant ",
      absl::StrFormat("%.5f", 1.0 + variant * 0.00001), " : f32\n", body,
      "    tile.yield %a7 : f32\n  }\n  return\n}\n");
}

/// --worker ROOT URL FIRST COUNT: compiles kernels FIRST… (in an order of its own) and prints
/// "<compiles> <remote hits>".
int Worker(const std::string& root, const std::string& url, int first, int count, int seat) {
  tessera::service::CompileServiceOptions options;
  options.disk_root = root;
  options.remote_url = url;
  tessera::service::CompileService service(options);
  tessera::jit::CompileOptions compile;
  compile.target = tessera::runtime::Target::kNvptx;
  for (int i = 0; i < count; ++i) {
    auto result = service.Compile(Kernel(first + (i + seat * 7) % count), compile);
    if (!result.ok()) {
      std::cerr << result.status() << "\n";
      return 1;
    }
  }
  const auto stats = service.stats();
  std::cout << stats.compiles << " " << stats.remote_hits << "\n";
  return 0;
}

struct Warmup {
  double wall_s = 0;
  uint64_t compiles = 0;
  uint64_t remote_hits = 0;
};

Warmup Fleet(const std::string& self, const std::string& dir, const std::string& url, int processes,
             int first, int kernels) {
  std::filesystem::create_directories(dir);
  std::vector<pid_t> pids;
  std::vector<std::string> outputs;
  const auto start = Clock::now();
  for (int p = 0; p < processes; ++p) {
    const std::string root = absl::StrCat(dir, "/machine", p);
    outputs.push_back(root + ".out");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, outputs.back().c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> args = {self,
                                     "--worker",
                                     root,
                                     url.empty() ? "-" : url,
                                     absl::StrCat(first),
                                     absl::StrCat(kernels),
                                     absl::StrCat(p)};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), environ) != 0) {
      std::cerr << "fleet_bench: cannot start a worker\n";
      std::exit(1);
    }
    pids.push_back(pid);
    posix_spawn_file_actions_destroy(&actions);
  }
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::cerr << "fleet_bench: a worker failed\n";
      std::exit(1);
    }
  }
  Warmup warmup;
  warmup.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  for (const std::string& output : outputs) {
    std::ifstream in(output);
    uint64_t compiles = 0, hits = 0;
    in >> compiles >> hits;
    warmup.compiles += compiles;
    warmup.remote_hits += hits;
  }
  return warmup;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 7 && std::string(argv[1]) == "--worker") {
    int first = 0, count = 0, seat = 0;
    if (!absl::SimpleAtoi(argv[4], &first) || !absl::SimpleAtoi(argv[5], &count) ||
        !absl::SimpleAtoi(argv[6], &seat)) {
      return 2;
    }
    return Worker(argv[2], std::string(argv[3]) == "-" ? "" : argv[3], first, count, seat);
  }
  std::string json_path;
  int processes = 8, kernels = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--json") json_path = argv[i + 1];
    if (flag == "--processes") absl::SimpleAtoi(argv[i + 1], &processes);
    if (flag == "--kernels") absl::SimpleAtoi(argv[i + 1], &kernels);
  }
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string dir = absl::StrCat(std::filesystem::temp_directory_path().string(),
                                       "/tessera-fleet-bench.", getpid());
  std::filesystem::create_directories(dir);
  tessera::testing::RedisServer server;
  if (!server.running()) {
    std::cerr << "fleet_bench: cannot start redis-server (tools/setup.sh installs it)\n";
    return 1;
  }
  // Distinct kernels per configuration: both start cold.
  const Warmup local = Fleet(self, dir + "/local", "", processes, 0, kernels);
  const Warmup remote = Fleet(self, dir + "/remote", server.Url(), processes, 100000, kernels);

  // Remote-hit latency of a 20 KB artifact, over loopback.
  auto options = tessera::cache::RemoteCacheOptions::FromUrl(server.Url());
  options->tag = "bench";
  tessera::cache::RemoteCache cache(*options);
  const tessera::cache::CacheKey key = tessera::cache::MakeCacheKey({{"ir", "bench"}}, {});
  std::string payload(20 * 1024, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 131 + 7);
  cache.Store(tessera::cache::RemoteCache::Kind::kArtifact, key, 7, payload, "bench");
  std::vector<double> us;
  for (int i = 0; i < 2000; ++i) {
    tessera::cache::Miss miss;
    const auto start = Clock::now();
    auto entry = cache.Load(tessera::cache::RemoteCache::Kind::kArtifact, key, 7, miss);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (!entry.has_value()) {
      std::cerr << "fleet_bench: remote miss: " << miss.ToString() << "\n";
      return 1;
    }
  }
  std::sort(us.begin(), us.end());
  const double p50 = us[us.size() / 2], p99 = us[us.size() * 99 / 100];

  std::printf("%d processes (separate disk roots) x %d distinct nvptx kernels\n", processes,
              kernels);
  std::printf("%-22s %10s %12s %12s\n", "", "compiles", "remote hits", "wall to warm");
  std::printf("%-22s %10llu %12llu %10.2f s\n", "local tiers only",
              static_cast<unsigned long long>(local.compiles),
              static_cast<unsigned long long>(local.remote_hits), local.wall_s);
  std::printf("%-22s %10llu %12llu %10.2f s\n", "with the remote tier",
              static_cast<unsigned long long>(remote.compiles),
              static_cast<unsigned long long>(remote.remote_hits), remote.wall_s);
  std::printf("ratio (remote / local): compiles %.3f, wall %.3f\n",
              static_cast<double>(remote.compiles) / static_cast<double>(local.compiles),
              remote.wall_s / local.wall_s);
  std::printf(
      "remote hit, 20 KB artifact over loopback (RemoteCache::Load, 2000 runs): "
      "p50 %.1f us, p99 %.1f us\n",
      p50, p99);
  if (!json_path.empty()) {
    std::ofstream json(json_path);
    json << absl::StrFormat(
        "{\"processes\": %d, \"kernels\": %d, \"local\": {\"compiles\": %d, \"wall_s\": %.4f}, "
        "\"remote\": {\"compiles\": %d, \"remote_hits\": %d, \"wall_s\": %.4f}, "
        "\"remote_hit_20kb_us\": {\"p50\": %.2f, \"p99\": %.2f}}\n",
        processes, kernels, local.compiles, local.wall_s, remote.compiles, remote.remote_hits,
        remote.wall_s, p50, p99);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return 0;
}
