// Background decisions at the C API: where each decision of a module stands, waiting for the
// worker, and the swap to the measured module at the start of an invoke
// (TESSERA_JIT_BACKGROUND_DECISIONS; service/background_decisions.h does the measuring).
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "arbiter/decision_record.h"
#include "capi/handles.h"

using tessera::capi::CheckStructSize;
using tessera::capi::InvalidArgument;
using tessera::capi::MakeError;
using tessera::service::PendingModule;

namespace tessera::capi {
namespace {

/// Records the worker's failure once; the incumbent keeps serving.
void NoteFailure(tessera_jit_module* module) ABSL_EXCLUSIVE_LOCKS_REQUIRED(module->mu) {
  if (!module->failure_text.empty()) return;
  const absl::Status failure = module->pending->failure();
  module->failure_text =
      absl::StrCat("the background measurement failed (the incumbent keeps serving): ",
                   failure.ok() ? "the measured module does not match" : failure.ToString());
}

}  // namespace

void SwapInMeasuredDecisions(tessera_jit_module* module) {
  if (module->pending == nullptr || module->settled.load(std::memory_order_acquire)) return;
  const PendingModule::State state = module->pending->state();
  if (state == PendingModule::State::kPending) return;
  absl::MutexLock lock(&module->mu);
  if (module->swapped.load(std::memory_order_relaxed)) return;
  if (state == PendingModule::State::kFailed) {
    NoteFailure(module);
    module->settled.store(true, std::memory_order_release);
    return;
  }
  std::shared_ptr<const jit::CompiledModule> measured = module->pending->measured();
  // The same source compiled again: the same entries and decision points, or no swap at all.
  bool matches = measured != nullptr && measured->host != nullptr &&
                 measured->decisions.size() == module->compiled->decisions.size() &&
                 measured->entries.size() == module->compiled->entries.size();
  for (size_t i = 0; matches && i < measured->decisions.size(); ++i) {
    matches =
        measured->decisions[i].point.location == module->compiled->decisions[i].point.location;
  }
  std::map<std::string, runtime::PackedEntry> entry_points;
  for (const auto& [name, function] : module->functions) {
    if (!matches) break;
    absl::StatusOr<runtime::PackedEntry> entry_point = measured->host->Lookup(name);
    matches = entry_point.ok();
    if (matches) entry_points[name] = *entry_point;
  }
  if (!matches) {
    NoteFailure(module);
    module->settled.store(true, std::memory_order_release);
    return;
  }
  for (const auto& [name, function] : module->functions) {
    function->measured_entry_point.store(entry_points[name], std::memory_order_release);
  }
  module->measured = measured;
  module->measured_decisions_json = arbiter::ToJson(measured->decisions);
  module->measured_plan_json = arbiter::Plan::FromRecords(measured->decisions).ToJson();
  {
    absl::MutexLock context_lock(&module->context->mu);
    module->context->decided.AddRecords(measured->decisions);
  }
  module->swapped.store(true, std::memory_order_release);
  module->settled.store(true, std::memory_order_release);
}

}  // namespace tessera::capi

extern "C" {

size_t tessera_jit_module_get_decision_count(const tessera_jit_module_t* module) {
  return module == nullptr ? 0 : module->compiled->decisions.size();
}

tessera_jit_error_t* tessera_jit_module_get_decision(tessera_jit_module_t* module, size_t index,
                                                     tessera_jit_decision_info_t* out_info) {
  if (module == nullptr) return InvalidArgument("module is NULL");
  if (out_info == nullptr) return InvalidArgument("out_info is NULL");
  if (absl::Status status = CheckStructSize(
          out_info->struct_size, TESSERA_JIT_STRUCT_SIZE(tessera_jit_decision_info_t, detail),
          "tessera_jit_decision_info_t");
      !status.ok()) {
    return MakeError(status);
  }
  const size_t count = module->compiled->decisions.size();
  if (index >= count) {
    return InvalidArgument(
        absl::StrCat("the module has ", count, " decision(s); index ", index, " is out of range"));
  }
  tessera::capi::SwapInMeasuredDecisions(module);  // a measured one serves from now on
  const bool swapped = module->swapped.load(std::memory_order_acquire);
  const tessera::arbiter::DecisionRecord& incumbent = module->compiled->decisions[index];
  const tessera::arbiter::DecisionRecord& serving =
      swapped ? module->measured->decisions[index] : incumbent;
  out_info->op = incumbent.point.op.c_str();
  out_info->location = incumbent.point.location.c_str();
  out_info->function = incumbent.point.function.c_str();
  out_info->serving = serving.winner.c_str();
  const bool was_pending = incumbent.source == tessera::arbiter::kPendingSource;
  if (!was_pending) {
    out_info->state = TESSERA_JIT_DECISION_DECIDED;
    // (After a swap, the measured module's: its composed check may have reverted the op.)
    out_info->winner = serving.winner.c_str();
    out_info->detail =
        module->background_requested && incumbent.point.deterministic &&
                !module->background_deterministic
            ? "decided at compile: background decisions are off in a deterministic function (a "
              "swap would change its results between calls)"
            : "decided at compile";
    return nullptr;
  }
  if (swapped) {
    out_info->state = TESSERA_JIT_DECISION_DECIDED;
    out_info->winner = serving.winner.c_str();
    out_info->detail = "measured in the background and swapped in";
    return nullptr;
  }
  out_info->winner = "";
  absl::MutexLock lock(&module->mu);
  if (!module->failure_text.empty()) {
    out_info->state = TESSERA_JIT_DECISION_FAILED;
    out_info->detail = module->failure_text.c_str();  // set once, never changed
  } else {
    // Not swapped and not failed: the worker is still at it (a finished one was swapped in
    // or noted as failed above).
    out_info->state = TESSERA_JIT_DECISION_PENDING;
    out_info->detail = "being measured in the background; the incumbent serves";
  }
  return nullptr;
}

tessera_jit_error_t* tessera_jit_module_wait_decisions(tessera_jit_module_t* module,
                                                       int64_t timeout_ms, size_t* out_pending) {
  if (module == nullptr) return InvalidArgument("module is NULL");
  if (module->pending != nullptr) {
    (void)module->pending->Wait(timeout_ms < 0 ? absl::InfiniteDuration()
                                               : absl::Milliseconds(timeout_ms));
    tessera::capi::SwapInMeasuredDecisions(module);
  }
  if (out_pending != nullptr) {
    const bool done =
        module->pending == nullptr || module->pending->state() != PendingModule::State::kPending;
    *out_pending = done ? 0 : module->compiled->PendingDecisions();
  }
  return nullptr;
}

}  // extern "C"
