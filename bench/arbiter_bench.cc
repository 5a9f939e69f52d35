// The arbiter on the host target: for square matmuls from 32 to 4096, what arbitrating a new
// shape costs against its time budget (time to decision, candidate run time, the shape timed),
// and — up to --best-max — the time of the arbiter's choice against the best candidate
// measured independently here (each candidate forced, compiled and timed by this program's own
// loop); then background decisions: how long until a compile returns and until its decision
// lands, beside the synchronous compile. Prints tables and writes JSON.
//
//   bazel run -c opt //bench:arbiter_bench -- [--json PATH] [--max N] [--best-max N]
//                                             [--budget-ms MS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "arbiter/decision_cache.h"
#include "arbiter/decision_record.h"
#include "jit/compiler.h"
#include "jit/delegates/registry.h"
#include "service/background_decisions.h"
#include "service/compile_service.h"

namespace {

using tessera::jit::CompiledModule;
using tessera::jit::CompileOptions;

std::string Source(int64_t n) {
  const std::string t = absl::StrCat("memref<", n, "x", n, "xf32>");
  return absl::StrCat("func.func @mm(%a: ", t, ", %b: ", t, ", %c: ", t,
                      ") {\n  tile.matmul %a, %b -> %c : ", t, ", ", t, " -> ", t,
                      "\n  return\n}\n");
}

/// A row-major n×n matrix and its memref descriptor.
struct Matrix {
  std::vector<float> data;
  std::vector<int64_t> descriptor;
  Matrix(int64_t n, uint32_t seed) : data(static_cast<size_t>(n * n)) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> uniform(-1, 1);
    for (float& value : data) value = uniform(generator);
    const auto address = reinterpret_cast<int64_t>(data.data());
    descriptor = {address, address, 0, n, n, n, 1};
  }
};

/// Median seconds per run of `module`'s @mm: one warm-up, then runs until 7 samples or 3 s
/// (at least 3 samples).
double TimeModule(const CompiledModule& module, int64_t n) {
  Matrix a(n, 1), b(n, 2), c(n, 3);
  void* args[] = {a.descriptor.data(), b.descriptor.data(), c.descriptor.data()};
  auto entry = *module.host->Lookup("mm");
  entry(args);
  std::vector<double> samples;
  double total = 0;
  while (samples.size() < 3 || (samples.size() < 7 && total < 3.0)) {
    const auto start = std::chrono::steady_clock::now();
    int reps = 0;
    double elapsed = 0;
    do {  // a sample lasts at least 2 ms
      entry(args);
      ++reps;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } while (elapsed < 2e-3);
    samples.push_back(elapsed / reps);
    total += elapsed;
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path = "arbiter_bench.json";
  int64_t max_size = 4096;
  int64_t best_max = 1024;
  double budget_ms = 300;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--json")
      json_path = argv[++i];
    else if (std::string(argv[i]) == "--max")
      max_size = std::stoll(argv[++i]);
    else if (std::string(argv[i]) == "--best-max")
      best_max = std::stoll(argv[++i]);
    else if (std::string(argv[i]) == "--budget-ms")
      budget_ms = std::stod(argv[++i]);
  }
  auto registry = std::make_shared<tessera::jit::delegates::DelegateRegistry>();
  if (absl::Status status = registry->RegisterDefaultLibraries(tessera::runtime::Target::kHost);
      !status.ok()) {
    std::fprintf(stderr, "arbiter_bench: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  std::printf("budget %.0f ms per decision\n", budget_ms);
  std::printf("%6s | %-9s | %12s | %12s | %12s | %9s | %13s | %11s | %11s | %s\n", "n", "choice",
              "compiled", "openblas", "choice/best", "sep/noise", "decision", "ran", "compile",
              "timed at");
  std::string rows;
  for (int64_t n = 32; n <= max_size; n *= 2) {
    CompileOptions options;
    options.delegates = registry;
    options.decisions = std::make_shared<tessera::arbiter::DecisionCache>();  // a new shape
    options.arbitration_budget_ms = budget_ms;
    const auto start = std::chrono::steady_clock::now();
    auto arbitrated = tessera::jit::Compile(Source(n), options);
    const double compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!arbitrated.ok()) {
      std::fprintf(stderr, "arbiter_bench: %s\n",
                   std::string(arbitrated.status().message()).c_str());
      return 1;
    }
    const tessera::arbiter::DecisionRecord& record = (*arbitrated)->decisions.at(0);
    // Independently: each candidate forced and timed by this program.
    double times[2] = {0, 0};
    const char* ids[2] = {"compiled", "openblas"};
    for (int i = 0; i < 2 && n <= best_max; ++i) {
      CompileOptions forced = options;
      forced.matmul_delegate = ids[i];
      forced.decisions = nullptr;
      auto module = tessera::jit::Compile(Source(n), forced);
      if (!module.ok()) {
        std::fprintf(stderr, "arbiter_bench: %s\n", std::string(module.status().message()).c_str());
        return 1;
      }
      times[i] = TimeModule(**module, n);
    }
    const double chosen = record.winner == "compiled" ? times[0] : times[1];
    const double best = std::min(times[0], times[1]);
    const double ratio = best > 0 ? chosen / best : 0;  // 0: not measured independently
    const double separation_over_noise = record.noise > 0 ? record.separation / record.noise : 0;
    std::printf(
        "%6lld | %-9s | %9.3f ms | %9.3f ms | %12.3f | %9.1f | %10.1f ms | %8.1f ms | "
        "%8.1f ms | %s\n",
        static_cast<long long>(n), record.winner.c_str(), times[0] * 1e3, times[1] * 1e3, ratio,
        separation_over_noise, record.arbitration_ms, record.measured_ms, compile_ms,
        record.measured_shape.c_str());
    absl::StrAppend(
        &rows, rows.empty() ? "" : ",\n",
        absl::StrFormat("    {\"n\": %d, \"choice\": \"%s\", \"compiled_ms\": %.4f, "
                        "\"openblas_ms\": %.4f, \"choice_over_best\": %.4f, "
                        "\"separation\": %.4f, \"noise\": %.4f, "
                        "\"arbitration_ms\": %.2f, \"budget_ms\": %.1f, "
                        "\"measured_ms\": %.2f, \"measured_shape\": \"%s\", "
                        "\"compile_ms\": %.2f}",
                        n, record.winner, times[0] * 1e3, times[1] * 1e3, ratio, record.separation,
                        record.noise, record.arbitration_ms, record.budget_ms, record.measured_ms,
                        record.measured_shape, compile_ms));
  }
  // Background decisions: how long until the compile returns (incumbents serve) and until the
  // measured module lands, against the synchronous compile above (same shapes, new decisions).
  std::printf("\nbackground decisions\n%6s | %12s | %14s | %14s\n", "n", "returned", "landed after",
              "synchronous");
  std::string background_rows;
  for (int64_t n = 32; n <= std::min<int64_t>(max_size, 1024); n *= 4) {
    tessera::service::CompileServiceOptions service_options;
    service_options.disk_root = "";
    service_options.remote_url = "";
    tessera::service::CompileService service(service_options);
    CompileOptions options;
    options.delegates = registry;
    options.decisions = std::make_shared<tessera::arbiter::DecisionCache>();
    options.arbitration_budget_ms = budget_ms;
    options.background_decisions = true;
    const auto start = std::chrono::steady_clock::now();
    auto compiled = service.Compile(Source(n), options);
    const auto returned = std::chrono::steady_clock::now();
    if (!compiled.ok() || compiled->module->PendingDecisions() != 1) {
      std::fprintf(stderr,
                   "arbiter_bench: the background compile of %lld³ did not leave one "
                   "decision pending\n",
                   static_cast<long long>(n));
      return 1;
    }
    tessera::service::BackgroundDecisions worker(&service);
    auto measuring = worker.Submit(Source(n), options);
    measuring->Wait(absl::InfiniteDuration());
    const auto landed = std::chrono::steady_clock::now();
    if (measuring->state() != tessera::service::PendingModule::State::kDecided) {
      std::fprintf(stderr, "arbiter_bench: %s\n",
                   std::string(measuring->failure().message()).c_str());
      return 1;
    }
    options.background_decisions = false;
    options.decisions = std::make_shared<tessera::arbiter::DecisionCache>();
    const auto sync_start = std::chrono::steady_clock::now();
    auto synchronous = tessera::jit::Compile(Source(n), options);
    const double sync_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sync_start)
            .count();
    if (!synchronous.ok()) return 1;
    const double returned_ms = std::chrono::duration<double, std::milli>(returned - start).count();
    const double landed_ms = std::chrono::duration<double, std::milli>(landed - returned).count();
    std::printf("%6lld | %9.1f ms | %11.1f ms | %11.1f ms\n", static_cast<long long>(n),
                returned_ms, landed_ms, sync_ms);
    absl::StrAppend(&background_rows, background_rows.empty() ? "" : ",\n",
                    absl::StrFormat("    {\"n\": %d, \"returned_ms\": %.2f, \"landed_after_ms\": "
                                    "%.2f, \"synchronous_ms\": %.2f}",
                                    n, returned_ms, landed_ms, sync_ms));
  }
  std::ofstream(json_path) << "{\n  \"benchmark\": \"arbiter\",\n  \"device\": \""
                           << "host\",\n  \"rows\": [\n"
                           << rows << "\n  ],\n  \"background\": [\n"
                           << background_rows << "\n  ]\n}\n";
  std::printf("JSON: %s\n", json_path.c_str());
  return 0;
}
