// How compile time grows with a module's size: modules of N chained Tile ops (N = 1, 4, 16,
// 64; map, softmax, map, map, ... ping-ponging between two buffers), each compiled cold from
// text for the host and for nvptx (to PTX), side by side in one run; a target that cannot
// compile here (nvptx without the CUDA toolkit) is reported as such. Compile time should
// be linear in N: the table gives each size's median, its cost per op, and the marginal cost
// per op from 4 to 16 and from 16 to 64 ops — linear when the second is at most 1.5 times the
// first (a quadratic step would quadruple it). Writes JSON.
//
//   bazel run -c opt //bench:compile_scaling_bench -- [--runs N] [--json PATH] [--no-nvptx]
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/bench_util.h"
#include "jit/compile_options.h"
#include "jit/compiler.h"

namespace {

/// A function of `ops` chained Tile ops over two ?x? f32 buffers.
std::string ChainedModule(int ops) {
  std::string body;
  for (int i = 0; i < ops; ++i) {
    const char* in = i % 2 == 0 ? "%a" : "%b";
    const char* out = i % 2 == 0 ? "%b" : "%a";
    if (i % 4 == 1) {
      absl::StrAppend(&body, "  tile.softmax ", in, " -> ", out,
                      " : memref<?x?xf32> -> memref<?x?xf32>\n");
    } else {
      absl::StrAppend(&body, "  tile.map ins(", in, " : memref<?x?xf32>) outs(", out,
                      " : memref<?x?xf32>) {\n  ^bb0(%x: f32):\n"
                      "    %s = arith.mulf %x, %x : f32\n    %r = arith.addf %s, %x : f32\n"
                      "    tile.yield %r : f32\n  }\n");
    }
  }
  return absl::StrCat("func.func @chain(%a: memref<?x?xf32>, %b: memref<?x?xf32>) {\n", body,
                      "  return\n}\n");
}

/// The median ms of `runs` cold compiles, or the compiler's error.
absl::StatusOr<double> CompileMs(const std::string& source, tessera::runtime::Target target,
                                 int runs) {
  tessera::jit::CompileOptions options;
  options.target = target;
  options.link_cubin = false;  // nvptx: to PTX (no ptxas)
  absl::Status failure;
  double first = 0;
  const double median = tessera::bench::Measure("tessera", runs, first, [&] {
                          auto compiled = tessera::jit::Compile(source, options);
                          if (!compiled.ok()) failure = compiled.status();
                        }).Median();
  if (!failure.ok()) return failure;
  return median;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  std::string json_path = "compile_scaling_bench.json";
  bool nvptx = true;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc && absl::SimpleAtoi(argv[i + 1], &runs) && runs > 0) {
      ++i;
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (arg == "--no-nvptx") {
      nvptx = false;
    } else {
      std::cerr << "usage: compile_scaling_bench [--runs N] [--json PATH] [--no-nvptx]\n";
      return 2;
    }
  }
  const std::vector<int> sizes = {1, 4, 16, 64};
  struct Column {
    const char* name;
    tessera::runtime::Target target;
    std::vector<double> ms;
  };
  std::vector<Column> columns = {{"host", tessera::runtime::Target::kHost, {}}};
  if (nvptx) columns.push_back({"nvptx (to PTX)", tessera::runtime::Target::kNvptx, {}});
  for (auto column = columns.begin(); column != columns.end();) {
    absl::Status failure;
    for (int ops : sizes) {
      absl::StatusOr<double> ms = CompileMs(ChainedModule(ops), column->target, runs);
      if (!ms.ok()) {
        failure = ms.status();
        break;
      }
      column->ms.push_back(*ms);
    }
    if (failure.ok()) {
      ++column;
      continue;
    }
    std::cout << column->name << ": not measured, a compile failed: " << failure << "\n";
    column = columns.erase(column);
  }
  if (columns.empty()) return 1;

  std::cout << absl::StrFormat(
      "Cold compile of N chained Tile ops (map, softmax, map, map, ...), median of %d runs\n\n",
      runs);
  std::cout << "| N  |";
  for (const Column& column : columns) {
    std::cout << absl::StrFormat(" %-14s ms | ms per op |", column.name);
  }
  std::cout << "\n|----|";
  for (size_t c = 0; c < columns.size(); ++c) std::cout << "-------------------|-----------|";
  std::cout << "\n";
  for (size_t s = 0; s < sizes.size(); ++s) {
    std::cout << absl::StrFormat("| %-2d |", sizes[s]);
    for (const Column& column : columns) {
      std::cout << absl::StrFormat(" %17.2f | %9.2f |", column.ms[s], column.ms[s] / sizes[s]);
    }
    std::cout << "\n";
  }
  std::string json = absl::StrCat("{\n  \"benchmark\": \"compile_scaling\",\n  \"runs\": ", runs,
                                  ",\n  \"columns\": [\n");
  std::cout << "\nMarginal ms per op (linear when 16->64 is at most 1.5x 4->16):\n\n";
  for (size_t c = 0; c < columns.size(); ++c) {
    const Column& column = columns[c];
    const double early = (column.ms[2] - column.ms[1]) / (sizes[2] - sizes[1]);
    const double late = (column.ms[3] - column.ms[2]) / (sizes[3] - sizes[2]);
    const bool linear = late <= 1.5 * early;
    std::cout << absl::StrFormat("  %-15s 4->16: %.2f   16->64: %.2f   ratio %.2f   linear: %s\n",
                                 column.name, early, late, late / early, linear ? "yes" : "no");
    std::string values;
    for (size_t s = 0; s < sizes.size(); ++s) {
      absl::StrAppend(
          &values, s == 0 ? "" : ", ",
          absl::StrFormat("{\"ops\": %d, \"median_ms\": %.4f}", sizes[s], column.ms[s]));
    }
    absl::StrAppend(
        &json,
        absl::StrFormat("    {\"target\": \"%s\", \"sizes\": [%s], \"marginal_ms_per_op_4_16\": "
                        "%.4f, \"marginal_ms_per_op_16_64\": %.4f, \"linear\": %s}%s\n",
                        column.name, values, early, late, linear ? "true" : "false",
                        c + 1 < columns.size() ? "," : ""));
  }
  absl::StrAppend(&json, "  ]\n}\n");
  std::ofstream(json_path) << json;
  std::cout << "\nJSON written to " << json_path << "\n";
  return 0;
}
