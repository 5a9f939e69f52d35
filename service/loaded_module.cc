// A loaded module: lookup (nvptx launch code loaded once), the run, the texts made on first
// request, and the swap to the measured module.
#include "service/loaded_module.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "arbiter/plan.h"
#include "jit/codegen/nvjitlink.h"
#include "jit/compiled_module.h"
#include "jit/compiler.h"
#include "jit/delegates/registry.h"
#include "runtime/checked_call.h"
#include "runtime/gpu_runtime.h"
#include "runtime/host_target.h"
#include "runtime/invocation.h"
#include "service/background_decisions.h"

namespace tessera::service {

LoadedModule::LoadedModule(std::shared_ptr<const jit::CompiledModule> compiled, LoadOptions options)
    : compiled_(std::move(compiled)), options_(std::move(options)) {
  for (const jit::DeviceImage& image : compiled_->device_images) {
    absl::StrAppend(&all_ptx_, "// gpu.module @", image.module_name, "\n", image.ptx);
    // Each section ends its line, so the next header starts one.
    if (!all_ptx_.empty() && all_ptx_.back() != '\n') all_ptx_.push_back('\n');
  }
  decisions_json_ = arbiter::ToJson(compiled_->decisions);
  plan_json_ = arbiter::Plan::FromRecords(compiled_->decisions).ToJson();
}

LoadedModule::~LoadedModule() {
  if (pending_ != nullptr) pending_->Abandon();
  if (device_host_ != nullptr) {
    runtime::ScopedCurrentContext keep_callers_context;
    // The launch code's destructors unload the device images on the module's device.
    runtime::InvocationScope scope(options_.device, nullptr);
    if (auto gpu = runtime::GpuRuntime::Get(); gpu.ok()) {
      (void)(*gpu)->Activate(options_.device);
    }
    device_host_.reset();
  }
}

runtime::Target LoadedModule::target() const { return compiled_->options.target; }

const std::vector<runtime::EntryFunction>& LoadedModule::entries() const {
  return compiled_->entries;
}

const jit::CompiledModule& LoadedModule::serving() const {
  return swapped_.load(std::memory_order_acquire) ? *measured_ : *compiled_;
}

const runtime::HostExecutable* LoadedModule::executable() const {
  return compiled_->host != nullptr ? compiled_->host.get() : device_host_.get();
}

std::string LoadedModule::Describe() const {
  const jit::CompiledModule& module = *compiled_;
  std::string text =
      absl::StrCat("compiled for ", runtime::TargetName(module.options.target), " (",
                   module.options.target == runtime::Target::kNvptx ? module.options.arch
                                                                    : module.host_object.cpu,
                   ")\n");
  for (const runtime::EntryFunction& entry : module.entries) {
    absl::StrAppend(&text, "entry @", entry.name, " (", entry.arguments.size(), " arguments)",
                    entry.deterministic ? " deterministic" : "", "\n");
  }
  for (const jit::DeviceImage& image : module.device_images) {
    absl::StrAppend(&text, "gpu.module @", image.module_name, ": ", image.kernels.size(),
                    " kernel(s), ", image.ptx.size(), " bytes of PTX, ", image.cubin.size(),
                    " bytes of cubin\n");
  }
  return text;
}

absl::StatusOr<LoadedModule::Function*> LoadedModule::GetFunction(absl::string_view name) {
  const runtime::EntryFunction* entry = nullptr;
  std::vector<absl::string_view> names;
  for (const runtime::EntryFunction& candidate : compiled_->entries) {
    names.push_back(candidate.name);
    if (candidate.name == name) entry = &candidate;
  }
  if (entry == nullptr) {
    return absl::NotFoundError(absl::StrCat("no entry function @", name,
                                            "; the module has: ", absl::StrJoin(names, ", ")));
  }
  if (target() == runtime::Target::kHost && compiled_->host == nullptr) {
    // Compiled for a CPU whose code cannot run here (CompileOptions::host_cpu).
    absl::Status runs = runtime::CheckHostCodeRunsHere(compiled_->host_object.cpu);
    return absl::FailedPreconditionError(absl::StrCat(
        "@", name, " cannot run here: ", runs.message(),
        "; package the module (tessera_jit_package_write) for a machine that has them"));
  }
  if (target() == runtime::Target::kNvptx) {
    absl::call_once(device_host_once_, [this] {
      auto host = jit::LoadHostCode(*compiled_);
      if (host.ok()) {
        device_host_ = std::move(*host);
      } else {
        device_host_status_ = host.status();
      }
    });
    if (!device_host_status_.ok()) return device_host_status_;
  }
  absl::MutexLock lock(&mu_);
  auto it = functions_.find(name);
  if (it != functions_.end()) return it->second.get();
  auto entry_point = executable()->Lookup(name);
  if (!entry_point.ok()) return entry_point.status();
  auto function = std::make_unique<Function>();
  function->entry_ = entry;
  function->entry_point_ = *entry_point;
  if (swapped_.load(std::memory_order_acquire)) {
    auto measured = measured_->host->Lookup(name);
    if (!measured.ok()) return measured.status();
    function->measured_entry_point_.store(*measured, std::memory_order_release);
  }
  Function* result = function.get();
  functions_.emplace(std::string(name), std::move(function));
  return result;
}

absl::Status LoadedModule::Run(Function& function, void** packed, void* stream) {
  // Background decisions: measured ones swap in here, before anything runs; this run then
  // runs one module's code throughout.
  if (pending_ != nullptr) SwapInMeasuredDecisions();
  const bool swapped = swapped_.load(std::memory_order_acquire);
  const jit::CompiledModule& module = swapped ? *measured_ : *compiled_;
  const runtime::PackedEntry entry_point =
      swapped ? function.measured_entry_point_.load(std::memory_order_acquire)
              : function.entry_point_;
  const runtime::EntryFunction& entry = function.entry();
  // With run-time checks in its code, a failed one ends the entry with OUT_OF_RANGE.
  const std::vector<std::string>& checks = module.runtime_checks;
  auto run = [&]() -> absl::Status {
    runtime::ScopedThreadPool threads(options_.threads);
    if (checks.empty()) {
      entry_point(packed);
      return absl::OkStatus();
    }
    const int64_t failed = runtime::CallChecked(entry_point, packed);
    if (failed < 0) return absl::OkStatus();
    return absl::OutOfRangeError(absl::StrCat(
        "@", entry.name, ": run-time check failed at ",
        failed < static_cast<int64_t>(checks.size()) ? checks[failed] : "an unknown location",
        "\n(the entry stopped there: outputs may be partly written)"));
  };
  if (module.options.target == runtime::Target::kHost) return run();

  auto gpu = runtime::GpuRuntime::Get();
  if (!gpu.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "@", entry.name, " runs on the GPU, which is not available: ", gpu.status().message()));
  }
  runtime::ScopedCurrentContext keep_callers_context;
  const auto& registry = module.options.delegates;
  runtime::InvocationScope scope(options_.device, static_cast<CUstream>(stream),
                                 registry != nullptr ? registry->runtime() : nullptr);
  if (absl::Status status = (*gpu)->Activate(options_.device); !status.ok()) return status;
  device_host_->RunInitializers();  // loads the device images, once
  if (!scope.status().ok()) return scope.status();
  if (absl::Status status = run(); !status.ok()) return status;
  return scope.status();
}

absl::StatusOr<absl::string_view> LoadedModule::Text(ModuleText kind) {
  const jit::CompiledModule& module = *compiled_;
  switch (kind) {
    case ModuleText::kDecisions:
    case ModuleText::kPlan: {
      // The serving module's: "[]" for a module without Tile ops.
      const bool swapped = swapped_.load(std::memory_order_acquire);
      if (kind == ModuleText::kDecisions) {
        return swapped ? measured_decisions_json_ : decisions_json_;
      }
      return swapped ? measured_plan_json_ : plan_json_;
    }
    case ModuleText::kPackage:
      absl::call_once(package_once_, [this] { package_ = WritePackage({ServingPackageEntry()}); });
      if (!package_.ok()) return package_.status();
      return *package_;
    case ModuleText::kStages:
      absl::call_once(stages_once_, [this] {
        for (const auto& [stage, ir] : compiled_->stages) {
          absl::StrAppend(&stages_, "// ----- after stage '", stage, "'\n", ir, "\n");
        }
      });
      if (stages_.empty()) {
        return absl::NotFoundError("the module has no stages (compile with dump_stages)");
      }
      return stages_;
    case ModuleText::kLlvm:
    case ModuleText::kPtx:
    case ModuleText::kCubin:
      break;
  }
  const std::string* text = nullptr;
  if (kind == ModuleText::kLlvm) {
    text = &module.host_llvm_ir;
  } else if (kind == ModuleText::kPtx) {
    text = &all_ptx_;
  } else {
    if (module.options.target == runtime::Target::kNvptx && !module.options.link_cubin) {
      return absl::NotFoundError(
          "the module has no cubin: it was compiled to PTX only (TESSERA_JIT_PTX_ONLY)");
    }
    const auto& images = module.device_images;
    if (images.size() == 1) {
      text = &images.front().cubin;
    } else if (images.size() > 1) {
      // Each kernel is an image of its own: one cubin with all of them, linked once.
      absl::call_once(all_cubin_once_, [this] {
        std::vector<absl::string_view> ptx;
        for (const auto& image : compiled_->device_images) ptx.push_back(image.ptx);
        all_cubin_ =
            jit::LinkPtxToCubin(ptx, compiled_->options.arch, compiled_->options.opt_level);
      });
      if (!all_cubin_.ok()) return all_cubin_.status();
      text = &*all_cubin_;
    }
  }
  if (text == nullptr || text->empty()) {
    return absl::NotFoundError(absl::StrCat("the module has no ",
                                            kind == ModuleText::kLlvm  ? "LLVM IR"
                                            : kind == ModuleText::kPtx ? "PTX"
                                                                       : "cubin",
                                            " (compiled for ",
                                            runtime::TargetName(module.options.target), ")"));
  }
  return *text;
}

PackageEntry LoadedModule::ServingPackageEntry() const { return MakePackageEntry(serving()); }

const std::vector<arbiter::DecisionRecord>& LoadedModule::incumbent_decisions() const {
  return compiled_->decisions;
}

const std::vector<arbiter::DecisionRecord>& LoadedModule::serving_decisions() const {
  return serving().decisions;
}

size_t LoadedModule::PendingDecisions() const { return compiled_->PendingDecisions(); }

void LoadedModule::MeasureInBackground(BackgroundDecisions& worker, std::string source,
                                       const CompileRequest& request) {
  if (PendingDecisions() == 0 || pending_ != nullptr) return;
  pending_ = worker.Submit(std::move(source), ToCompileOptions(request));
}

void LoadedModule::NoteFailure() {
  if (!failure_text_.empty()) return;
  const absl::Status failure = pending_->failure();
  failure_text_ =
      absl::StrCat("the background measurement failed (the incumbent keeps serving): ",
                   failure.ok() ? "the measured module does not match" : failure.ToString());
}

void LoadedModule::SwapInMeasuredDecisions() {
  if (pending_ == nullptr || settled_.load(std::memory_order_acquire)) return;
  const PendingModule::State state = pending_->state();
  if (state == PendingModule::State::kPending) return;
  absl::MutexLock lock(&mu_);
  if (swapped_.load(std::memory_order_relaxed)) return;
  if (state == PendingModule::State::kFailed) {
    NoteFailure();
    settled_.store(true, std::memory_order_release);
    return;
  }
  std::shared_ptr<const jit::CompiledModule> measured = pending_->measured();
  // The same source compiled again: the same entries and decision points, or no swap at all.
  bool matches = measured != nullptr && measured->host != nullptr &&
                 measured->decisions.size() == compiled_->decisions.size() &&
                 measured->entries.size() == compiled_->entries.size();
  for (size_t i = 0; matches && i < measured->decisions.size(); ++i) {
    matches = measured->decisions[i].point.location == compiled_->decisions[i].point.location;
  }
  std::map<std::string, runtime::PackedEntry> entry_points;
  for (const auto& [name, function] : functions_) {
    if (!matches) break;
    absl::StatusOr<runtime::PackedEntry> entry_point = measured->host->Lookup(name);
    matches = entry_point.ok();
    if (matches) entry_points[name] = *entry_point;
  }
  if (!matches) {
    NoteFailure();
    settled_.store(true, std::memory_order_release);
    return;
  }
  for (const auto& [name, function] : functions_) {
    function->measured_entry_point_.store(entry_points[name], std::memory_order_release);
  }
  measured_ = measured;
  measured_decisions_json_ = arbiter::ToJson(measured->decisions);
  measured_plan_json_ = arbiter::Plan::FromRecords(measured->decisions).ToJson();
  if (options_.on_swap) options_.on_swap(measured->decisions);
  swapped_.store(true, std::memory_order_release);
  settled_.store(true, std::memory_order_release);
}

DecisionState LoadedModule::Decision(size_t index) {
  SwapInMeasuredDecisions();  // a measured one serves from now on
  const bool swapped = swapped_.load(std::memory_order_acquire);
  const arbiter::DecisionRecord& incumbent = compiled_->decisions[index];
  const arbiter::DecisionRecord& serving = swapped ? measured_->decisions[index] : incumbent;
  DecisionState decision;
  decision.incumbent = &incumbent;
  decision.serving = &serving.winner;
  if (incumbent.source != arbiter::kPendingSource) {
    // (After a swap, the measured module's: its composed check may have reverted the op.)
    decision.winner = serving.winner.c_str();
    decision.detail = options_.background_requested && incumbent.point.deterministic &&
                              !options_.background_deterministic
                          ? "decided at compile: background decisions are off in a "
                            "deterministic function (a swap would change its results between "
                            "calls)"
                          : "decided at compile";
    return decision;
  }
  if (swapped) {
    decision.winner = serving.winner.c_str();
    decision.detail = "measured in the background and swapped in";
    return decision;
  }
  absl::MutexLock lock(&mu_);
  if (!failure_text_.empty()) {
    decision.state = DecisionState::State::kFailed;
    decision.detail = failure_text_.c_str();  // set once, never changed
  } else {
    // Not swapped and not failed: the worker is still at it (a finished one was swapped in or
    // noted as failed above).
    decision.state = DecisionState::State::kPending;
    decision.detail = "being measured in the background; the incumbent serves";
  }
  return decision;
}

size_t LoadedModule::WaitDecisions(absl::Duration timeout) {
  if (pending_ == nullptr) return 0;
  (void)pending_->Wait(timeout);
  SwapInMeasuredDecisions();
  return pending_->state() != PendingModule::State::kPending ? 0 : PendingDecisions();
}

absl::Status LoadedModule::BackgroundFailure() const {
  if (pending_ == nullptr || swapped_.load(std::memory_order_acquire)) {
    return absl::OkStatus();
  }
  if (pending_->state() == PendingModule::State::kFailed) {
    return pending_->failure();
  }
  if (settled_.load(std::memory_order_acquire)) {
    return absl::InternalError("the measured module does not match the incumbent");
  }
  return absl::OkStatus();
}

}  // namespace tessera::service
