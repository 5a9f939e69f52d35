#include "jit/probers.h"

#include "jit/memref_descriptor.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "arbiter/element_storage.h"
#include "base/status_macros.h"
#include "jit/compiler.h"
#include "jit/probe_device.h"
#include "jit/runtime/gpu_runtime.h"
#include "jit/delegates/registry.h"
#include "jit/runtime/invocation.h"

namespace tessera::jit {
namespace {

using arbiter::ArbitrationPoint;
using arbiter::Candidate;
using arbiter::MatmulInputs;
using arbiter::MatmulProblem;

std::string Matrix(int64_t rows, int64_t columns, const std::string& element, bool dynamic) {
  if (dynamic) return absl::StrCat("memref<?x?x", element, ">");
  return absl::StrCat("memref<", rows, "x", columns, "x", element, ">");
}

/// Stored shapes of A and B.
std::vector<int64_t> ShapeA(const MatmulProblem& p) {
  return p.transpose_a ? std::vector<int64_t>{p.k, p.m} : std::vector<int64_t>{p.m, p.k};
}
std::vector<int64_t> ShapeB(const MatmulProblem& p) {
  return p.transpose_b ? std::vector<int64_t>{p.n, p.k} : std::vector<int64_t>{p.k, p.n};
}

/// Descriptors of A, B, C (and bias) over the given data pointers, and the packed arguments.
struct PackedArguments {
  std::vector<MemRefDescriptor> descriptors;
  std::vector<void*> args;

  PackedArguments(const MatmulProblem& p, const void* a, const void* b, const void* c,
                  const void* bias) {
    descriptors.push_back(MakeMemRefDescriptor(a, ShapeA(p)));
    descriptors.push_back(MakeMemRefDescriptor(b, ShapeB(p)));
    descriptors.push_back(MakeMemRefDescriptor(c, {p.m, p.n}));
    if (p.bias) descriptors.push_back(MakeMemRefDescriptor(bias, {p.n}));
    for (MemRefDescriptor& d : descriptors) args.push_back(d.data());
  }
};

/// A problem's inputs encoded in its storage types (arbiter/element_storage.h).
struct StoredInputs {
  std::vector<uint8_t> a, b, bias;

  static absl::StatusOr<StoredInputs> Of(const MatmulInputs& inputs) {
    const MatmulProblem& p = inputs.problem;
    StoredInputs stored;
    TESSERA_ASSIGN_OR_RETURN(stored.a, arbiter::EncodeStorage(inputs.a, p.input_element));
    TESSERA_ASSIGN_OR_RETURN(stored.b, arbiter::EncodeStorage(inputs.b, p.input_element));
    TESSERA_ASSIGN_OR_RETURN(stored.bias, arbiter::EncodeStorage(inputs.bias, p.result_element));
    return stored;
  }
};

CompileOptions ProbeOptions(const CompileOptions& base, const Candidate& candidate) {
  CompileOptions options = base;
  options.arbitrate = false;
  options.matmul_delegate = candidate.id;
  options.deterministic = false;  // the determinism gate has already run
  options.dump_stages = false;
  options.source_name = "<arbiter probe>";
  options.decisions = nullptr;
  return options;
}

// ---------------------------------------------------------------------------------------------
// Host

class HostKernel : public arbiter::ProbeKernel {
 public:
  HostKernel(std::unique_ptr<CompiledModule> module, PackedEntry entry)
      : module_(std::move(module)), entry_(entry) {}

  absl::StatusOr<std::vector<float>> Run(const MatmulInputs& inputs) override {
    TESSERA_ASSIGN_OR_RETURN(inputs_, StoredInputs::Of(inputs));
    const MatmulProblem& p = inputs.problem;
    const size_t c_count = static_cast<size_t>(p.m * p.n);
    output_.assign(c_count * arbiter::StorageBytes(p.result_element), 0);
    packed_ = std::make_unique<PackedArguments>(p, inputs_.a.data(), inputs_.b.data(),
                                                output_.data(), inputs_.bias.data());
    const auto start = std::chrono::steady_clock::now();
    entry_(packed_->args.data());
    last_run_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return arbiter::DecodeStorage(output_.data(), c_count, p.result_element);
  }

  double LastRunSeconds() const override { return last_run_seconds_; }

  absl::StatusOr<double> Time(int repetitions) override {
    if (packed_ == nullptr) return absl::FailedPreconditionError("Time before Run");
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < repetitions; ++i) entry_(packed_->args.data());
    const auto stop = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(stop - start).count() / repetitions;
  }

 private:
  std::unique_ptr<CompiledModule> module_;
  PackedEntry entry_;
  StoredInputs inputs_;
  std::vector<uint8_t> output_;
  std::unique_ptr<PackedArguments> packed_;
  double last_run_seconds_ = 0;
};

class HostProber : public arbiter::Prober {
 public:
  explicit HostProber(CompileOptions options) : options_(std::move(options)) {}

  std::string Device() const override {
    return HostProbeDevice().description;
  }
  std::string TimingSource() const override { return "host steady_clock"; }
  std::string Unavailable() const override { return ""; }

  absl::StatusOr<std::unique_ptr<arbiter::ProbeKernel>> Prepare(
      const ArbitrationPoint& point, const Candidate& candidate,
      const MatmulProblem* problem) override {
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<CompiledModule> module,
                             Compile(MatmulProbeModule(point, problem),
                                     ProbeOptions(options_, candidate)));
    TESSERA_ASSIGN_OR_RETURN(PackedEntry entry, module->host->Lookup("probe"));
    return std::unique_ptr<arbiter::ProbeKernel>(new HostKernel(std::move(module), entry));
  }

 private:
  CompileOptions options_;
};

// ---------------------------------------------------------------------------------------------
// GPU

class GpuKernel : public arbiter::ProbeKernel {
 public:
  GpuKernel(runtime::GpuRuntime* runtime, int ordinal, std::unique_ptr<CompiledModule> module,
            std::unique_ptr<HostExecutable> host, PackedEntry entry, CUstream stream)
      : runtime_(runtime),
        ordinal_(ordinal),
        module_(std::move(module)),
        host_(std::move(host)),
        entry_(entry),
        stream_(stream) {}

  ~GpuKernel() override {
    runtime::InvocationScope scope(ordinal_, stream_, Delegates());
    (void)runtime_->Activate(ordinal_);
    for (CUdeviceptr buffer : buffers_) (void)runtime_->Free(ordinal_, buffer);
    if (flush_ != 0) (void)runtime_->Free(ordinal_, flush_);
    host_.reset();  // its destructors unload the device image
    (void)runtime_->DestroyStream(ordinal_, stream_);
  }

  /// The delegate state of the registry the probe compiled against.
  runtime::DelegateRuntime* Delegates() const {
    return module_->options.delegates != nullptr ? module_->options.delegates->runtime() : nullptr;
  }

  /// Loads the device image, and allocates the buffer that flushes L2 between samples (twice
  /// the L2 size: a sample starts from cold caches, as a call after other work would).
  absl::Status Initialize() {
    runtime::InvocationScope scope(ordinal_, stream_, Delegates());
    TESSERA_RETURN_IF_ERROR(runtime_->Activate(ordinal_));
    host_->RunInitializers();
    TESSERA_RETURN_IF_ERROR(scope.status());
    TESSERA_ASSIGN_OR_RETURN(runtime::DeviceInfo info, runtime_->Info(ordinal_));
    flush_bytes_ = std::max<size_t>(2 * static_cast<size_t>(info.l2_bytes), 1 << 20);
    TESSERA_ASSIGN_OR_RETURN(flush_, runtime_->Allocate(ordinal_, flush_bytes_));
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<float>> Run(const MatmulInputs& inputs) override {
    const MatmulProblem& p = inputs.problem;
    for (CUdeviceptr buffer : buffers_) TESSERA_RETURN_IF_ERROR(runtime_->Free(ordinal_, buffer));
    buffers_.clear();
    TESSERA_ASSIGN_OR_RETURN(const StoredInputs stored, StoredInputs::Of(inputs));
    auto upload = [&](const std::vector<uint8_t>& data,
                      size_t bytes) -> absl::StatusOr<CUdeviceptr> {
      TESSERA_ASSIGN_OR_RETURN(CUdeviceptr buffer,
                               runtime_->Allocate(ordinal_, std::max<size_t>(bytes, 4)));
      buffers_.push_back(buffer);
      if (!data.empty()) {
        TESSERA_RETURN_IF_ERROR(runtime_->Copy(ordinal_, reinterpret_cast<void*>(buffer),
                                               data.data(), data.size(),
                                               runtime::CopyKind::kHostToDevice, stream_));
      }
      return buffer;
    };
    const size_t c_count = static_cast<size_t>(p.m * p.n);
    const size_t c_bytes = c_count * arbiter::StorageBytes(p.result_element);
    TESSERA_ASSIGN_OR_RETURN(CUdeviceptr a, upload(stored.a, stored.a.size()));
    TESSERA_ASSIGN_OR_RETURN(CUdeviceptr b, upload(stored.b, stored.b.size()));
    TESSERA_ASSIGN_OR_RETURN(CUdeviceptr c, upload({}, c_bytes));
    TESSERA_ASSIGN_OR_RETURN(CUdeviceptr bias, upload(stored.bias, stored.bias.size()));
    packed_ = std::make_unique<PackedArguments>(
        p, reinterpret_cast<void*>(a), reinterpret_cast<void*>(b), reinterpret_cast<void*>(c),
        reinterpret_cast<void*>(bias));
    {
      runtime::InvocationScope scope(ordinal_, stream_, Delegates());
      TESSERA_RETURN_IF_ERROR(runtime_->Activate(ordinal_));
      entry_(packed_->args.data());
      TESSERA_RETURN_IF_ERROR(scope.status());
    }
    TESSERA_RETURN_IF_ERROR(runtime_->Synchronize(ordinal_, stream_));
    std::vector<uint8_t> out(c_bytes);
    TESSERA_RETURN_IF_ERROR(runtime_->Copy(ordinal_, out.data(), reinterpret_cast<void*>(c),
                                           c_bytes, runtime::CopyKind::kDeviceToHost, stream_));
    return arbiter::DecodeStorage(out.data(), c_count, p.result_element);
  }

  absl::StatusOr<double> Time(int repetitions) override {
    if (packed_ == nullptr) return absl::FailedPreconditionError("Time before Run");
    TESSERA_ASSIGN_OR_RETURN(CUevent start, runtime_->CreateEvent(ordinal_));
    TESSERA_ASSIGN_OR_RETURN(CUevent stop, runtime_->CreateEvent(ordinal_));
    absl::Status status;
    {
      runtime::InvocationScope scope(ordinal_, stream_, Delegates());
      status = runtime_->Activate(ordinal_);
      if (status.ok()) status = runtime_->Memset(ordinal_, flush_, 0, flush_bytes_, stream_);
      if (status.ok()) status = runtime_->RecordEvent(start, stream_);
      for (int i = 0; status.ok() && i < repetitions; ++i) entry_(packed_->args.data());
      if (status.ok()) status = scope.status();
      if (status.ok()) status = runtime_->RecordEvent(stop, stream_);
    }
    absl::StatusOr<float> ms = status.ok() ? runtime_->ElapsedMs(start, stop)
                                           : absl::StatusOr<float>(status);
    (void)runtime_->DestroyEvent(ordinal_, start);
    (void)runtime_->DestroyEvent(ordinal_, stop);
    if (!ms.ok()) return ms.status();
    return *ms / 1e3 / repetitions;
  }

 private:
  runtime::GpuRuntime* runtime_;
  int ordinal_;
  std::unique_ptr<CompiledModule> module_;
  std::unique_ptr<HostExecutable> host_;
  PackedEntry entry_;
  CUstream stream_;
  std::vector<CUdeviceptr> buffers_;
  std::unique_ptr<PackedArguments> packed_;
  CUdeviceptr flush_ = 0;
  size_t flush_bytes_ = 0;
};

class GpuProber : public arbiter::Prober {
 public:
  explicit GpuProber(CompileOptions options) : options_(std::move(options)) {
    const ProbeDevice device = GpuProbeDevice(options_.arch);
    device_ = device.description;
    unavailable_ = device.unavailable;
    if (device.ordinal < 0) return;
    absl::StatusOr<runtime::GpuRuntime*> runtime = runtime::GpuRuntime::Get();
    if (!runtime.ok()) {
      unavailable_ = std::string(runtime.status().message());
      return;
    }
    runtime_ = *runtime;
    ordinal_ = device.ordinal;
  }

  std::string Device() const override { return device_; }
  std::string TimingSource() const override { return "CUDA events on a non-default stream"; }
  std::string Unavailable() const override { return unavailable_; }

  absl::StatusOr<std::unique_ptr<arbiter::ProbeKernel>> Prepare(
      const ArbitrationPoint& point, const Candidate& candidate,
      const MatmulProblem* problem) override {
    if (runtime_ == nullptr) return absl::UnavailableError(unavailable_);
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<CompiledModule> module,
                             Compile(MatmulProbeModule(point, problem),
                                     ProbeOptions(options_, candidate)));
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<HostExecutable> host, LoadHostCode(*module));
    TESSERA_ASSIGN_OR_RETURN(PackedEntry entry, host->Lookup("probe"));
    TESSERA_ASSIGN_OR_RETURN(CUstream stream, runtime_->CreateStream(ordinal_));
    auto kernel = std::make_unique<GpuKernel>(runtime_, ordinal_, std::move(module),
                                              std::move(host), entry, stream);
    TESSERA_RETURN_IF_ERROR(kernel->Initialize());
    return std::unique_ptr<arbiter::ProbeKernel>(std::move(kernel));
  }

 private:
  CompileOptions options_;
  runtime::GpuRuntime* runtime_ = nullptr;
  int ordinal_ = 0;
  std::string device_;
  std::string unavailable_;
};

}  // namespace

std::string MatmulProbeModule(const ArbitrationPoint& point, const MatmulProblem* problem) {
  const bool dynamic = problem == nullptr;
  const MatmulProblem p = dynamic ? arbiter::ProblemFor(point, 0, 0, 0) : *problem;
  auto element = [&](size_t index) {
    return point.element_types.size() > index ? point.element_types[index] : std::string("f32");
  };
  const std::vector<int64_t> a = ShapeA(p);
  const std::vector<int64_t> b = ShapeB(p);
  const std::string a_type = Matrix(a[0], a[1], element(0), dynamic);
  const std::string b_type = Matrix(b[0], b[1], element(1), dynamic);
  const std::string c_type = Matrix(p.m, p.n, element(2), dynamic);
  const std::string bias_type =
      dynamic ? absl::StrCat("memref<?x", element(3), ">")
              : absl::StrCat("memref<", p.n, "x", element(3), ">");
  std::string attributes;
  if (p.transpose_a || p.transpose_b) {
    attributes = absl::StrCat(" {", p.transpose_a ? "transpose_a" : "",
                              p.transpose_a && p.transpose_b ? ", " : "",
                              p.transpose_b ? "transpose_b" : "", "}");
  }
  return absl::StrCat(
      "func.func @probe(%a: ", a_type, ", %b: ", b_type, ", %c: ", c_type,
      p.bias ? absl::StrCat(", %bias: ", bias_type) : "", ") {\n  tile.matmul %a, %b -> %c",
      p.bias ? absl::StrCat(" bias(%bias : ", bias_type, ")") : "",
      p.activation != "none" ? absl::StrCat(" activation(", p.activation, ")") : "",
      " policy(", point.numeric_policy, ")", attributes, " : ", a_type, ", ", b_type, " -> ",
      c_type, "\n  return\n}\n");
}

std::unique_ptr<arbiter::Prober> MakeProber(const CompileOptions& options) {
  if (options.target == Target::kHost) return std::make_unique<HostProber>(options);
  return std::make_unique<GpuProber>(options);
}

}  // namespace tessera::jit
