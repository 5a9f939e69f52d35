// `tessera-jit run`: compile, fill inputs, invoke, time, checksum, compare targets.
#include "tools/tessera-jit/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/files.h"
#include "base/float16.h"
#include "tessera_jit.h"

namespace tessera::tools {
namespace {

/// Owns a C API error.
class Error {
 public:
  explicit Error(tessera_jit_error_t* error) : error_(error) {}
  ~Error() { tessera_jit_error_destroy(error_); }
  bool ok() const { return error_ == nullptr; }
  std::string text() const {
    static const char* const kNames[] = {"OK",
                                         "CANCELLED",
                                         "UNKNOWN",
                                         "INVALID_ARGUMENT",
                                         "DEADLINE_EXCEEDED",
                                         "NOT_FOUND",
                                         "ALREADY_EXISTS",
                                         "PERMISSION_DENIED",
                                         "RESOURCE_EXHAUSTED",
                                         "FAILED_PRECONDITION",
                                         "ABORTED",
                                         "OUT_OF_RANGE",
                                         "UNIMPLEMENTED",
                                         "INTERNAL",
                                         "UNAVAILABLE",
                                         "DATA_LOSS",
                                         "UNAUTHENTICATED"};
    int code = tessera_jit_error_code(error_);
    return absl::StrCat(code >= 0 && code <= 16 ? kNames[code] : "ERROR", ": ",
                        tessera_jit_error_message(error_, nullptr));
  }

 private:
  tessera_jit_error_t* error_;
};

struct Context {
  tessera_jit_context_t* handle = nullptr;
  ~Context() { tessera_jit_context_destroy(handle); }
};

struct Module {
  tessera_jit_module_t* handle = nullptr;
  ~Module() { tessera_jit_module_destroy(handle); }
};

size_t ElementBytes(DLDataType dtype) { return (dtype.bits + 7) / 8; }

/// One argument's host data (and, on the GPU, its device copy).
struct Argument {
  tessera_jit_arg_info_t info{};
  std::vector<int64_t> shape;
  std::vector<unsigned char> host;
  void* device = nullptr;
  DLTensor tensor{};
  double scalar = 1.0;

  int64_t count() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }
  double Element(int64_t i) const {
    const unsigned char* p = host.data() + i * ElementBytes(info.dtype);
    if (info.dtype.code == kDLFloat && info.dtype.bits == 32)
      return *reinterpret_cast<const float*>(p);
    if (info.dtype.code == kDLFloat && info.dtype.bits == 64)
      return *reinterpret_cast<const double*>(p);
    if (info.dtype.code == kDLFloat && info.dtype.bits == 16)
      return HalfToFloat(*reinterpret_cast<const uint16_t*>(p));
    if (info.dtype.code == kDLBfloat) return BfloatToFloat(*reinterpret_cast<const uint16_t*>(p));
    int64_t value = 0;
    std::memcpy(&value, p, ElementBytes(info.dtype));
    return static_cast<double>(value);
  }
};

void Fill(Argument& argument, std::mt19937& random) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(0, 3);
  const DLDataType dtype = argument.info.dtype;
  const size_t bytes = ElementBytes(dtype);
  argument.host.assign(argument.count() * bytes, 0);
  for (int64_t i = 0; i < argument.count(); ++i) {
    unsigned char* p = argument.host.data() + i * bytes;
    if (dtype.code == kDLFloat && dtype.bits == 32) {
      float v = uniform(random);
      std::memcpy(p, &v, 4);
    } else if (dtype.code == kDLFloat && dtype.bits == 64) {
      double v = uniform(random);
      std::memcpy(p, &v, 8);
    } else if (dtype.code == kDLFloat && dtype.bits == 16) {
      uint16_t v = FloatToHalf(uniform(random));
      std::memcpy(p, &v, 2);
    } else if (dtype.code == kDLBfloat) {
      uint16_t v = FloatToBfloat(uniform(random));
      std::memcpy(p, &v, 2);
    } else {
      int64_t v = small(random) & (bytes == 1 ? 1 : 3);
      std::memcpy(p, &v, bytes);
    }
  }
}

double Checksum(const Argument& argument) {
  double sum = 0.0;
  for (int64_t i = 0; i < argument.count(); ++i) sum += argument.Element(i);
  return sum;
}

/// The module for `compile`'s target: loaded when `source` is an ahead-of-time package
/// (`tessera-jit compile --emit package`), else compiled. Returns the error, or null.
tessera_jit_error_t* LoadOrCompile(tessera_jit_context_t* context, const std::string& source,
                                   const tessera_jit_compile_options_t& compile,
                                   tessera_jit_module_t** module) {
  tessera_jit_error_t* loaded = tessera_jit_module_load(context, source.data(), source.size(),
                                                        compile.target, compile.arch, module);
  if (loaded == nullptr) return nullptr;
  if (tessera_jit_error_code(loaded) != TESSERA_JIT_INVALID_ARGUMENT ||
      !absl::StartsWith(tessera_jit_error_message(loaded, nullptr), "not a Tessera package")) {
    return loaded;  // a package, but not one that loads here
  }
  tessera_jit_error_destroy(loaded);
  return tessera_jit_compile(context, source.data(), source.size(), &compile, module);
}

/// Compiles for `target`, prepares `arguments` (shapes and data already set) and runs the entry
/// `runs` times after one warm-up; returns the per-run times.
struct Execution {
  std::vector<Argument> arguments;
  std::vector<double> ms;
  tessera_jit_arg_t result{};
  bool has_result = false;
};

std::string Run(tessera_jit_context_t* context, const std::string& source,
                const std::string& target, const RunOptions& options, bool on_gpu,
                std::vector<Argument> arguments, Execution& execution) {
  tessera_jit_compile_options_t compile;
  tessera_jit_compile_options_init(&compile);
  compile.target = target.c_str();
  if (!options.matmul_delegate.empty()) compile.matmul_delegate = options.matmul_delegate.c_str();
  if (!options.arch.empty()) compile.arch = options.arch.c_str();
  Module module;
  if (Error e(LoadOrCompile(context, source, compile, &module.handle)); !e.ok()) {
    return e.text();
  }
  tessera_jit_function_t* function = nullptr;
  if (Error e(tessera_jit_module_get_function(module.handle, options.entry.data(),
                                              options.entry.size(), &function));
      !e.ok()) {
    return e.text();
  }
  std::vector<tessera_jit_arg_t> args(arguments.size());
  std::string failure;
  for (size_t i = 0; i < arguments.size() && failure.empty(); ++i) {
    Argument& a = arguments[i];
    if (a.info.kind != TESSERA_JIT_ARG_TENSOR) {
      args[i].kind = a.info.kind;
      if (a.info.kind == TESSERA_JIT_ARG_FLOAT) {
        args[i].value.f = a.scalar;
      } else {
        args[i].value.i = static_cast<int64_t>(a.scalar);
      }
      continue;
    }
    void* data = a.host.data();
    if (on_gpu) {
      if (Error e(tessera_jit_buffer_alloc(context, a.host.size(), &a.device)); !e.ok()) {
        failure = e.text();
        break;
      }
      if (Error e(tessera_jit_buffer_copy(context, a.device, a.host.data(), a.host.size(),
                                          TESSERA_JIT_COPY_HOST_TO_DEVICE));
          !e.ok()) {
        failure = e.text();
        break;
      }
      data = a.device;
    }
    a.tensor.data = data;
    a.tensor.device = {on_gpu ? kDLCUDA : kDLCPU, 0};
    a.tensor.ndim = static_cast<int32_t>(a.shape.size());
    a.tensor.dtype = a.info.dtype;
    a.tensor.shape = a.shape.data();
    args[i].kind = TESSERA_JIT_ARG_TENSOR;
    args[i].value.tensor = &a.tensor;
  }
  for (int r = 0; r <= options.runs && failure.empty(); ++r) {
    auto start = std::chrono::steady_clock::now();
    if (Error e(tessera_jit_function_invoke(function, args.data(), args.size(), nullptr,
                                            &execution.result));
        !e.ok()) {
      failure = e.text();
      break;
    }
    if (on_gpu) {
      if (Error e(tessera_jit_stream_synchronize(context, nullptr)); !e.ok()) {
        failure = e.text();
        break;
      }
    }
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (r > 0) execution.ms.push_back(ms);  // run 0 is the warm-up
  }
  execution.has_result = tessera_jit_function_get_result_count(function) > 0;
  for (Argument& a : arguments) {
    if (a.device == nullptr) continue;
    if (failure.empty()) {
      if (Error e(tessera_jit_buffer_copy(context, a.host.data(), a.device, a.host.size(),
                                          TESSERA_JIT_COPY_DEVICE_TO_HOST));
          !e.ok()) {
        failure = e.text();
      }
    }
    Error freed(tessera_jit_buffer_free(context, a.device));
    a.device = nullptr;
  }
  execution.arguments = std::move(arguments);
  return failure;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

bool ParseShape(const std::string& text, std::vector<int64_t>& shape) {
  shape.clear();
  if (text.empty()) return true;
  for (absl::string_view part : absl::StrSplit(text, 'x')) {
    int64_t size = 0;
    if (!absl::SimpleAtoi(part, &size) || size < 0) return false;
    shape.push_back(size);
  }
  return true;
}

int RunEntry(const std::string& source, const std::string& source_name, const RunOptions& options,
             std::ostream& out) {
  const bool gpu = tessera_jit_is_gpu_available() != 0;
  std::string target = options.target;
  if (target == "auto") target = gpu ? "nvptx" : "host";
  if (target == "nvptx" && !gpu) {
    out << "error: --target nvptx needs a GPU, and none is available\n";
    return 1;
  }
  tessera_jit_context_options_t context_options;
  tessera_jit_context_options_init(&context_options);
  context_options.default_target = target.c_str();
  Context context;
  if (Error e(tessera_jit_context_create(&context_options, &context.handle)); !e.ok()) {
    out << "error: " << e.text() << "\n";
    return 1;
  }
  for (const auto& [name, path] : options.delegates.libraries) {
    if (Error e(tessera_jit_context_register_library(context.handle, name.c_str(), path.c_str()));
        !e.ok()) {
      out << "error: " << e.text() << "\n";
      return 1;
    }
  }
  for (const auto& [name, path] : options.delegates.kernels) {
    std::string bytes;
    if (!ReadFile(path, bytes)) {
      out << "error: --kernel " << name << ": cannot read '" << path << "'\n";
      return 1;
    }
    const KernelFile kind = *KernelFileOf(path);
    const tessera_jit_image_format_t format = kind == KernelFile::kCudaSource
                                                  ? TESSERA_JIT_IMAGE_CUDA_SOURCE
                                              : kind == KernelFile::kPtx ? TESSERA_JIT_IMAGE_PTX
                                                                         : TESSERA_JIT_IMAGE_CUBIN;
    if (Error e(tessera_jit_context_register_kernel_image(
            context.handle, name.c_str(), bytes.data(), bytes.size(), format,
            options.arch.empty() ? nullptr : options.arch.c_str()));
        !e.ok()) {
      out << "error: " << e.text() << "\n";
      return 1;
    }
  }
  if (options.delegates.default_libraries) {
    if (Error e(tessera_jit_context_register_default_libraries(context.handle, target.c_str()));
        !e.ok()) {
      out << "error: " << e.text() << "\n";
      return 1;
    }
  }
  for (size_t i = 0; i < tessera_jit_context_get_delegate_count(context.handle); ++i) {
    out << "delegate: " << tessera_jit_context_get_delegate_identity(context.handle, i, nullptr)
        << "\n";
  }
  if (target == "nvptx") {
    tessera_jit_device_info_t info;
    info.struct_size = sizeof(info);
    Error e(tessera_jit_device_get_info(0, &info));
    out << "target: nvptx on GPU 0 (" << (e.ok() ? info.name : "?") << ", "
        << (e.ok() ? info.arch : "?") << ")\n";
  } else {
    out << "target: host" << (gpu ? "" : " (no GPU available)") << "\n";
  }

  // Describe the entry through a compile for the run's target (the run's own compile is then a
  // cache hit) to learn its arguments.
  tessera_jit_compile_options_t describe;
  tessera_jit_compile_options_init(&describe);
  describe.target = target.c_str();
  if (!options.arch.empty()) describe.arch = options.arch.c_str();
  Module module;
  if (Error e(LoadOrCompile(context.handle, source, describe, &module.handle)); !e.ok()) {
    out << source_name << ": " << e.text() << "\n";
    return 1;
  }
  tessera_jit_function_t* function = nullptr;
  if (Error e(tessera_jit_module_get_function(module.handle, options.entry.data(),
                                              options.entry.size(), &function));
      !e.ok()) {
    out << "error: " << e.text() << "\n";
    return 1;
  }
  std::mt19937 random(options.seed);
  std::vector<Argument> arguments(tessera_jit_function_get_arg_count(function));
  for (size_t i = 0; i < arguments.size(); ++i) {
    Argument& a = arguments[i];
    a.info.struct_size = sizeof(a.info);
    Error e(tessera_jit_function_get_arg_info(function, 0, i, &a.info));
    if (a.info.kind != TESSERA_JIT_ARG_TENSOR) {
      auto it = options.scalars.find(static_cast<int>(i));
      a.scalar = it != options.scalars.end() ? it->second : 1.0;
      continue;
    }
    auto it = options.shapes.find(static_cast<int>(i));
    if (it != options.shapes.end()) {
      a.shape = it->second;
    } else {
      for (int d = 0; d < a.info.ndim; ++d) {
        a.shape.push_back(a.info.shape[d] < 0 ? options.size : a.info.shape[d]);
      }
    }
    Fill(a, random);
  }

  Execution main_run;
  std::string failure =
      Run(context.handle, source, target, options, target == "nvptx", arguments, main_run);
  if (!failure.empty()) {
    out << "error: " << failure << "\n";
    return 1;
  }
  out << "entry @" << options.entry << ": " << arguments.size() << " argument(s)\n";
  double total = 0.0;
  for (size_t i = 0; i < main_run.arguments.size(); ++i) {
    const Argument& a = main_run.arguments[i];
    if (a.info.kind != TESSERA_JIT_ARG_TENSOR) {
      out << absl::StrFormat("  #%-2d %-24s = %g\n", i, a.info.type, a.scalar);
      continue;
    }
    double checksum = Checksum(a);
    total += checksum;
    std::vector<std::string> dims;
    for (int64_t s : a.shape) dims.push_back(std::to_string(s));
    out << absl::StrFormat("  #%-2d %-24s [%s]  checksum %.6g\n", i, a.info.type,
                           absl::StrJoin(dims, "x"), checksum);
  }
  if (main_run.has_result) {
    out << "result: "
        << (main_run.result.kind == TESSERA_JIT_ARG_FLOAT
                ? absl::StrFormat("%g", main_run.result.value.f)
                : absl::StrFormat("%d", main_run.result.value.i))
        << "\n";
  }
  out << absl::StrFormat("checksum: %.9g\n", total);
  out << absl::StrFormat("time: median %.4f ms over %d run(s) after one warm-up\n",
                         Median(main_run.ms), options.runs);

  if (target == "nvptx") {
    Execution reference;
    RunOptions once = options;
    once.runs = 0;
    once.matmul_delegate.clear();  // the reference is the compiled host code
    std::string error = Run(context.handle, source, "host", once, false, arguments, reference);
    if (error.find("FAILED_PRECONDITION") != std::string::npos) {
      // Inline PTX, a CUDA kernel delegate or a GPU-only envelope: no host reference exists.
      out << "host-vs-device agreement: not checked (the module has no host form: " << error
          << ")\n";
      return 0;
    }
    if (!error.empty()) {
      out << "host-vs-device agreement: host run failed: " << error << "\n";
      return 1;
    }
    double worst = 0.0;
    int64_t violations = 0;
    for (size_t i = 0; i < arguments.size(); ++i) {
      const Argument& device = main_run.arguments[i];
      const Argument& host = reference.arguments[i];
      if (device.info.kind != TESSERA_JIT_ARG_TENSOR) continue;
      for (int64_t k = 0; k < device.count(); ++k) {
        double d = std::fabs(device.Element(k) - host.Element(k));
        if (std::isnan(device.Element(k)) != std::isnan(host.Element(k))) d = INFINITY;
        worst = std::max(worst, std::isnan(d) ? 0.0 : d);
        if (d > 1e-3 + 1e-3 * std::fabs(host.Element(k))) ++violations;
      }
    }
    out << absl::StrFormat(
        "host-vs-device agreement: max |device - host| = %.3g; %d element(s) outside "
        "1e-3 + 1e-3*|host| -> %s\n",
        worst, violations, violations == 0 ? "agree" : "DISAGREE");
    return violations == 0 ? 0 : 1;
  }
  out << "host-vs-device agreement: not checked (ran on the host only)\n";
  return 0;
}

}  // namespace tessera::tools
