// Cold host compile latency, side by side in one run: Tessera IR → machine code for this CPU (in
// process: MLIR + LLVM + ORC) against the runtime compilers of CPU code a Python user would
// otherwise pick — JAX's XLA:CPU (`jax.jit(f).lower(...).compile()`) and Numba (`@njit`, first
// call) — on the same computations (bench/host_compile_bench.py, in a virtual environment the
// benchmark creates; a column says why when it cannot). Each sample is a complete compile from
// text with no cache. Prints a table of medians and ratios against the targets, the medians of
// Tessera's compile steps, and writes JSON.
//
//   bazel run -c opt //bench:host_compile_bench -- [--runs N] [--json PATH]
//       [--venv DIR | --no-python]
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/bench_kernels.h"
#include "bench/bench_util.h"
#include "jit/compile_options.h"
#include "jit/compiler.h"
#include "runtime/host_target.h"

namespace {

using tessera::bench::PythonColumn;
using tessera::bench::Series;
using tessera::bench::StageSeries;

struct Row {
  std::string kernel;
  Series tessera;
  double tessera_first = 0;
  StageSeries stages;
};

/// One cold host compile of `source`; its steps into `stages` unless null.
void CompileForHost(const std::string& source, StageSeries* stages) {
  tessera::jit::CompileOptions options;
  options.target = tessera::runtime::Target::kHost;
  auto compiled = tessera::jit::Compile(source, options);
  if (!compiled.ok()) {
    std::cerr << "Tessera compile failed: " << compiled.status() << "\n";
    std::exit(1);
  }
  if (stages != nullptr) stages->Add((*compiled)->stage_ms);
}

/// The JAX and Numba columns, or why each is missing.
std::vector<PythonColumn> MeasurePython(const std::string& venv, const std::string& script,
                                        int runs) {
  const std::string why = tessera::bench::EnsureVenv(venv, "jax numba", "import jax, numba");
  std::vector<PythonColumn> columns;
  for (const char* tool : {"jax", "numba"}) {
    if (!why.empty()) {
      columns.push_back(PythonColumn{"", why});
      continue;
    }
    columns.push_back(tessera::bench::RunPythonColumn(
        venv + "/bin/python", absl::StrCat("'", script, "' --tool ", tool, " --runs ", runs)));
  }
  return columns;
}

std::string Cell(const PythonColumn& column, const std::string& kernel) {
  auto found = column.median_ms.find(kernel);
  if (found == column.median_ms.end()) return "-";
  return absl::StrFormat("%8.2f (%8.2f)", found->second, column.first_ms.at(kernel));
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 15;
  std::string json_path = "host_compile_bench.json";
  std::string venv = tessera::bench::DefaultVenv("host-compile");
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc && absl::SimpleAtoi(argv[i + 1], &runs) && runs > 0) {
      ++i;
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (arg == "--venv" && i + 1 < argc) {
      venv = argv[++i];
    } else if (arg == "--no-python") {
      venv.clear();
    } else {
      std::cerr << "usage: host_compile_bench [--runs N] [--json PATH] [--venv DIR | "
                   "--no-python]\n";
      return 2;
    }
  }

  struct Kernel {
    std::string name;
    const char* ir;
  };
  const std::vector<Kernel> kernels = {{"saxpy", tessera::bench::kElementwiseIr},
                                       {"row softmax", tessera::bench::kSoftmaxIr},
                                       {"matmul+bias+relu", tessera::bench::kMatmulIr},
                                       {"mlp", tessera::bench::kMlpIr}};
  std::vector<Row> rows;
  for (const Kernel& kernel : kernels) {
    Row row;
    row.kernel = kernel.name;
    bool first = true;
    row.tessera = tessera::bench::Measure("tessera", runs, row.tessera_first, [&] {
      CompileForHost(kernel.ir, first ? nullptr : &row.stages);
      first = false;
    });
    rows.push_back(std::move(row));
  }
  std::vector<PythonColumn> python(2, PythonColumn{"", "not measured (--no-python)"});
  if (!venv.empty()) {
    python =
        MeasurePython(venv, tessera::bench::DataFile(argv[0], "bench/host_compile_bench.py"), runs);
  }
  const PythonColumn& xla = python[0];
  const PythonColumn& numba = python[1];
  constexpr double kXlaTarget = 1.0 / 3.0, kNumbaTarget = 1.0 / 10.0;

  const std::string cpu = tessera::runtime::ThisMachineHostTarget().id;
  std::cout << absl::StrFormat(
      "Cold host compile latency, CPU %s, %d runs each (median ms; the first call in the "
      "process in parentheses)\n\n",
      cpu, runs);
  std::cout << absl::StrFormat("| %-16s | %-20s | %-20s | %-6s | %-5s | %-20s | %-6s | %-6s |\n",
                               "module", "Tessera", absl::StrCat("XLA:CPU ", xla.version), "ratio",
                               "<=1/3", absl::StrCat("Numba ", numba.version), "ratio", "<=1/10");
  std::cout << "|------------------|----------------------|----------------------|--------|"
               "-------|----------------------|--------|--------|\n";
  std::string json = absl::StrCat(
      "{\n  \"benchmark\": \"host_compile\",\n  \"cpu\": \"", cpu, "\",\n  \"runs\": ", runs,
      ",\n  \"xla\": \"", xla.version.empty() ? xla.why : xla.version, "\",\n  \"numba\": \"",
      numba.version.empty() ? numba.why : numba.version, "\",\n  \"rows\": [\n");
  auto ratio = [](const Row& row, const PythonColumn& column, double& value) {
    auto found = column.median_ms.find(row.kernel);
    if (found == column.median_ms.end() || found->second <= 0) return std::string("-");
    value = row.tessera.Median() / found->second;
    return absl::StrFormat("%6.3f", value);
  };
  auto met = [](const std::string& cell, double value, double target) {
    return cell == "-" ? std::string("-") : std::string(value <= target ? "yes" : "no");
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    double xla_ratio = 0, numba_ratio = 0;
    const std::string xla_cell = ratio(row, xla, xla_ratio);
    const std::string numba_cell = ratio(row, numba, numba_ratio);
    std::cout << absl::StrFormat(
        "| %-16s | %8.2f (%8.2f)    | %-20s | %-6s | %-5s | %-20s | %-6s | %-6s |\n", row.kernel,
        row.tessera.Median(), row.tessera_first, Cell(xla, row.kernel), xla_cell,
        met(xla_cell, xla_ratio, kXlaTarget), Cell(numba, row.kernel), numba_cell,
        met(numba_cell, numba_ratio, kNumbaTarget));
    auto number = [](const PythonColumn& column, const std::string& kernel) {
      auto found = column.median_ms.find(kernel);
      return found == column.median_ms.end() ? std::string("null")
                                             : absl::StrFormat("%.4f", found->second);
    };
    absl::StrAppend(
        &json,
        absl::StrFormat("    {\"module\": \"%s\", \"tessera_median_ms\": %.4f, \"tessera_min_ms\": "
                        "%.4f, \"tessera_first_ms\": %.4f, \"xla_median_ms\": %s, "
                        "\"numba_median_ms\": %s, \"stages_median_ms\": %s}%s\n",
                        row.kernel, row.tessera.Median(), row.tessera.Min(), row.tessera_first,
                        number(xla, row.kernel), number(numba, row.kernel), row.stages.Json(),
                        i + 1 < rows.size() ? "," : ""));
  }
  if (xla.version.empty()) std::cout << "\nXLA:CPU: " << xla.why << "\n";
  if (numba.version.empty()) std::cout << "\nNumba: " << numba.why << "\n";
  std::cout << "\nWhere Tessera's time goes (median ms per compile step):\n\n";
  for (const Row& row : rows) {
    std::cout << absl::StrFormat("%-16s", row.kernel) << row.stages.Text() << "\n";
  }
  absl::StrAppend(&json, "  ]\n}\n");
  std::ofstream(json_path) << json;
  std::cout << "\nJSON written to " << json_path << "\n";
  return 0;
}
