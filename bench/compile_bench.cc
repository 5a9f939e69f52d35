// Cold compile latency, side by side in one run: Tessera IR → PTX and → cubin (in process:
// MLIR + LLVM NVPTX + nvJitLink) against NVRTC compiling the equivalent CUDA C++ to PTX and to
// cubin, and against Triton from PyPI compiling the same kernels to cubin (in a virtual
// environment the benchmark creates; the column says why when it cannot). Each sample is a
// complete compile from text with no cache. Prints a table of medians and ratios, the
// medians of Tessera's compile steps, and writes JSON.
//
//   bazel run -c opt //bench:compile_bench -- [--runs N] [--arch sm_90] [--json PATH]
//       [--triton-venv DIR | --no-triton]
#include <nvrtc.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/bench_kernels.h"
#include "bench/bench_util.h"
#include "jit/codegen/nvjitlink.h"
#include "jit/compile_options.h"
#include "jit/compiler.h"
#include "runtime/thread_pool.h"

namespace {

using tessera::bench::EnsureVenv;
using tessera::bench::Measure;
using tessera::bench::PythonColumn;
using tessera::bench::RunPythonColumn;
using tessera::bench::Series;
using tessera::bench::StageSeries;

// The same computation as tile.map above: one thread per element, 256 per block.
constexpr char kElementwiseCuda[] = R"cuda(
extern "C" __global__ void __launch_bounds__(256) saxpy(float alpha, const float* x,
                                                        const float* y, float* out, long n) {
  long i = static_cast<long>(blockIdx.x) * 256 + threadIdx.x;
  if (i < n) out[i] = alpha * x[i] + y[i];
}
)cuda";

// The same schedule as the tile.matmul lowering: 16x16 tiles staged through shared memory.
constexpr char kMatmulCuda[] = R"cuda(
extern "C" __global__ void __launch_bounds__(256) dense(const float* a, const float* b,
                                                        const float* bias, float* c,
                                                        long m, long n, long k) {
  __shared__ float tile_a[16][16];
  __shared__ float tile_b[16][16];
  long row = static_cast<long>(blockIdx.y) * 16 + threadIdx.y;
  long col = static_cast<long>(blockIdx.x) * 16 + threadIdx.x;
  float acc = 0.0f;
  for (long k0 = 0; k0 < k; k0 += 16) {
    long ka = k0 + threadIdx.x;
    long kb = k0 + threadIdx.y;
    tile_a[threadIdx.y][threadIdx.x] = (row < m && ka < k) ? a[row * k + ka] : 0.0f;
    tile_b[threadIdx.y][threadIdx.x] = (kb < k && col < n) ? b[kb * n + col] : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < 16; ++kk) {
      acc = __fadd_rn(acc, __fmul_rn(tile_a[threadIdx.y][kk], tile_b[kk][threadIdx.x]));
    }
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = fmaxf(acc + bias[col], 0.0f);
}
)cuda";

// The same schedule as the tile.softmax lowering: one 256-thread block per row, max, then the
// sum of exp(x - max), each through a fixed shared-memory tree, then the write.
constexpr char kSoftmaxCuda[] = R"cuda(
extern "C" __global__ void __launch_bounds__(256) row_softmax(const float* x, float* y,
                                                              long cols) {
  __shared__ float scratch[256];
  const int t = threadIdx.x;
  const float* in = x + static_cast<long>(blockIdx.x) * cols;
  float* out = y + static_cast<long>(blockIdx.x) * cols;
  float row_max = -__int_as_float(0x7f800000);
  for (long c = t; c < cols; c += 256) row_max = fmaxf(row_max, in[c]);
  scratch[t] = row_max;
  __syncthreads();
  for (int stride = 128; stride > 0; stride /= 2) {
    if (t < stride) scratch[t] = fmaxf(scratch[t], scratch[t + stride]);
    __syncthreads();
  }
  row_max = scratch[0];
  __syncthreads();
  float sum = 0.0f;
  for (long c = t; c < cols; c += 256) sum = __fadd_rn(sum, expf(__fsub_rn(in[c], row_max)));
  scratch[t] = sum;
  __syncthreads();
  for (int stride = 128; stride > 0; stride /= 2) {
    if (t < stride) scratch[t] = __fadd_rn(scratch[t], scratch[t + stride]);
    __syncthreads();
  }
  const float total = scratch[0];
  for (long c = t; c < cols; c += 256) out[c] = __fdiv_rn(expf(__fsub_rn(in[c], row_max)), total);
}
)cuda";

// Five kernels in one module (the MLP example's ops): compiled one at a time or in parallel.

void Check(nvrtcResult result, const char* what) {
  if (result != NVRTC_SUCCESS) {
    std::cerr << what << " failed: " << nvrtcGetErrorString(result) << "\n";
    std::exit(1);
  }
}

/// NVRTC from CUDA C++: to PTX for compute_XX (virtual arch) or to a cubin for sm_XX.
std::string Nvrtc(const std::string& source, const std::string& arch, bool cubin) {
  nvrtcProgram program;
  Check(nvrtcCreateProgram(&program, source.c_str(), "kernel.cu", 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  std::string arch_option =
      cubin ? absl::StrCat("-arch=", arch) : absl::StrCat("-arch=compute_", arch.substr(3));
  const char* options[] = {arch_option.c_str(), "-default-device"};
  nvrtcResult result = nvrtcCompileProgram(program, 2, options);
  if (result != NVRTC_SUCCESS) {
    size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    std::cerr << "NVRTC failed:\n" << log << "\n";
    std::exit(1);
  }
  size_t size = 0;
  std::string output;
  if (cubin) {
    Check(nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize");
    output.resize(size);
    Check(nvrtcGetCUBIN(program, output.data()), "nvrtcGetCUBIN");
  } else {
    Check(nvrtcGetPTXSize(program, &size), "nvrtcGetPTXSize");
    output.resize(size);
    Check(nvrtcGetPTX(program, output.data()), "nvrtcGetPTX");
  }
  nvrtcDestroyProgram(&program);
  return output;
}

/// Per compile step (CompiledModule::stage_ms), every run's milliseconds, in first-seen order.
void Tessera(const std::string& source, const std::string& arch, bool cubin, StageSeries* stages) {
  tessera::jit::CompileOptions options;
  options.target = tessera::runtime::Target::kNvptx;
  options.arch = arch;
  options.link_cubin = cubin;
  auto compiled = tessera::jit::Compile(source, options);
  if (!compiled.ok()) {
    std::cerr << "Tessera compile failed: " << compiled.status() << "\n";
    std::exit(1);
  }
  if (stages != nullptr) stages->Add((*compiled)->stage_ms);
}

/// Triton's medians per kernel (to cubin), from bench/triton_compile_bench.py run in `venv`.

PythonColumn MeasureTriton(const std::string& venv, const std::string& script, int runs,
                           const std::string& arch) {
  const std::string why = EnsureVenv(venv, "triton", "import triton");
  if (!why.empty()) return PythonColumn{"", absl::StrCat("no Triton: ", why)};
  return RunPythonColumn(venv + "/bin/python",
                         absl::StrCat("'", script, "' --runs ", runs, " --arch ", arch));
}

struct Row {
  std::string kernel;
  std::string output;
  Series tessera;
  double tessera_first;
  Series nvrtc;
  double nvrtc_first;
  StageSeries stages;
  double target_ratio;  // Tessera / NVRTC must be at most this
};

}  // namespace

int main(int argc, char** argv) {
  int runs = 15;
  std::string arch = "sm_90";
  std::string json_path = "compile_bench.json";
  std::string triton_venv = tessera::bench::DefaultVenv("triton");
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc && absl::SimpleAtoi(argv[i + 1], &runs)) {
      ++i;
    } else if (arg == "--arch" && i + 1 < argc) {
      arch = argv[++i];
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (arg == "--triton-venv" && i + 1 < argc) {
      triton_venv = argv[++i];
    } else if (arg == "--no-triton") {
      triton_venv.clear();
    } else {
      std::cerr << "usage: compile_bench [--runs N] [--arch sm_XX] [--json PATH] "
                   "[--triton-venv DIR | --no-triton]\n";
      return 2;
    }
  }

  struct Kernel {
    std::string name;
    const char* ir;
    const char* cuda;
  };
  const std::vector<Kernel> kernels = {
      {"elementwise (saxpy)", tessera::bench::kElementwiseIr, kElementwiseCuda},
      {"row softmax", tessera::bench::kSoftmaxIr, kSoftmaxCuda},
      {"matmul+bias+relu", tessera::bench::kMatmulIr, kMatmulCuda}};
  std::vector<Row> rows;
  for (const Kernel& kernel : kernels) {
    for (bool cubin : {false, true}) {
      Row row;
      row.kernel = kernel.name;
      row.output = cubin ? "cubin" : "PTX";
      row.target_ratio = cubin ? 0.5 : 1.0 / 6.0;
      bool first = true;
      row.tessera = Measure("tessera", runs, row.tessera_first, [&] {
        Tessera(kernel.ir, arch, cubin, first ? nullptr : &row.stages);
        first = false;
      });
      row.nvrtc = Measure("nvrtc", runs, row.nvrtc_first, [&] { Nvrtc(kernel.cuda, arch, cubin); });
      rows.push_back(std::move(row));
    }
  }

  PythonColumn triton;
  triton.why = "not measured (--no-triton)";
  if (!triton_venv.empty())
    triton = MeasureTriton(triton_venv,
                           tessera::bench::DataFile(argv[0], "bench/triton_compile_bench.py"), runs,
                           arch);
  const bool have_triton = !triton.version.empty();

  std::cout << absl::StrFormat(
      "Cold compile latency, %s, %d runs each (median; first call in "
      "the process in parentheses)\n\n",
      arch, runs);
  std::cout << absl::StrFormat(
      "| %-20s | %-5s | %-20s | %-20s | %-7s | %-7s | %-4s | %-20s | %-14s |\n", "kernel", "to",
      "Tessera IR (ms)", "NVRTC CUDA C++ (ms)", "ratio", "target", "met",
      have_triton ? absl::StrCat("Triton ", triton.version, " (ms)") : "Triton (ms)",
      "Tessera/Triton");
  std::cout << "|----------------------|-------|----------------------|----------------------|"
               "---------|---------|------|----------------------|----------------|\n";
  std::string json = absl::StrCat(
      "{\n  \"benchmark\": \"compile\",\n  \"arch\": \"", arch, "\",\n  \"runs\": ", runs,
      ",\n  \"nvjitlink\": \"", tessera::jit::NvJitLinkVersion(), "\",\n  \"triton\": \"",
      have_triton ? triton.version : triton.why, "\",\n  \"rows\": [\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    double ratio = row.tessera.Median() / row.nvrtc.Median();
    bool met = ratio <= row.target_ratio;
    // Triton compiles to a cubin only: its column is on the cubin rows.
    const bool triton_row =
        have_triton && row.output == "cubin" && triton.median_ms.count(row.kernel) > 0;
    const double triton_ms = triton_row ? triton.median_ms.at(row.kernel) : 0;
    std::cout << absl::StrFormat(
        "| %-20s | %-5s | %8.2f (%8.2f)    | %8.2f (%8.2f)    | %7.3f | <=%5.3f | %-4s | %-20s | "
        "%-14s |\n",
        row.kernel, row.output, row.tessera.Median(), row.tessera_first, row.nvrtc.Median(),
        row.nvrtc_first, ratio, row.target_ratio, met ? "yes" : "no",
        triton_row ? absl::StrFormat("%8.2f (%8.2f)", triton_ms, triton.first_ms.at(row.kernel))
                   : "-",
        triton_row ? absl::StrFormat("%7.3f", row.tessera.Median() / triton_ms) : "-");
    absl::StrAppend(
        &json,
        absl::StrFormat("    {\"kernel\": \"%s\", \"output\": \"%s\", \"tessera_median_ms\": "
                        "%.4f, \"tessera_min_ms\": %.4f, \"tessera_first_ms\": %.4f, "
                        "\"nvrtc_median_ms\": %.4f, \"nvrtc_min_ms\": %.4f, \"nvrtc_first_ms\": "
                        "%.4f, \"ratio\": %.4f, \"target_ratio\": %.4f, \"met\": %s, "
                        "\"triton_median_ms\": %s}%s\n",
                        row.kernel, row.output, row.tessera.Median(), row.tessera.Min(),
                        row.tessera_first, row.nvrtc.Median(), row.nvrtc.Min(), row.nvrtc_first,
                        ratio, row.target_ratio, met ? "true" : "false",
                        triton_row ? absl::StrFormat("%.4f", triton_ms) : "null",
                        i + 1 < rows.size() ? "," : ""));
  }
  if (!have_triton) std::cout << "\nTriton: " << triton.why << "\n";
  absl::StrAppend(&json, "  ],\n  \"stages\": [\n");
  std::cout << "\nWhere Tessera's time goes (median ms per compile step):\n\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    std::cout << absl::StrFormat("%-20s %-5s", row.kernel, row.output);
    std::cout << row.stages.Text();
    std::cout << "\n";
    absl::StrAppend(&json, absl::StrFormat("    {\"kernel\": \"%s\", \"output\": \"%s\", "
                                           "\"median_ms\": %s}%s\n",
                                           row.kernel, row.output, row.stages.Json(),
                                           i + 1 < rows.size() ? "," : ""));
  }
  absl::StrAppend(&json, "  ],\n  \"parallel_kernels\": [\n");
  // The kernels of one module: each is an image, compiled and linked on the thread's pool.
  const int cores = tessera::runtime::DefaultThreadCount();
  std::cout << absl::StrFormat(
      "\nFive kernels in one module (MLP), median ms: 1 thread vs %d threads (this machine's "
      "cores)\n\n",
      cores);
  for (bool cubin : {false, true}) {
    double first = 0;
    tessera::runtime::ThreadPool one(1), all(cores);
    auto on = [&](tessera::runtime::ThreadPool& pool) {
      return Measure("tessera", runs, first, [&] {
        tessera::runtime::ScopedThreadPool scope(&pool);
        Tessera(tessera::bench::kMlpIr, arch, cubin, nullptr);
      });
    };
    const Series serial = on(one), parallel = on(all);
    std::cout << absl::StrFormat("  to %-5s  1 thread %8.2f   %d threads %8.2f   speed-up %.2fx\n",
                                 cubin ? "cubin" : "PTX", serial.Median(), cores, parallel.Median(),
                                 serial.Median() / parallel.Median());
    absl::StrAppend(&json, absl::StrFormat("    {\"output\": \"%s\", \"threads\": %d, "
                                           "\"one_thread_median_ms\": %.4f, "
                                           "\"all_threads_median_ms\": %.4f}%s\n",
                                           cubin ? "cubin" : "PTX", cores, serial.Median(),
                                           parallel.Median(), cubin ? "" : ","));
  }
  absl::StrAppend(&json, "  ]\n}\n");
  std::ofstream(json_path) << json;
  std::cout << "\nJSON written to " << json_path << "\n";
  return 0;
}
