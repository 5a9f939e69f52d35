// What a compile produces code for: target, arch, optimisation level, guarantees.
#ifndef TESSERA_JIT_COMPILE_OPTIONS_H_
#define TESSERA_JIT_COMPILE_OPTIONS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/target.h"

namespace tessera::jit {

namespace delegates {
class DelegateRegistry;
}  // namespace delegates
}  // namespace tessera::jit

namespace tessera::arbiter {
class DecisionCache;
class Plan;
}  // namespace tessera::arbiter

namespace tessera::jit {

using runtime::ParseTarget;
using runtime::PtxFeatures;
using runtime::SupportedArchs;
using runtime::Target;
using runtime::TargetName;
using runtime::ValidateArch;

/// Options of one compile: everything a caller may set. (What the compiler's own recompiles
/// change beside these is jit/internal_compile.h.) Copyable.
struct CompileOptions {
  Target target = Target::kHost;
  /// GPU architecture for nvptx, e.g. "sm_90". Ignored for host.
  std::string arch = "sm_90";
  /// Host: the CPU machine code is generated for (runtime/host_target.h) — "" or "native" for this
  /// machine's, or a 64-bit x86 CPU LLVM knows ("x86-64-v3", "skylake-avx512", "znver4"), whose
  /// code runs on any machine with its features. A module for a CPU whose code cannot run here
  /// is compiled but not linked (it is for a package), and its Tile ops are not measured: each
  /// runs its compiled lowering unless forced. Ignored for nvptx (launch code is this machine's).
  std::string host_cpu;
  /// 0–3, for both LLVM (host code) and the NVPTX backend.
  int opt_level = 2;
  /// Treat every function as `tessera.deterministic` (the C API's deterministic flag).
  bool deterministic = false;
  /// … at the batch_invariant level (implies `deterministic`): only candidates whose result
  /// rows do not depend on the batch size (M) may serve a Tile op (docs/arbiter.md).
  bool batch_invariant = false;
  /// nvptx: also link each PTX image into a cubin with nvJitLink (the loader's first choice).
  /// Off, a compile stops at PTX.
  bool link_cubin = true;
  /// Record the IR after each pipeline stage in CompiledModule::stages.
  bool dump_stages = false;
  /// The name diagnostics use for the source text, e.g. a file name.
  std::string source_name = "<source>";
  /// The CUDA root libdevice (math functions) is read from. Empty: the first root of the search
  /// jit/codegen/cuda_libraries.h describes ($TESSERA_JIT_CUDA_HOME, NVIDIA's wheels, the toolkit).
  std::string cuda_toolkit;
  /// Where kernel_call callees resolve (null: nothing registered, so every delegate call fails
  /// to resolve). Shared, read-only during the compile.
  std::shared_ptr<const delegates::DelegateRegistry> delegates;
  /// Forces every tile.matmul onto one arbiter candidate: a matmul provider ("openblas",
  /// "cublas", a declared one) or "compiled". A `delegate = "…"` attribute on the op wins over
  /// it. Empty: the arbiter chooses.
  std::string matmul_delegate;
  /// Where decisions are reused from and kept; null: every compile decides afresh.
  std::shared_ptr<arbiter::DecisionCache> decisions;
  /// How long candidates may run for one decision (warm-up and timed samples), > 0.
  double arbitration_budget_ms = 300;
  /// Replay: every Tile op takes the candidate `plan` pins, nothing measured (null: measure).
  /// A point the plan lacks runs the compiled lowering, or with `plan_strict` fails the
  /// compile naming it.
  std::shared_ptr<const arbiter::Plan> plan;
  bool plan_strict = false;
  /// Background decisions: a Tile op with no cached decision is not measured in this compile;
  /// its incumbent (the compiled lowering, or a stale record's winner) serves and its record
  /// says `source = "pending"`. A module with pending decisions is not stored in the compile
  /// cache; compiling again without this option measures them (service/background_decisions.h
  /// does so on a worker and the C API swaps the module at the next invoke). Points in a
  /// deterministic function are measured now unless `background_deterministic`: a swap would
  /// change their results between calls.
  bool background_decisions = false;
  bool background_deterministic = false;
};

/// What a delegate's arch envelope is matched against: "host" for the host target, the arch
/// for nvptx.
std::string EnvelopeArch(const CompileOptions& options);

/// The CUDA root libdevice is read from: `options.cuda_toolkit`, else the search's
/// (LibdeviceComponent); empty when the search found none.
std::string ResolveCudaToolkit(const CompileOptions& options);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_COMPILE_OPTIONS_H_
