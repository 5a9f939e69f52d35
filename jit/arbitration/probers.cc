#include "jit/arbitration/probers.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "arbiter/element_storage.h"
#include "base/status_macros.h"
#include "jit/arbitration/entry_probe.h"
#include "jit/arbitration/probe_device.h"
#include "jit/compiler.h"
#include "jit/delegates/registry.h"
#include "jit/internal_compile.h"
#include "runtime/gpu_runtime.h"
#include "runtime/invocation.h"
#include "runtime/memref_descriptor.h"

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
  std::vector<runtime::MemRefDescriptor> descriptors;
  std::vector<void*> args;

  PackedArguments(const MatmulProblem& p, const void* a, const void* b, const void* c,
                  const void* bias) {
    descriptors.push_back(runtime::MakeMemRefDescriptor(a, ShapeA(p)));
    descriptors.push_back(runtime::MakeMemRefDescriptor(b, ShapeB(p)));
    descriptors.push_back(runtime::MakeMemRefDescriptor(c, {p.m, p.n}));
    if (p.bias) descriptors.push_back(runtime::MakeMemRefDescriptor(bias, {p.n}));
    for (runtime::MemRefDescriptor& d : descriptors) args.push_back(d.data());
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

/// An op probe (ArbitrationPoint::probe_source) bound for one run: every dynamic size
/// `dynamic_size`, halved while its tensors exceed 64 MiB. FailedPrecondition when the op
/// cannot be probed.
absl::StatusOr<EntryProbe> BindOpProbe(const EntryFunction& entry, int64_t dynamic_size,
                                       uint32_t seed) {
  EntryProbe probe;
  for (int64_t size = std::max<int64_t>(dynamic_size, 1);; size /= 2) {
    const std::string why = MakeEntryProbe(entry, size, seed, probe);
    if (why.empty()) return probe;
    if (why != kEntryProbeTooLarge || size == 1) {
      return absl::FailedPreconditionError(absl::StrCat("the op's probe cannot run: ", why));
    }
  }
}

/// The first tensor's shape in `probe`, e.g. "64x1000".
std::string FirstTensorShape(const EntryFunction& entry, const EntryProbe& probe) {
  for (size_t i = 0; i < entry.arguments.size(); ++i) {
    if (entry.arguments[i].kind == EntryArgument::Kind::kMemRef) {
      return absl::StrJoin(probe.shapes[i], "x");
    }
  }
  return "";
}

CompileOptions ProbeOptions(const CompileOptions& base) {
  CompileOptions options = base;
  options.matmul_delegate.clear();
  options.deterministic = false;  // the determinism gate has already run
  options.dump_stages = false;
  options.source_name = "<arbiter probe>";
  options.decisions = nullptr;
  return options;
}

/// A probe compile: `candidate` serves every Tile op, nothing is arbitrated.
InternalCompileOptions Forced(const Candidate& candidate) {
  InternalCompileOptions internal;
  internal.arbitrate = false;
  internal.forced_candidate = candidate.id;
  return internal;
}

/// The probe module of `point`: its op's probe function, or the matmul probe module.
std::string ProbeModule(const ArbitrationPoint& point, const MatmulProblem* problem) {
  return point.probe_source.empty() ? MatmulProbeModule(point, problem) : point.probe_source;
}

// ---------------------------------------------------------------------------------------------
// Host

/// A probe module's entry run on the host; Time repeats the last bound run.
class HostKernel : public arbiter::ProbeKernel {
 public:
  HostKernel(std::unique_ptr<CompiledModule> module, runtime::PackedEntry entry)
      : module_(std::move(module)), entry_(entry) {}

  absl::StatusOr<std::vector<float>> Run(const MatmulInputs& inputs) override {
    TESSERA_ASSIGN_OR_RETURN(inputs_, StoredInputs::Of(inputs));
    const MatmulProblem& p = inputs.problem;
    const size_t c_count = static_cast<size_t>(p.m * p.n);
    output_.assign(c_count * arbiter::StorageBytes(p.result_element), 0);
    packed_ = std::make_unique<PackedArguments>(p, inputs_.a.data(), inputs_.b.data(),
                                                output_.data(), inputs_.bias.data());
    args_ = packed_->args.data();
    TESSERA_RETURN_IF_ERROR(RunOnce());
    return arbiter::DecodeStorage(output_.data(), c_count, p.result_element);
  }

  absl::StatusOr<std::vector<float>> RunOp(int64_t dynamic_size, uint32_t seed) override {
    if (module_->entries.empty()) return absl::InternalError("the probe module has no entry");
    const EntryFunction& entry = module_->entries[0];
    TESSERA_ASSIGN_OR_RETURN(probe_, BindOpProbe(entry, dynamic_size, seed));
    buffers_ = probe_.buffers;
    std::vector<void*> data;
    for (std::vector<uint8_t>& buffer : buffers_) data.push_back(buffer.data());
    op_arguments_ = std::make_unique<PackedEntryArguments>(entry, probe_, data);
    args_ = op_arguments_->packed.data();
    TESSERA_RETURN_IF_ERROR(RunOnce());
    return WrittenValues(entry, buffers_);
  }

  std::string BoundShape() const override {
    return module_->entries.empty() ? "" : FirstTensorShape(module_->entries[0], probe_);
  }

  std::vector<arbiter::OutputSegment> OutputSegments() const override {
    return module_->entries.empty() ? std::vector<arbiter::OutputSegment>{}
                                    : WrittenSegments(module_->entries[0], probe_);
  }

  double LastRunSeconds() const override { return last_run_seconds_; }

  absl::StatusOr<double> Time(int repetitions) override {
    if (args_ == nullptr) return absl::FailedPreconditionError("Time before Run");
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < repetitions; ++i) {
      TESSERA_RETURN_IF_ERROR(CallProbeEntry(*module_, entry_, args_));
    }
    const auto stop = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(stop - start).count() / repetitions;
  }

 private:
  /// One run on the bound arguments, timed; a failed run-time check is FailedPrecondition.
  absl::Status RunOnce() {
    const auto start = std::chrono::steady_clock::now();
    TESSERA_RETURN_IF_ERROR(CallProbeEntry(*module_, entry_, args_));
    last_run_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return absl::OkStatus();
  }

  std::unique_ptr<CompiledModule> module_;
  runtime::PackedEntry entry_;
  void** args_ = nullptr;
  // Matmul problems.
  StoredInputs inputs_;
  std::vector<uint8_t> output_;
  std::unique_ptr<PackedArguments> packed_;
  // Op problems.
  EntryProbe probe_;
  std::vector<std::vector<uint8_t>> buffers_;
  std::unique_ptr<PackedEntryArguments> op_arguments_;
  double last_run_seconds_ = 0;
};

class HostProber : public arbiter::Prober {
 public:
  explicit HostProber(CompileOptions options) : options_(std::move(options)) {}

  std::string Device() const override { return HostProbeDevice().description; }
  std::string TimingSource() const override { return "host steady_clock"; }
  std::string Unavailable() const override { return ""; }

  absl::StatusOr<std::unique_ptr<arbiter::ProbeKernel>> Prepare(
      const ArbitrationPoint& point, const Candidate& candidate,
      const MatmulProblem* problem) override {
    TESSERA_ASSIGN_OR_RETURN(
        std::unique_ptr<CompiledModule> module,
        CompileInternal(ProbeModule(point, problem), ProbeOptions(options_), Forced(candidate)));
    TESSERA_ASSIGN_OR_RETURN(runtime::PackedEntry entry, module->host->Lookup("probe"));
    return std::unique_ptr<arbiter::ProbeKernel>(new HostKernel(std::move(module), entry));
  }

 private:
  CompileOptions options_;
};

// ---------------------------------------------------------------------------------------------
// GPU

/// A probe module's host code loaded for the device: its buffers live in device memory; Time
/// repeats the last bound run between CUDA events, from cold caches.
class GpuKernel : public arbiter::ProbeKernel {
 public:
  GpuKernel(runtime::GpuRuntime* runtime, int ordinal, std::unique_ptr<CompiledModule> module,
            std::unique_ptr<runtime::HostExecutable> host, runtime::PackedEntry entry,
            CUstream stream)
      : runtime_(runtime),
        ordinal_(ordinal),
        module_(std::move(module)),
        host_(std::move(host)),
        entry_(entry),
        stream_(stream) {}

  ~GpuKernel() override {
    runtime::InvocationScope scope(ordinal_, stream_, Delegates());
    (void)runtime_->Activate(ordinal_);
    (void)FreeBuffers();
    if (flush_ != 0) (void)runtime_->Free(ordinal_, flush_);
    host_.reset();  // its destructors unload the device image
    (void)runtime_->DestroyStream(ordinal_, stream_);
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
    TESSERA_RETURN_IF_ERROR(FreeBuffers());
    TESSERA_ASSIGN_OR_RETURN(const StoredInputs stored, StoredInputs::Of(inputs));
    const size_t c_count = static_cast<size_t>(p.m * p.n);
    const size_t c_bytes = c_count * arbiter::StorageBytes(p.result_element);
    TESSERA_ASSIGN_OR_RETURN(CUdeviceptr a, Upload(stored.a.data(), stored.a.size()));
    TESSERA_ASSIGN_OR_RETURN(CUdeviceptr b, Upload(stored.b.data(), stored.b.size()));
    TESSERA_ASSIGN_OR_RETURN(CUdeviceptr c, Upload(nullptr, c_bytes));
    TESSERA_ASSIGN_OR_RETURN(CUdeviceptr bias, Upload(stored.bias.data(), stored.bias.size()));
    packed_ = std::make_unique<PackedArguments>(
        p, reinterpret_cast<void*>(a), reinterpret_cast<void*>(b), reinterpret_cast<void*>(c),
        reinterpret_cast<void*>(bias));
    args_ = packed_->args.data();
    TESSERA_RETURN_IF_ERROR(Launch());
    std::vector<uint8_t> out(c_bytes);
    TESSERA_RETURN_IF_ERROR(Download(out.data(), c, c_bytes));
    return arbiter::DecodeStorage(out.data(), c_count, p.result_element);
  }

  absl::StatusOr<std::vector<float>> RunOp(int64_t dynamic_size, uint32_t seed) override {
    if (module_->entries.empty()) return absl::InternalError("the probe module has no entry");
    const EntryFunction& entry = module_->entries[0];
    TESSERA_ASSIGN_OR_RETURN(probe_, BindOpProbe(entry, dynamic_size, seed));
    TESSERA_RETURN_IF_ERROR(FreeBuffers());
    std::vector<void*> data(entry.arguments.size(), nullptr);
    std::vector<CUdeviceptr> device(entry.arguments.size(), 0);
    for (size_t i = 0; i < entry.arguments.size(); ++i) {
      if (entry.arguments[i].kind != EntryArgument::Kind::kMemRef) continue;
      TESSERA_ASSIGN_OR_RETURN(device[i],
                               Upload(probe_.buffers[i].data(), probe_.buffers[i].size()));
      data[i] = reinterpret_cast<void*>(device[i]);
    }
    op_arguments_ = std::make_unique<PackedEntryArguments>(entry, probe_, data);
    args_ = op_arguments_->packed.data();
    TESSERA_RETURN_IF_ERROR(Launch());
    std::vector<std::vector<uint8_t>> results(entry.arguments.size());
    for (size_t i = 0; i < entry.arguments.size(); ++i) {
      if (!entry.arguments[i].written || device[i] == 0 || probe_.buffers[i].empty()) continue;
      results[i].resize(probe_.buffers[i].size());
      TESSERA_RETURN_IF_ERROR(Download(results[i].data(), device[i], results[i].size()));
    }
    return WrittenValues(entry, results);
  }

  std::string BoundShape() const override {
    return module_->entries.empty() ? "" : FirstTensorShape(module_->entries[0], probe_);
  }

  std::vector<arbiter::OutputSegment> OutputSegments() const override {
    return module_->entries.empty() ? std::vector<arbiter::OutputSegment>{}
                                    : WrittenSegments(module_->entries[0], probe_);
  }

  absl::StatusOr<double> Time(int repetitions) override {
    if (args_ == nullptr) return absl::FailedPreconditionError("Time before Run");
    TESSERA_ASSIGN_OR_RETURN(CUevent start, runtime_->CreateEvent(ordinal_));
    TESSERA_ASSIGN_OR_RETURN(CUevent stop, runtime_->CreateEvent(ordinal_));
    absl::Status status;
    {
      runtime::InvocationScope scope(ordinal_, stream_, Delegates());
      status = runtime_->Activate(ordinal_);
      if (status.ok()) status = runtime_->Memset(ordinal_, flush_, 0, flush_bytes_, stream_);
      if (status.ok()) status = runtime_->RecordEvent(start, stream_);
      for (int i = 0; status.ok() && i < repetitions; ++i) {
        status = CallProbeEntry(*module_, entry_, args_);
      }
      if (status.ok()) status = scope.status();
      if (status.ok()) status = runtime_->RecordEvent(stop, stream_);
    }
    absl::StatusOr<float> ms =
        status.ok() ? runtime_->ElapsedMs(start, stop) : absl::StatusOr<float>(status);
    (void)runtime_->DestroyEvent(ordinal_, start);
    (void)runtime_->DestroyEvent(ordinal_, stop);
    if (!ms.ok()) return ms.status();
    return *ms / 1e3 / repetitions;
  }

 private:
  /// The delegate state of the registry the probe compiled against.
  runtime::DelegateRuntime* Delegates() const {
    return module_->options.delegates != nullptr ? module_->options.delegates->runtime() : nullptr;
  }

  absl::Status FreeBuffers() {
    absl::Status status;
    for (CUdeviceptr buffer : buffers_) status.Update(runtime_->Free(ordinal_, buffer));
    buffers_.clear();
    args_ = nullptr;
    return status;
  }

  /// A device buffer of `bytes` (at least 4), holding `data` unless it is null.
  absl::StatusOr<CUdeviceptr> Upload(const void* data, size_t bytes) {
    TESSERA_ASSIGN_OR_RETURN(CUdeviceptr buffer,
                             runtime_->Allocate(ordinal_, std::max<size_t>(bytes, 4)));
    buffers_.push_back(buffer);
    if (data != nullptr && bytes > 0) {
      TESSERA_RETURN_IF_ERROR(runtime_->Copy(ordinal_, reinterpret_cast<void*>(buffer), data, bytes,
                                             runtime::CopyKind::kHostToDevice, stream_));
    }
    return buffer;
  }

  absl::Status Download(void* destination, CUdeviceptr source, size_t bytes) {
    return runtime_->Copy(ordinal_, destination, reinterpret_cast<void*>(source), bytes,
                          runtime::CopyKind::kDeviceToHost, stream_);
  }

  /// One run on the bound arguments, to completion.
  absl::Status Launch() {
    {
      runtime::InvocationScope scope(ordinal_, stream_, Delegates());
      TESSERA_RETURN_IF_ERROR(runtime_->Activate(ordinal_));
      const absl::Status called = CallProbeEntry(*module_, entry_, args_);
      TESSERA_RETURN_IF_ERROR(scope.status());
      TESSERA_RETURN_IF_ERROR(called);
    }
    return runtime_->Synchronize(ordinal_, stream_);
  }

  runtime::GpuRuntime* runtime_;
  int ordinal_;
  std::unique_ptr<CompiledModule> module_;
  std::unique_ptr<runtime::HostExecutable> host_;
  runtime::PackedEntry entry_;
  CUstream stream_;
  std::vector<CUdeviceptr> buffers_;
  void** args_ = nullptr;
  std::unique_ptr<PackedArguments> packed_;
  EntryProbe probe_;
  std::unique_ptr<PackedEntryArguments> op_arguments_;
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
    TESSERA_ASSIGN_OR_RETURN(
        std::unique_ptr<CompiledModule> module,
        CompileInternal(ProbeModule(point, problem), ProbeOptions(options_), Forced(candidate)));
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<runtime::HostExecutable> host, LoadHostCode(*module));
    TESSERA_ASSIGN_OR_RETURN(runtime::PackedEntry entry, host->Lookup("probe"));
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
  const std::string bias_type = dynamic ? absl::StrCat("memref<?x", element(3), ">")
                                        : absl::StrCat("memref<", p.n, "x", element(3), ">");
  std::string attributes;
  if (p.transpose_a || p.transpose_b) {
    attributes = absl::StrCat(" {", p.transpose_a ? "transpose_a" : "",
                              p.transpose_a && p.transpose_b ? ", " : "",
                              p.transpose_b ? "transpose_b" : "", "}");
  }
  return absl::StrCat("func.func @probe(%a: ", a_type, ", %b: ", b_type, ", %c: ", c_type,
                      p.bias ? absl::StrCat(", %bias: ", bias_type) : "",
                      ") {\n  tile.matmul %a, %b -> %c",
                      p.bias ? absl::StrCat(" bias(%bias : ", bias_type, ")") : "",
                      p.activation != "none" ? absl::StrCat(" activation(", p.activation, ")") : "",
                      " policy(", point.numeric_policy, ")", attributes, " : ", a_type, ", ",
                      b_type, " -> ", c_type, "\n  return\n}\n");
}

std::unique_ptr<arbiter::Prober> MakeProber(const CompileOptions& options) {
  if (options.target == Target::kHost) return std::make_unique<HostProber>(options);
  return std::make_unique<GpuProber>(options);
}

}  // namespace tessera::jit
