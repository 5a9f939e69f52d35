// Checks what a caller passes against an entry's contract (SizeConstraint, ArgumentOverlap),
// before anything runs. No MLIR: the C API links it.
#ifndef TESSERA_RUNTIME_ENTRY_CONTRACT_H_
#define TESSERA_RUNTIME_ENTRY_CONTRACT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "runtime/entry_signature.h"

namespace tessera::runtime {

/// "argument #3 'out'" (the name when the compiler knew it).
std::string DescribeArgument(const EntryFunction& entry, size_t index);

/// Whether size `found` relates to `expected` as `relation` asks (kBroadcasts: equal or 1).
/// A negative size (from a scalar argument) satisfies only kEqual.
bool SizesRelate(SizeRelation relation, int64_t found, int64_t expected);

/// Fills each tensor argument's `size_from` from `entry.size_constraints`: which of its sizes
/// must equal an integer argument (what a caller passing dims beside its buffers, such as the
/// original's launch bridge, sizes its tensors from).
void DeriveSizeSources(EntryFunction& entry);

/// One argument as passed: the sizes of a tensor (`sizes`, `entry.arguments[i].rank` of them)
/// and the bytes it spans, [begin, end) (empty for a tensor without elements), or the value of an
/// integer scalar.
struct PassedArgument {
  const int64_t* sizes = nullptr;
  int64_t value = 0;
  uintptr_t begin = 0;
  uintptr_t end = 0;
};

/// OK when every SizeConstraint of `entry` holds for `arguments` (one per entry argument, each
/// already checked alone). Otherwise InvalidArgument naming the function, both arguments, the
/// dimensions, the values and the op that needs them equal, e.g.
/// "@saxpy: dimension 0 of argument #3 'out' is 8 but argument #1 'x' has 4: tile.map at
/// elementwise.mlir:4:3 needs equal shapes".
absl::Status CheckShapeContract(const EntryFunction& entry,
                                absl::Span<const PassedArgument> arguments);

/// OK when every ArgumentOverlap of `entry` holds for `arguments`: the two tensors share no
/// byte, or are the same buffer (the same bytes, shape and element size) where the op allows
/// it. Otherwise InvalidArgument naming the function, both arguments and the op, e.g. "@mm:
/// argument #2 'c' (written) is the same buffer as argument #0 'a' (bytes 0x1000-0x1400 and
/// 0x1000-0x1400): tile.matmul at mm.mlir:3:3 writes one while it reads the other; pass a
/// buffer of its own".
absl::Status CheckArgumentOverlaps(const EntryFunction& entry,
                                   absl::Span<const PassedArgument> arguments);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_ENTRY_CONTRACT_H_
