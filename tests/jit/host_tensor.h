// Test helper: a host tensor with a memref descriptor, for calling JIT'd entry points through
// the packed calling convention (jit/host_executable.h).
#ifndef TESSERA_TESTS_JIT_HOST_TENSOR_H_
#define TESSERA_TESTS_JIT_HOST_TENSOR_H_

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace tessera::testing {

/// Row-major storage of `T` plus the descriptor `{T* allocated; T* aligned; int64_t offset;
/// int64_t sizes[rank]; int64_t strides[rank];}` (every field is 8 bytes, so an int64 array
/// has the exact layout).
template <typename T>
class HostTensor {
 public:
  explicit HostTensor(std::vector<int64_t> shape) : shape_(std::move(shape)) {
    int64_t count = 1;
    for (int64_t size : shape_) count *= size;
    data_.resize(static_cast<size_t>(count));
    const size_t rank = shape_.size();
    descriptor_.resize(3 + 2 * rank);
    int64_t stride = 1;
    for (size_t d = rank; d-- > 0;) {
      descriptor_[3 + d] = shape_[d];
      descriptor_[3 + rank + d] = stride;
      stride *= shape_[d];
    }
    Bind();
  }
  HostTensor(const HostTensor& other)
      : shape_(other.shape_), data_(other.data_), descriptor_(other.descriptor_) {
    Bind();
  }

  /// What goes into the packed argument array.
  void* descriptor() { return descriptor_.data(); }
  std::vector<T>& data() { return data_; }
  const std::vector<T>& data() const { return data_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  size_t size() const { return data_.size(); }

 private:
  void Bind() {
    auto address = reinterpret_cast<int64_t>(data_.data());
    descriptor_[0] = address;
    descriptor_[1] = address;
    descriptor_[2] = 0;
  }

  std::vector<int64_t> shape_;
  std::vector<T> data_;
  std::vector<int64_t> descriptor_;
};

/// Uniform values in [low, high) from a fixed seed.
inline void FillUniform(std::vector<float>& values, uint32_t seed, float low = -1.0f,
                        float high = 1.0f) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  for (float& value : values) value = distribution(generator);
}

/// IEEE binary16 <-> binary32, round to nearest even (a reference independent of the JIT).
inline uint16_t FloatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint32_t sign = (bits >> 16) & 0x8000u;
  int32_t exponent = static_cast<int32_t>((bits >> 23) & 0xFF) - 127 + 15;
  uint32_t mantissa = bits & 0x7FFFFFu;
  if (((bits >> 23) & 0xFF) == 0xFF) return sign | 0x7C00u | (mantissa ? 0x200u : 0);
  if (exponent >= 31) return sign | 0x7C00u;
  if (exponent <= 0) {
    if (exponent < -10) return sign;
    mantissa |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exponent);
    uint32_t half = mantissa >> shift;
    uint32_t remainder = mantissa & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    if (remainder > midpoint || (remainder == midpoint && (half & 1))) ++half;
    return sign | half;
  }
  uint32_t half = sign | (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  uint32_t remainder = mantissa & 0x1FFFu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1))) ++half;
  return half;
}

inline float HalfToFloat(uint16_t half) {
  uint32_t sign = (half & 0x8000u) << 16;
  uint32_t exponent = (half >> 10) & 0x1F;
  uint32_t mantissa = half & 0x3FFu;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {
      exponent = 127 - 15 + 1;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        --exponent;
      }
      bits = sign | (exponent << 23) | ((mantissa & 0x3FFu) << 13);
    }
  } else if (exponent == 31) {
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
  }
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

/// bfloat16 <-> binary32, round to nearest even.
inline uint16_t FloatToBfloat(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7FFFu + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

inline float BfloatToFloat(uint16_t value) {
  uint32_t bits = static_cast<uint32_t>(value) << 16;
  float result;
  std::memcpy(&result, &bits, 4);
  return result;
}

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_JIT_HOST_TENSOR_H_
