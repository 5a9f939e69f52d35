// libFuzzer target over invoke argument descriptors: the input picks an entry of a fixed
// module (every Tile op kind, scalars, user memref indexing, a call) and describes each
// argument — kind, dtype, rank, sizes (small, zero, negative or overflowing), strides, byte
// offset, NULL data, read-only — and the scalar values. Every buffer is allocated to exactly
// what its DLTensor claims (a claim too large to back gets NULL data), so any access outside
// the caller's buffers is the service's fault and ASan reports it. Invoke must succeed or
// return an error; it never crashes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "tessera_jit.h"

namespace {

constexpr char kSource[] = R"mlir(
func.func @saxpy(%alpha: f32, %x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>) {
  tile.map ins(%alpha, %x, %y : f32, memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %xi: f32, %yi: f32):
    %ax = arith.mulf %a, %xi : f32
    %r = arith.addf %ax, %yi : f32
    tile.yield %r : f32
  }
  return
}
func.func @rows(%x: memref<?x?xf32>, %y: memref<?xf32>) {
  tile.reduce sum %x -> %y axis = 1 : memref<?x?xf32> -> memref<?xf32>
  return
}
func.func @kept(%x: memref<?x?x?xf16>, %y: memref<?x1x?xf32>) {
  tile.reduce max %x -> %y axis = 1 keepdims : memref<?x?x?xf16> -> memref<?x1x?xf32>
  return
}
func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.softmax %x -> %y : memref<?x?xf32> -> memref<?x?xf32>
  return
}
func.func @linear(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>,
                  %bias: memref<?xf32>) {
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf32>) {transpose_b}
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}
func.func @scratch(%n: index, %x: memref<?xf32>, %y: memref<?xf32>) {
  %t = memref.alloc(%n) : memref<?xf32>
  tile.map ins(%x : memref<?xf32>) outs(%t : memref<?xf32>) {
  ^bb0(%v: f32):
    tile.yield %v : f32
  }
  tile.map ins(%t : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%v: f32):
    tile.yield %v : f32
  }
  memref.dealloc %t : memref<?xf32>
  return
}
func.func @gather(%x: memref<?x4xi32>, %i: index, %j: i8) -> i32 {
  %jj = arith.index_cast %j : i8 to index
  %v = memref.load %x[%i, %jj] : memref<?x4xi32>
  return %v : i32
}
func.func @half(%s: bf16, %x: memref<?xbf16>, %y: memref<?xbf16>) {
  tile.map ins(%s, %x : bf16, memref<?xbf16>) outs(%y : memref<?xbf16>) {
  ^bb0(%a: bf16, %v: bf16):
    %r = arith.mulf %a, %v : bf16
    tile.yield %r : bf16
  }
  return
}
)mlir";

constexpr const char* kEntries[] = {"saxpy",  "rows",    "kept",   "softmax",
                                    "linear", "scratch", "gather", "half"};
constexpr size_t kEntryCount = sizeof(kEntries) / sizeof(kEntries[0]);
constexpr int64_t kMaxBufferBytes = 1 << 20;

tessera_jit_module_t* Module() {
  static tessera_jit_module_t* module = [] {
    tessera_jit_context_options_t options;
    tessera_jit_context_options_init(&options);
    options.default_target = "host";
    options.cache_dir = "";  // memory only: nothing left behind, nothing stale reused
    tessera_jit_context_t* context = nullptr;
    if (tessera_jit_context_create(&options, &context) != nullptr) std::abort();
    tessera_jit_module_t* compiled = nullptr;
    if (tessera_jit_compile(context, kSource, sizeof(kSource) - 1, nullptr, &compiled) != nullptr) {
      std::abort();
    }
    tessera_jit_context_destroy(context);  // the module keeps it alive
    return compiled;
  }();
  return module;
}

/// Reads the fuzzer's bytes; past the end every read is 0.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Byte() { return at_ < size_ ? data_[at_++] : 0; }
  int64_t Int64() {
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(Byte()) << (8 * i);
    return static_cast<int64_t>(value);
  }
  /// A size: mostly small, sometimes 0, negative or huge.
  int64_t Size() {
    const uint8_t selector = Byte();
    switch (selector >> 5) {
      case 0:
        return 0;
      case 1:
        return -static_cast<int64_t>(Byte()) - 1;
      case 2:
        return Int64();
      default:
        return selector & 0x1f;
    }
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

struct Argument {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::unique_ptr<unsigned char[]> buffer;
  DLTensor tensor{};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  tessera_jit_function_t* function = nullptr;
  const char* name = kEntries[in.Byte() % kEntryCount];
  if (tessera_jit_module_get_function(Module(), name, std::strlen(name), &function) != nullptr) {
    std::abort();
  }
  size_t count = tessera_jit_function_get_arg_count(function);
  if ((in.Byte() & 0x0f) == 0) count = in.Byte() % 8;  // a wrong argument count, sometimes
  std::vector<Argument> arguments(count);
  std::vector<tessera_jit_arg_t> args(count);
  for (size_t i = 0; i < count; ++i) {
    const uint8_t kind = in.Byte();
    args[i].kind = static_cast<tessera_jit_arg_kind_t>(kind % 4);
    if (args[i].kind == TESSERA_JIT_ARG_INT) {
      args[i].value.i = (kind & 0x80) != 0 ? in.Int64() : in.Size();
      continue;
    }
    if (args[i].kind == TESSERA_JIT_ARG_FLOAT) {
      args[i].value.f = static_cast<double>(in.Int64()) / 4096.0;
      continue;
    }
    Argument& a = arguments[i];
    const uint8_t layout = in.Byte();
    const int ndim = (layout & 0x7) % 5;
    static constexpr DLDataType kDtypes[] = {{kDLFloat, 32, 1},  {kDLFloat, 16, 1},
                                             {kDLBfloat, 16, 1}, {kDLInt, 32, 1},
                                             {kDLFloat, 64, 1},  {kDLFloat, 32, 2}};
    a.tensor.dtype = kDtypes[((layout >> 3) & 0x7) % 6];
    a.shape.resize(ndim);
    int64_t elements = 1;
    bool backed = true;
    for (int d = 0; d < ndim; ++d) {
      a.shape[d] = in.Size();
      if (a.shape[d] < 0 || (a.shape[d] > 0 && elements > kMaxBufferBytes / a.shape[d])) {
        backed = false;
      } else {
        elements *= a.shape[d];
      }
    }
    const int64_t element_bytes = (a.tensor.dtype.bits * a.tensor.dtype.lanes + 7) / 8;
    a.tensor.byte_offset = (layout & 0x40) != 0 ? in.Byte() % 8 : 0;
    if (backed && elements * element_bytes <= kMaxBufferBytes && (layout & 0x80) == 0) {
      const size_t bytes = static_cast<size_t>(elements * element_bytes + a.tensor.byte_offset);
      a.buffer.reset(new unsigned char[bytes > 0 ? bytes : 1]);
      std::memset(a.buffer.get(), 0x3c, bytes > 0 ? bytes : 1);
      a.tensor.data = a.buffer.get();
    }
    if ((layout & 0x20) != 0 && ndim > 0) {
      a.strides.resize(ndim);
      for (int d = 0; d < ndim; ++d) a.strides[d] = in.Size();
      a.tensor.strides = a.strides.data();
    }
    a.tensor.device = {(in.Byte() & 0x0f) == 0 ? kDLCUDA : kDLCPU, 0};
    a.tensor.ndim = ndim;
    a.tensor.shape = ndim > 0 ? a.shape.data() : nullptr;
    args[i].value.tensor = (kind & 0x40) != 0 ? nullptr : &a.tensor;
  }
  tessera_jit_arg_t result{};
  tessera_jit_error_t* error =
      tessera_jit_function_invoke(function, args.data(), args.size(), nullptr, &result);
  if (error != nullptr && tessera_jit_error_code(error) == TESSERA_JIT_OK) std::abort();
  tessera_jit_error_destroy(error);
  return 0;
}
