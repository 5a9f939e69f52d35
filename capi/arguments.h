// Argument checking and conversion at invoke. Every check names the function, the argument and
// what was expected (docs/capi.md).
#ifndef TESSERA_CAPI_ARGUMENTS_H_
#define TESSERA_CAPI_ARGUMENTS_H_

#include <array>
#include <cstddef>

#include "absl/status/status.h"
#include "capi/include/tessera_jit.h"
#include "jit/compile_options.h"
#include "jit/compiled_module.h"
#include "runtime/memref_descriptor.h"

namespace tessera::capi {

/// The memref descriptor of tensor argument `index` of `entry`, after checking the tensor
/// against it: dtype, rank, static sizes, element-count and byte-size overflow, dense
/// row-major strides, NULL data with elements, alignment, a read-only tensor for a written
/// argument, and the device (host memory for `target` host, CUDA device `device` for nvptx).
absl::Status BuildDescriptor(const jit::EntryFunction& entry, size_t index, const DLTensor* tensor,
                             bool read_only, jit::Target target, int device,
                             runtime::MemRefDescriptor& descriptor);

/// Scalar argument `index` of `entry` in the entry's type, in `slot`: the kind must match
/// and integers must fit.
absl::Status StoreScalar(const jit::EntryFunction& entry, size_t index,
                         const tessera_jit_arg_t& arg, std::array<unsigned char, 8>& slot);

/// The DLPack dtype of an element type (i1: uint8).
DLDataType ToDtype(const jit::ElementType& element);

/// A scalar result from its slot.
tessera_jit_arg_t LoadResult(const jit::EntryArgument& result,
                             const std::array<unsigned char, 8>& slot);

}  // namespace tessera::capi

#endif  // TESSERA_CAPI_ARGUMENTS_H_
