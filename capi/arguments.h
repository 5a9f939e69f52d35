// Argument checking and conversion at invoke. Every check names the function, the argument and
// what was expected (docs/capi.md).
#ifndef TESSERA_CAPI_ARGUMENTS_H_
#define TESSERA_CAPI_ARGUMENTS_H_

#include <array>
#include <cstddef>

#include "absl/status/status.h"
#include "capi/include/tessera_jit.h"
#include "runtime/entry_contract.h"
#include "runtime/entry_signature.h"
#include "runtime/memref_descriptor.h"
#include "runtime/target.h"

namespace tessera::capi {

/// The memref descriptor of tensor argument `index` of `entry`, after checking the tensor
/// against it: dtype, rank, static sizes, element-count and byte-size overflow, dense
/// row-major strides, NULL data with elements, alignment, a read-only tensor for a written
/// argument, and the device (host memory for `target` host, CUDA device `device` for nvptx).
/// `passed` receives the descriptor's sizes and the bytes the tensor spans (for the entry's
/// contract); it points into `descriptor`.
absl::Status BuildDescriptor(const runtime::EntryFunction& entry, size_t index,
                             const DLTensor* tensor, bool read_only, runtime::Target target,
                             int device, runtime::MemRefDescriptor& descriptor,
                             runtime::PassedArgument& passed);

/// Scalar argument `index` of `entry` in the entry's type, in `slot`: the kind must match
/// and integers must fit.
absl::Status StoreScalar(const runtime::EntryFunction& entry, size_t index,
                         const tessera_jit_arg_t& arg, std::array<unsigned char, 8>& slot);

/// The DLPack dtype of an element type (i1: uint8).
DLDataType ToDtype(const runtime::ElementType& element);

/// A scalar result from its slot.
tessera_jit_arg_t LoadResult(const runtime::EntryArgument& result,
                             const std::array<unsigned char, 8>& slot);

}  // namespace tessera::capi

#endif  // TESSERA_CAPI_ARGUMENTS_H_
