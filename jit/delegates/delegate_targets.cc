// Delegates against the compile's target and arch.
#include "jit/delegates/delegate_targets.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "dialect/ArchEnvelope.h"
#include "dialect/NVIDIAOps.h"
#include "jit/delegates/registry.h"
#include "jit/diagnostics.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace tessera::jit::delegates {
namespace {

absl::Status Refuse(mlir::Operation* op, const std::string& message) {
  return absl::FailedPreconditionError(
      absl::StrCat(FormatLocation(op->getLoc()), ": error: ", message));
}

/// "this compile's nvptx sm_90" or "this compile's host target".
std::string CompileName(const CompileOptions& options) {
  return options.target == Target::kHost ? std::string("this compile's host target")
                                         : absl::StrCat("this compile's nvptx ", options.arch);
}

absl::Status CheckOne(nvidia::DelegateOpInterface delegate, const CompileOptions& options) {
  mlir::Operation* op = delegate.getOperation();
  auto call = llvm::dyn_cast<nvidia::KernelCallOp>(op);
  const bool host = options.target == Target::kHost;
  if (host && llvm::isa<nvidia::InlinePtxOp>(op)) {
    return Refuse(op,
                  "'tessera_nvidia.inline_ptx' needs the nvptx target (its PTX runs only on "
                  "NVIDIA GPUs); this compile targets host");
  }
  if (host && call && call.getDeclaredBinding() == "cuda_kernel") {
    return Refuse(op, absl::StrCat("cuda_kernel delegate '", call.getCallee().str(),
                                   "' needs the nvptx target (it is a CUDA kernel launch); this "
                                   "compile targets host"));
  }
  // What the contract leaves open and this compile's lowering needs.
  if (call && !call.declaresContract()) {
    return absl::InvalidArgumentError(absl::StrCat(
        FormatLocation(op->getLoc()), ": error: kernel_call '", call.getCallee().str(),
        "' declares no delegation contract (binding, provenance, accuracy, determinism): this "
        "compile cannot arbitrate, check or lower it"));
  }
  if (llvm::isa<nvidia::InlinePtxOp>(op) && !nvidia::isInDeviceCode(op)) {
    return absl::InvalidArgumentError(absl::StrCat(
        FormatLocation(op->getLoc()),
        ": error: 'tessera_nvidia.inline_ptx' is expected to be in device code: directly in a "
        "'tile.map' body or in a 'gpu.func' kernel (inline PTX does not run on the host); this "
        "compile cannot lower it where it stands"));
  }
  if (call && call.getDeclaredBinding() == "cuda_kernel" && !call.getGrid()) {
    return absl::InvalidArgumentError(absl::StrCat(
        FormatLocation(op->getLoc()), ": error: cuda_kernel delegate '", call.getCallee().str(),
        "' declares no launch configuration: this compile launches it with its `grid` and "
        "`block` (e.g. grid = array<i64: 128>, block = array<i64: 256>)"));
  }
  // The verifier has checked the grammar; a module built in C++ may not have been verified.
  std::string error;
  std::optional<ArchEnvelope> envelope = ParseArchEnvelope(delegate.getArch(), &error);
  if (!envelope) return Refuse(op, error);
  if (!EnvelopeIncludes(*envelope, EnvelopeArch(options))) {
    return Refuse(
        op, absl::StrCat("delegate '", delegate.getDelegateName().str(), "' declares arch = \"",
                         delegate.getArch().str(), "\" (", DescribeEnvelope(*envelope),
                         "), which does not include ", CompileName(options),
                         envelope->kind == ArchEnvelope::Kind::kHost
                             ? " (a host C-ABI delegate: compile for target 'host')"
                         : host ? " (compile for target 'nvptx')"
                                : ""));
  }
  if (!call || call.getDeclaredBinding() != "c_abi" || options.delegates == nullptr) {
    return absl::OkStatus();
  }
  // An unresolved callee is the lowering's error (it names what was searched).
  absl::StatusOr<delegates::ResolvedSymbol> resolved =
      options.delegates->ResolveCAbi(call.getCallee().str());
  if (!resolved.ok()) return absl::OkStatus();
  const delegates::PointerSpace needed = delegates::PointerSpaceFor(options.target);
  if (resolved->library.pointers != needed) {
    return Refuse(op, absl::StrCat("'", call.getCallee().str(), "' resolves in library '",
                                   resolved->library.name, "', which takes ",
                                   delegates::PointerSpaceName(resolved->library.pointers),
                                   " pointers: it cannot serve ", host ? "a host" : "an nvptx",
                                   " compile, whose buffers are ",
                                   delegates::PointerSpaceName(needed), " memory"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckDelegateTargets(mlir::ModuleOp module, const CompileOptions& options) {
  absl::Status status = absl::OkStatus();
  module.walk([&](mlir::Operation* op) {
    if (auto gpu_module = llvm::dyn_cast<mlir::gpu::GPUModuleOp>(op);
        gpu_module && options.target == Target::kHost) {
      status = Refuse(op, absl::StrCat("gpu.module @", gpu_module.getName().str(),
                                       " holds raw GPU kernels, which need a GPU: compile with "
                                       "target 'nvptx'"));
    } else if (auto delegate = llvm::dyn_cast<nvidia::DelegateOpInterface>(op)) {
      status = CheckOne(delegate, options);
    }
    return status.ok() ? mlir::WalkResult::advance() : mlir::WalkResult::interrupt();
  });
  return status;
}

}  // namespace tessera::jit::delegates
