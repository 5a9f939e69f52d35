// tessera-import-launch-kernels: the original Tessera's launch-level kernels become this
// project's Tile ops, so that everything downstream (allowlist, shape contract, arbiter,
// determinism, caches, both targets) applies unchanged. docs/original-ir.md is the reference.
//
// Each wrapper (`llvm.func` with or without `nvvm.kernel`/`gpu.kernel`, or `func.func`) holding
// one launch op becomes a `func.func` of the same name and argument order: every `!llvm.ptr`
// becomes a dense row-major memref of the operand's logical shape and storage type, every i64
// dimension stays an i64 argument, and `tessera.dims_from` ties each memref dimension to the
// i64 argument it comes from (jit/admission/shape_contract.cc checks it at invoke).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "dialect/Passes.h"
#include "dialect/TileOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

namespace tessera {

#define GEN_PASS_DEF_IMPORTLAUNCHKERNELS
#include "dialect/Passes.h.inc"

namespace {

using mlir::failure;
using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::Operation;
using mlir::success;
using mlir::Value;

/// One buffer operand of a launch op: which operand, its logical shape (by the launch
/// operands its dimensions come from), its element type and its name in the original's ABI.
struct Buffer {
  unsigned operand = 0;
  llvm::SmallVector<unsigned> dims;  ///< launch-operand indices of the i64 dimensions
  mlir::Type element;
  std::string role;        ///< "A [M, K]"
  bool unit_last = false;  ///< the last dimension is declared 1 (`inner_is_one`)
};

/// How one launch op is imported: its buffers, and how to build the Tile op from the memrefs
/// that replace them (in `buffers` order).
struct ImportPlan {
  llvm::SmallVector<Buffer> buffers;
  std::function<void(mlir::OpBuilder&, mlir::Location, llvm::ArrayRef<Value>)> build;
};

bool IsLaunchOp(Operation* op) {
  return llvm::isa<tile::MatmulKernelOp, tile::ReduceKernelOp, tile::SoftmaxKernelOp,
                   tile::NormKernelOp, tile::AttentionKernelOp, tile::AttentionBackwardKernelOp>(
      op);
}

std::string Quoted(llvm::StringRef text) { return ("\"" + text + "\"").str(); }

/// The storage type a `storage = "..."` attribute names (verified to be f16, bf16 or f32).
mlir::Type StorageType(Operation* op) {
  mlir::Builder b(op->getContext());
  const llvm::StringRef storage = op->getAttrOfType<mlir::StringAttr>("storage").getValue();
  if (storage == "f16") return b.getF16Type();
  if (storage == "bf16") return b.getBF16Type();
  return b.getF32Type();
}

FailureOr<ImportPlan> PlanMatmul(tile::MatmulKernelOp op) {
  auto desc = op->getAttrOfType<tile::MmaDescAttr>("mma");
  auto epilogue = op->getAttrOfType<tile::EpilogueAttr>("epilogue");
  mlir::Builder b(op->getContext());
  const llvm::StringRef a = desc.getAType();
  if (op.isBlockScaled() || a == "int4" || a == "s4" || a == "nvfp4" || a == "mxfp4") {
    return op.emitOpError() << "packed and block-scaled matmuls (a = " << Quoted(a)
                            << ") are not supported; the imported matmul takes unpacked "
                               "operands (f16, bf16, tf32, f32, e4m3, e5m2, s8, f64)";
  }
  if (desc.getBType() != a) {
    return op.emitOpError() << "has a = " << Quoted(a) << " and b = " << Quoted(desc.getBType())
                            << "; both operands must have one type";
  }
  // Each dtype row of the original: operand element type, accumulator, outputs.
  struct Row {
    mlir::Type element;
    std::optional<tile::NumericPolicy> policy;
    llvm::SmallVector<llvm::StringRef, 2> accumulators;
    llvm::SmallVector<llvm::StringRef, 2> outputs;
    bool epilogue;  // bias, activation and residual allowed
  };
  std::optional<Row> row;
  if (a == "f16") row = Row{b.getF16Type(), std::nullopt, {"f32"}, {"f32", "f16"}, true};
  if (a == "bf16") row = Row{b.getBF16Type(), std::nullopt, {"f32"}, {"f32", "f16"}, true};
  if (a == "tf32") row = Row{b.getF32Type(), tile::NumericPolicy::tf32, {"f32"}, {"f32"}, true};
  if (a == "f32") row = Row{b.getF32Type(), std::nullopt, {"f32"}, {"f32"}, true};
  if (a == "e4m3")
    row = Row{b.getType<mlir::Float8E4M3FNType>(), std::nullopt, {"f32"}, {"f32"}, true};
  if (a == "e5m2")
    row = Row{b.getType<mlir::Float8E5M2Type>(), std::nullopt, {"f32"}, {"f32"}, true};
  if (a == "s8" || a == "int8") {
    row = Row{b.getI8Type(), std::nullopt, {"s32", "int32"}, {"i32"}, false};
  }
  if (a == "f64") row = Row{b.getF64Type(), std::nullopt, {"f64"}, {"f64"}, false};
  if (!row) return op.emitOpError() << "has an unknown operand type a = " << Quoted(a);
  if (!llvm::is_contained(row->accumulators, desc.getAccType())) {
    return op.emitOpError() << "accumulates " << a << " in " << row->accumulators.front()
                            << "; acc = " << Quoted(desc.getAccType()) << " is not supported";
  }
  const llvm::StringRef output = epilogue.getOutputType();
  if (!llvm::is_contained(row->outputs, output)) {
    return op.emitOpError() << "an " << a << " matmul writes " << llvm::join(row->outputs, " or ")
                            << ", not epilogue output = " << Quoted(output);
  }
  if (!row->epilogue &&
      (epilogue.getBias() || op.hasResidual() || epilogue.getActivation() != "none")) {
    return op.emitOpError() << "an " << a
                            << " matmul takes no fused epilogue (bias, activation "
                               "or residual), as the original's "
                            << a << " route writes the plain " << output << " product";
  }
  const mlir::Type element = row->element;
  const std::optional<tile::NumericPolicy> policy = row->policy;
  const auto activation = llvm::StringSwitch<tile::Activation>(epilogue.getActivation())
                              .Case("relu", tile::Activation::relu)
                              .Case("gelu", tile::Activation::gelu_tanh)
                              .Case("silu", tile::Activation::silu)
                              .Default(tile::Activation::none);
  const bool has_bias = epilogue.getBias();
  const bool has_residual = op.hasResidual();
  const unsigned d = 2 + unsigned(has_bias) + unsigned(has_residual);
  const unsigned m = d + 1, n = d + 2, k = d + 3;
  const bool transpose_a = desc.getALayout() == "col_major";
  const bool transpose_b = desc.getBLayout() == "col_major";
  ImportPlan plan;
  plan.buffers.push_back(
      {0, transpose_a ? llvm::SmallVector<unsigned>{k, m} : llvm::SmallVector<unsigned>{m, k},
       element, transpose_a ? "A [K, M]" : "A [M, K]"});
  plan.buffers.push_back(
      {1, transpose_b ? llvm::SmallVector<unsigned>{n, k} : llvm::SmallVector<unsigned>{k, n},
       element, transpose_b ? "B [N, K]" : "B [K, N]"});
  if (has_bias) plan.buffers.push_back({2, {n}, b.getF32Type(), "bias [N]"});
  if (has_residual) plan.buffers.push_back({d - 1, {m, n}, b.getF32Type(), "residual [M, N]"});
  const mlir::Type outputType = output == "f16"   ? mlir::Type(b.getF16Type())
                                : output == "i32" ? mlir::Type(b.getI32Type())
                                : output == "f64" ? mlir::Type(b.getF64Type())
                                                  : mlir::Type(b.getF32Type());
  plan.buffers.push_back({d, {m, n}, outputType, "D [M, N]"});
  plan.build = [=](mlir::OpBuilder& builder, mlir::Location loc, llvm::ArrayRef<Value> v) {
    mlir::MLIRContext* context = builder.getContext();
    unsigned next = 2;
    Value bias = has_bias ? v[next++] : Value();
    Value residual = has_residual ? v[next++] : Value();
    tile::MatmulOp::create(
        builder, loc, v[0], v[1], v[next], bias, residual,
        transpose_a ? builder.getUnitAttr() : mlir::UnitAttr(),
        transpose_b ? builder.getUnitAttr() : mlir::UnitAttr(),
        activation == tile::Activation::none ? tile::ActivationAttr()
                                             : tile::ActivationAttr::get(context, activation),
        policy ? tile::NumericPolicyAttr::get(context, *policy) : tile::NumericPolicyAttr(),
        mlir::StringAttr());
  };
  return plan;
}

FailureOr<ImportPlan> PlanReduce(tile::ReduceKernelOp op) {
  mlir::Builder b(op->getContext());
  const auto kind =
      llvm::StringSwitch<tile::ReduceKind>(op->getAttrOfType<mlir::StringAttr>("kind").getValue())
          .Case("mean", tile::ReduceKind::mean)
          .Case("max", tile::ReduceKind::max)
          .Case("min", tile::ReduceKind::min)
          .Default(tile::ReduceKind::sum);
  auto inner_is_one = op->getAttrOfType<mlir::BoolAttr>("inner_is_one");
  const bool unit_inner = inner_is_one && inner_is_one.getValue();
  ImportPlan plan;
  Buffer x{0, {2, 3, 4}, StorageType(op), "X [outer, axis, inner]"};
  Buffer o{1, {2, 4}, b.getF32Type(), "O [outer, inner]"};
  x.unit_last = o.unit_last = unit_inner;
  plan.buffers = {x, o};
  plan.build = [=](mlir::OpBuilder& builder, mlir::Location loc, llvm::ArrayRef<Value> v) {
    tile::ReduceOp::create(builder, loc, tile::ReduceKindAttr::get(builder.getContext(), kind),
                           v[0], v[1], builder.getI64IntegerAttr(1), mlir::UnitAttr());
  };
  return plan;
}

FailureOr<ImportPlan> PlanSoftmax(tile::SoftmaxKernelOp op) {
  const llvm::StringRef exp_mode = op->getAttrOfType<mlir::StringAttr>("exp_mode").getValue();
  if (exp_mode != "approx_exp2" && exp_mode != "accurate") {
    return op.emitOpError() << "has exp_mode = " << Quoted(exp_mode)
                            << "; the imported softmax accepts exp_mode \"approx_exp2\" or "
                               "\"accurate\" (both compute exp accurately here)";
  }
  if (op->getAttrOfType<mlir::BoolAttr>("ftz").getValue()) {
    return op.emitOpError() << "has ftz = true; the imported softmax keeps subnormals "
                               "(ftz = false), as the original's lowering requires";
  }
  ImportPlan plan;
  plan.buffers = {{0, {2, 3}, StorageType(op), "X [rows, columns]"},
                  {1, {2, 3}, StorageType(op), "O [rows, columns]"}};
  plan.build = [](mlir::OpBuilder& builder, mlir::Location loc, llvm::ArrayRef<Value> v) {
    tile::SoftmaxOp::create(builder, loc, v[0], v[1]);
  };
  return plan;
}

/// The value of an f32 constant (arith.constant or llvm.mlir.constant), if `value` is one.
std::optional<llvm::APFloat> ConstantF32(Value value) {
  Operation* producer = value.getDefiningOp();
  if (producer == nullptr) return std::nullopt;
  mlir::Attribute attr;
  if (auto constant = llvm::dyn_cast<mlir::arith::ConstantOp>(producer)) {
    attr = constant.getValue();
  } else if (auto constant = llvm::dyn_cast<mlir::LLVM::ConstantOp>(producer)) {
    attr = constant.getValue();
  }
  if (auto number = llvm::dyn_cast_or_null<mlir::FloatAttr>(attr)) return number.getValue();
  return std::nullopt;
}

FailureOr<ImportPlan> PlanNorm(tile::NormKernelOp op) {
  std::optional<llvm::APFloat> epsilon = ConstantF32(op.getInputs()[4]);
  if (!epsilon) {
    return op.emitOpError() << "takes its epsilon from an f32 constant here; an epsilon passed "
                               "at launch is not supported (the imported tile.norm fixes eps "
                               "at compile time)";
  }
  if (epsilon->isNaN() || epsilon->isInfinity() || epsilon->isNegative()) {
    return op.emitOpError() << "needs a finite, non-negative epsilon";
  }
  const bool layer = op->getAttrOfType<mlir::StringAttr>("kind").getValue() == "layernorm";
  const float eps = epsilon->convertToFloat();
  ImportPlan plan;
  plan.buffers = {{0, {2, 3}, StorageType(op), "X [rows, columns]"},
                  {1, {2, 3}, StorageType(op), "O [rows, columns]"}};
  plan.build = [=](mlir::OpBuilder& builder, mlir::Location loc, llvm::ArrayRef<Value> v) {
    tile::NormOp::create(builder, loc,
                         tile::NormKindAttr::get(builder.getContext(), layer ? tile::NormKind::layer
                                                                             : tile::NormKind::rms),
                         v[0], Value(), v[1], Value(), Value(), Value(),
                         builder.getF32FloatAttr(eps));
  };
  return plan;
}

/// The original's forward attention: its causal diagonal and windows at the top left, its
/// fully masked rows NaN, its dropout rule (the LCG step), its bias [B, Hq, Sq, Sk] and O f32.
FailureOr<ImportPlan> PlanAttention(tile::AttentionKernelOp op) {
  mlir::Builder b(op->getContext());
  const bool has_bias = op->getAttrOfType<mlir::BoolAttr>("bias").getValue();
  auto checkpoint = op->getAttrOfType<mlir::StringAttr>("lse_checkpoint");
  const bool saved_lse = checkpoint && checkpoint.getValue() == "saved";
  const unsigned out = 3 + unsigned(has_bias);
  const unsigned dims = out + 1 + unsigned(saved_lse);
  const unsigned batch = dims, heads = dims + 1, kv_heads = dims + 2, queries = dims + 3,
                 keys = dims + 4, depth = dims + 5, value_depth = dims + 6;
  const mlir::Type storage = StorageType(op);
  ImportPlan plan;
  plan.buffers = {{0, {batch, heads, queries, depth}, storage, "Q [B, Hq, Sq, D]"},
                  {1, {batch, kv_heads, keys, depth}, storage, "K [B, Hkv, Sk, D]"},
                  {2, {batch, kv_heads, keys, value_depth}, storage, "V [B, Hkv, Sk, Dv]"}};
  if (has_bias) {
    plan.buffers.push_back(
        {3, {batch, heads, queries, keys}, b.getF32Type(), "bias [B, Hq, Sq, Sk]"});
  }
  plan.buffers.push_back(
      {out, {batch, heads, queries, value_depth}, b.getF32Type(), "O [B, Hq, Sq, Dv]"});
  if (saved_lse) {
    plan.buffers.push_back(
        {out + 1, {batch, heads, queries}, b.getF32Type(), "row_lse [B, Hq, Sq]"});
  }
  const float scale = op->getAttrOfType<mlir::FloatAttr>("scale").getValue().convertToFloat();
  const bool causal = op->getAttrOfType<mlir::BoolAttr>("causal").getValue();
  const int64_t left = op->getAttrOfType<mlir::IntegerAttr>("window_left").getInt();
  const int64_t right = op->getAttrOfType<mlir::IntegerAttr>("window_right").getInt();
  const float softcap = op->getAttrOfType<mlir::FloatAttr>("softcap").getValue().convertToFloat();
  const float dropout = op->getAttrOfType<mlir::FloatAttr>("dropout_p").getValue().convertToFloat();
  const int64_t seed = op->getAttrOfType<mlir::IntegerAttr>("dropout_seed").getInt();
  plan.build = [=](mlir::OpBuilder& builder, mlir::Location loc, llvm::ArrayRef<Value> v) {
    mlir::MLIRContext* context = builder.getContext();
    const bool window = left >= 0 || right >= 0;
    const unsigned o = 3 + unsigned(has_bias);
    auto i64 = [&](int64_t value) { return builder.getI64IntegerAttr(value); };
    tile::AttentionOp::create(
        builder, loc, v[0], v[1], v[2], v[o], /*key_lengths=*/Value(), has_bias ? v[3] : Value(),
        saved_lse ? v[o + 1] : Value(), builder.getF32FloatAttr(scale),
        causal ? builder.getUnitAttr() : mlir::UnitAttr(), window ? i64(left) : mlir::IntegerAttr(),
        window ? i64(right) : mlir::IntegerAttr(),
        causal || window
            ? tile::AttentionAlignmentAttr::get(context, tile::AttentionAlignment::top_left)
            : tile::AttentionAlignmentAttr(),
        softcap > 0 ? builder.getF32FloatAttr(softcap) : mlir::FloatAttr(),
        dropout > 0 ? builder.getF32FloatAttr(dropout) : mlir::FloatAttr(),
        dropout > 0 ? i64(seed) : mlir::IntegerAttr(),
        dropout > 0 ? tile::DropoutRuleAttr::get(context, tile::DropoutRule::lcg)
                    : tile::DropoutRuleAttr(),
        tile::EmptyRowsAttr::get(context, tile::EmptyRows::nan));
  };
  return plan;
}

FailureOr<ImportPlan> PlanFor(Operation* op) {
  if (auto matmul = llvm::dyn_cast<tile::MatmulKernelOp>(op)) return PlanMatmul(matmul);
  if (auto reduce = llvm::dyn_cast<tile::ReduceKernelOp>(op)) return PlanReduce(reduce);
  if (auto softmax = llvm::dyn_cast<tile::SoftmaxKernelOp>(op)) return PlanSoftmax(softmax);
  if (auto norm = llvm::dyn_cast<tile::NormKernelOp>(op)) return PlanNorm(norm);
  if (auto attention = llvm::dyn_cast<tile::AttentionKernelOp>(op)) {
    return PlanAttention(attention);
  }
  return op->emitOpError()
         << "verifies but is not compiled yet: it takes no forward output O, and this "
            "project's tile.attention_backward computes D = dO·O from it (docs/original-ir.md)";
}

/// A launch operand used as a dimension: an argument of the wrapper (by index) or a constant.
struct DimSource {
  std::optional<unsigned> argument;
  int64_t constant = 0;
};

FailureOr<DimSource> DimSourceOf(Operation* launch, unsigned operand, mlir::Block& entry) {
  Value value = launch->getOperand(operand);
  if (auto argument = llvm::dyn_cast<mlir::BlockArgument>(value);
      argument && argument.getOwner() == &entry) {
    return DimSource{argument.getArgNumber(), 0};
  }
  Operation* producer = value.getDefiningOp();
  mlir::Attribute attr;
  if (auto constant = llvm::dyn_cast_or_null<mlir::arith::ConstantOp>(producer)) {
    attr = constant.getValue();
  } else if (auto constant = llvm::dyn_cast_or_null<mlir::LLVM::ConstantOp>(producer)) {
    attr = constant.getValue();
  }
  if (auto integer = llvm::dyn_cast_or_null<mlir::IntegerAttr>(attr);
      integer && integer.getInt() >= 0) {
    return DimSource{std::nullopt, integer.getInt()};
  }
  return launch->emitOpError() << "operand #" << operand
                               << " (a dimension) must be an argument of the kernel or a "
                                  "non-negative constant";
}

class Importer {
 public:
  explicit Importer(Operation* wrapper) : wrapper_(wrapper) {}

  LogicalResult Run() {
    auto name = wrapper_->getAttrOfType<mlir::StringAttr>(mlir::SymbolTable::getSymbolAttrName());
    mlir::Region& body = wrapper_->getRegion(0);
    llvm::SmallVector<Operation*> launches;
    wrapper_->walk([&](Operation* op) {
      if (IsLaunchOp(op)) launches.push_back(op);
    });
    if (body.empty() || !body.hasOneBlock() || launches.size() != 1) {
      return wrapper_->emitError() << "'@" << name.getValue() << "' holds " << launches.size()
                                   << " launch-level ops in " << body.getBlocks().size()
                                   << " blocks; an imported kernel is one block holding one "
                                      "launch-level op";
    }
    Operation* launch = launches.front();
    mlir::Block& entry = body.front();
    for (Operation& op : entry) {
      if (&op == launch || llvm::isa<mlir::arith::ConstantOp, mlir::LLVM::ConstantOp>(op)) {
        continue;
      }
      if (llvm::isa<mlir::LLVM::ReturnOp, mlir::func::ReturnOp>(op)) {
        if (op.getNumOperands() == 0) continue;
        return op.emitError() << "'@" << name.getValue()
                              << "' returns a value; an imported "
                                 "kernel returns nothing (it writes its buffers)";
      }
      return op.emitError() << "'" << op.getName() << "' beside '" << launch->getName() << "' in '@"
                            << name.getValue()
                            << "': an imported kernel's body is its launch-level op, constants "
                               "and a return";
    }
    for (auto [index, argument] : llvm::enumerate(entry.getArguments())) {
      mlir::Type type = argument.getType();
      if (!llvm::isa<mlir::LLVM::LLVMPointerType>(type) && !type.isInteger(64) && !type.isF32()) {
        return wrapper_->emitError()
               << "argument #" << index << " of '@" << name.getValue() << "' has type " << type
               << "; a launch-level kernel takes !llvm.ptr buffers and "
                  "i64 dimensions";
      }
    }
    // The plans read the attributes the verifier guarantees; a tool may have skipped it.
    if (failed(mlir::verify(launch))) return failure();
    FailureOr<ImportPlan> plan = PlanFor(launch);
    if (failed(plan)) return failure();
    return Rewrite(name.getValue(), launch, entry, *plan);
  }

 private:
  LogicalResult Rewrite(llvm::StringRef name, Operation* launch, mlir::Block& entry,
                        const ImportPlan& plan) {
    mlir::MLIRContext* context = wrapper_->getContext();
    mlir::OpBuilder builder(context);
    const unsigned arguments = entry.getNumArguments();
    llvm::SmallVector<mlir::Type> types(entry.getArgumentTypes());
    llvm::SmallVector<mlir::DictionaryAttr> argument_attrs(arguments,
                                                           mlir::DictionaryAttr::get(context));
    llvm::SmallVector<int> buffer_of_argument(arguments, -1);
    for (auto [index, buffer] : llvm::enumerate(plan.buffers)) {
      auto argument = llvm::dyn_cast<mlir::BlockArgument>(launch->getOperand(buffer.operand));
      if (!argument || argument.getOwner() != &entry) {
        return launch->emitOpError() << "operand #" << buffer.operand << " (" << buffer.role
                                     << ") must be an argument of '@" << name << "'";
      }
      const unsigned position = argument.getArgNumber();
      if (buffer_of_argument[position] >= 0) {
        return launch->emitOpError()
               << "passes argument #" << position << " of '@" << name << "' as both "
               << plan.buffers[buffer_of_argument[position]].role << " and " << buffer.role
               << "; the imported op needs distinct buffers";
      }
      buffer_of_argument[position] = static_cast<int>(index);
      llvm::SmallVector<int64_t> shape, dims_from;
      for (unsigned dim : buffer.dims) {
        FailureOr<DimSource> source = DimSourceOf(launch, dim, entry);
        if (failed(source)) return failure();
        shape.push_back(source->argument ? mlir::ShapedType::kDynamic : source->constant);
        dims_from.push_back(source->argument ? static_cast<int64_t>(*source->argument) : -1);
      }
      if (buffer.unit_last) {
        // `inner_is_one`: the last size is 1 — a constant must be 1, an argument is checked.
        if (shape.back() != mlir::ShapedType::kDynamic && shape.back() != 1) {
          return launch->emitOpError() << "declares inner_is_one but its inner size is the "
                                          "constant "
                                       << shape.back();
        }
        shape.back() = 1;
      }
      types[position] = mlir::MemRefType::get(shape, buffer.element);
      argument_attrs[position] = builder.getDictionaryAttr({
          builder.getNamedAttr("tessera.dims_from", builder.getDenseI64ArrayAttr(dims_from)),
          builder.getNamedAttr(
              "tessera.launch_role",
              builder.getStringAttr(launch->getName().getStringRef() + " " + buffer.role)),
      });
    }
    for (unsigned position = 0; position < arguments; ++position) {
      if (llvm::isa<mlir::LLVM::LLVMPointerType>(types[position])) {
        return wrapper_->emitError()
               << "argument #" << position << " of '@" << name << "' is a buffer its '"
               << launch->getName() << "' does not use; its shape would be unknown";
      }
    }

    builder.setInsertionPoint(wrapper_);
    auto function = mlir::func::FuncOp::create(builder, wrapper_->getLoc(), name,
                                               builder.getFunctionType(types, {}));
    if (auto func = llvm::dyn_cast<mlir::func::FuncOp>(wrapper_)) {
      function.setVisibility(func.getVisibility());
    }
    // This project's contract attributes on the wrapper (tessera.deterministic,
    // tessera.accuracy) stay on the function; the original's other ones are hints.
    for (mlir::NamedAttribute attribute : wrapper_->getDiscardableAttrs()) {
      const llvm::StringRef attr_name = attribute.getName().getValue();
      if (attr_name == "tessera.deterministic" || attr_name == "tessera.accuracy") {
        function->setAttr(attribute.getName(), attribute.getValue());
      }
    }
    function.setAllArgAttrs(argument_attrs);
    // The arguments keep their locations, so diagnostics name them as the source does.
    llvm::SmallVector<mlir::Location> locations;
    for (mlir::BlockArgument argument : entry.getArguments()) {
      locations.push_back(argument.getLoc());
    }
    mlir::Block* block = new mlir::Block();
    function.getBody().push_back(block);
    block->addArguments(types, locations);
    builder.setInsertionPointToStart(block);
    llvm::SmallVector<Value> buffers;
    for (const Buffer& buffer : plan.buffers) {
      auto argument = llvm::cast<mlir::BlockArgument>(launch->getOperand(buffer.operand));
      buffers.push_back(block->getArgument(argument.getArgNumber()));
    }
    plan.build(builder, launch->getLoc(), buffers);
    // The arbitration a launch op asks for (tessera.candidate) goes to the Tile op it became.
    if (mlir::Attribute candidate = launch->getAttr("tessera.candidate")) {
      block->front().setAttr("tessera.candidate", candidate);
    }
    mlir::func::ReturnOp::create(builder, wrapper_->getLoc());
    wrapper_->erase();
    return success();
  }

  Operation* wrapper_;
};

class ImportLaunchKernels : public impl::ImportLaunchKernelsBase<ImportLaunchKernels> {
 public:
  using Base::Base;

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    llvm::SmallVector<Operation*> wrappers;
    bool failed_any = false;
    module.walk([&](Operation* launch) {
      if (!IsLaunchOp(launch)) return;
      Operation* wrapper = launch->getParentOp();
      while (wrapper != nullptr &&
             !llvm::isa<mlir::LLVM::LLVMFuncOp, mlir::func::FuncOp>(wrapper)) {
        wrapper = wrapper->getParentOp();
      }
      if (wrapper == nullptr || wrapper->getParentOp() != module.getOperation()) {
        launch->emitOpError() << "must stand in a top-level llvm.func or func.func of the module";
        failed_any = true;
        return;
      }
      if (!llvm::is_contained(wrappers, wrapper)) wrappers.push_back(wrapper);
    });
    for (Operation* wrapper : wrappers) {
      if (failed(Importer(wrapper).Run())) failed_any = true;
    }
    if (failed_any) signalPassFailure();
  }
};

}  // namespace
}  // namespace tessera
