// Tessera IR → compiled module: parse and verify, check contracts, lower stage by stage, then
// JIT the host code (host) or extract PTX and link cubins (nvptx).
#include "jit/compiler.h"

#include <chrono>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "arbiter/arbiter.h"
#include "arbiter/matmul_probe.h"
#include "base/status_macros.h"
#include "dialect/TesseraDialect.h"
#include "jit/admission/entry_description.h"
#include "jit/admission/ir_allowlist.h"
#include "jit/arbitration/arbitrate_tile_ops.h"
#include "jit/arbitration/composed_accuracy.h"
#include "jit/arbitration/probers.h"
#include "jit/codegen/cuda_libraries.h"
#include "jit/codegen/device_code.h"
#include "jit/codegen/host_code.h"
#include "jit/codegen/runtime_checks.h"
#include "jit/codegen/toolchain.h"
#include "jit/compile_session.h"
#include "jit/delegates/delegate_passes.h"
#include "jit/delegates/delegate_targets.h"
#include "jit/delegates/registry.h"
#include "jit/diagnostics.h"
#include "jit/internal_compile.h"
#include "jit/pipeline.h"
#include "jit/stage_clock.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "runtime/host_target.h"

namespace tessera::jit {
namespace {

absl::Status RunStage(CompileSession& session, const std::string& key, mlir::ModuleOp module,
                      const PipelineStage& stage, const DiagnosticCollector& diagnostics,
                      CompiledModule& out) {
  StageClock clock(out.stage_ms, stage.name);
  mlir::PassManager& pm = session.StageManager(key, stage);
  // Any error diagnostic fails the stage, even when the pass reports success (the
  // gpu-module-to-binary pass reports a missing toolkit only as a diagnostic).
  if (mlir::failed(pm.run(module)) || mlir::failed(mlir::verify(module)) ||
      diagnostics.HasErrors()) {
    return diagnostics.Failure(absl::StrCat("compile failed in stage '", stage.name, "'"));
  }
  if (out.options.dump_stages) out.stages.emplace_back(stage.name, OperationText(module));
  return absl::OkStatus();
}

/// Moves the lowering's record of resolved delegates from module attributes into `out`.
void TakeDelegateRecord(mlir::ModuleOp module, CompiledModule& out) {
  auto take = [&](const char* name, std::vector<std::string>& into) {
    if (auto list = module->getAttrOfType<mlir::ArrayAttr>(name)) {
      for (mlir::Attribute value : list) {
        into.push_back(llvm::cast<mlir::StringAttr>(value).getValue().str());
      }
      module->removeAttr(name);
    }
  };
  take(delegates::kDelegateSymbolsAttr, out.delegate_symbols);
  take(delegates::kDelegateIdentitiesAttr, out.delegate_identities);
}

absl::Status CheckOptions(const CompileOptions& options) {
  if (options.opt_level < 0 || options.opt_level > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("opt_level must be 0, 1, 2 or 3, found ", options.opt_level));
  }
  if (!(options.arbitration_budget_ms > 0) || options.arbitration_budget_ms > 3.6e6) {
    return absl::InvalidArgumentError(absl::StrCat(
        "arbitration_budget_ms must be in (0, 3600000], found ", options.arbitration_budget_ms));
  }
  if (options.target == Target::kHost) return runtime::ResolveHostTarget(options.host_cpu).status();
  TESSERA_RETURN_IF_ERROR(ValidateArch(options.arch));
  // Without libdevice, gpu-module-to-binary only warns and leaves __nv_* calls unresolved.
  if (options.cuda_toolkit.empty() && !LibdeviceComponent().found()) {
    return LibdeviceComponent().Missing("an nvptx compile (kernels call libdevice's math)");
  }
  std::filesystem::path libdevice =
      std::filesystem::path(ResolveCudaToolkit(options)) / "nvvm" / "libdevice" / "libdevice.10.bc";
  std::error_code error;
  if (!std::filesystem::exists(libdevice, error)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the CUDA root CompileOptions::cuda_toolkit names is not usable: ", libdevice.string(),
        " is missing"));
  }
  return absl::OkStatus();
}

/// Decides every Tile op (arbiter/arbiter.h) and writes the decisions back into `module`.
absl::Status ArbitrateModule(mlir::ModuleOp module, const InternalCompileOptions& internal,
                             CompiledModule& out) {
  const CompileOptions& options = out.options;
  TileOpArbitration selection;
  selection.target = options.target;
  selection.arch = EnvelopeArch(options);
  selection.deterministic = options.deterministic;
  selection.batch_invariant = options.batch_invariant;
  selection.forced = options.matmul_delegate;
  selection.forced_every_op = internal.forced_candidate;
  selection.registry = options.delegates.get();
  selection.toolchain = Toolchain::Current().ToString();
  // Host code for a named CPU is measured (where it runs) apart from this machine's own code.
  const runtime::HostTarget host =
      *runtime::ResolveHostTarget(options.host_cpu);  // CheckOptions checked it
  if (options.target == Target::kHost && host.id != runtime::HostCpu()) {
    absl::StrAppend(&selection.toolchain, ", host code for ", host.id);
  }
  std::unique_ptr<arbiter::Prober> prober;  // made on the first contest
  // Candidates are measured by running them: not for a CPU whose code cannot run here. Such a
  // contest is decided unprobed (a plan or a forced candidate still applies) and not cached.
  const bool measurable =
      options.target != Target::kHost || runtime::CheckHostCodeRunsHere(host.id).ok();
  if (internal.arbitrate) {
    selection.arbitrate = [&](const arbiter::ArbitrationPoint& decided,
                              const std::vector<arbiter::Candidate>& candidates) {
      arbiter::ArbitrationPoint point = decided;
      if (auto revert = internal.revert_to_compiled.find(point.location);
          revert != internal.revert_to_compiled.end()) {
        point.forced = arbiter::kCompiledCandidate;
        point.forced_by = revert->second;
      }
      arbiter::ArbitrationContext context;
      // A prober (for nvptx: the CUDA driver and a context) only for a contest it can run.
      if (measurable && candidates.size() > 1 && arbiter::ProbeCoverage(point).empty()) {
        if (prober == nullptr) prober = MakeProber(options);
        context.prober = prober.get();
      }
      if (!measurable) {
        context.no_prober_reason =
            absl::StrCat("the host code is for CPU ", host.id, ", which cannot run here");
      }
      context.cache = measurable ? options.decisions.get() : nullptr;
      context.toolchain = selection.toolchain;
      context.budget_s = options.arbitration_budget_ms / 1e3;
      context.plan = options.plan.get();
      context.plan_strict = options.plan_strict;
      context.defer = measurable && options.background_decisions;
      context.defer_deterministic = options.background_deterministic;
      return arbiter::Arbitrate(point, candidates, context);
    };
  }
  return ArbitrateTileOps(module, selection, out.decisions);
}

/// Everything that changes the passes a stage adds.
std::string PipelineKey(const CompileOptions& options, const PipelineOptions& pipeline) {
  return absl::StrCat(TargetName(options.target), "/", pipeline.arch, "/O", pipeline.opt_level,
                      pipeline.deterministic ? "/det" : "", "/", pipeline.cuda_toolkit, "/v",
                      pipeline.host_vector_bits,
                      pipeline.frozen_gpu_conversions ? "/frozen/" : "/upstream/",
                      reinterpret_cast<uintptr_t>(options.delegates.get()));
}

/// Compiles `source` in `session`: `parsed` is its module when ParseForCompile parsed it
/// (`parse_ms` earlier), else null and it is parsed here.
absl::Status CompileInSession(CompileSession& session, absl::string_view source,
                              mlir::OwningOpRef<mlir::ModuleOp> parsed, double parse_ms,
                              const InternalCompileOptions& internal, CompiledModule& out) {
  const CompileOptions& options = out.options;
  mlir::MLIRContext& context = session.context();
  DiagnosticCollector diagnostics(context);
  std::optional<StageClock> parse_clock(std::in_place, out.stage_ms, "parse");
  mlir::OwningOpRef<mlir::ModuleOp> module = std::move(parsed);
  if (!module) {
    TESSERA_ASSIGN_OR_RETURN(module,
                             ParseSource(context, diagnostics, source, options.source_name));
  }
  TESSERA_RETURN_IF_ERROR(CheckAllowedIr(*module, options.target));
  TESSERA_ASSIGN_OR_RETURN(out.entries, DescribeEntries(*module, source));
  parse_clock.reset();
  out.stage_ms.back().second += parse_ms;
  for (mlir::func::FuncOp function : EntryFunctions(*module)) {
    if (auto accuracy = getDeclaredAccuracy(function)) {
      out.declared_accuracy[function.getName().str()] = {accuracy->first, accuracy->second};
    }
  }

  PipelineOptions pipeline{options.arch, options.opt_level, options.deterministic,
                           ResolveCudaToolkit(options)};
  if (options.target == Target::kHost) {
    pipeline.host_vector_bits =
        runtime::ResolveHostTarget(options.host_cpu)->vector_bits;  // checked
  }
  const std::string key = PipelineKey(options, pipeline);
  // Every Tile op is arbitrated first; a winning delegate becomes a kernel_call, so the
  // contract checks see it.
  {
    StageClock clock(out.stage_ms, "arbitrate");
    TESSERA_RETURN_IF_ERROR(ArbitrateModule(*module, internal, out));
  }
  if (options.dump_stages) out.stages.emplace_back("arbitrate", OperationText(*module));
  TESSERA_RETURN_IF_ERROR(
      RunStage(session, key, *module, ContractStage(pipeline), diagnostics, out));
  TESSERA_RETURN_IF_ERROR(delegates::CheckDelegateTargets(*module, options));
  TESSERA_RETURN_IF_ERROR(
      RunStage(session, key, *module,
               PipelineStage{"delegates",
                             [&](mlir::OpPassManager& pm) {
                               pm.addPass(delegates::CreateLowerDelegateCallsPass(
                                   options.delegates.get(), options.target));
                             }},
               diagnostics, out));
  TakeDelegateRecord(*module, out);

  // Entry points get a C interface (memref descriptors by pointer) for the packed wrappers.
  for (mlir::func::FuncOp function : EntryFunctions(*module)) {
    function->setAttr("llvm.emit_c_interface", mlir::UnitAttr::get(&context));
  }
  const std::vector<PipelineStage> stages =
      options.target == Target::kHost ? HostStages(pipeline) : NvptxStages(pipeline);
  for (const PipelineStage& stage : stages) {
    TESSERA_RETURN_IF_ERROR(RunStage(session, key, *module, stage, diagnostics, out));
  }
  if (auto checks = (*module)->getAttrOfType<mlir::ArrayAttr>(kRuntimeCheckMessagesAttr)) {
    for (mlir::Attribute message : checks) {
      out.runtime_checks.push_back(llvm::cast<mlir::StringAttr>(message).getValue().str());
    }
    (*module)->removeAttr(kRuntimeCheckMessagesAttr);
  }
  if (options.target == Target::kHost) return EmitHostCode(*module, out);
  return EmitDeviceCode(*module, out);
}

}  // namespace

/// A parsed source and the session its module lives on (returned to the pool with it).
struct ParsedSource::State {
  std::unique_ptr<CompileSession> session;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string source;
  std::string canonical;
  double parse_ms = 0;

  ~State() {
    module = nullptr;  // it lives on the session's context
    // While unwinding (out of memory mid-compile) the session may be half-changed: it is not
    // reused but destroyed with this state.
    if (session != nullptr && std::uncaught_exceptions() == 0) {
      Sessions().Release(std::move(session));
    }
  }
};

ParsedSource::ParsedSource(std::unique_ptr<State> state) : state_(std::move(state)) {}
ParsedSource::ParsedSource(ParsedSource&&) noexcept = default;
ParsedSource& ParsedSource::operator=(ParsedSource&&) noexcept = default;
ParsedSource::~ParsedSource() = default;

const std::string& ParsedSource::canonical() const { return state_->canonical; }

absl::StatusOr<ParsedSource> Parse(absl::string_view source, absl::string_view source_name) {
  auto state = std::make_unique<ParsedSource::State>();
  state->session = Sessions().Acquire();
  state->source = std::string(source);
  const auto start = std::chrono::steady_clock::now();
  {
    // The diagnostic handler lives on the session's context: it ends inside this scope.
    DiagnosticCollector diagnostics(state->session->context());
    TESSERA_ASSIGN_OR_RETURN(state->module, ParseSource(state->session->context(), diagnostics,
                                                        source, std::string(source_name)));
  }
  state->parse_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  // The generic form without locations: comments, whitespace and SSA names are gone, every
  // semantic detail stays.
  llvm::raw_string_ostream os(state->canonical);
  mlir::OpPrintingFlags flags;
  flags.printGenericOpForm();
  state->module->print(os, flags);
  return ParsedSource(std::move(state));
}

absl::StatusOr<std::string> CanonicalSource(absl::string_view source) {
  TESSERA_ASSIGN_OR_RETURN(ParsedSource parsed, Parse(source, "<source>"));
  return parsed.canonical();
}

namespace {

/// A compile of `source` (`parsed` when already parsed, else null) under `options`, then the
/// composed accuracy check, whose recompiles parse the text again.
absl::StatusOr<std::unique_ptr<CompiledModule>> CompileSource(
    std::string source, std::unique_ptr<ParsedSource::State> parsed, const CompileOptions& options,
    const InternalCompileOptions& internal) {
  TESSERA_RETURN_IF_ERROR(CheckOptions(options));
  auto out = std::make_unique<CompiledModule>();
  out->options = options;
  out->options.deterministic |= options.batch_invariant;
  absl::Status status;
  if (parsed != nullptr) {
    status = CompileInSession(*parsed->session, source, std::move(parsed->module), parsed->parse_ms,
                              internal, *out);
    parsed.reset();  // the session goes back to the pool
  } else {
    std::unique_ptr<CompileSession> session = Sessions().Acquire();
    status = CompileInSession(*session, source, nullptr, 0, internal, *out);
    Sessions().Release(std::move(session));
  }
  if (!status.ok()) return status;
  if (internal.check_composed_accuracy && internal.arbitrate && out->host != nullptr) {
    TESSERA_RETURN_IF_ERROR(CheckComposedAccuracy(
        [&source](const CompileOptions& options, const InternalCompileOptions& recompile) {
          return CompileInternal(source, options, recompile);
        },
        out));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CompiledModule>> Compile(absl::string_view source,
                                                        const CompileOptions& options) {
  return CompileSource(std::string(source), nullptr, options, InternalCompileOptions());
}

absl::StatusOr<std::unique_ptr<CompiledModule>> Compile(ParsedSource parsed,
                                                        const CompileOptions& options) {
  std::string source = parsed.state_->source;
  return CompileSource(std::move(source), std::move(parsed.state_), options,
                       InternalCompileOptions());
}

absl::StatusOr<std::unique_ptr<CompiledModule>> CompileInternal(
    absl::string_view source, const CompileOptions& options,
    const InternalCompileOptions& internal) {
  return CompileSource(std::string(source), nullptr, options, internal);
}

}  // namespace tessera::jit