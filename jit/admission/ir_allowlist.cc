#include "jit/admission/ir_allowlist.h"

#include <optional>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "jit/codegen/runtime_checks.h"
#include "jit/diagnostics.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

namespace tessera::jit {
namespace {

/// Dialects whose every op may appear: pure arithmetic and the Tessera dialects (verified).
const absl::flat_hash_set<std::string>& AllowedDialects() {
  static const auto* dialects =
      new absl::flat_hash_set<std::string>{"arith", "math", "tile", "tessera", "tessera_nvidia"};
  return *dialects;
}

/// Single ops of other dialects that may appear (on both targets).
const absl::flat_hash_set<std::string>& AllowedOps() {
  static const auto* ops = new absl::flat_hash_set<std::string>{
      "func.return",  "func.call",      "scf.for",        "scf.if",      "scf.yield",
      "scf.while",    "scf.condition",  "cf.br",          "cf.cond_br",  "memref.dim",
      "memref.alloc", "memref.alloca",  "memref.dealloc", "memref.load", "memref.store",
      "memref.copy",  "gpu.launch_func"};
  return *ops;
}

/// Ops that read or write memref elements from host code: on nvptx the memrefs are device
/// memory, which host code cannot touch.
const absl::flat_hash_set<std::string>& HostMemoryOps() {
  static const auto* ops =
      new absl::flat_hash_set<std::string>{"memref.alloc", "memref.alloca", "memref.dealloc",
                                           "memref.load",  "memref.store",  "memref.copy"};
  return *ops;
}

/// The scalar types an argument, a result or a memref element may have: what DLPack and the C
/// API can pass (i1…i64, index, f16, bf16, f32, f64).
bool IsSupportedScalar(mlir::Type type) {
  if (type.isIndex() || type.isF16() || type.isBF16() || type.isF32() || type.isF64()) {
    return true;
  }
  auto integer = llvm::dyn_cast<mlir::IntegerType>(type);
  if (integer == nullptr || !integer.isSignless()) return false;
  const unsigned width = integer.getWidth();
  return width == 1 || width == 8 || width == 16 || width == 32 || width == 64;
}

/// Memref elements: the scalars, and the fp8 formats tile.matmul takes (f8E4M3FN, f8E5M2).
bool IsSupportedElement(mlir::Type type) {
  return IsSupportedScalar(type) || llvm::isa<mlir::Float8E4M3FNType, mlir::Float8E5M2Type>(type);
}

bool IsSupportedType(mlir::Type type) {
  if (auto memref = llvm::dyn_cast<mlir::MemRefType>(type)) {
    return memref.getLayout().isIdentity() && memref.getMemorySpace() == nullptr &&
           IsSupportedElement(memref.getElementType());
  }
  return IsSupportedScalar(type);
}

absl::Status Refuse(mlir::Location location, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(FormatLocation(location), ": error: ", message));
}

absl::Status Refuse(mlir::Operation* op, absl::string_view message) {
  return Refuse(op->getLoc(), message);
}

absl::Status CheckSignature(mlir::func::FuncOp function) {
  mlir::FunctionType type = function.getFunctionType();
  for (auto [index, input] : llvm::enumerate(type.getInputs())) {
    if (!IsSupportedType(input)) {
      return Refuse(
          function,
          absl::StrCat(
              "argument #", index, " of @", function.getName().str(), " has type ", TypeText(input),
              "; functions take ranked memrefs with the identity layout in the default memory "
              "space, or scalars (i1, i8, i16, i32, i64, index, f16, bf16, f32, f64), of those "
              "element types or f8E4M3FN and f8E5M2"));
    }
  }
  for (auto [index, result] : llvm::enumerate(type.getResults())) {
    if (!IsSupportedType(result)) {
      return Refuse(function, absl::StrCat("result #", index, " of @", function.getName().str(),
                                           " has type ", TypeText(result),
                                           "; functions return nothing or supported scalars"));
    }
  }
  return absl::OkStatus();
}

/// Prefixes of symbols the compiler and its runtime own.
bool IsReservedName(llvm::StringRef name) {
  for (const char* prefix :
       {"tessera_rt_", "tessera_uk_", "_tessera_", "_mlir_", "mgpu", "__", "llvm."}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

/// The bytes of a statically shaped memref type, or -1 when it overflows 2^62.
int64_t StaticBytes(mlir::MemRefType type) {
  int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
  for (int64_t size : type.getShape()) {
    if (mlir::ShapedType::isDynamic(size)) continue;
    if (size != 0 && bytes > (int64_t{1} << 62) / size) return -1;
    bytes *= size;
  }
  return bytes;
}

/// Allocation rules: `memref.alloca` only with static shapes of at most kMaxAllocaBytes (the
/// stack); a static `memref.alloc` of at most kMaxAllocBytes (dynamic sizes are checked at run
/// time); `memref.dealloc` only of a `memref.alloc` result of the same block, once, after every
/// use of it — so user IR can neither free the caller's buffers nor use freed memory.
absl::Status CheckAllocation(mlir::Operation* op) {
  if (auto alloca = llvm::dyn_cast<mlir::memref::AllocaOp>(op)) {
    const int64_t bytes = StaticBytes(alloca.getType());
    if (!alloca.getType().hasStaticShape() || bytes < 0 || bytes > kMaxAllocaBytes) {
      return Refuse(op,
                    absl::StrCat("memref.alloca takes static shapes of at most ", kMaxAllocaBytes,
                                 " bytes (it is on the stack); use memref.alloc"));
    }
  }
  if (auto alloc = llvm::dyn_cast<mlir::memref::AllocOp>(op)) {
    const int64_t bytes = StaticBytes(alloc.getType());
    if (bytes < 0 || bytes > kMaxAllocBytes) {
      return Refuse(op, absl::StrCat("memref.alloc of more than ", kMaxAllocBytes, " bytes"));
    }
  }
  if (auto dealloc = llvm::dyn_cast<mlir::memref::DeallocOp>(op)) {
    mlir::Value memref = dealloc.getMemref();
    auto alloc = memref.getDefiningOp<mlir::memref::AllocOp>();
    if (alloc == nullptr || alloc->getBlock() != op->getBlock()) {
      return Refuse(op,
                    "memref.dealloc frees only a memref.alloc result of the same block "
                    "(never an argument: the caller owns it)");
    }
    for (mlir::OpOperand& use : memref.getUses()) {
      mlir::Operation* user = op->getBlock()->findAncestorOpInBlock(*use.getOwner());
      if (user == op) continue;
      if (user == nullptr || !user->isBeforeInBlock(op) ||
          llvm::isa<mlir::memref::DeallocOp>(use.getOwner())) {
        return Refuse(op, "memref.dealloc must be the last use of its memref.alloc, once");
      }
    }
  }
  return absl::OkStatus();
}

/// An fp8 scalar or vector (not a memref of them).
bool IsFloat8Value(mlir::Type type) {
  if (llvm::isa<mlir::MemRefType>(type)) return false;
  return llvm::isa<mlir::Float8E4M3FNType, mlir::Float8E5M2Type>(mlir::getElementTypeOrSelf(type));
}

/// fp8 values are storage, widened before use: LLVM has no fp8 type, and the pipelines lower
/// only their loads, stores, bit casts and `arith.extf` (tessera-expand-arith). Anything else
/// would fail deep in the LLVM translation without a location.
absl::Status CheckFloat8Use(mlir::Operation* op) {
  static const auto* moves = new absl::flat_hash_set<std::string>{
      "arith.extf", "arith.bitcast", "memref.load", "memref.store", "tile.yield"};
  const std::string name = op->getName().getStringRef().str();
  if (moves->contains(name)) return absl::OkStatus();
  auto refuse = [&](mlir::Type type) {
    return Refuse(
        op, absl::StrCat("'", name, "' on ", TypeText(type),
                         " values: fp8 values are storage — load, store, "
                         "bit-cast or widen them with arith.extf, and compute in a wider type"));
  };
  for (mlir::Type type : op->getOperandTypes()) {
    if (IsFloat8Value(type)) return refuse(type);
  }
  for (mlir::Type type : op->getResultTypes()) {
    if (IsFloat8Value(type)) return refuse(type);
  }
  return absl::OkStatus();
}

constexpr char kMemRefProvenance[] =
    "; a memref in host code is a function argument or a memref.alloc/alloca result, so that "
    "the compiler knows which argument each op reads and writes (docs/ir.md)";

/// No op but an allocation produces a memref, and no block but a function's first takes one: a
/// memref chosen by scf.if or arith.select, carried by a loop, passed between blocks or returned
/// by a call would hide which argument an op writes (the contract's written flags and overlap
/// rules, jit/admission/shape_contract.h).
absl::Status CheckMemRefProvenance(mlir::Operation* op) {
  if (!llvm::isa<mlir::memref::AllocOp, mlir::memref::AllocaOp>(op)) {
    for (mlir::Type type : op->getResultTypes()) {
      if (llvm::isa<mlir::BaseMemRefType>(type)) {
        return Refuse(op,
                      absl::StrCat("'", op->getName().getStringRef().str(), "' produces a memref (",
                                   TypeText(type), ")", kMemRefProvenance));
      }
    }
  }
  for (mlir::Region& region : op->getRegions()) {
    for (mlir::Block& block : region) {
      for (mlir::BlockArgument argument : block.getArguments()) {
        if (llvm::isa<mlir::BaseMemRefType>(argument.getType())) {
          return Refuse(op, absl::StrCat("a region of '", op->getName().getStringRef().str(),
                                         "' takes a memref block argument (",
                                         TypeText(argument.getType()), ")", kMemRefProvenance));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckBodyOp(mlir::Operation* op, Target target) {
  const std::string name = op->getName().getStringRef().str();
  if (!op->isRegistered()) {
    return Refuse(op, absl::StrCat("'", name, "' is not an operation of a loaded dialect"));
  }
  const std::string dialect = op->getName().getDialectNamespace().str();
  if (!AllowedDialects().contains(dialect) && !AllowedOps().contains(name)) {
    return Refuse(
        op,
        absl::StrCat(
            "'", name,
            "' is not allowed in Tessera IR: entries may contain Tile, tessera and "
            "tessera_nvidia ops, arith, math, func.call/return, scf and cf control flow, and "
            "memref.alloc/alloca/dealloc/dim/load/store/copy (raw LLVM dialect ops, pointer casts "
            "and ops that forge or reinterpret buffers are refused; see docs/ir.md)"));
  }
  if (target == Target::kNvptx && HostMemoryOps().contains(name)) {
    return Refuse(
        op, absl::StrCat("'", name,
                         "' in host code of an nvptx compile would touch device memory from the "
                         "CPU; use Tile ops, or index memrefs inside a gpu.func kernel"));
  }
  for (mlir::NamedAttribute attribute : op->getDiscardableAttrs()) {
    if (attribute.getName().getValue().starts_with("llvm.")) {
      return Refuse(op, absl::StrCat("attribute '", attribute.getName().getValue().str(), "' on '",
                                     name, "' is reserved for the compiler"));
    }
  }
  if (absl::Status status = CheckFloat8Use(op); !status.ok()) return status;
  if (absl::Status status = CheckMemRefProvenance(op); !status.ok()) return status;
  return CheckAllocation(op);
}

}  // namespace

absl::Status CheckAllowedIr(mlir::ModuleOp module, Target target) {
  for (mlir::NamedAttribute attribute : module->getAttrs()) {
    if (attribute.getName().getValue().starts_with("llvm.")) {
      return Refuse(module, absl::StrCat("module attribute '", attribute.getName().getValue().str(),
                                         "' is reserved for the compiler"));
    }
  }
  for (mlir::Operation& op : module.getBody()->getOperations()) {
    if (llvm::isa<mlir::gpu::GPUModuleOp>(op)) {
      // The user's device code, compiled as written — except what crashes MLIR 22.1 when the
      // pipeline folds it: memref.dim with a negative constant index (llvm/llvm-project#205073).
      absl::Status status = absl::OkStatus();
      // Raw inline asm would reach LLVM unchecked (a malformed operand reference is a fatal
      // error there); tessera_nvidia.inline_ptx carries the same text, verified.
      op.walk([&](mlir::Operation* inner) {
        if (inner->getName().getStringRef() != "llvm.inline_asm") {
          return mlir::WalkResult::advance();
        }
        status = Refuse(inner,
                        "'llvm.inline_asm' is not allowed in a gpu.module; write the PTX "
                        "as tessera_nvidia.inline_ptx, whose constraints and operand "
                        "references are verified (docs/ir.md)");
        return mlir::WalkResult::interrupt();
      });
      if (!status.ok()) return status;
      op.walk([&](mlir::Operation* inner) {
        status = CheckFloat8Use(inner);
        return status.ok() ? mlir::WalkResult::advance() : mlir::WalkResult::interrupt();
      });
      if (!status.ok()) return status;
      op.walk([&](mlir::memref::DimOp dim) {
        std::optional<int64_t> index = dim.getConstantIndex();
        if (!index || *index >= 0) return mlir::WalkResult::advance();
        status = Refuse(dim, absl::StrCat("memref.dim with the negative index ", *index,
                                          " (it crashes MLIR 22.1's folder in GPU kernels, "
                                          "llvm/llvm-project#205073)"));
        return mlir::WalkResult::interrupt();
      });
      if (!status.ok()) return status;
      continue;
    }
    auto function = llvm::dyn_cast<mlir::func::FuncOp>(op);
    if (function == nullptr) {
      return Refuse(&op, absl::StrCat("'", op.getName().getStringRef().str(),
                                      "' is not allowed at module level; a module holds "
                                      "func.func functions and gpu.module kernels"));
    }
    if (IsReservedName(function.getName())) {
      return Refuse(&op, absl::StrCat("the name @", function.getName().str(),
                                      " is reserved for the compiler and its runtime"));
    }
    if (function.isExternal()) {
      return Refuse(
          &op, absl::StrCat(
                   "@", function.getName().str(),
                   " is an external declaration; host code may only call functions defined in the "
                   "module, and libraries only through tessera_nvidia.kernel_call (see "
                   "docs/delegates.md)"));
    }
    if (absl::Status status = CheckSignature(function); !status.ok()) return status;
    for (mlir::NamedAttribute attribute : function->getDiscardableAttrs()) {
      // llvm.*: passed to LLVM as is; tessera_jit.*: set by the compiler (an outlined parallel
      // loop body is kParallelBodyAttr).
      if (attribute.getName().getValue().starts_with("llvm.") ||
          attribute.getName().getValue().starts_with("tessera_jit.")) {
        return Refuse(&op,
                      absl::StrCat("attribute '", attribute.getName().getValue().str(), "' on @",
                                   function.getName().str(), " is reserved for the compiler"));
      }
    }
    for (mlir::Block& block : llvm::drop_begin(function.getBody())) {
      for (mlir::BlockArgument argument : block.getArguments()) {
        if (llvm::isa<mlir::BaseMemRefType>(argument.getType())) {
          return Refuse(
              argument.getLoc(),
              absl::StrCat("a block of @", function.getName().str(), " takes a memref argument (",
                           TypeText(argument.getType()), ")", kMemRefProvenance));
        }
      }
    }
    absl::Status status = absl::OkStatus();
    function.walk([&](mlir::Operation* inner) {
      if (inner == function.getOperation()) return mlir::WalkResult::advance();
      // A tile.map body is verified by the op itself (pure arith/math only).
      status = CheckBodyOp(inner, target);
      return status.ok() ? mlir::WalkResult::advance() : mlir::WalkResult::interrupt();
    });
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace tessera::jit
