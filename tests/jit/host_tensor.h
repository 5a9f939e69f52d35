// Test helper: a host tensor with a memref descriptor, for calling JIT'd entry points through
// the packed calling convention (jit/host_executable.h).
#ifndef TESSERA_TESTS_JIT_HOST_TENSOR_H_
#define TESSERA_TESTS_JIT_HOST_TENSOR_H_

#include <cstdint>
#include <random>
#include <vector>

#include "base/float16.h"

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

using ::tessera::BfloatToFloat;
using ::tessera::FloatToBfloat;
using ::tessera::FloatToHalf;
using ::tessera::HalfToFloat;

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_JIT_HOST_TENSOR_H_
