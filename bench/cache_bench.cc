// The compile cache, side by side in one run: a memory hit by key handle, a memory hit by a
// ~2 KB source text, a disk hit in a fresh process, and a cold compile (all nvptx: PTX + cubin).
// Prints a table and writes JSON.
//
//   bazel run -c opt //bench:cache_bench -- [--json PATH]
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
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "service/compile_service.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

/// A ~2 KB program: a chain of elementwise ops; `variant` changes a constant (a new key).
std::string Source(int variant) {
  std::string body;
  for (int i = 0; i < 24; ++i) {
    absl::StrAppend(&body, "    %m", i, " = arith.mulf %", i == 0 ? "x" : absl::StrCat("a", i - 1),
                    ", %c : f32\n    %a", i, " = arith.addf %m", i, ", %y : f32\n");
  }
  return absl::StrCat(
      R"(func.func @chain(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  tile.map ins(%in0, %in1 : memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%x: f32, %y: f32):
    %c = arith.constant )",
      absl::StrFormat("%.4f", 1.0 + variant * 0.001), " : f32\n", body,
      "    tile.yield %a23 : f32\n  }\n  return\n}\n");
}

tessera::jit::CompileOptions Options() {
  tessera::jit::CompileOptions options;
  options.target = tessera::runtime::Target::kNvptx;
  return options;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

/// --disk-hit-child DIR: time one Compile of Source(0) in this fresh process; prints µs.
int DiskHitChild(const std::string& dir) {
  tessera::service::CompileServiceOptions options;
  options.disk_root = dir;
  tessera::service::CompileService cache(options);
  const std::string source = Source(0);
  auto start = Clock::now();
  auto result = cache.Compile(source, Options());
  double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  if (!result.ok() || result->source != tessera::service::ModuleSource::kDisk) {
    std::cerr << "expected a disk hit\n";
    return 1;
  }
  std::printf("%.3f\n", us);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--disk-hit-child") return DiskHitChild(argv[2]);
  std::string json_path = "cache_bench.json";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--json") json_path = argv[++i];
  }
  const std::string dir =
      (std::filesystem::temp_directory_path() / absl::StrCat("tessera-cache-bench-", getpid()))
          .string();
  std::filesystem::remove_all(dir);
  tessera::service::CompileServiceOptions cache_options;
  cache_options.disk_root = dir;
  tessera::service::CompileService cache(cache_options);
  const std::string source = Source(0);

  // Cold compiles: new keys each time (and stored to disk).
  std::vector<double> cold;
  for (int v = 1; v <= 7; ++v) {
    auto start = Clock::now();
    auto result = cache.Compile(Source(v), Options());
    cold.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!result.ok()) {
      std::cerr << result.status() << "\n";
      return 1;
    }
    if (result->source != tessera::service::ModuleSource::kCompiled) {
      std::cerr << "expected a compile\n";
      return 1;
    }
  }
  auto first = cache.Compile(source, Options());
  if (!first.ok()) {
    std::cerr << first.status() << "\n";
    return 1;
  }
  const std::string digest = first->digest;

  // Memory hit by key handle.
  constexpr int kHandleLookups = 1000000;
  auto start = Clock::now();
  for (int i = 0; i < kHandleLookups; ++i) {
    if (cache.LookupByKey(digest) == nullptr) {
      std::cerr << "lookup by key missed\n";
      return 1;
    }
  }
  double handle_us =
      std::chrono::duration<double, std::micro>(Clock::now() - start).count() / kHandleLookups;

  // Memory hit by source text.
  constexpr int kTextLookups = 100000;
  start = Clock::now();
  for (int i = 0; i < kTextLookups; ++i) {
    auto result = cache.Compile(source, Options());
    if (!result.ok() || result->source != tessera::service::ModuleSource::kMemory) {
      std::cerr << "lookup by text missed\n";
      return 1;
    }
  }
  double text_us =
      std::chrono::duration<double, std::micro>(Clock::now() - start).count() / kTextLookups;

  // Disk hit in fresh processes.
  std::vector<double> disk_us;
  for (int i = 0; i < 7; ++i) {
    std::string out = dir + ".child";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const char* child_argv[] = {argv[0], "--disk-hit-child", dir.c_str(), nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, const_cast<char**>(child_argv),
                    environ) != 0) {
      std::cerr << "cannot spawn\n";
      return 1;
    }
    posix_spawn_file_actions_destroy(&actions);
    int status = 0;
    waitpid(pid, &status, 0);
    std::ifstream in(out);
    double us = 0;
    if (!(in >> us) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::cerr << "the disk-hit child failed\n";
      return 1;
    }
    disk_us.push_back(us);
  }
  std::filesystem::remove_all(dir);
  std::filesystem::remove(dir + ".child");

  struct Row {
    const char* what;
    double value;
    const char* unit;
    const char* target;
  };
  const Row rows[] = {
      {"memory hit by key handle", handle_us, "us", "<= 0.2 us"},
      {"memory hit by 2 KB source text", text_us, "us", "<= 2 us"},
      {"disk hit in a fresh process (median of 7)", Median(disk_us) / 1000.0, "ms", "<= 0.5 ms"},
      {"cold compile, IR -> PTX + cubin (median of 7)", Median(cold), "ms", "-"},
  };
  std::cout << absl::StrFormat("Compile cache (%zu-byte source, nvptx sm_90)\n\n", source.size());
  std::cout << absl::StrFormat("| %-46s | %10s | %-4s | %-10s |\n", "what", "value", "unit",
                               "target");
  std::cout
      << "|------------------------------------------------|------------|------|------------|\n";
  std::string json = "{\n  \"benchmark\": \"cache\",\n  \"rows\": [\n";
  for (size_t i = 0; i < 4; ++i) {
    std::cout << absl::StrFormat("| %-46s | %10.4f | %-4s | %-10s |\n", rows[i].what, rows[i].value,
                                 rows[i].unit, rows[i].target);
    absl::StrAppend(
        &json, absl::StrFormat("    {\"what\": \"%s\", \"value\": %.6f, \"unit\": "
                               "\"%s\"}%s\n",
                               rows[i].what, rows[i].value, rows[i].unit, i + 1 < 4 ? "," : ""));
  }
  absl::StrAppend(&json, "  ]\n}\n");
  std::ofstream(json_path) << json;
  std::cout << "\nJSON written to " << json_path << "\n";
  return 0;
}
