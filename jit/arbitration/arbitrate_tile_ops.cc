// Arbitration points → decisions written back into the IR: each Tile op gets its candidates
// listed (compiled lowering, its kernel variants for nvptx, matmul providers, with applicability
// and availability), the arbiter decides; a winning variant is written on the op as
// `tessera_jit.schedule`, a winning delegate replaces the tile.matmul with a kernel_call.
#include "jit/arbitration/arbitrate_tile_ops.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "dialect/ArchEnvelope.h"
#include "dialect/NVIDIAOps.h"
#include "dialect/TesseraDialect.h"
#include "dialect/TileOps.h"
#include "dialect/conversion/tile_to_gpu/KernelSchedules.h"
#include "jit/delegates/c_signatures.h"
#include "jit/delegates/delegate_passes.h"
#include "jit/delegates/matmul_provider.h"
#include "jit/delegates/registry.h"
#include "jit/diagnostics.h"
#include "jit/passes.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace tessera::jit {

#define GEN_PASS_DEF_ARBITRATETILEOPS
#include "jit/Passes.h.inc"

namespace {

using delegates::BuiltinMatmulProviders;
using delegates::DelegateRegistry;
using delegates::kCblasNoTrans;
using delegates::kCblasRowMajor;
using delegates::kCblasTrans;
using delegates::kCublasOpN;
using delegates::kCublasOpT;
using delegates::KnownSignature;
using delegates::MatmulProvider;
using delegates::ResolvedSymbol;

/// Why `provider` cannot serve `op` (gate 1), or "" when it can.
std::string Decline(const MatmulProvider& provider, const TileOpArbitration& selection,
                    tile::MatmulOp op) {
  const Target target = selection.target;
  if (provider.target != target) {
    return "it serves the " + std::string(TargetName(provider.target)) +
           " target and this compile is for " + std::string(TargetName(target));
  }
  std::optional<ArchEnvelope> envelope = ParseArchEnvelope(provider.arch, nullptr);
  if (!envelope || !EnvelopeIncludes(*envelope, selection.arch)) {
    return absl::StrCat("its arch envelope '", provider.arch, "' does not include ",
                        selection.arch);
  }
  auto f32 = [](mlir::Value value) {
    return llvm::cast<mlir::MemRefType>(value.getType()).getElementType().isF32();
  };
  if (!f32(op.getLhs()) || !f32(op.getRhs()) || !f32(op.getOutput()) ||
      (op.getBias() && !f32(op.getBias()))) {
    return "it computes f32 only (A, B, C and bias must be f32)";
  }
  if (op.getNumericPolicyOrDefault() != tile::NumericPolicy::f32) {
    return "it implements the f32 numeric policy only";
  }
  if (op.isBatched()) {
    return "it computes one 2-D product; a batched matmul runs the compiled lowering";
  }
  if (provider.covers == "root_only" && op.hasFusedEpilogue()) {
    return "it covers root_only and the op has a fused epilogue (bias, activation or residual)";
  }
  if (provider.covers == "whole_region" && op.hasFusedEpilogue()) {
    return "its ABI computes the product only; a fused epilogue needs the compiled lowering";
  }
  for (mlir::Value memref : {op.getLhs(), op.getRhs(), op.getOutput()}) {
    if (!llvm::cast<mlir::MemRefType>(memref.getType()).getLayout().isIdentity()) {
      return "it needs dense row-major matrices";
    }
  }
  return "";
}

/// Why `provider` cannot run here (gate 2), or "".
std::string Unavailable(const MatmulProvider& provider, const DelegateRegistry* registry) {
  if (registry == nullptr || !registry->HasLibrary(provider.library)) {
    return absl::StrCat("library '", provider.library, "' is not registered");
  }
  absl::StatusOr<ResolvedSymbol> resolved =
      registry->ResolveCAbiIn(provider.library, provider.callee);
  if (!resolved.ok()) return std::string(resolved.status().message());
  return "";
}

arbiter::Candidate ProviderCandidate(const MatmulProvider& provider,
                                     const DelegateRegistry* registry) {
  arbiter::Candidate c;
  c.id = provider.name;
  c.provenance = provider.provenance;
  c.determinism = provider.determinism;
  c.accuracy = provider.accuracy;
  c.budget = arbiter::BudgetFor(provider.accuracy, provider.tolerance, provider.tolerance_rel);
  c.covers = provider.covers;
  c.route = absl::StrCat("kernel_call ", provider.callee, " (", provider.abi, " ABI) in library ",
                         provider.library);
  absl::StatusOr<ResolvedSymbol> resolved =
      registry == nullptr ? absl::StatusOr<ResolvedSymbol>(absl::NotFoundError(""))
                          : registry->ResolveCAbiIn(provider.library, provider.callee);
  c.identity = resolved.ok() ? absl::StrCat(provider.callee, " in ", resolved->library.ToString())
                             : absl::StrCat(provider.callee, " in library '", provider.library,
                                            "' (not resolved)");
  return c;
}

/// `op` alone as `func.func @probe`: one argument per operand, then one per value its regions
/// use from outside (a constant is cloned in instead), the op cloned without the arbiter's
/// attributes; printed generically enough to parse on its own.
std::string ProbeSource(mlir::Operation* op) {
  mlir::MLIRContext* context = op->getContext();
  mlir::OpBuilder b(context);
  const mlir::Location loc = b.getUnknownLoc();
  llvm::SetVector<mlir::Value> captured;
  mlir::getUsedValuesDefinedAbove(op->getRegions(), captured);
  llvm::SmallVector<mlir::Type> types(op->getOperandTypes());
  llvm::SmallVector<mlir::Value> passed;  // captured values that become arguments
  for (mlir::Value value : captured) {
    mlir::Operation* def = value.getDefiningOp();
    if (def != nullptr && def->hasTrait<mlir::OpTrait::ConstantLike>()) continue;
    types.push_back(value.getType());
    passed.push_back(value);
  }
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto probe = b.create<mlir::func::FuncOp>(loc, "probe", b.getFunctionType(types, {}));
  mlir::Block* entry = probe.addEntryBlock();
  b.setInsertionPointToStart(entry);
  mlir::IRMapping mapping;
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    mapping.map(op->getOperand(i), entry->getArgument(i));
  }
  for (size_t i = 0; i < passed.size(); ++i) {
    mapping.map(passed[i], entry->getArgument(op->getNumOperands() + i));
  }
  for (mlir::Value value : captured) {
    mlir::Operation* def = value.getDefiningOp();
    if (def != nullptr && def->hasTrait<mlir::OpTrait::ConstantLike>()) b.clone(*def, mapping);
  }
  mlir::Operation* clone = b.clone(*op, mapping);
  for (llvm::StringRef name :
       {llvm::StringRef(kCandidateAttrName), llvm::StringRef(device::kScheduleAttr),
        llvm::StringRef(kDecisionAttr)}) {
    clone->removeAttr(name);
  }
  b.create<mlir::func::ReturnOp>(loc);
  std::string text;
  llvm::raw_string_ostream os(text);
  probe->print(os);
  return text;
}

/// The arbitration point of any Tile op: the memref operands' element types and the first
/// one's shape; tile.matmul in full.
arbiter::ArbitrationPoint PointOfOp(mlir::Operation* op, const TileOpArbitration& selection) {
  arbiter::ArbitrationPoint p;
  p.op = op->getName().getStringRef().str();
  p.location = FormatLocation(op->getLoc());
  auto function = op->getParentOfType<mlir::func::FuncOp>();
  p.function = function ? function.getName().str() : "";
  p.target = std::string(TargetName(selection.target));
  p.arch = selection.arch;
  p.deterministic = selection.deterministic || (function && isDeterministic(function));
  p.batch_invariant = selection.batch_invariant || (function && isBatchInvariant(function));
  p.deterministic |= p.batch_invariant;
  auto matmul = llvm::dyn_cast<tile::MatmulOp>(op);
  for (mlir::Value operand : op->getOperands()) {
    auto memref = llvm::dyn_cast<mlir::MemRefType>(operand.getType());
    if (!memref) continue;
    p.element_types.push_back(TypeText(memref.getElementType()));
    if (!memref.getLayout().isIdentity()) p.layout = "strided";
    if (p.shape.empty() && !matmul) {
      for (int64_t size : memref.getShape()) {
        p.shape.push_back(mlir::ShapedType::isDynamic(size) ? -1 : size);
      }
    }
  }
  if (auto forced = op->getAttrOfType<mlir::StringAttr>(kCandidateAttrName)) {
    p.forced = forced.getValue().str();
    p.forced_by = "attribute `tessera.candidate`";
  }
  auto forced_by_option = [&] {
    if (!p.forced.empty() || selection.forced_every_op.empty()) return false;
    p.forced = selection.forced_every_op;
    p.forced_by = "option `forced_candidate`";
    return true;
  };
  if (!matmul) {
    forced_by_option();
    return p;
  }
  auto dim = [](mlir::Value value, unsigned d) {
    int64_t size = llvm::cast<mlir::MemRefType>(value.getType()).getDimSize(d);
    return mlir::ShapedType::isDynamic(size) ? int64_t{-1} : size;
  };
  p.transpose_a = matmul.getTransposeA();
  p.transpose_b = matmul.getTransposeB();
  const unsigned rankC = llvm::cast<mlir::MemRefType>(matmul.getOutput().getType()).getRank();
  const unsigned rankA = llvm::cast<mlir::MemRefType>(matmul.getLhs().getType()).getRank();
  p.shape = {dim(matmul.getOutput(), rankC - 2), dim(matmul.getOutput(), rankC - 1),
             dim(matmul.getLhs(), rankA - (matmul.getTransposeA() ? 2 : 1))};
  // A batched product is its own kind of point (no 2-D provider serves it): its batch sizes
  // follow M, N, K, and the layout says so.
  if (matmul.isBatched()) {
    p.layout = "batched";
    for (unsigned d = 0; d + 2 < rankC; ++d) p.shape.push_back(dim(matmul.getOutput(), d));
  }
  p.bias = matmul.getBias() != nullptr;
  p.residual = matmul.getResidual() != nullptr;
  p.activation = tile::stringifyActivation(matmul.getActivationOrNone()).str();
  p.numeric_policy = tile::stringifyNumericPolicy(matmul.getNumericPolicyOrDefault()).str();
  if (!p.forced.empty()) {
    // tessera.candidate above
  } else if (matmul.getDelegate()) {
    p.forced = matmul.getDelegate()->str();
    p.forced_by = "attribute `delegate`";
  } else if (forced_by_option()) {
  } else if (!selection.forced.empty()) {
    p.forced = selection.forced;
    p.forced_by = "option `matmul_delegate`";
  }
  return p;
}

/// A kernel variant of the compiled lowering as a candidate: `compiled.<schedule>`.
arbiter::Candidate VariantCandidate(const device::KernelSchedule& schedule, mlir::Operation* op,
                                    const TileOpArbitration& selection) {
  arbiter::Candidate c =
      arbiter::CompiledCandidate(std::string(TargetName(selection.target)), selection.toolchain);
  c.id = absl::StrCat(arbiter::kCompiledCandidate, ".", schedule.name);
  c.identity =
      absl::StrCat("tessera kernel variant ", schedule.name, " (", selection.toolchain, ")");
  c.route = absl::StrCat("the Tile op lowered by Tessera for ", TargetName(selection.target),
                         " with schedule ", schedule.name, ": ", schedule.summary);
  c.batch_invariance = schedule.batch_invariance;
  c.inapplicable = device::scheduleDeclines(op, schedule.name, selection.arch);
  return c;
}

/// The schedule a winning candidate id names: one of `op`'s kernel variants ("" for the
/// baseline and delegates).
std::string ScheduleOfWinner(mlir::Operation* op, const std::string& winner) {
  for (const device::KernelSchedule& schedule : device::schedulesFor(op)) {
    if (winner == absl::StrCat(arbiter::kCompiledCandidate, ".", schedule.name)) {
      return schedule.name;
    }
  }
  return "";
}

/// PointOfOp, with a forced kernel variant relaxed to the compiled lowering in a host compile:
/// a variant is a GPU schedule, and the host runs the same source with its one lowering.
arbiter::ArbitrationPoint PointOf(mlir::Operation* op, const TileOpArbitration& selection) {
  arbiter::ArbitrationPoint p = PointOfOp(op, selection);
  if (selection.target != Target::kHost) return p;
  for (const device::KernelSchedule& schedule : device::schedulesFor(op)) {
    if (p.forced == absl::StrCat(arbiter::kCompiledCandidate, ".", schedule.name)) {
      p.forced_by = absl::StrCat(p.forced_by, " = ", p.forced,
                                 ", a GPU schedule: the host target's lowering serves");
      p.forced = arbiter::kCompiledCandidate;
    }
  }
  return p;
}

mlir::Attribute DecisionAttr(mlir::Builder& b, const arbiter::DecisionRecord& record) {
  return b.getDictionaryAttr({
      b.getNamedAttr("winner", b.getStringAttr(record.winner)),
      b.getNamedAttr("route", b.getStringAttr(record.route)),
      b.getNamedAttr("why", b.getStringAttr(record.reason)),
      b.getNamedAttr("source", b.getStringAttr(record.source)),
      b.getNamedAttr("record", b.getStringAttr(record.key.substr(0, 16))),
  });
}

/// tile.matmul → kernel_call of `provider`.
mlir::Operation* Rewrite(tile::MatmulOp op, const MatmulProvider& provider) {
  mlir::OpBuilder b(op);
  mlir::Location loc = op.getLoc();
  auto i32 = [&](int64_t value) -> mlir::Value {
    return b.create<mlir::arith::ConstantOp>(loc, b.getI32IntegerAttr(value));
  };
  const std::string too_large = absl::StrCat(
      "a matrix dimension of 2^31 or more does not fit the 32-bit sizes of ", provider.callee);
  auto dim = [&](mlir::Value memref, int64_t d) -> mlir::Value {
    mlir::Value size = b.create<mlir::memref::DimOp>(loc, memref, d);
    // The ABI's sizes are int: a larger one fails the invocation (jit/codegen/runtime_checks.h)
    // rather than being truncated.
    mlir::Value fits = b.create<mlir::arith::CmpIOp>(
        loc, mlir::arith::CmpIPredicate::ule, size,
        b.create<mlir::arith::ConstantIndexOp>(loc, std::numeric_limits<int32_t>::max()));
    b.create<mlir::cf::AssertOp>(loc, fits, b.getStringAttr(too_large));
    return b.create<mlir::arith::IndexCastOp>(loc, b.getI32Type(), size);
  };
  auto f32 = [&](float value) -> mlir::Value {
    return b.create<mlir::arith::ConstantOp>(loc, b.getF32FloatAttr(value));
  };
  mlir::Value a = op.getLhs();
  mlir::Value bm = op.getRhs();
  mlir::Value c = op.getOutput();
  mlir::Value m = dim(c, 0);
  mlir::Value n = dim(c, 1);
  mlir::Value k = dim(a, op.getTransposeA() ? 0 : 1);
  // Row-major leading dimensions: the row length of each stored matrix.
  mlir::Value lda = dim(a, 1);
  mlir::Value ldb = dim(bm, 1);
  mlir::Value ldc = dim(c, 1);
  llvm::SmallVector<mlir::Value> operands;
  if (provider.abi == "cblas_sgemm") {
    operands = {i32(kCblasRowMajor),
                i32(op.getTransposeA() ? kCblasTrans : kCblasNoTrans),
                i32(op.getTransposeB() ? kCblasTrans : kCblasNoTrans),
                m,
                n,
                k,
                f32(1.0f),
                a,
                lda,
                bm,
                ldb,
                f32(0.0f),
                c,
                ldc};
  } else {
    // cuBLAS is column-major: compute Cᵀ = op(B)ᵀ · op(A)ᵀ on the same bytes.
    operands = {i32(op.getTransposeB() ? kCublasOpT : kCublasOpN),
                i32(op.getTransposeA() ? kCublasOpT : kCublasOpN),
                n,
                m,
                k,
                f32(1.0f),
                bm,
                ldb,
                a,
                lda,
                f32(0.0f),
                c,
                ldc};
  }
  auto tolerance = [&](const std::optional<double>& bound) -> mlir::FloatAttr {
    return bound ? b.getF64FloatAttr(*bound) : nullptr;
  };
  // A declared provider's own symbol: its C signature is the ABI it declares.
  mlir::TypeAttr signature;
  if (KnownSignature(provider.callee) == nullptr) {
    llvm::SmallVector<mlir::Type> types;
    for (mlir::Value operand : operands) types.push_back(operand.getType());
    signature = mlir::TypeAttr::get(b.getFunctionType(types, {}));
  }
  auto call = b.create<nvidia::KernelCallOp>(
      loc, mlir::TypeRange{}, operands, b.getStringAttr(provider.callee),
      b.getStringAttr(provider.arch), b.getStringAttr("c_abi"),
      b.getStringAttr(provider.provenance), b.getStringAttr(provider.accuracy),
      b.getStringAttr(provider.determinism), tolerance(provider.tolerance),
      tolerance(provider.tolerance_rel), b.getStringAttr(provider.covers), /*grid=*/nullptr,
      /*block=*/nullptr, signature);
  op.erase();
  return call;
}

}  // namespace

absl::Status ArbitrateTileOps(mlir::ModuleOp module, const TileOpArbitration& selection,
                              std::vector<arbiter::DecisionRecord>& records) {
  std::vector<MatmulProvider> providers;
  if (selection.registry == nullptr) {
    providers = BuiltinMatmulProviders();
  } else {
    for (Target target : {Target::kHost, Target::kNvptx}) {
      for (MatmulProvider& p : selection.registry->MatmulProviders(target)) {
        providers.push_back(std::move(p));
      }
    }
  }
  std::vector<mlir::Operation*> points;
  module.walk([&](mlir::Operation* op) {
    if (op->getDialect() != nullptr && op->getDialect()->getNamespace() == "tile" &&
        !llvm::isa<tile::YieldOp>(op)) {
      points.push_back(op);
    }
  });
  mlir::Builder builder(module.getContext());
  for (mlir::Operation* op : points) {
    // The schedule is arbitration's to write; one in the input is not trusted.
    op->removeAttr(device::kScheduleAttr);
    arbiter::ArbitrationPoint point = PointOf(op, selection);
    auto matmul = llvm::dyn_cast<tile::MatmulOp>(op);
    std::vector<arbiter::Candidate> candidates = {
        arbiter::CompiledCandidate(point.target, selection.toolchain)};
    if (selection.target == Target::kNvptx) {
      for (const device::KernelSchedule& schedule : device::schedulesFor(op)) {
        candidates.push_back(VariantCandidate(schedule, op, selection));
      }
    }
    if (matmul) {
      for (const MatmulProvider& provider : providers) {
        arbiter::Candidate candidate = ProviderCandidate(provider, selection.registry);
        candidate.inapplicable = Decline(provider, selection, matmul);
        candidate.unavailable = Unavailable(provider, selection.registry);
        candidates.push_back(std::move(candidate));
      }
    }
    // A contest of another op than matmul is probed by running the op alone (made only then:
    // a sole candidate is never probed).
    if (!matmul && candidates.size() > 1 && selection.arbitrate)
      point.probe_source = ProbeSource(op);
    std::string winner;
    if (selection.arbitrate) {
      absl::StatusOr<arbiter::DecisionRecord> record = selection.arbitrate(point, candidates);
      if (!record.ok()) return record.status();
      winner = record->winner;
      op->setAttr(kDecisionAttr, DecisionAttr(builder, *record));
      records.push_back(*std::move(record));
    } else if (!point.forced.empty() && point.forced != arbiter::kCompiledCandidate) {
      // Unarbitrated (a probe compile): the forced candidate, if it applies at all.
      const arbiter::Candidate* forced = nullptr;
      for (const arbiter::Candidate& c : candidates) {
        if (c.id == point.forced) forced = &c;
      }
      if (forced == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(point.location, ": error: ", point.op,
                                                       ": the forced candidate '", point.forced,
                                                       "' (", point.forced_by, ") is unknown"));
      }
      if (!forced->inapplicable.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            point.location, ": error: ", point.op, ": the forced candidate '", point.forced, "' (",
            point.forced_by, ") is rejected by the applicability gate: ", forced->inapplicable));
      }
      winner = point.forced;
    }
    if (matmul) matmul.removeDelegateAttr();
    op->removeAttr(kCandidateAttrName);
    if (const std::string schedule = ScheduleOfWinner(op, winner); !schedule.empty()) {
      op->setAttr(device::kScheduleAttr, builder.getStringAttr(schedule));
      continue;
    }
    if (!matmul || winner.empty() || winner == arbiter::kCompiledCandidate) continue;
    for (const MatmulProvider& provider : providers) {
      if (provider.name != winner) continue;
      mlir::Attribute decision = op->getAttr(kDecisionAttr);
      mlir::Operation* call = Rewrite(matmul, provider);
      if (decision) call->setAttr(kDecisionAttr, decision);
      break;
    }
  }
  return absl::OkStatus();
}

namespace {

/// The pass form, for tessera-opt: no arbiter (nothing is measured) and no registry, so a
/// forced candidate runs as declared once the gates admit it, anything else runs compiled.
class ArbitrateTileOpsPass : public impl::ArbitrateTileOpsBase<ArbitrateTileOpsPass> {
 public:
  using ArbitrateTileOpsBase::ArbitrateTileOpsBase;

  void runOnOperation() override {
    if (target != "host" && target != "nvptx") {
      getOperation().emitError() << "tessera-arbitrate-tile-ops: target must be host or nvptx, "
                                    "not '"
                                 << target << "'";
      return signalPassFailure();
    }
    TileOpArbitration selection;
    selection.target = target == "nvptx" ? Target::kNvptx : Target::kHost;
    selection.arch = arch;
    selection.deterministic = deterministic;
    selection.forced = forced;
    selection.toolchain = "tessera-opt";
    std::vector<arbiter::DecisionRecord> records;
    if (absl::Status status = ArbitrateTileOps(getOperation(), selection, records); !status.ok()) {
      getOperation().emitError() << std::string(status.message());
      signalPassFailure();
    }
  }
};

}  // namespace

}  // namespace tessera::jit
