// The `tile` dialect: registration and the verifiers of map, reduce, matmul and softmax.
#include "dialect/TileOps.h"

#include <cstdint>
#include <string>

#include "llvm/ADT/TypeSwitch.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TypeUtilities.h"

#include "dialect/TileDialect.cpp.inc"
#include "dialect/TileEnums.cpp.inc"

#define GET_OP_CLASSES
#include "dialect/TileOps.cpp.inc"

namespace tessera::tile {
namespace {

/// Prints a static size, or `?` for a dynamic one.
std::string dimToString(int64_t dim) {
  return mlir::ShapedType::isDynamic(dim) ? std::string("?") : std::to_string(dim);
}

/// Two sizes agree when they are equal or either is only known at run time.
bool dimsCompatible(int64_t a, int64_t b) {
  return mlir::ShapedType::isDynamic(a) || mlir::ShapedType::isDynamic(b) || a == b;
}

/// Checks that `type` (named `name`) has the same shape as `reference` (named `referenceName`),
/// as far as it is known statically.
mlir::LogicalResult verifySameShape(mlir::Operation* op, llvm::StringRef name,
                                    mlir::MemRefType type, llvm::StringRef referenceName,
                                    mlir::MemRefType reference) {
  if (type.getRank() != reference.getRank()) {
    return op->emitOpError() << "expected " << name << " (" << type << ") to have rank "
                             << reference.getRank() << " like " << referenceName << " ("
                             << reference << ")";
  }
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!dimsCompatible(type.getDimSize(d), reference.getDimSize(d))) {
      return op->emitOpError() << "expected dimension " << d << " of " << name << " ("
                               << type << ") to be " << reference.getDimSize(d) << " like "
                               << referenceName << " (" << reference << ")";
    }
  }
  return mlir::success();
}

/// What may appear in a tile.map body: pure scalar arithmetic, and inline PTX (verified by
/// its own op; by name, so the Tile dialect does not depend on the NVIDIA one).
bool isAllowedInMapBody(mlir::Operation& op) {
  if (op.getName().getStringRef() == "tessera_nvidia.inline_ptx") return true;
  mlir::Dialect* dialect = op.getDialect();
  if (!dialect) return false;
  return llvm::isa<mlir::arith::ArithDialect, mlir::math::MathDialect>(dialect) &&
         mlir::isMemoryEffectFree(&op);
}

}  // namespace

void TileDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/TileOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// MapOp
//===----------------------------------------------------------------------===//

mlir::LogicalResult MapOp::verify() {
  if (getOutputs().empty()) return emitOpError() << "expected at least one output";
  // Every memref operand has the shape of the first output.
  auto reference = llvm::cast<mlir::MemRefType>(getOutputs().front().getType());
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    auto type = llvm::dyn_cast<mlir::MemRefType>(input.getType());
    if (!type) continue;  // Scalars are broadcast.
    if (mlir::failed(verifySameShape(*this, "input #" + std::to_string(index), type,
                                     "output #0", reference))) {
      return mlir::failure();
    }
  }
  for (auto [index, output] : llvm::enumerate(getOutputs().drop_front())) {
    auto type = llvm::cast<mlir::MemRefType>(output.getType());
    if (mlir::failed(verifySameShape(*this, "output #" + std::to_string(index + 1), type,
                                     "output #0", reference))) {
      return mlir::failure();
    }
  }
  return mlir::success();
}

mlir::LogicalResult MapOp::verifyRegions() {
  mlir::Block& body = getBody().front();
  if (body.getNumArguments() != getInputs().size()) {
    return emitOpError() << "expected the body to take " << getInputs().size()
                         << " argument(s), one per input, found " << body.getNumArguments();
  }
  for (auto [index, pair] : llvm::enumerate(llvm::zip(getInputs(), body.getArguments()))) {
    auto [input, argument] = pair;
    mlir::Type expected = mlir::getElementTypeOrSelf(input.getType());
    if (argument.getType() != expected) {
      return emitOpError() << "expected body argument #" << index << " to have type "
                           << expected << " (the element type of input #" << index
                           << "), found " << argument.getType();
    }
  }
  auto yield = body.empty() ? nullptr : llvm::dyn_cast<YieldOp>(body.back());
  if (!yield) return emitOpError() << "expected the body to end with 'tile.yield'";
  for (mlir::Operation& op : body.without_terminator()) {
    if (!isAllowedInMapBody(op)) {
      return op.emitOpError() << "is not allowed in a 'tile.map' body; expected pure "
                                 "operations of the arith or math dialect, or "
                                 "'tessera_nvidia.inline_ptx'";
    }
  }
  if (yield.getValues().size() != getOutputs().size()) {
    return yield.emitOpError() << "expected " << getOutputs().size()
                               << " value(s), one per output of the enclosing 'tile.map', "
                                  "found "
                               << yield.getValues().size();
  }
  for (auto [index, pair] : llvm::enumerate(llvm::zip(getOutputs(), yield.getValues()))) {
    auto [output, value] = pair;
    mlir::Type expected = mlir::getElementTypeOrSelf(output.getType());
    if (value.getType() != expected) {
      return yield.emitOpError() << "expected value #" << index << " to have type " << expected
                                 << " (the element type of output #" << index << "), found "
                                 << value.getType();
    }
  }
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

mlir::LogicalResult ReduceOp::verify() {
  auto inputType = llvm::cast<mlir::MemRefType>(getInput().getType());
  auto outputType = llvm::cast<mlir::MemRefType>(getOutput().getType());
  const int64_t rank = inputType.getRank();
  const int64_t axis = getAxis();
  if (axis < 0 || axis >= rank) {
    return emitOpError() << "expected axis in [0, " << rank << ") for an input of rank "
                         << rank << ", found " << axis;
  }
  const bool keepdims = getKeepdims();
  const int64_t expectedRank = keepdims ? rank : rank - 1;
  if (outputType.getRank() != expectedRank) {
    return emitOpError() << "expected output rank " << expectedRank << " (input rank " << rank
                         << (keepdims ? " with keepdims" : " without axis ") 
                         << (keepdims ? std::string() : std::to_string(axis))
                         << "), found " << outputType.getRank();
  }
  for (int64_t in = 0, out = 0; in < rank; ++in) {
    if (in == axis) {
      if (keepdims) {
        int64_t size = outputType.getDimSize(out++);
        if (!mlir::ShapedType::isDynamic(size) && size != 1) {
          return emitOpError() << "expected output dimension " << axis
                               << " to be 1 (the reduced axis with keepdims), found " << size;
        }
      }
      continue;
    }
    int64_t size = outputType.getDimSize(out);
    if (!dimsCompatible(size, inputType.getDimSize(in))) {
      return emitOpError() << "expected output dimension " << out << " to be "
                           << dimToString(inputType.getDimSize(in)) << " (input dimension "
                           << in << "), found " << size;
    }
    ++out;
  }
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

mlir::LogicalResult MatmulOp::verify() {
  auto a = llvm::cast<mlir::MemRefType>(getLhs().getType());
  auto b = llvm::cast<mlir::MemRefType>(getRhs().getType());
  auto c = llvm::cast<mlir::MemRefType>(getOutput().getType());
  if (a.getElementType() != b.getElementType()) {
    return emitOpError() << "expected A and B to have the same element type, found "
                         << a.getElementType() << " and " << b.getElementType();
  }
  const int64_t m = a.getDimSize(getTransposeA() ? 1 : 0);
  const int64_t kA = a.getDimSize(getTransposeA() ? 0 : 1);
  const int64_t kB = b.getDimSize(getTransposeB() ? 1 : 0);
  const int64_t n = b.getDimSize(getTransposeB() ? 0 : 1);
  if (!dimsCompatible(kA, kB)) {
    return emitOpError() << "expected K of A (" << kA << ") to equal K of B (" << kB << ")";
  }
  if (!dimsCompatible(c.getDimSize(0), m)) {
    return emitOpError() << "expected M of C (" << c.getDimSize(0) << ") to equal M of A ("
                         << m << ")";
  }
  if (!dimsCompatible(c.getDimSize(1), n)) {
    return emitOpError() << "expected N of C (" << c.getDimSize(1) << ") to equal N of B ("
                         << n << ")";
  }
  if (mlir::Value bias = getBias()) {
    auto biasType = llvm::cast<mlir::MemRefType>(bias.getType());
    if (!dimsCompatible(biasType.getDimSize(0), n)) {
      return emitOpError() << "expected the bias length (" << biasType.getDimSize(0)
                           << ") to equal N (" << n << ")";
    }
    if (biasType.getElementType() != c.getElementType()) {
      return emitOpError() << "expected the bias element type (" << biasType.getElementType()
                           << ") to equal the element type of C (" << c.getElementType()
                           << ")";
    }
  }
  switch (getNumericPolicyOrDefault()) {
    case NumericPolicy::f32:
      break;
    case NumericPolicy::tf32:
      if (!a.getElementType().isF32()) {
        return emitOpError() << "numeric policy 'tf32' requires f32 inputs, found "
                             << a.getElementType();
      }
      break;
    case NumericPolicy::f16:
      if (!a.getElementType().isF16()) {
        return emitOpError() << "numeric policy 'f16' requires f16 inputs, found "
                             << a.getElementType();
      }
      break;
  }
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// SoftmaxOp
//===----------------------------------------------------------------------===//

mlir::LogicalResult SoftmaxOp::verify() {
  auto input = llvm::cast<mlir::MemRefType>(getInput().getType());
  auto output = llvm::cast<mlir::MemRefType>(getOutput().getType());
  if (input.getElementType() != output.getElementType()) {
    return emitOpError() << "expected the output element type (" << output.getElementType()
                         << ") to equal the input element type (" << input.getElementType()
                         << ")";
  }
  return verifySameShape(*this, "the output", output, "the input", input);
}

}  // namespace tessera::tile
