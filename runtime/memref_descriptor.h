// The memref descriptor of a dense row-major buffer, as JIT'd entry points take it (MLIR's
// C interface): {allocated, aligned, offset, sizes[rank], strides[rank]}, every field 8 bytes.
// The one place descriptors are built: the C API's invoke, the arbiter's probes, the tests.
#ifndef TESSERA_RUNTIME_MEMREF_DESCRIPTOR_H_
#define TESSERA_RUNTIME_MEMREF_DESCRIPTOR_H_

#include <cstddef>
#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"

namespace tessera::runtime {

/// Up to rank 4 without a heap allocation.
using MemRefDescriptor = absl::InlinedVector<int64_t, 11>;

/// The descriptor of `shape` at address `data` (an integer: the caller's checked pointer
/// arithmetic, NULL allowed for empty tensors). Row-major strides: the caller has checked
/// that products of `shape` do not overflow.
inline MemRefDescriptor MakeMemRefDescriptor(uintptr_t data, absl::Span<const int64_t> shape) {
  const size_t rank = shape.size();
  MemRefDescriptor descriptor(3 + 2 * rank, 0);
  descriptor[0] = static_cast<int64_t>(data);
  descriptor[1] = static_cast<int64_t>(data);
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    descriptor[3 + d] = shape[d];
    descriptor[3 + rank + d] = stride;
    stride *= shape[d];
  }
  return descriptor;
}

inline MemRefDescriptor MakeMemRefDescriptor(const void* data, absl::Span<const int64_t> shape) {
  return MakeMemRefDescriptor(reinterpret_cast<uintptr_t>(data), shape);
}

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_MEMREF_DESCRIPTOR_H_
