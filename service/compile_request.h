// What a caller asks of a compile, in the service's terms: the C API and the CLI fill it in and
// hand it to the service, which turns it into the compiler's options. Each field is the one of
// the same name in jit::CompileOptions (jit/compile_options.h documents them), but for
// `delegates`, a service::Delegates. The compiler's own recompile knobs are not here
// (jit/internal_compile.h).
#ifndef TESSERA_SERVICE_COMPILE_REQUEST_H_
#define TESSERA_SERVICE_COMPILE_REQUEST_H_

#include <memory>
#include <string>

#include "runtime/target.h"
#include "service/delegates.h"

namespace tessera::arbiter {
class DecisionCache;
class Plan;
}  // namespace tessera::arbiter

namespace tessera::jit {
struct CompileOptions;
}  // namespace tessera::jit

namespace tessera::service {

struct CompileRequest {
  runtime::Target target = runtime::Target::kHost;
  std::string arch = "sm_90";
  std::string host_cpu;
  int opt_level = 2;
  bool deterministic = false;
  bool batch_invariant = false;
  bool link_cubin = true;
  bool dump_stages = false;
  std::string source_name = "<source>";
  std::string cuda_toolkit;
  std::shared_ptr<const Delegates> delegates;
  std::string matmul_delegate;
  std::shared_ptr<arbiter::DecisionCache> decisions;
  double arbitration_budget_ms = 300;
  std::shared_ptr<const arbiter::Plan> plan;
  bool plan_strict = false;
  bool background_decisions = false;
  bool background_deterministic = false;
};

/// The compiler's options for `request`.
jit::CompileOptions ToCompileOptions(const CompileRequest& request);

}  // namespace tessera::service

#endif  // TESSERA_SERVICE_COMPILE_REQUEST_H_
