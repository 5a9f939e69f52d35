// The C API's handles and the helpers every capi/*.cc shares. Internal: not installed.
#ifndef TESSERA_CAPI_HANDLES_H_
#define TESSERA_CAPI_HANDLES_H_

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "arbiter/decision_cache.h"
#include "arbiter/plan.h"
#include "base/log.h"
#include "capi/include/tessera_jit.h"
#include "runtime/thread_pool.h"
#include "service/background_decisions.h"
#include "service/compile_service.h"
#include "service/delegates.h"
#include "service/loaded_module.h"

struct tessera_jit_error {
  absl::Status status;
};

/// Thread-safe: every member is immutable after create or guarded.
struct tessera_jit_context {
  tessera::runtime::Target default_target = tessera::runtime::Target::kHost;
  int device = 0;
  tessera::Logger logger;
  std::unique_ptr<tessera::service::CompileService> service;
  std::shared_ptr<tessera::service::Delegates> delegates =
      std::make_shared<tessera::service::Delegates>();
  /// The arbiter's decisions: `<cache root>/decisions` beside the compile cache (memory only
  /// when the compile cache has no disk tier).
  std::shared_ptr<tessera::arbiter::DecisionCache> decisions;
  /// Replay (tessera_jit_context_options_t.plan_path), and the decisions' time budget.
  std::shared_ptr<const tessera::arbiter::Plan> plan;
  bool plan_strict = false;
  double arbitration_budget_ms = 300;
  /// The threads host code's parallel loops run on: the context's own pool when
  /// num_threads was given, else the process's default pool.
  std::unique_ptr<tessera::runtime::ThreadPool> own_threads;
  tessera::runtime::ThreadPool* threads = nullptr;
  absl::Mutex mu;
  std::string last_miss_reason ABSL_GUARDED_BY(mu);
  /// Every identity text handed out by _get_delegate_identity: interned, so each pointer stays
  /// valid for the life of the context whatever other threads ask for.
  std::set<std::string> delegate_identities ABSL_GUARDED_BY(mu);
  /// The first decision of every arbitration point this context's compiles made or reused
  /// (tessera_jit_context_write_plan).
  tessera::arbiter::Plan decided ABSL_GUARDED_BY(mu);
  /// The worker that measures background decisions (TESSERA_JIT_BACKGROUND_DECISIONS), made
  /// on the first such compile. Declared after `service`, so destroyed (and joined) before it.
  std::unique_ptr<tessera::service::BackgroundDecisions> background ABSL_GUARDED_BY(mu);
  /// The caller's reference plus one per live module: a context destroyed while modules live
  /// is freed with the last of them.
  std::atomic<int> references{1};
};

/// Borrowed from its module: the C handle of one of its loaded functions.
struct tessera_jit_function {
  tessera_jit_module* module = nullptr;
  tessera::service::LoadedModule::Function* function = nullptr;
};

/// Thread-safe: the loaded module is; the handles map is guarded.
struct tessera_jit_module {
  tessera_jit_context* context = nullptr;
  std::unique_ptr<tessera::service::LoadedModule> loaded;
  absl::Mutex mu;
  std::map<std::string, std::unique_ptr<tessera_jit_function>, std::less<>> functions
      ABSL_GUARDED_BY(mu);
};

namespace tessera::capi {

/// An error the caller owns, or NULL for OK. Control bytes in the message are escaped.
tessera_jit_error_t* MakeError(absl::Status status);
tessera_jit_error_t* InvalidArgument(absl::string_view message);

/// OK when a caller's struct of `given` bytes is at least `minimum` (its first version's size).
absl::Status CheckStructSize(size_t given, size_t minimum, absl::string_view name);

/// Drops one reference to `context`; the last one frees it.
void ReleaseContext(tessera_jit_context* context);

bool GpuAvailable();

/// The arch a compile for `context` uses when the caller names none: its device's, or sm_90
/// without a driver or device. FailedPrecondition when the device's arch is one this compiler
/// does not support (never a silent compile for another arch).
absl::StatusOr<std::string> DefaultArch(const tessera_jit_context* context);

}  // namespace tessera::capi

/// Whether the caller's struct `pointer` (of `type`) reaches `field`: write or read it only then.
#define TESSERA_JIT_HOLDS(pointer, type, field) \
  ((pointer)->struct_size >= TESSERA_JIT_STRUCT_SIZE(type, field))

#endif  // TESSERA_CAPI_HANDLES_H_
