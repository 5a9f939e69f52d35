// Argument checking and conversion at invoke: DLTensors → memref descriptors, C scalars →
// the entry's types, scalar results back.
#include "capi/arguments.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/float16.h"
#include "runtime/entry_contract.h"

namespace tessera::capi {

using runtime::ElementType;
using runtime::EntryArgument;
using runtime::EntryFunction;
using runtime::Target;

namespace {

// DLPack 1.1's type codes for the fp8 formats (dlpack.h's DLDataTypeCode; the vendored header
// predates them).
constexpr uint8_t kDLFloat8E4M3FN = 10;
constexpr uint8_t kDLFloat8E5M2 = 12;

/// The DLPack dtypes an element type accepts.
bool DtypeMatches(const ElementType& element, DLDataType dtype) {
  if (dtype.lanes != 1) return false;
  switch (element.type_class) {
    case ElementType::Class::kFloat:
      return dtype.code == kDLFloat && dtype.bits == element.bits;
    case ElementType::Class::kBFloat:
      return dtype.code == kDLBfloat && dtype.bits == 16;
    case ElementType::Class::kIndex:
      return dtype.code == kDLInt && dtype.bits == 64;
    case ElementType::Class::kInt:
      // i1 is stored as one byte; newer DLPack calls it kDLBool (6).
      if (element.bits == 1) return dtype.bits == 8 && (dtype.code <= kDLUInt || dtype.code == 6);
      return (dtype.code == kDLInt || dtype.code == kDLUInt) && dtype.bits == element.bits;
    case ElementType::Class::kFloat8E4M3FN:
      return dtype.code == kDLFloat8E4M3FN && dtype.bits == 8;
    case ElementType::Class::kFloat8E5M2:
      return dtype.code == kDLFloat8E5M2 && dtype.bits == 8;
  }
  return false;
}

std::string DescribeDtype(DLDataType dtype) {
  const std::string lanes = dtype.lanes != 1 ? absl::StrCat("x", dtype.lanes) : "";
  if (dtype.code == kDLFloat8E4M3FN) return absl::StrCat("float8_e4m3fn", lanes);
  if (dtype.code == kDLFloat8E5M2) return absl::StrCat("float8_e5m2", lanes);
  const char* name = dtype.code == kDLInt      ? "int"
                     : dtype.code == kDLUInt   ? "uint"
                     : dtype.code == kDLFloat  ? "float"
                     : dtype.code == kDLBfloat ? "bfloat"
                                               : "code";
  return absl::StrCat(name, static_cast<int>(dtype.bits), lanes);
}

std::string ShapeText(const int64_t* shape, int ndim) {
  std::vector<std::string> sizes;
  for (int d = 0; d < ndim; ++d) sizes.push_back(std::to_string(shape[d]));
  return absl::StrCat("[", absl::StrJoin(sizes, ", "), "]");
}

}  // namespace

absl::Status BuildDescriptor(const EntryFunction& entry, size_t index, const DLTensor* tensor,
                             bool read_only, Target target, int device,
                             tessera::runtime::MemRefDescriptor& descriptor,
                             tessera::runtime::PassedArgument& passed) {
  const EntryArgument& expected = entry.arguments[index];
  auto where = [&] {
    return absl::StrCat(tessera::runtime::DescribeArgument(entry, index), " of @", entry.name, " (",
                        expected.type, ")");
  };
  if (tensor == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(where(), ": expected a DLTensor, found NULL"));
  }
  if (!DtypeMatches(expected.element, tensor->dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(
        where(), ": dtype ", DescribeDtype(tensor->dtype), " does not match the element type"));
  }
  if (tensor->ndim != expected.rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(where(), ": expected rank ", expected.rank, ", found ", tensor->ndim));
  }
  if (tensor->ndim > 0 && tensor->shape == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(where(), ": shape is NULL"));
  }
  int64_t elements = 1;
  int64_t extent = 1;  // the product of the non-zero sizes: what strides are computed from
  for (int d = 0; d < tensor->ndim; ++d) {
    if (tensor->shape[d] < 0 || (expected.shape[d] >= 0 && tensor->shape[d] != expected.shape[d])) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(), ": shape ", ShapeText(tensor->shape, tensor->ndim), " does not match"));
    }
    elements *= tensor->shape[d] == 0 ? 0 : 1;
    if (tensor->shape[d] > 0 && __builtin_mul_overflow(extent, tensor->shape[d], &extent)) {
      return absl::InvalidArgumentError(absl::StrCat(where(), ": shape ",
                                                     ShapeText(tensor->shape, tensor->ndim),
                                                     " has more elements than 64 bits can count"));
    }
  }
  if (elements != 0) elements = extent;
  const int64_t element_bytes = (expected.element.bits + 7) / 8;
  int64_t bytes = 0;
  uintptr_t end = 0;
  if (__builtin_mul_overflow(extent, element_bytes, &bytes) ||
      __builtin_add_overflow(reinterpret_cast<uintptr_t>(tensor->data), tensor->byte_offset,
                             &end) ||
      __builtin_add_overflow(end, static_cast<uintptr_t>(bytes), &end)) {
    return absl::InvalidArgumentError(absl::StrCat(
        where(), ": shape ", ShapeText(tensor->shape, tensor->ndim), " at byte offset ",
        tensor->byte_offset, " spans more bytes than the address space holds"));
  }
  // Identity-layout memrefs are dense row-major: strides must say so (or be NULL). A tensor
  // without elements has no layout to check (NumPy 2 exports zero strides for one).
  if (tensor->strides != nullptr && elements != 0) {
    int64_t stride = 1;
    for (int d = tensor->ndim - 1; d >= 0; --d) {
      if (tensor->shape[d] > 1 && tensor->strides[d] != stride) {
        return absl::InvalidArgumentError(
            absl::StrCat(where(), ": expected a dense row-major tensor, found strides ",
                         ShapeText(tensor->strides, tensor->ndim)));
      }
      stride *= tensor->shape[d];
    }
  }
  if (tensor->data == nullptr && elements > 0) {
    return absl::InvalidArgumentError(absl::StrCat(where(), ": data is NULL"));
  }
  const uintptr_t address = reinterpret_cast<uintptr_t>(tensor->data) + tensor->byte_offset;
  if (elements > 0 && address % static_cast<uintptr_t>(element_bytes) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(where(), ": data + byte_offset (0x",
                                                   absl::Hex(address), ") is not aligned to the ",
                                                   element_bytes, "-byte element type"));
  }
  const DLDeviceType device_type = tensor->device.device_type;
  if (target == Target::kHost && device_type != kDLCPU && device_type != kDLCUDAHost) {
    return absl::InvalidArgumentError(
        absl::StrCat(where(),
                     ": the module runs on the host; expected host memory (kDLCPU), found device "
                     "type ",
                     static_cast<int>(device_type)));
  }
  if (target == Target::kNvptx && ((device_type != kDLCUDA && device_type != kDLCUDAManaged) ||
                                   tensor->device.device_id != device)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where(), ": the module runs on CUDA device ", device,
                     "; expected memory of that device (kDLCUDA), found device type ",
                     static_cast<int>(device_type), " id ", tensor->device.device_id));
  }
  // After the device, as tessera_jit.h and docs/capi.md list the checks.
  if (read_only && expected.written) {
    return absl::InvalidArgumentError(absl::StrCat(where(), ": the tensor is read-only, but @",
                                                   entry.name, " writes this argument"));
  }
  // `address` (data + byte_offset, computed as an integer: NULL data with an offset is no
  // pointer arithmetic) was checked above not to overflow.
  descriptor = tessera::runtime::MakeMemRefDescriptor(
      address, absl::MakeConstSpan(tensor->shape, static_cast<size_t>(tensor->ndim)));
  passed.sizes = descriptor.data() + 3;
  passed.begin = address;
  passed.end = elements > 0 ? end : address;
  return absl::OkStatus();
}

absl::Status StoreScalar(const EntryFunction& entry, size_t index, const tessera_jit_arg_t& arg,
                         std::array<unsigned char, 8>& slot) {
  const EntryArgument& expected = entry.arguments[index];
  auto where = [&] {
    return absl::StrCat(tessera::runtime::DescribeArgument(entry, index), " of @", entry.name, " (",
                        expected.type, ")");
  };
  const ElementType& element = expected.element;
  if (element.type_class == ElementType::Class::kFloat ||
      element.type_class == ElementType::Class::kBFloat) {
    if (arg.kind != TESSERA_JIT_ARG_FLOAT) {
      return absl::InvalidArgumentError(absl::StrCat(where(), ": expected a float scalar"));
    }
    const float narrow = static_cast<float>(arg.value.f);
    if (element.type_class == ElementType::Class::kBFloat) {
      const uint16_t bits = tessera::FloatToBfloat(narrow);
      std::memcpy(slot.data(), &bits, sizeof(bits));
    } else if (element.bits == 16) {
      const uint16_t bits = tessera::FloatToHalf(narrow);
      std::memcpy(slot.data(), &bits, sizeof(bits));
    } else if (element.bits == 32) {
      std::memcpy(slot.data(), &narrow, sizeof(narrow));
    } else {
      std::memcpy(slot.data(), &arg.value.f, sizeof(double));
    }
    return absl::OkStatus();
  }
  if (arg.kind != TESSERA_JIT_ARG_INT) {
    return absl::InvalidArgumentError(absl::StrCat(where(), ": expected an integer scalar"));
  }
  const int bits = element.bits;
  int64_t value = arg.value.i;
  if (bits < 64) {
    int64_t low = bits == 1 ? 0 : -(int64_t{1} << (bits - 1));
    int64_t high = bits == 1 ? 1 : (int64_t{1} << bits) - 1;  // signed or unsigned use
    if (value < low || value > high) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), ": ", value, " does not fit in ", bits, " bits"));
    }
  }
  std::memcpy(slot.data(), &value, sizeof(value));  // little-endian: the low bytes are the value
  return absl::OkStatus();
}

DLDataType ToDtype(const ElementType& element) {
  switch (element.type_class) {
    case ElementType::Class::kFloat:
      return {kDLFloat, static_cast<uint8_t>(element.bits), 1};
    case ElementType::Class::kBFloat:
      return {kDLBfloat, 16, 1};
    case ElementType::Class::kIndex:
      return {kDLInt, 64, 1};
    case ElementType::Class::kInt:
      if (element.bits == 1) return {kDLUInt, 8, 1};
      return {kDLInt, static_cast<uint8_t>(element.bits), 1};
    case ElementType::Class::kFloat8E4M3FN:
      return {kDLFloat8E4M3FN, 8, 1};
    case ElementType::Class::kFloat8E5M2:
      return {kDLFloat8E5M2, 8, 1};
  }
  return {kDLFloat, 32, 1};
}

tessera_jit_arg_t LoadResult(const EntryArgument& result,
                             const std::array<unsigned char, 8>& slot) {
  tessera_jit_arg_t out{};
  if (result.element.type_class == ElementType::Class::kBFloat ||
      (result.element.type_class == ElementType::Class::kFloat && result.element.bits == 16)) {
    out.kind = TESSERA_JIT_ARG_FLOAT;
    uint16_t bits;
    std::memcpy(&bits, slot.data(), sizeof(bits));
    out.value.f = result.element.type_class == ElementType::Class::kBFloat
                      ? tessera::BfloatToFloat(bits)
                      : tessera::HalfToFloat(bits);
    return out;
  }
  if (result.element.type_class == ElementType::Class::kFloat) {
    out.kind = TESSERA_JIT_ARG_FLOAT;
    if (result.element.bits == 32) {
      float value;
      std::memcpy(&value, slot.data(), sizeof(value));
      out.value.f = value;
    } else {
      std::memcpy(&out.value.f, slot.data(), sizeof(double));
    }
    return out;
  }
  out.kind = TESSERA_JIT_ARG_INT;
  int64_t value = 0;
  std::memcpy(&value, slot.data(), (result.element.bits + 7) / 8);
  // Sign-extend narrow integers.
  if (result.element.bits < 64 && result.element.bits > 1) {
    int shift = 64 - result.element.bits;
    value = (value << shift) >> shift;
  }
  out.value.i = value;
  return out;
}

}  // namespace tessera::capi
