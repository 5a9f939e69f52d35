// Test helper: a host tensor with a memref descriptor, for calling JIT'd entry points through
// the packed calling convention (runtime/host_executable.h).
#ifndef TESSERA_TESTS_JIT_HOST_TENSOR_H_
#define TESSERA_TESTS_JIT_HOST_TENSOR_H_

#include <cstdint>
#include <random>
#include <vector>

#include "base/float16.h"
#include "runtime/memref_descriptor.h"

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
  void Bind() { descriptor_ = runtime::MakeMemRefDescriptor(data_.data(), shape_); }

  std::vector<int64_t> shape_;
  std::vector<T> data_;
  runtime::MemRefDescriptor descriptor_;
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
