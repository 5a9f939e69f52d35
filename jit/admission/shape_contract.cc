// Derives an entry's contract from the semantics of its Tile ops: the sizes its arguments must
// agree on, the arguments it writes, and which of them may share memory.
#include "jit/admission/shape_contract.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "dialect/TileOps.h"
#include "jit/admission/memref_accesses.h"
#include "jit/diagnostics.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "runtime/entry_contract.h"

namespace tessera::jit {
namespace {

/// How deep func.call chains are followed, and how many function bodies (counted once per
/// call path) one entry's contract may visit.
constexpr int kMaxCallDepth = 16;
constexpr int kMaxVisitedBodies = 4096;
constexpr char kDimsFromAttr[] = "tessera.dims_from";
constexpr char kLaunchRoleAttr[] = "tessera.launch_role";

/// A size in terms of the entry's arguments, or why it cannot be expressed so.
struct Resolved {
  std::optional<SizeSource> source;
  std::optional<int64_t> static_value;  ///< known at compile time
  std::string unknown;                  ///< when !source: where the size comes from instead
};

/// One function being analysed, entered through a chain of calls from the entry: its block
/// arguments stand for the operands of the call that entered it.
struct Frame {
  mutable mlir::func::FuncOp function;  // mutable: MLIR op handles have non-const accessors
  const Frame* caller = nullptr;
  mutable mlir::func::CallOp call;  ///< the call in `caller` (null for the entry)
  int depth = 0;
};

std::string OpName(mlir::Operation* op) { return op->getName().getStringRef().str(); }

/// Returns the status of `expression` when it is an error.
#define TESSERA_CONTRACT_STATUS(expression)                 \
  if (absl::Status status_ = (expression); !status_.ok()) { \
    return status_;                                         \
  }

/// Records an edge of the contract (ContractBuilder::Edge), returning its error.
#define TESSERA_CONTRACT_EDGE(size, must_equal, why, op, ...)                    \
  if (absl::Status edge_status = Edge(size, must_equal, why, op, ##__VA_ARGS__); \
      !edge_status.ok()) {                                                       \
    return edge_status;                                                          \
  }

class ContractBuilder {
 public:
  ContractBuilder(mlir::func::FuncOp entry_function, EntryFunction& entry)
      : module_(entry_function->getParentOfType<mlir::ModuleOp>()), entry_(entry) {}

  absl::Status Walk(const Frame& frame) {
    TESSERA_CONTRACT_STATUS(DeclaredDimensions(frame));
    absl::Status status = absl::OkStatus();
    frame.function.walk([&](mlir::Operation* op) {
      status = Visit(op, frame);
      return status.ok() ? mlir::WalkResult::advance() : mlir::WalkResult::interrupt();
    });
    return status;
  }

 private:
  absl::Status Visit(mlir::Operation* op, const Frame& frame) {
    const std::string at = FormatLocation(op->getLoc());
    std::optional<std::vector<MemRefAccess>> accesses = MemRefAccesses(op);
    if (!accesses) {
      // Code the compiler did not generate may write any buffer it is given.
      for (mlir::Value value : op->getOperands()) MarkWritten(value, frame);
      return absl::OkStatus();
    }
    TESSERA_CONTRACT_STATUS(Overlaps(op, *accesses, at, frame));
    if (auto map = llvm::dyn_cast<tile::MapOp>(op)) {
      mlir::Value reference = map.getOutputs().front();
      for (mlir::Value output : map.getOutputs()) {
        TESSERA_CONTRACT_STATUS(
            SameShape(output, reference,
                      absl::StrCat("tile.map at ", at, " needs equal output shapes"), op, frame));
      }
      const std::string why =
          absl::StrCat("tile.map at ", at, " broadcasts its inputs to the output's shape");
      for (mlir::Value input : map.getInputs()) {
        if (!llvm::isa<mlir::MemRefType>(input.getType())) continue;
        TESSERA_CONTRACT_STATUS(Broadcast(input, 0, reference, 0, why, op, frame));
      }
      return absl::OkStatus();
    }
    if (auto reduce = llvm::dyn_cast<tile::ReduceOp>(op)) {
      const int64_t axis = reduce.getAxis();
      const std::string why =
          absl::StrCat("tile.reduce at ", at, " keeps every input dimension but axis ", axis,
                       reduce.getKeepdims() ? " (kept with size 1)" : "");
      if (reduce.isArgReduction() && llvm::cast<mlir::MemRefType>(reduce.getOutput().getType())
                                         .getElementType()
                                         .isSignlessInteger(32)) {
        TESSERA_CONTRACT_EDGE(
            Dim(reduce.getInput(), axis, frame), Constant(std::numeric_limits<int32_t>::max()),
            absl::StrCat("tile.reduce at ", at, " writes i32 indices along axis ", axis), op,
            SizeRelation::kAtMost);
      }
      for (int64_t in = 0, out = 0; in < Rank(reduce.getInput()); ++in) {
        if (in == axis) {
          if (reduce.getKeepdims()) {
            TESSERA_CONTRACT_EDGE(Dim(reduce.getOutput(), out++, frame), Constant(1), why, op);
          }
          continue;
        }
        TESSERA_CONTRACT_EDGE(Dim(reduce.getOutput(), out++, frame),
                              Dim(reduce.getInput(), in, frame), why, op);
      }
      return absl::OkStatus();
    }
    if (auto softmax = llvm::dyn_cast<tile::SoftmaxOp>(op)) {
      return SameShape(softmax.getOutput(), softmax.getInput(),
                       absl::StrCat("tile.softmax at ", at, " needs equal shapes"), op, frame);
    }
    if (auto matmul = llvm::dyn_cast<tile::MatmulOp>(op)) {
      const bool ta = matmul.getTransposeA();
      const bool tb = matmul.getTransposeB();
      const std::string prefix = absl::StrCat("tile.matmul at ", at, " needs ");
      mlir::Value a = matmul.getLhs(), b = matmul.getRhs(), c = matmul.getOutput();
      const int64_t ra = Rank(a), rb = Rank(b), rc = Rank(c);
      TESSERA_CONTRACT_EDGE(Dim(b, rb - (tb ? 1 : 2), frame), Dim(a, ra - (ta ? 2 : 1), frame),
                            absl::StrCat(prefix, "K of B equal to K of A"), op);
      TESSERA_CONTRACT_EDGE(Dim(c, rc - 2, frame), Dim(a, ra - (ta ? 1 : 2), frame),
                            absl::StrCat(prefix, "M of C equal to M of A"), op);
      TESSERA_CONTRACT_EDGE(Dim(c, rc - 1, frame), Dim(b, rb - (tb ? 2 : 1), frame),
                            absl::StrCat(prefix, "N of C equal to N of B"), op);
      if (mlir::Value bias = matmul.getBias()) {
        TESSERA_CONTRACT_EDGE(Dim(bias, 0, frame), Dim(c, rc - 1, frame),
                              absl::StrCat(prefix, "the bias as long as N"), op);
      }
      if (mlir::Value residual = matmul.getResidual()) {
        TESSERA_CONTRACT_STATUS(
            SameShape(residual, c, absl::StrCat(prefix, "the residual shaped like C"), op, frame));
      }
      const std::string batch =
          absl::StrCat(prefix, "batch dimensions of A and B that broadcast to C's");
      TESSERA_CONTRACT_STATUS(Broadcast(a, 2, c, 2, batch, op, frame));
      TESSERA_CONTRACT_STATUS(Broadcast(b, 2, c, 2, batch, op, frame));
      return absl::OkStatus();
    }
    if (auto norm = llvm::dyn_cast<tile::NormOp>(op)) {
      const std::string why = absl::StrCat("tile.norm at ", at, " needs ");
      mlir::Value input = norm.getInput();
      for (mlir::Value same : {norm.getOutput(), norm.getResidual(), norm.getResidualOut()}) {
        if (!same) continue;
        TESSERA_CONTRACT_STATUS(
            SameShape(same, input, absl::StrCat(why, "the input's shape"), op, frame));
      }
      for (mlir::Value vector : {norm.getWeight(), norm.getBias()}) {
        if (!vector) continue;
        TESSERA_CONTRACT_EDGE(Dim(vector, 0, frame), Dim(input, Rank(input) - 1, frame),
                              absl::StrCat(why, "weight and bias as long as the last axis"), op);
      }
      return absl::OkStatus();
    }
    if (auto attention = llvm::dyn_cast<tile::AttentionOp>(op)) {
      TESSERA_CONTRACT_STATUS(Attention(attention, at, frame));
      mlir::Value q = attention.getQuery(), v = attention.getValue(), o = attention.getOutput();
      const std::string why =
          absl::StrCat("tile.attention at ", at, " needs O [B, H, Sq, Dv] and its lse [B, H, Sq]");
      const std::pair<mlir::Value, int64_t> pairs[][2] = {
          {{o, 0}, {q, 0}}, {{o, 1}, {q, 1}}, {{o, 2}, {q, 2}}, {{o, 3}, {v, 3}}};
      TESSERA_CONTRACT_STATUS(Pairs(pairs, why, op, frame));
      if (mlir::Value lse = attention.getLse()) {
        TESSERA_CONTRACT_STATUS(SameLeading(lse, q, 3, why, op, frame));
      }
      return absl::OkStatus();
    }
    if (auto backward = llvm::dyn_cast<tile::AttentionBackwardOp>(op)) {
      TESSERA_CONTRACT_STATUS(Attention(backward, at, frame));
      mlir::Value q = backward.getQuery(), v = backward.getValue(), o = backward.getOutput();
      const std::string why = absl::StrCat(
          "tile.attention_backward at ", at,
          " needs O and dO [B, H, Sq, Dv], lse [B, H, Sq], and dQ, dK, dV shaped like Q, K, V");
      const std::pair<mlir::Value, int64_t> pairs[][2] = {
          {{o, 0}, {q, 0}}, {{o, 1}, {q, 1}}, {{o, 2}, {q, 2}}, {{o, 3}, {v, 3}}};
      TESSERA_CONTRACT_STATUS(Pairs(pairs, why, op, frame));
      TESSERA_CONTRACT_STATUS(SameLeading(backward.getGradOutput(), o, 4, why, op, frame));
      TESSERA_CONTRACT_STATUS(SameLeading(backward.getLse(), q, 3, why, op, frame));
      using GradientOf = std::pair<mlir::Value, mlir::Value>;
      for (auto [gradient, value] : {GradientOf{backward.getGradQuery(), q},
                                     GradientOf{backward.getGradKey(), backward.getKey()},
                                     GradientOf{backward.getGradValue(), v}}) {
        TESSERA_CONTRACT_STATUS(SameLeading(gradient, value, 4, why, op, frame));
      }
      return absl::OkStatus();
    }
    if (auto rope = llvm::dyn_cast<tile::RopeOp>(op)) {
      mlir::Value x = rope.getInput();
      const int64_t rank = Rank(x);
      const std::string why = absl::StrCat("tile.rope at ", at, " needs ");
      TESSERA_CONTRACT_STATUS(SameShape(
          rope.getOutput(), x, absl::StrCat(why, "equal input and output shapes"), op, frame));
      TESSERA_CONTRACT_STATUS(SameShape(rope.getSin(), rope.getCos(),
                                        absl::StrCat(why, "equal cos and sin tables"), op, frame));
      TESSERA_CONTRACT_EDGE(Dim(rope.getCos(), 0, frame), Dim(x, rank - 2, frame),
                            absl::StrCat(why, "a table row per position"), op);
      TESSERA_CONTRACT_EDGE(Dim(x, rank - 1, frame), Dim(rope.getCos(), 1, frame),
                            absl::StrCat(why, "a table column per pair of features"), op,
                            SizeRelation::kTwice);
      return absl::OkStatus();
    }
    if (auto call = llvm::dyn_cast<mlir::func::CallOp>(op)) {
      auto callee = module_.lookupSymbol<mlir::func::FuncOp>(call.getCalleeAttr());
      if (callee == nullptr || callee.isExternal()) return absl::OkStatus();
      if (frame.depth + 1 > kMaxCallDepth) {
        return absl::InvalidArgumentError(absl::StrCat(at, ": error: calls from @", entry_.name,
                                                       " nest deeper than ", kMaxCallDepth,
                                                       " (recursion is not supported)"));
      }
      if (++visited_bodies_ > kMaxVisitedBodies) {
        return absl::InvalidArgumentError(absl::StrCat(at, ": error: the calls from @", entry_.name,
                                                       " reach more than ", kMaxVisitedBodies,
                                                       " function bodies (counted per call path)"));
      }
      return Walk(Frame{callee, &frame, call, frame.depth + 1});
    }
    return absl::OkStatus();
  }

  /// `tessera.dims_from = array<i64: k0, k1, ...>` on a memref argument: its dimension d equals
  /// integer scalar argument k_d (-1: no declaration). The import of the original's launch
  /// kernels declares it (its `tessera.launch_role` names the operand in the reason).
  absl::Status DeclaredDimensions(const Frame& frame) {
    mlir::func::FuncOp function = frame.function;
    const std::string at = FormatLocation(function.getLoc());
    for (unsigned i = 0; i < function.getNumArguments(); ++i) {
      mlir::Attribute declared = function.getArgAttr(i, kDimsFromAttr);
      if (!declared) continue;
      auto dims = llvm::dyn_cast<mlir::DenseI64ArrayAttr>(declared);
      if (!dims) {
        return absl::InvalidArgumentError(absl::StrCat(
            at, ": error: ", kDimsFromAttr, " of argument #", i, " of @", function.getName().str(),
            " must be an array<i64: ...> (one argument index, or -1, "
            "per dimension)"));
      }
      mlir::Value argument = function.getArgument(i);
      auto type = llvm::dyn_cast<mlir::MemRefType>(argument.getType());
      if (!type || static_cast<int64_t>(dims.size()) != type.getRank()) {
        return absl::InvalidArgumentError(absl::StrCat(
            at, ": error: ", kDimsFromAttr, " of argument #", i, " of @", function.getName().str(),
            " must have one entry per dimension of a memref"));
      }
      auto role = function.getArgAttrOfType<mlir::StringAttr>(i, kLaunchRoleAttr);
      const std::string why =
          role ? absl::StrCat("'", role.getValue().str(), "' of @", function.getName().str(),
                              " at ", at, " has these sizes")
               : absl::StrCat(kDimsFromAttr, " of argument #", i, " of @", function.getName().str(),
                              " at ", at);
      for (auto [d, k] : llvm::enumerate(dims.asArrayRef())) {
        if (k == -1) continue;
        if (k < 0 || k >= function.getNumArguments() ||
            !function.getArgument(static_cast<unsigned>(k)).getType().isSignlessIntOrIndex()) {
          return absl::InvalidArgumentError(
              absl::StrCat(at, ": error: ", kDimsFromAttr, " of argument #", i, " of @",
                           function.getName().str(), " names argument #", k,
                           ", which is not an integer scalar argument"));
        }
        TESSERA_CONTRACT_EDGE(Dim(argument, static_cast<int64_t>(d), frame),
                              Scalar(function.getArgument(static_cast<unsigned>(k)), frame), why,
                              function.getOperation());
      }
    }
    return absl::OkStatus();
  }

  /// Every dimension of `value` equals that of `reference` (same rank).
  absl::Status SameShape(mlir::Value value, mlir::Value reference, const std::string& why,
                         mlir::Operation* op, const Frame& frame) {
    for (int64_t d = 0; d < Rank(value); ++d) {
      TESSERA_CONTRACT_EDGE(Dim(value, d, frame), Dim(reference, d, frame), why, op);
    }
    return absl::OkStatus();
  }

  /// Dimension pair[0] of each pair equals dimension pair[1].
  absl::Status Pairs(llvm::ArrayRef<std::pair<mlir::Value, int64_t>[2]> pairs,
                     const std::string& why, mlir::Operation* op, const Frame& frame) {
    for (const auto& pair : pairs) {
      TESSERA_CONTRACT_EDGE(Dim(pair[0].first, pair[0].second, frame),
                            Dim(pair[1].first, pair[1].second, frame), why, op);
    }
    return absl::OkStatus();
  }

  /// The first `count` dimensions of `value` equal those of `reference`.
  absl::Status SameLeading(mlir::Value value, mlir::Value reference, int64_t count,
                           const std::string& why, mlir::Operation* op, const Frame& frame) {
    for (int64_t d = 0; d < count; ++d) {
      TESSERA_CONTRACT_EDGE(Dim(value, d, frame), Dim(reference, d, frame), why, op);
    }
    return absl::OkStatus();
  }

  /// What tile.attention and tile.attention_backward share: Q [B, H, Sq, D], K [B, Hkv, Sk, D],
  /// V [B, Hkv, Sk, Dv], H a multiple of Hkv, a key length per batch, the bias
  /// [B|1, H|1, Sq, Sk].
  template <typename AttentionLikeOp>
  absl::Status Attention(AttentionLikeOp attention, const std::string& at, const Frame& frame) {
    mlir::Operation* op = attention.getOperation();
    const std::string name = op->getName().getStringRef().str();
    mlir::Value q = attention.getQuery(), k = attention.getKey(), v = attention.getValue();
    const std::pair<mlir::Value, int64_t> pairs[][2] = {
        {{k, 0}, {q, 0}}, {{k, 3}, {q, 3}}, {{v, 0}, {q, 0}}, {{v, 1}, {k, 1}}, {{v, 2}, {k, 2}}};
    TESSERA_CONTRACT_STATUS(Pairs(pairs,
                                  absl::StrCat(name, " at ", at,
                                               " needs Q [B, H, Sq, D], K [B, Hkv, Sk, D], "
                                               "V [B, Hkv, Sk, Dv]"),
                                  op, frame));
    TESSERA_CONTRACT_EDGE(
        Dim(q, 1, frame), Dim(k, 1, frame),
        absl::StrCat(name, " at ", at, " groups the heads of Q over those of K and V"), op,
        SizeRelation::kMultipleOf);
    if (mlir::Value lengths = attention.getKeyLengths()) {
      TESSERA_CONTRACT_EDGE(Dim(lengths, 0, frame), Dim(q, 0, frame),
                            absl::StrCat(name, " at ", at, " needs one key length per batch"), op);
    }
    if (mlir::Value bias = attention.getBias()) {
      const std::string why = absl::StrCat(name, " at ", at, " needs its bias [B|1, H|1, Sq, Sk]");
      // B and H broadcast (size 1 or equal), Sq and Sk equal.
      TESSERA_CONTRACT_STATUS(Broadcast(bias, 2, q, 2, why, op, frame));
      TESSERA_CONTRACT_EDGE(Dim(bias, 2, frame), Dim(q, 2, frame), why, op);
      TESSERA_CONTRACT_EDGE(Dim(bias, 3, frame), Dim(k, 2, frame), why, op);
    }
    return absl::OkStatus();
  }

  /// `value` without its last `skip` dimensions broadcasts (NumPy's rules, aligned at the
  /// last axis) to `reference` without its last `referenceSkip`. A static size 1 broadcasts
  /// whatever the other size; it needs no rule.
  absl::Status Broadcast(mlir::Value value, int64_t skip, mlir::Value reference,
                         int64_t referenceSkip, const std::string& why, mlir::Operation* op,
                         const Frame& frame) {
    auto type = llvm::cast<mlir::MemRefType>(value.getType());
    const int64_t rank = Rank(value) - skip;
    const int64_t offset = Rank(reference) - referenceSkip - rank;
    for (int64_t d = 0; d < rank; ++d) {
      if (type.getDimSize(d) == 1) continue;
      TESSERA_CONTRACT_EDGE(Dim(value, d, frame), Dim(reference, d + offset, frame), why, op,
                            SizeRelation::kBroadcasts);
    }
    return absl::OkStatus();
  }

  static int64_t Rank(mlir::Value memref) {
    return llvm::cast<mlir::MemRefType>(memref.getType()).getRank();
  }

  static Resolved Constant(int64_t value) {
    SizeSource source;
    source.kind = SizeSource::Kind::kConstant;
    source.value = value;
    return Resolved{source, value, ""};
  }

  static Resolved Unknown(std::string why) { return Resolved{std::nullopt, std::nullopt, why}; }

  /// The operand a block argument of `frame`'s entry block stands for in its caller, or null
  /// when `frame` is the entry itself.
  static mlir::Value Outer(mlir::BlockArgument argument, const Frame& frame) {
    if (frame.caller == nullptr) return nullptr;
    return frame.call.getOperand(argument.getArgNumber());
  }

  static bool IsEntryArgument(mlir::Value value, const Frame& frame) {
    auto argument = llvm::dyn_cast<mlir::BlockArgument>(value);
    return argument && argument.getOwner() == &frame.function.getBody().front();
  }

  /// Dimension `dim` of memref `value` as seen in `frame`.
  Resolved Dim(mlir::Value value, int64_t dim, const Frame& frame) {
    auto type = llvm::cast<mlir::MemRefType>(value.getType());
    const int64_t size = type.getDimSize(dim);
    std::optional<int64_t> static_size;
    if (!mlir::ShapedType::isDynamic(size)) static_size = size;
    if (IsEntryArgument(value, frame)) {
      auto argument = llvm::cast<mlir::BlockArgument>(value);
      if (mlir::Value outer = Outer(argument, frame)) {
        Resolved resolved = Dim(outer, dim, *frame.caller);
        if (!resolved.static_value) resolved.static_value = static_size;
        return resolved;
      }
      SizeSource source;
      source.kind = SizeSource::Kind::kDimension;
      source.argument = argument.getArgNumber();
      source.dim = dim;
      return Resolved{source, static_size, ""};
    }
    if (static_size) return Constant(*static_size);
    mlir::Operation* producer = value.getDefiningOp();
    if (producer != nullptr && llvm::isa<mlir::memref::AllocOp, mlir::memref::AllocaOp>(producer)) {
      int64_t dynamic_index = 0;
      for (int64_t d = 0; d < dim; ++d) dynamic_index += type.isDynamicDim(d) ? 1 : 0;
      return Scalar(producer->getOperand(static_cast<unsigned>(dynamic_index)), frame);
    }
    if (producer == nullptr) return Unknown("a block argument of a nested region");
    return Unknown(absl::StrCat("the result of '", OpName(producer), "'"));
  }

  /// An integer or index value used as a size, as seen in `frame`.
  Resolved Scalar(mlir::Value value, const Frame& frame) {
    if (IsEntryArgument(value, frame)) {
      auto argument = llvm::cast<mlir::BlockArgument>(value);
      if (mlir::Value outer = Outer(argument, frame)) return Scalar(outer, *frame.caller);
      SizeSource source;
      source.kind = SizeSource::Kind::kScalar;
      source.argument = argument.getArgNumber();
      return Resolved{source, std::nullopt, ""};
    }
    mlir::Operation* producer = value.getDefiningOp();
    if (producer == nullptr) return Unknown("a block argument of a nested region");
    if (auto constant = llvm::dyn_cast<mlir::arith::ConstantOp>(producer)) {
      if (auto integer = llvm::dyn_cast<mlir::IntegerAttr>(constant.getValue())) {
        return Constant(integer.getValue().getSExtValue());
      }
    }
    if (auto dim = llvm::dyn_cast<mlir::memref::DimOp>(producer)) {
      if (std::optional<int64_t> index = dim.getConstantIndex();
          index && *index >= 0 && *index < Rank(dim.getSource())) {
        return Dim(dim.getSource(), *index, frame);
      }
      return Unknown("'memref.dim' with a non-constant or out-of-range index");
    }
    return Unknown(absl::StrCat("computed by '", OpName(producer), "'"));
  }

  /// The buffer a memref names, seen from the entry: one of the entry's arguments, or an
  /// allocation (the IR allowlist admits no other producer of memrefs).
  struct Buffer {
    int64_t argument = -1;
    mlir::Operation* allocation = nullptr;

    bool SameAs(const Buffer& other) const {
      return (argument >= 0 && argument == other.argument) ||
             (allocation != nullptr && allocation == other.allocation);
    }
  };

  Buffer BufferOf(mlir::Value value, const Frame& frame) {
    if (IsEntryArgument(value, frame)) {
      auto argument = llvm::cast<mlir::BlockArgument>(value);
      if (mlir::Value outer = Outer(argument, frame)) return BufferOf(outer, *frame.caller);
      return Buffer{argument.getArgNumber(), nullptr};
    }
    return Buffer{-1, value.getDefiningOp()};
  }

  std::string Describe(const Buffer& buffer) const {
    if (buffer.argument >= 0) {
      return absl::StrCat(runtime::DescribeArgument(entry_, buffer.argument), " of @", entry_.name);
    }
    if (buffer.allocation == nullptr) return "a buffer";
    return absl::StrCat("the buffer of '", OpName(buffer.allocation), "' at ",
                        FormatLocation(buffer.allocation->getLoc()));
  }

  void MarkWritten(mlir::Value value, const Frame& frame) {
    if (!llvm::isa<mlir::MemRefType>(value.getType())) return;
    const Buffer buffer = BufferOf(value, frame);
    if (buffer.argument >= 0) entry_.arguments[buffer.argument].written = true;
  }

  /// Marks what `op` writes, and records how each buffer it writes may share memory with its
  /// other memref operands: not at all, or (both touched element by element, one only read) as
  /// the very same buffer. Two operands that are one buffer already here are refused unless the
  /// op allows it; two entry arguments become a rule invoke checks (runtime::ArgumentOverlap).
  absl::Status Overlaps(mlir::Operation* op, const std::vector<MemRefAccess>& accesses,
                        const std::string& at, const Frame& frame) {
    std::vector<Buffer> buffers;
    for (const MemRefAccess& access : accesses) {
      buffers.push_back(BufferOf(access.value, frame));
      if (access.written) MarkWritten(access.value, frame);
    }
    const std::string name = OpName(op);
    for (size_t w = 0; w < accesses.size(); ++w) {
      if (!accesses[w].written) continue;
      for (size_t o = 0; o < accesses.size(); ++o) {
        const bool both_written = accesses[o].written;
        if (o == w || (both_written && o < w)) continue;
        const bool same_allowed =
            !both_written && accesses[w].elementwise && accesses[o].elementwise;
        if (buffers[w].SameAs(buffers[o])) {
          if (same_allowed) continue;
          return absl::InvalidArgumentError(absl::StrCat(
              at, ": error: '", name, "' writes ", Describe(buffers[w]),
              both_written ? " through two of its operands"
                           : " while it reads it as another operand",
              "; an operand it writes must be a buffer of its own (docs/ir.md, \"Operands "
              "that share memory\")"));
        }
        if (buffers[w].argument < 0 || buffers[o].argument < 0) continue;
        std::string reason =
            both_written ? absl::StrCat(name, " at ", at, " writes both")
            : same_allowed
                ? absl::StrCat(name, " at ", at,
                               " writes one while it reads the other, element by element")
                : absl::StrCat(name, " at ", at, " writes one while it reads the other");
        AddOverlap(runtime::ArgumentOverlap{buffers[w].argument, buffers[o].argument, same_allowed,
                                            std::move(reason)});
      }
    }
    return absl::OkStatus();
  }

  /// Adds `overlap` to the contract; of two rules for one pair of arguments the stricter stays.
  void AddOverlap(runtime::ArgumentOverlap overlap) {
    const std::pair<int64_t, int64_t> pair = std::minmax(overlap.written, overlap.other);
    auto [known, added] = overlap_index_.try_emplace(pair, entry_.overlaps.size());
    if (added) {
      entry_.overlaps.push_back(std::move(overlap));
      return;
    }
    runtime::ArgumentOverlap& rule = entry_.overlaps[known->second];
    if (rule.same_buffer_allowed && !overlap.same_buffer_allowed) rule = std::move(overlap);
  }

  /// Records that `size` must relate to `must_equal` by `relation` because of `why` (op `op`).
  absl::Status Edge(const Resolved& size, const Resolved& must_equal, const std::string& why,
                    mlir::Operation* op, SizeRelation relation = SizeRelation::kEqual) {
    for (const Resolved* side : {&size, &must_equal}) {
      if (!side->source) {
        return absl::InvalidArgumentError(absl::StrCat(
            FormatLocation(op->getLoc()), ": error: '", OpName(op), "' reads a size that is ",
            side->unknown,
            "; the sizes of a Tile op's operands must be static, a dimension of an argument "
            "of @",
            entry_.name, ", an integer scalar argument, or memref.dim of those"));
      }
    }
    if (size.static_value && must_equal.static_value) {
      if (runtime::SizesRelate(relation, *size.static_value, *must_equal.static_value)) {
        return absl::OkStatus();
      }
      return absl::InvalidArgumentError(absl::StrCat(FormatLocation(op->getLoc()),
                                                     ": error: sizes ", *size.static_value, " and ",
                                                     *must_equal.static_value, " disagree: ", why));
    }
    if (relation != SizeRelation::kTwice && *size.source == *must_equal.source) {
      return absl::OkStatus();
    }
    for (const SizeConstraint& known : entry_.size_constraints) {
      if (known.size == *size.source && known.must_equal == *must_equal.source &&
          known.relation == relation) {
        return absl::OkStatus();
      }
    }
    entry_.size_constraints.push_back(
        SizeConstraint{*size.source, *must_equal.source, why, relation});
    return absl::OkStatus();
  }

  mlir::ModuleOp module_;
  EntryFunction& entry_;
  int visited_bodies_ = 0;
  /// The index in entry_.overlaps of the rule for each pair of arguments (smaller index first).
  absl::flat_hash_map<std::pair<int64_t, int64_t>, size_t> overlap_index_;
};

}  // namespace

absl::Status DeriveShapeContract(mlir::func::FuncOp function, EntryFunction& entry) {
  ContractBuilder builder(function, entry);
  TESSERA_CONTRACT_STATUS(builder.Walk(Frame{function}));
  runtime::DeriveSizeSources(entry);
  return absl::OkStatus();
}

}  // namespace tessera::jit
