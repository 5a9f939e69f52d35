// A compile request as the compiler's options.
#include "service/compile_request.h"

#include "jit/compile_options.h"
#include "jit/delegates/registry.h"

namespace tessera::service {

jit::CompileOptions ToCompileOptions(const CompileRequest& request) {
  jit::CompileOptions options;
  options.target = request.target;
  options.arch = request.arch;
  options.host_cpu = request.host_cpu;
  options.opt_level = request.opt_level;
  options.deterministic = request.deterministic;
  options.batch_invariant = request.batch_invariant;
  options.link_cubin = request.link_cubin;
  options.dump_stages = request.dump_stages;
  options.source_name = request.source_name;
  options.cuda_toolkit = request.cuda_toolkit;
  if (request.delegates != nullptr) options.delegates = request.delegates->registry();
  options.matmul_delegate = request.matmul_delegate;
  options.decisions = request.decisions;
  options.arbitration_budget_ms = request.arbitration_budget_ms;
  options.plan = request.plan;
  options.plan_strict = request.plan_strict;
  options.background_decisions = request.background_decisions;
  options.background_deterministic = request.background_deterministic;
  return options;
}

}  // namespace tessera::service
