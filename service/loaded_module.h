// A module as it runs: the compiled module the service returned (the stored artifact) and
// everything made from it to run — the loaded host code, or for nvptx the launch code loaded on
// the first lookup; the all-kernels cubin and the package, made on first request; the decision
// records; and the swap from the incumbent to the module the background worker measured. PJRT's
// Executable / LoadedExecutable split: jit::CompiledModule is the first, this the second. The
// C API's module, function, invoke and decisions and the CLI's compile and explain wrap it.
#ifndef TESSERA_SERVICE_LOADED_MODULE_H_
#define TESSERA_SERVICE_LOADED_MODULE_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/call_once.h"
#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "arbiter/decision_record.h"
#include "runtime/entry_signature.h"
#include "runtime/host_executable.h"
#include "runtime/target.h"
#include "runtime/thread_pool.h"
#include "service/compile_request.h"
#include "service/package.h"

namespace tessera::jit {
struct CompiledModule;
}  // namespace tessera::jit

namespace tessera::service {

class BackgroundDecisions;
class PendingModule;

/// The texts a module gives out.
enum class ModuleText {
  kLlvm,       ///< the host code as LLVM IR, before LLVM's optimisations
  kPtx,        ///< every device image's PTX, each under a `// gpu.module @name` line
  kCubin,      ///< one cubin with every kernel (nvptx, unless compiled to PTX only)
  kPackage,    ///< the serving module as a package (service/package.h)
  kDecisions,  ///< the serving module's decision records as JSON
  kPlan,       ///< the same decisions as a plan
  kStages,     ///< the IR after each stage (CompileOptions::dump_stages)
};

/// What a module is loaded with besides its compiled module.
struct LoadOptions {
  /// nvptx: the CUDA device the launch code loads the device images on and launches on.
  int device = 0;
  /// The threads host code's parallel loops run on; null: the process's default pool.
  runtime::ThreadPool* threads = nullptr;
  bool background_requested = false;      ///< the compile asked for background decisions
  bool background_deterministic = false;  ///< … in deterministic functions too
  /// Called with the measured module's records when they swap in. It runs under the module's
  /// lock: it must not call back into the module.
  std::function<void(const std::vector<arbiter::DecisionRecord>&)> on_swap;
};

/// Where one decision of a module stands.
struct DecisionState {
  enum class State { kDecided, kPending, kFailed };
  State state = State::kDecided;
  /// The decision the compile returned with (op, location, function).
  const arbiter::DecisionRecord* incumbent = nullptr;
  /// The candidate serving now, and the winner ("" while pending or failed).
  const std::string* serving = nullptr;
  const char* winner = "";
  /// Why it stands so; valid for the module's life.
  const char* detail = "";
};

/// Thread-safe: the compiled module is immutable; what is made later is made once, under a
/// lock or a once-flag.
class LoadedModule {
 public:
  /// One entry function's loaded code; its address is stable for the module's life.
  class Function {
   public:
    const runtime::EntryFunction& entry() const { return *entry_; }

   private:
    friend class LoadedModule;
    const runtime::EntryFunction* entry_ = nullptr;
    runtime::PackedEntry entry_point_ = nullptr;
    /// The same entry in the measured module, once it has swapped in.
    std::atomic<runtime::PackedEntry> measured_entry_point_{nullptr};
  };

  /// `compiled` as the compile service returned it (host code already linked).
  LoadedModule(std::shared_ptr<const jit::CompiledModule> compiled, LoadOptions options);
  /// Abandons background work not yet started; nvptx: unloads the device images.
  ~LoadedModule();
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  runtime::Target target() const;
  const std::vector<runtime::EntryFunction>& entries() const;
  /// A few lines for a person: target and machine, the entries, the device images.
  std::string Describe() const;

  /// The entry function `name`, its code loaded (nvptx: the launch code, on first lookup).
  /// NotFound naming the entries there are; FailedPrecondition for host code compiled for a
  /// CPU whose code cannot run here.
  absl::StatusOr<Function*> GetFunction(absl::string_view name);

  /// Runs `function` on `packed` (the packed ABI: one pointer per argument, then one to the
  /// scalar result), whose arguments the caller has checked against the entry and its shape
  /// contract. Swaps measured decisions in first. nvptx: enqueues on `stream` of the module's
  /// device. A failed run-time check is OUT_OF_RANGE naming where.
  absl::Status Run(Function& function, void** packed, void* stream);

  /// One of the module's texts, valid for the module's life; NotFound when it has none.
  absl::StatusOr<absl::string_view> Text(ModuleText kind);

  /// The serving module (the measured one once swapped in) as a package entry.
  PackageEntry ServingPackageEntry() const;

  /// The decisions the compile returned with, in program order, and how many of them wait
  /// for the background worker.
  const std::vector<arbiter::DecisionRecord>& incumbent_decisions() const;
  size_t PendingDecisions() const;
  /// The decisions of the serving module.
  const std::vector<arbiter::DecisionRecord>& serving_decisions() const;
  /// Where decision `index` (< incumbent_decisions().size()) stands now.
  DecisionState Decision(size_t index);
  /// Waits up to `timeout` (InfiniteDuration: no limit) for the background worker; returns
  /// how many decisions still wait for it.
  size_t WaitDecisions(absl::Duration timeout);
  /// Why the background measurement failed; OK when it did not (or has not yet).
  absl::Status BackgroundFailure() const;

  /// Background decisions: when PendingDecisions() > 0, hands them to `worker`, which
  /// compiles `source` under `request` again with measurement on. Once, before the module is
  /// shared with other threads.
  void MeasureInBackground(BackgroundDecisions& worker, std::string source,
                           const CompileRequest& request);

  /// When the worker has measured this module's pending decisions and they are not swapped in
  /// yet, swaps them in: every function handed out gets its measured entry. Cheap when
  /// nothing is pending; Run, Decision and WaitDecisions call it.
  void SwapInMeasuredDecisions();

 private:
  const jit::CompiledModule& serving() const;
  void NoteFailure() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const runtime::HostExecutable* executable() const;

  const std::shared_ptr<const jit::CompiledModule> compiled_;
  const LoadOptions options_;
  /// The background work measuring this module's pending decisions; null when none are.
  std::shared_ptr<PendingModule> pending_;
  std::string all_ptx_;
  std::string decisions_json_;
  std::string plan_json_;

  absl::once_flag all_cubin_once_;
  absl::StatusOr<std::string> all_cubin_ = std::string();
  absl::once_flag package_once_;
  absl::StatusOr<std::string> package_ = std::string();
  absl::once_flag stages_once_;
  std::string stages_;

  /// nvptx: the JIT'd host code that launches the kernels, made on the first lookup.
  absl::once_flag device_host_once_;
  absl::Status device_host_status_;
  std::unique_ptr<runtime::HostExecutable> device_host_;

  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<Function>, std::less<>> functions_ ABSL_GUARDED_BY(mu_);
  std::string failure_text_ ABSL_GUARDED_BY(mu_);  ///< set once when the worker failed

  /// Background decisions: once measured, set once under `mu_`, then `swapped_` released;
  /// `settled_`: swapped, or the work failed — nothing more to do.
  std::atomic<bool> swapped_{false};
  std::atomic<bool> settled_{false};
  std::shared_ptr<const jit::CompiledModule> measured_;
  std::string measured_decisions_json_;
  std::string measured_plan_json_;
};

}  // namespace tessera::service

#endif  // TESSERA_SERVICE_LOADED_MODULE_H_
