// An entry function as a caller sees it: its arguments, results and shape contract. The
// compiler derives it (jit/admission/entry_description.h); the artifact stores it; invoke checks
// what a caller passes against it (runtime/entry_contract.h). No MLIR: the C API links it.
#ifndef TESSERA_RUNTIME_ENTRY_SIGNATURE_H_
#define TESSERA_RUNTIME_ENTRY_SIGNATURE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::runtime {

/// A scalar or memref element type, as a caller sees it.
struct ElementType {
  /// kFloat8E4M3FN, kFloat8E5M2: memref elements only (tile.matmul operands), never scalars.
  enum class Class { kFloat, kBFloat, kInt, kIndex, kFloat8E4M3FN, kFloat8E5M2 };
  Class type_class = Class::kFloat;
  int bits = 32;  ///< 1 for i1 (stored as one byte in memory)
};

/// One entry-function argument a caller must pass.
struct EntryArgument {
  enum class Kind { kMemRef, kScalar };
  Kind kind = Kind::kScalar;
  std::string name;  ///< the SSA name in the source without `%`, e.g. "x" (empty if unknown)
  std::string type;  ///< the MLIR type as text, e.g. "memref<?x10xf32>" or "f32"
  ElementType element;
  int64_t rank = 0;            ///< memrefs only
  std::vector<int64_t> shape;  ///< memrefs only; -1 for a dynamic size
  bool written = false;        ///< memrefs only: the entry may write it (an output)
  /// memrefs only, one per dimension: the integer scalar argument the shape contract says the
  /// size equals (e.g. the original's launch ABI: `tessera.dims_from`), or -1.
  std::vector<int64_t> size_from;
};

/// Where a size an op reads comes from, in terms of what the caller passes.
struct SizeSource {
  enum class Kind {
    kDimension,  ///< dimension `dim` of tensor argument `argument`
    kScalar,     ///< the value of integer scalar argument `argument`
    kConstant,   ///< the constant `value`
  };
  Kind kind = Kind::kConstant;
  int64_t argument = 0;
  int64_t dim = 0;
  int64_t value = 0;

  friend bool operator==(const SizeSource& a, const SizeSource& b) {
    return a.kind == b.kind && a.argument == b.argument && a.dim == b.dim && a.value == b.value;
  }
};

/// How a constrained size relates to the one it is checked against.
enum class SizeRelation {
  kEqual,       ///< size == other
  kBroadcasts,  ///< size == other, or size == 1 (NumPy broadcasting to `other`)
  kTwice,       ///< size == 2 * other (a feature axis split into pairs)
  kMultipleOf,  ///< size is a multiple of other (0 only of 0): grouped heads
  kAtMost,      ///< size <= other: an index that must fit its integer type
};

/// One rule of an entry's shape contract: `size` must relate to `must_equal` by `relation` at
/// run time, because `reason` (e.g. "tile.map at elementwise.mlir:4:3 needs equal shapes").
/// Derived by the compiler from every Tile op's semantics (jit/admission/shape_contract.h);
/// checked by invoke before anything runs (runtime/entry_contract.h).
struct SizeConstraint {
  SizeSource size;
  SizeSource must_equal;
  std::string reason;
  SizeRelation relation = SizeRelation::kEqual;
};

/// Two tensor arguments one op of the entry reads and writes: what memory they may share. Derived
/// by the compiler from every Tile op and memref.copy (jit/admission/shape_contract.h); checked by
/// invoke before anything runs (runtime/entry_contract.h). Ops compute on whole buffers in an
/// order of their own (tiles, threads, GPU blocks), so a written argument that partially overlaps
/// another operand of its op would give an undefined result.
struct ArgumentOverlap {
  int64_t written = 0;  ///< the argument the op writes
  int64_t other = 0;    ///< another tensor argument of the same op (read or written)
  /// The two may be the very same buffer (same bytes, shape and element size): the op reads each
  /// element before it writes it, e.g. tile.map's `outs` over one of its `ins`. Otherwise any
  /// shared byte is refused.
  bool same_buffer_allowed = false;
  std::string reason;  ///< e.g. "tile.matmul at mm.mlir:3:3 writes one while it reads the other"

  friend bool operator==(const ArgumentOverlap& a, const ArgumentOverlap& b) {
    return a.written == b.written && a.other == b.other &&
           a.same_buffer_allowed == b.same_buffer_allowed;
  }
};

/// A public entry function: name, signature and contract (sizes and overlaps).
struct EntryFunction {
  std::string name;
  std::vector<EntryArgument> arguments;
  std::vector<EntryArgument> results;  ///< scalar results (at most one)
  bool deterministic = false;
  std::vector<SizeConstraint> size_constraints;
  std::vector<ArgumentOverlap> overlaps;
};

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_ENTRY_SIGNATURE_H_
