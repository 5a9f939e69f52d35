// Decisions at the C API: where each decision of a module stands and waiting for the background
// worker (TESSERA_JIT_BACKGROUND_DECISIONS; service/loaded_module.h swaps the measured module in,
// service/background_decisions.h measures it).
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "capi/handles.h"

using tessera::capi::CheckStructSize;
using tessera::capi::InvalidArgument;
using tessera::capi::MakeError;
using tessera::service::DecisionState;

extern "C" {

size_t tessera_jit_module_get_decision_count(const tessera_jit_module_t* module) {
  return module == nullptr ? 0 : module->loaded->incumbent_decisions().size();
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
  const size_t count = module->loaded->incumbent_decisions().size();
  if (index >= count) {
    return InvalidArgument(
        absl::StrCat("the module has ", count, " decision(s); index ", index, " is out of range"));
  }
  const DecisionState decision = module->loaded->Decision(index);
  out_info->op = decision.incumbent->point.op.c_str();
  out_info->location = decision.incumbent->point.location.c_str();
  out_info->function = decision.incumbent->point.function.c_str();
  out_info->serving = decision.serving->c_str();
  out_info->winner = decision.winner;
  out_info->detail = decision.detail;
  switch (decision.state) {
    case DecisionState::State::kDecided:
      out_info->state = TESSERA_JIT_DECISION_DECIDED;
      break;
    case DecisionState::State::kPending:
      out_info->state = TESSERA_JIT_DECISION_PENDING;
      break;
    case DecisionState::State::kFailed:
      out_info->state = TESSERA_JIT_DECISION_FAILED;
      break;
  }
  return nullptr;
}

tessera_jit_error_t* tessera_jit_module_wait_decisions(tessera_jit_module_t* module,
                                                       int64_t timeout_ms, size_t* out_pending) {
  if (module == nullptr) return InvalidArgument("module is NULL");
  const size_t pending = module->loaded->WaitDecisions(
      timeout_ms < 0 ? absl::InfiniteDuration() : absl::Milliseconds(timeout_ms));
  if (out_pending != nullptr) *out_pending = pending;
  return nullptr;
}

}  // extern "C"
