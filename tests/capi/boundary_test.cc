// The C API as a hostile caller sees it (host target): mismatched dynamic sizes for every Tile
// Over 600 lines: one hostile-caller case per boundary condition, sharing the guard-page tensors.
// op kind, overflowing shapes, misaligned and read-only buffers, deeply nested and disallowed
// IR, sources without a NUL, hundreds of failing compiles, lifetimes and concurrent queries.
// Every case must return its documented code and message — never crash, never touch memory
// outside the caller's buffers (tensors end at a guard page; canaries surround them).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera_jit.h"
#include "tests/capi/capi_test_util.h"

namespace {

using ::tessera::testing::CompiledModuleTest;
using ::tessera::testing::Error;
using ::tessera::testing::Float;
using ::tessera::testing::Int;
using ::tessera::testing::Tensor;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr float kCanary = -12345.0f;

/// A float32 tensor whose last element ends exactly at an inaccessible page, with canary values
/// before it: reading or writing past the end faults, writing before it changes a canary.
class GuardedTensor {
 public:
  explicit GuardedTensor(std::vector<int64_t> shape, float fill = 0.0f) : shape_(std::move(shape)) {
    count_ = 1;
    for (int64_t d : shape_) count_ *= static_cast<size_t>(d);
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t bytes = (count_ + kCanaries) * sizeof(float);
    data_pages_ = (bytes + page - 1) / page;
    mapping_bytes_ = (data_pages_ + 1) * page;
    mapping_ =
        mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(mapping_, MAP_FAILED);
    char* guard = static_cast<char*>(mapping_) + data_pages_ * page;
    EXPECT_EQ(mprotect(guard, page, PROT_NONE), 0);
    data_ = reinterpret_cast<float*>(guard) - count_;
    for (size_t i = 0; i < kCanaries; ++i) data_[-1 - static_cast<ptrdiff_t>(i)] = kCanary;
    for (size_t i = 0; i < count_; ++i) data_[i] = fill;
    view_.data = data_;
    view_.device = {kDLCPU, 0};
    view_.ndim = static_cast<int32_t>(shape_.size());
    view_.dtype = {kDLFloat, 32, 1};
    view_.shape = shape_.data();
  }
  ~GuardedTensor() { munmap(mapping_, mapping_bytes_); }

  tessera_jit_arg_t arg() const { return ::tessera::testing::TensorArg(&view_); }
  bool CanariesIntact() const {
    for (size_t i = 0; i < kCanaries; ++i) {
      if (data_[-1 - static_cast<ptrdiff_t>(i)] != kCanary) return false;
    }
    return true;
  }
  bool AllEqual(float value) const {
    for (size_t i = 0; i < count_; ++i) {
      if (data_[i] != value) return false;
    }
    return true;
  }
  float* data() { return data_; }

 private:
  static constexpr size_t kCanaries = 16;
  std::vector<int64_t> shape_;
  size_t count_ = 0;
  size_t data_pages_ = 0;
  size_t mapping_bytes_ = 0;
  void* mapping_ = nullptr;
  float* data_ = nullptr;
  DLTensor view_{};
};

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
func.func @row_sums(%x: memref<?x?xf32>, %rows: memref<?xf32>) {
  tile.reduce sum %x -> %rows axis = 1 : memref<?x?xf32> -> memref<?xf32>
  return
}
func.func @col_max_kept(%x: memref<?x?xf32>, %cols: memref<?x?xf32>) {
  tile.reduce max %x -> %cols axis = 0 keepdims : memref<?x?xf32> -> memref<?x?xf32>
  return
}
func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.softmax %x -> %y : memref<?x?xf32> -> memref<?x?xf32>
  return
}
func.func @linear(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>,
                  %bias: memref<?xf32>) {
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf32>) activation(relu)
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}
func.func @scale_f16(%s: f16, %x: memref<?xf16>, %y: memref<?xf16>) {
  tile.map ins(%s, %x : f16, memref<?xf16>) outs(%y : memref<?xf16>) {
  ^bb0(%a: f16, %v: f16):
    %r = arith.mulf %a, %v : f16
    tile.yield %r : f16
  }
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
func.func @through_call(%x: memref<?xf32>, %y: memref<?xf32>) {
  func.call @copy(%x, %y) : (memref<?xf32>, memref<?xf32>) -> ()
  return
}
func.func private @copy(%from: memref<?xf32>, %to: memref<?xf32>) {
  tile.map ins(%from : memref<?xf32>) outs(%to : memref<?xf32>) {
  ^bb0(%v: f32):
    tile.yield %v : f32
  }
  return
}
)mlir";

class BoundaryTest : public CompiledModuleTest {
 protected:
  BoundaryTest() : CompiledModuleTest(kSource) {}
  /// Invokes and expects INVALID_ARGUMENT with `message` in it.
  void ExpectRefused(const char* entry, std::vector<tessera_jit_arg_t> args,
                     const std::string& message) {
    Error error(
        tessera_jit_function_invoke(Function(entry), args.data(), args.size(), nullptr, nullptr));
    EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT) << error.message();
    EXPECT_THAT(error.message(), HasSubstr(message));
  }
  /// Compiles `source` and returns the error (OK when it compiled).
  Error Compile(const std::string& source) {
    tessera_jit_module_t* module = nullptr;
    tessera_jit_error_t* error =
        tessera_jit_compile(context_, source.data(), source.size(), nullptr, &module);
    tessera_jit_module_destroy(module);
    return Error(error);
  }
};

TEST_F(BoundaryTest, MismatchedMapSizesAreRefusedBeforeAnythingRuns) {
  // The reproducer: x of 4 elements, y and out of 2^24.
  GuardedTensor x({4}, 1.0f), y({1 << 24}, 2.0f), out({1 << 24}, 7.0f);
  ExpectRefused("saxpy", {Float(2), x.arg(), y.arg(), out.arg()},
                "@saxpy: dimension 0 of argument #1 'x' is 4 but argument #3 'out' has 16777216 "
                "(it must be 1 or that): tile.map at <source>:3:3 broadcasts its inputs to the "
                "output's shape");
  GuardedTensor short_out({3}, 7.0f), x4({4}, 1.0f), y4({4}, 2.0f);
  ExpectRefused("saxpy", {Float(2), x4.arg(), y4.arg(), short_out.arg()},
                "dimension 0 of argument #1 'x' is 4 but argument #3 'out' has 3 (it must be 1 or "
                "that)");
  EXPECT_TRUE(out.AllEqual(7.0f));
  EXPECT_TRUE(short_out.AllEqual(7.0f) && short_out.CanariesIntact());
  // Agreeing sizes run, and write exactly the buffer.
  GuardedTensor good({4}, 7.0f);
  tessera_jit_arg_t args[] = {Float(2), x4.arg(), y4.arg(), good.arg()};
  ASSERT_OK(tessera_jit_function_invoke(Function("saxpy"), args, 4, nullptr, nullptr));
  EXPECT_TRUE(good.AllEqual(4.0f) && good.CanariesIntact());
}

TEST_F(BoundaryTest, MismatchedReduceSoftmaxAndMatmulSizesAreRefused) {
  GuardedTensor x({5, 3}, 1.0f), rows_short({4}, 7.0f);
  ExpectRefused("row_sums", {x.arg(), rows_short.arg()},
                "@row_sums: dimension 0 of argument #1 'rows' is 4 but argument #0 'x' has 5: "
                "tile.reduce at <source>:12:3 keeps every input dimension but axis 1");
  EXPECT_TRUE(rows_short.AllEqual(7.0f) && rows_short.CanariesIntact());
  GuardedTensor kept_wrong({2, 3}, 7.0f);
  ExpectRefused("col_max_kept", {x.arg(), kept_wrong.arg()},
                "dimension 0 of argument #1 'cols' is 2 but it must be 1");
  GuardedTensor y_wide({5, 4}, 7.0f);
  ExpectRefused("softmax", {x.arg(), y_wide.arg()},
                "dimension 1 of argument #1 'y' is 4 but argument #0 'x' has 3: tile.softmax");
  GuardedTensor a({4, 3}, 1.0f), b({3, 2}, 1.0f), c({4, 2}, 7.0f), bias({2}, 0.0f);
  GuardedTensor b_wrong_k({5, 2}, 1.0f), c_wrong_m({6, 2}, 7.0f), bias_wrong({3}, 0.0f);
  ExpectRefused("linear", {a.arg(), b_wrong_k.arg(), c.arg(), bias.arg()},
                "dimension 0 of argument #1 'b' is 5 but dimension 1 of argument #0 'a' is 3: "
                "tile.matmul at <source>:25:3 needs K of B equal to K of A");
  ExpectRefused("linear", {a.arg(), b.arg(), c_wrong_m.arg(), bias.arg()},
                "dimension 0 of argument #2 'c' is 6 but argument #0 'a' has 4");
  ExpectRefused("linear", {a.arg(), b.arg(), c.arg(), bias_wrong.arg()},
                "dimension 0 of argument #3 'bias' is 3 but dimension 1 of argument #2 'c' is 2: "
                "tile.matmul at <source>:25:3 needs the bias as long as N");
  EXPECT_TRUE(c.AllEqual(7.0f) && c.CanariesIntact());
  tessera_jit_arg_t args[] = {a.arg(), b.arg(), c.arg(), bias.arg()};
  ASSERT_OK(tessera_jit_function_invoke(Function("linear"), args, 4, nullptr, nullptr));
  EXPECT_TRUE(c.AllEqual(3.0f) && c.CanariesIntact());
}

TEST_F(BoundaryTest, SizesFromScalarsAndThroughCallsAreChecked) {
  GuardedTensor x({4}, 1.0f), y({4}, 7.0f);
  ExpectRefused(
      "scratch", {Int(1000), x.arg(), y.arg()},
      "@scratch: dimension 0 of argument #1 'x' is 4 but argument #0 'n' is 1000 (it must "
      "be 1 or that): tile.map at <source>:39:3 broadcasts its inputs to the output's "
      "shape");
  tessera_jit_arg_t args[] = {Int(4), x.arg(), y.arg()};
  ASSERT_OK(tessera_jit_function_invoke(Function("scratch"), args, 3, nullptr, nullptr));
  EXPECT_TRUE(y.AllEqual(1.0f));
  GuardedTensor long_y({9}, 7.0f);
  ExpectRefused("through_call", {x.arg(), long_y.arg()},
                "@through_call: dimension 0 of argument #0 'x' is 4 but argument #1 'y' has 9 (it "
                "must be 1 or that): tile.map at <source>:55:3 broadcasts its inputs to the "
                "output's shape");
  EXPECT_TRUE(long_y.AllEqual(7.0f));
}

TEST_F(BoundaryTest, OverflowAlignmentAndReadOnlyAreChecked) {
  int64_t huge[] = {int64_t{1} << 62, 8};
  DLTensor overflow{};
  overflow.device = {kDLCPU, 0};
  overflow.ndim = 2;
  overflow.dtype = {kDLFloat, 32, 1};
  overflow.shape = huge;
  tessera_jit_arg_t overflow_arg{};
  overflow_arg.kind = TESSERA_JIT_ARG_TENSOR;
  overflow_arg.value.tensor = &overflow;
  GuardedTensor rows({4}, 7.0f);
  ExpectRefused("row_sums", {overflow_arg, rows.arg()},
                "argument #0 'x' of @row_sums (memref<?x?xf32>): shape [4611686018427387904, 8] "
                "has more elements than 64 bits can count");
  int64_t big[] = {int64_t{1} << 61, 1};
  overflow.shape = big;  // 2^61 elements, 2^63 bytes
  ExpectRefused("row_sums", {overflow_arg, rows.arg()}, "spans more bytes than the address space");

  GuardedTensor x({4}, 1.0f), y({4}, 1.0f), out({4}, 7.0f);
  DLTensor misaligned = *x.arg().value.tensor;
  misaligned.byte_offset = 2;
  tessera_jit_arg_t misaligned_arg = x.arg();
  misaligned_arg.value.tensor = &misaligned;
  ExpectRefused("saxpy", {Float(1), misaligned_arg, y.arg(), out.arg()},
                "is not aligned to the 4-byte element type");

  tessera_jit_arg_t read_only_out = out.arg();
  read_only_out.kind = TESSERA_JIT_ARG_TENSOR_READ_ONLY;
  ExpectRefused("saxpy", {Float(1), x.arg(), y.arg(), read_only_out},
                "argument #3 'out' of @saxpy (memref<?xf32>): the tensor is read-only, but @saxpy "
                "writes this argument");
  tessera_jit_arg_t read_only_in = x.arg();
  read_only_in.kind = TESSERA_JIT_ARG_TENSOR_READ_ONLY;
  tessera_jit_arg_t args[] = {Float(1), read_only_in, y.arg(), out.arg()};
  ASSERT_OK(tessera_jit_function_invoke(Function("saxpy"), args, 4, nullptr, nullptr));
  EXPECT_TRUE(out.AllEqual(2.0f));

  tessera_jit_arg_info_t info;
  info.struct_size = TESSERA_JIT_ARG_INFO_STRUCT_SIZE;
  ASSERT_OK(tessera_jit_function_get_arg_info(Function("saxpy"), 0, 3, &info));
  EXPECT_STREQ(info.name, "out");
  EXPECT_EQ(info.written, 1);
  ASSERT_OK(tessera_jit_function_get_arg_info(Function("saxpy"), 0, 1, &info));
  EXPECT_EQ(info.written, 0);
}

TEST_F(BoundaryTest, HalfPrecisionScalarsCanBeInvoked) {
  uint16_t x[3] = {0x3c00, 0x4000, 0xc200};  // 1, 2, -3
  uint16_t y[3] = {0, 0, 0};
  int64_t shape[] = {3};
  DLTensor xv{x, {kDLCPU, 0}, 1, {kDLFloat, 16, 1}, shape, nullptr, 0};
  DLTensor yv{y, {kDLCPU, 0}, 1, {kDLFloat, 16, 1}, shape, nullptr, 0};
  tessera_jit_arg_t args[3] = {Float(0.5), {}, {}};
  args[1].kind = args[2].kind = TESSERA_JIT_ARG_TENSOR;
  args[1].value.tensor = &xv;
  args[2].value.tensor = &yv;
  ASSERT_OK(tessera_jit_function_invoke(Function("scale_f16"), args, 3, nullptr, nullptr));
  EXPECT_EQ(y[0], 0x3800);  // 0.5
  EXPECT_EQ(y[1], 0x3c00);  // 1
  EXPECT_EQ(y[2], 0xbe00);  // -1.5
}

TEST_F(BoundaryTest, DeeplyNestedIrIsRefusedNotACrash) {
  std::string modules;
  for (int i = 0; i < 5000; ++i) modules += "module {\n";
  for (int i = 0; i < 5000; ++i) modules += "}\n";
  Error nested(Compile(modules));
  EXPECT_EQ(nested.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(nested.message(), AllOf(HasSubstr("<source>:257:8: error: the IR nests deeper "
                                                "than 256 levels")));
  std::string tuple = "func.func private @t(%a: ";
  for (int i = 0; i < 20000; ++i) tuple += "tuple<";
  tuple += "f32";
  for (int i = 0; i < 20000; ++i) tuple += ">";
  tuple += ")\n";
  EXPECT_EQ(Compile(tuple).code(), TESSERA_JIT_INVALID_ARGUMENT);
  std::string arrays = "func.func @f() attributes {a = ";
  for (int i = 0; i < 10000; ++i) arrays += "[";
  for (int i = 0; i < 10000; ++i) arrays += "]";
  arrays += "} {\n  return\n}\n";
  EXPECT_EQ(Compile(arrays).code(), TESSERA_JIT_INVALID_ARGUMENT);
  std::string maps = "func.func @f(%x: memref<4xf32>) {\n";
  for (int i = 0; i < 2000; ++i) {
    maps += "tile.map ins(%x : memref<4xf32>) outs(%x : memref<4xf32>) {\n^bb0(%v: f32):\n";
  }
  EXPECT_EQ(Compile(maps).code(), TESSERA_JIT_INVALID_ARGUMENT);
}

TEST_F(BoundaryTest, HostileIrIsRefusedWithItsLocation) {
  struct Case {
    std::string source;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"func.func private @t(%a: tuple<f32>) {\n  return\n}\n"
       "func.func @e() {\n  return\n}\n",
       "<source>:1:1: error: argument #0 of @t has type tuple<f32>"},
      {"func.func @asm(%x: i64) -> i64 {\n"
       "  %r = llvm.inline_asm \"mov $0, $1\", \"=r,r\" %x : (i64) -> i64\n"
       "  return %r : i64\n}\n",
       "<source>:2:8: error: 'llvm.inline_asm' is not allowed in Tessera IR"},
      {"func.func @forge(%a: i64) -> f32 {\n"
       "  %p = llvm.inttoptr %a : i64 to !llvm.ptr\n"
       "  %v = llvm.load %p : !llvm.ptr -> f32\n  return %v : f32\n}\n",
       "<source>:2:8: error: 'llvm.inttoptr' is not allowed"},
      {"func.func @view(%x: memref<?xf32>) -> f32 {\n  %c0 = arith.constant 0 : index\n"
       "  %r = memref.reinterpret_cast %x to offset: [0], sizes: [100000], strides: [1]"
       " : memref<?xf32> to memref<100000xf32>\n"
       "  %v = memref.load %r[%c0] : memref<100000xf32>\n  return %v : f32\n}\n",
       "<source>:3:8: error: 'memref.reinterpret_cast' is not allowed"},
      {"func.func private @getpid() -> i32\nfunc.func @leak() -> i32 {\n"
       "  %p = func.call @getpid() : () -> i32\n  return %p : i32\n}\n",
       "<source>:1:1: error: @getpid is an external declaration"},
      {"func.func @wide(%x: i128) {\n  return\n}\n", "argument #0 of @wide has type i128"},
      {"func.func @unknown_size(%x: memref<?xf32>, %n: index) {\n"
       "  %m = arith.addi %n, %n : index\n  %t = memref.alloc(%m) : memref<?xf32>\n"
       "  tile.map ins(%x : memref<?xf32>) outs(%t : memref<?xf32>) {\n"
       "  ^bb0(%v: f32):\n    tile.yield %v : f32\n  }\n  return\n}\n",
       "<source>:4:3: error: 'tile.map' reads a size that is computed by 'arith.addi'"},
      {"module attributes {llvm.target_triple = \"x\"} {\n}\n",
       "module attribute 'llvm.target_triple' is reserved"},
      {"func.func @cast(%n: index, %x: memref<?xf32>) {\n"
       "  %a = arith.index_cast %n : index to i8\n"
       "  %s = arith.index_castui %a : i8 to index\n"
       "  %t = memref.alloc(%s) : memref<?xf32>\n"
       "  tile.map ins(%x : memref<?xf32>) outs(%t : memref<?xf32>) {\n"
       "  ^bb0(%v: f32):\n    tile.yield %v : f32\n  }\n  return\n}\n",
       "<source>:5:3: error: 'tile.map' reads a size that is computed by 'arith.index_castui'"},
      {"func.func @free(%x: memref<?xf32>) {\n  memref.dealloc %x : memref<?xf32>\n  return\n}\n",
       "<source>:2:3: error: memref.dealloc frees only a memref.alloc result of the same block"},
      {"func.func @twice() {\n  %t = memref.alloc() : memref<4xf32>\n"
       "  memref.dealloc %t : memref<4xf32>\n  memref.dealloc %t : memref<4xf32>\n  return\n}\n",
       "memref.dealloc must be the last use of its memref.alloc, once"},
      {"func.func @after(%v: f32) {\n  %c0 = arith.constant 0 : index\n"
       "  %t = memref.alloc() : memref<4xf32>\n  memref.dealloc %t : memref<4xf32>\n"
       "  memref.store %v, %t[%c0] : memref<4xf32>\n  return\n}\n",
       "<source>:4:3: error: memref.dealloc must be the last use of its memref.alloc, once"},
      {"func.func @stack(%n: index) {\n  %t = memref.alloca(%n) : memref<?xf32>\n  return\n}\n",
       "memref.alloca takes static shapes of at most 65536 bytes"},
      {"func.func @huge() {\n  %t = memref.alloc() : memref<4611686018427387905xf32>\n"
       "  return\n}\n",
       "<source>:2:8: error: memref.alloc of more than 17179869184 bytes"},
      {"func.func @tessera_rt_check_failed(%id: i64) {\n  return\n}\n",
       "the name @tessera_rt_check_failed is reserved"},
      // A definition under the matmul microkernels' names would take their calls.
      {"func.func @tessera_uk_matmul_f32_row_avx(%a: i64) {\n  return\n}\n",
       "the name @tessera_uk_matmul_f32_row_avx is reserved"},
      {"func.func @g(%a: index) attributes {tessera_jit.parallel_body} {\n  return\n}\n",
       "attribute 'tessera_jit.parallel_body' on @g is reserved for the compiler"},
      {"func.func @poison(%v: f32) {\n  %c0 = arith.constant 0 : index\n"
       "  %p = ub.poison : memref<4xf32>\n  memref.store %v, %p[%c0] : memref<4xf32>\n"
       "  return\n}\n",
       "<source>:3:8: error: 'ub.poison' is not allowed"},
      {"func.func @f() attributes {m = affine_map<(d0) -> (d0)>} {\n  return\n}\n",
       "<source>:1:32: error: 'affine_map' is not part of Tessera IR"},
      {"!t0 = tuple<f32>\n!t1 = tuple<!t0>\nfunc.func @f() {\n  return\n}\n",
       "<source>:1:1: error: type and attribute aliases"},
      {"func.func @f() attributes {a = " + std::string(300, '-') + "1} {\n  return\n}\n",
       "the IR nests deeper than 256 levels"},
      {"func.func @f() {\n  \"test.unregistered\"() : () -> ()\n  return\n}\n",
       "<source>:2:22: error: operation being parsed with an unregistered dialect"},
      // fp8 values are storage: arithmetic on them (no LLVM type) or a narrowing to them is
      // refused with a location, not failed in the LLVM translation.
      {"func.func @f(%x: memref<?xf8E5M2>, %y: memref<?xf32>) {\n"
       "  tile.map ins(%x : memref<?xf8E5M2>) outs(%y : memref<?xf32>) {\n"
       "  ^bb0(%a: f8E5M2):\n    %n = arith.negf %a : f8E5M2\n"
       "    %e = arith.extf %n : f8E5M2 to f32\n    tile.yield %e : f32\n  }\n  return\n}\n",
       "<source>:4:10: error: 'arith.negf' on f8E5M2 values: fp8 values are storage"},
      {"func.func @f(%x: memref<?xf32>, %y: memref<?xf8E4M3FN>) {\n"
       "  tile.map ins(%x : memref<?xf32>) outs(%y : memref<?xf8E4M3FN>) {\n"
       "  ^bb0(%a: f32):\n    %e = arith.truncf %a : f32 to f8E4M3FN\n"
       "    tile.yield %e : f8E4M3FN\n  }\n  return\n}\n",
       "<source>:4:10: error: 'arith.truncf' on f8E4M3FN values"},
      {"gpu.module @k {\n  gpu.func @f(%a: f8E4M3FN) kernel {\n"
       "    %s = arith.addf %a, %a : f8E4M3FN\n    gpu.return\n  }\n}\n",
       "<source>:3:10: error: 'arith.addf' on f8E4M3FN values"},
      // MLIR 22.1's NVVM::MmaOp::verify sizes a vector from k and aborts the process.
      {"gpu.module @k {\n  gpu.func @f(%a: vector<2xf16>, %c: vector<2xf16>) kernel {\n"
       "    %d = nvvm.mma.sync A[%a, %a, %a, %a] B[%a, %a] C[%c, %c]\n"
       "      {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,\n"
       "       shape = #nvvm.shape<m = 16, n = 8, k = -2147483648>}\n"
       "      : (vector<2xf16>, vector<2xf16>, vector<2xf16>)\n"
       "      -> !llvm.struct<(vector<2xf16>, vector<2xf16>)>\n    gpu.return\n  }\n}\n",
       "<source>:3:10: error: 'nvvm.mma.sync' attribute 'shape' has k = -2147483648; matrix "
       "extents lie in [1, 256]"},
      {"gpu.module @k {\n  gpu.func @f(%p: !llvm.ptr<3>, %s: i32) kernel {\n"
       "    %l = nvvm.wmma.load %p, %s {eltype = #nvvm.mma_type<f16>, frag = #nvvm.mma_frag<a>,"
       " k = 16 : i32, layout = #nvvm.mma_layout<row>, m = -1 : i32, n = 16 : i32}\n"
       "      : (!llvm.ptr<3>) -> !llvm.struct<(vector<2xf16>, vector<2xf16>)>\n"
       "    gpu.return\n  }\n}\n",
       "<source>:3:10: error: 'nvvm.wmma.load' attribute 'm' has m = -1"},
  };
  for (const Case& c : cases) {
    Error error(Compile(c.source));
    EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT) << c.source << error.message();
    EXPECT_THAT(error.message(), HasSubstr(c.expected)) << c.source;
  }
}

TEST_F(BoundaryTest, SourcesAreNeverReadPastTheirLength) {
  // The source ends exactly at an inaccessible page: any read past its length faults.
  const std::string text = "func.func @f(%x: memref<4xf32>) {\n  return\n}";
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  char* mapping = static_cast<char*>(
      mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(mapping, MAP_FAILED);
  ASSERT_EQ(mprotect(mapping + page, page, PROT_NONE), 0);
  char* source = mapping + page - text.size();
  std::memcpy(source, text.data(), text.size());
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context_, source, text.size(), nullptr, &module));
  EXPECT_EQ(tessera_jit_module_get_entry_count(module), 1u);
  tessera_jit_module_destroy(module);
  // A truncated source is an error, never a read of what follows.
  Error truncated(tessera_jit_compile(context_, source, text.size() - 1, nullptr, &module));
  EXPECT_EQ(truncated.code(), TESSERA_JIT_INVALID_ARGUMENT);
  munmap(mapping, 2 * page);
  // NULL with size 0 is the empty module.
  ASSERT_OK(tessera_jit_compile(context_, nullptr, 0, nullptr, &module));
  EXPECT_EQ(tessera_jit_module_get_entry_count(module), 0u);
  tessera_jit_module_destroy(module);
}

TEST_F(BoundaryTest, HundredsOfFailingCompilesLeaveTheContextUsable) {
  for (int i = 0; i < 700; ++i) {
    const std::string bad =
        "func.func @f" + std::to_string(i) + "(%x: memref<4xf32>) {\n  ret\n}\n";
    ASSERT_EQ(Compile(bad).code(), TESSERA_JIT_INVALID_ARGUMENT) << i;
    const std::string unverified =
        "func.func @g" + std::to_string(i) +
        "(%x: memref<4xf32>, %y: memref<8xf32>) {\n"
        "  tile.softmax %x -> %y : memref<4xf32> -> memref<8xf32>\n  return\n}\n";
    ASSERT_EQ(Compile(unverified).code(), TESSERA_JIT_INVALID_ARGUMENT) << i;
  }
  EXPECT_EQ(Compile(kSource).code(), TESSERA_JIT_OK);
}

TEST_F(BoundaryTest, UserBytesInMessagesAreEscaped) {
  const char name[] = {'s', 'a', '\0', 'x'};
  tessera_jit_function_t* function = nullptr;
  Error missing(tessera_jit_module_get_function(module_, name, sizeof(name), &function));
  EXPECT_EQ(missing.code(), TESSERA_JIT_NOT_FOUND);
  EXPECT_THAT(missing.message(), HasSubstr("no entry function @sa\\x00x; the module has"));
  EXPECT_EQ(std::strlen(tessera_jit_error_message(missing.error, nullptr)),
            missing.message().size());
}

TEST_F(BoundaryTest, MemrefAccessesOfUserIrAreBoundsCheckedAtRunTime) {
  const std::string source = R"mlir(func.func @gather(%x: memref<?xf32>, %i: index) -> f32 {
  %v = memref.load %x[%i] : memref<?xf32>
  return %v : f32
}
func.func @scatter(%x: memref<?xf32>, %i: index, %v: f32) {
  memref.store %v, %x[%i] : memref<?xf32>
  return
})mlir";
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context_, source.data(), source.size(), nullptr, &module));
  tessera_jit_function_t* gather = nullptr;
  tessera_jit_function_t* scatter = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(module, "gather", 6, &gather));
  ASSERT_OK(tessera_jit_module_get_function(module, "scatter", 7, &scatter));
  GuardedTensor x({4}, 1.5f);
  tessera_jit_arg_t in_bounds[] = {x.arg(), Int(3)};
  tessera_jit_arg_t result{};
  ASSERT_OK(tessera_jit_function_invoke(gather, in_bounds, 2, nullptr, &result));
  EXPECT_EQ(result.value.f, 1.5);
  for (int64_t index : {int64_t{4}, int64_t{-1}, int64_t{1} << 40}) {
    tessera_jit_arg_t past_end[] = {x.arg(), Int(index)};
    Error load(tessera_jit_function_invoke(gather, past_end, 2, nullptr, &result));
    EXPECT_EQ(load.code(), TESSERA_JIT_OUT_OF_RANGE) << index;
    EXPECT_THAT(load.message(), AllOf(HasSubstr("@gather: run-time check failed at <source>:2:8"),
                                      HasSubstr("out-of-bounds")));
    tessera_jit_arg_t store_args[] = {x.arg(), Int(index), Float(9)};
    Error store(tessera_jit_function_invoke(scatter, store_args, 3, nullptr, nullptr));
    EXPECT_EQ(store.code(), TESSERA_JIT_OUT_OF_RANGE) << index;
    EXPECT_THAT(store.message(), HasSubstr("@scatter: run-time check failed at <source>:6:3"));
  }
  EXPECT_TRUE(x.AllEqual(1.5f) && x.CanariesIntact());
  tessera_jit_module_destroy(module);
}

TEST_F(BoundaryTest, NegativeSizesFromScalarsNeverSatisfyARelationOtherThanEquality) {
  // Grouped heads (a multiple of), rope's pairs (twice) and broadcasting (1 or equal) on sizes
  // taken from index scalars: INT64_MIN % -1 would trap, 2 * INT64_MIN would wrap.
  const std::string source = R"mlir(func.func @groups(%h: index, %g: index) {
  %q = memref.alloc(%h) : memref<1x?x1x1xf32>
  %k = memref.alloc(%g) : memref<1x?x1x1xf32>
  %o = memref.alloc(%h) : memref<1x?x1x1xf32>
  tile.attention %q, %k, %k -> %o : memref<1x?x1x1xf32>, memref<1x?x1x1xf32>, memref<1x?x1x1xf32> -> memref<1x?x1x1xf32>
  return
}
func.func @pairs(%d: index, %h: index) {
  %x = memref.alloc(%d) : memref<1x?xf32>
  %c = memref.alloc(%h) : memref<1x?xf32>
  tile.rope half %x, %c, %c -> %x : memref<1x?xf32>, memref<1x?xf32>, memref<1x?xf32> -> memref<1x?xf32>
  return
}
func.func @spread(%n: index, %m: index) {
  %x = memref.alloc(%n) : memref<?xf32>
  %y = memref.alloc(%m) : memref<?xf32>
  tile.map ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%v: f32):
    tile.yield %v : f32
  }
  return
})mlir";
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context_, source.data(), source.size(), nullptr, &module));
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  struct Call {
    const char* entry;
    int64_t first, second;
    const char* message;
  };
  for (const Call& call :
       {Call{"groups", kMin, -1, "must be a multiple of"},
        Call{"groups", 4, -2, "must be a multiple of"}, Call{"pairs", 0, kMin, "must be twice"},
        Call{"pairs", -4, -2, "must be twice"}, Call{"spread", -5, 8, "(it must be 1 or that)"}}) {
    tessera_jit_function_t* function = nullptr;
    ASSERT_OK(
        tessera_jit_module_get_function(module, call.entry, std::strlen(call.entry), &function));
    tessera_jit_arg_t args[] = {Int(call.first), Int(call.second)};
    Error error(tessera_jit_function_invoke(function, args, 2, nullptr, nullptr));
    EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT) << call.entry << " " << call.first;
    EXPECT_THAT(error.message(), HasSubstr(call.message));
  }
  tessera_jit_module_destroy(module);
}

TEST_F(BoundaryTest, AllocationsOfUserIrAreBoundedAtRunTime) {
  const std::string source = R"mlir(func.func @scratch(%n: index, %i: index, %v: f32) {
  %t = memref.alloc(%n) : memref<?xf32>
  memref.store %v, %t[%i] : memref<?xf32>
  memref.dealloc %t : memref<?xf32>
  return
})mlir";
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context_, source.data(), source.size(), nullptr, &module));
  tessera_jit_function_t* scratch = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(module, "scratch", 7, &scratch));
  tessera_jit_arg_t fine[] = {Int(16), Int(3), Float(1)};
  ASSERT_OK(tessera_jit_function_invoke(scratch, fine, 3, nullptr, nullptr));
  // 2^62 + 1 floats would wrap to 4 bytes; 2^33 floats are more than the 16 GiB bound; -1.
  for (int64_t n : {(int64_t{1} << 62) + 1, int64_t{1} << 33, int64_t{-1}}) {
    tessera_jit_arg_t args[] = {Int(n), Int(1000), Float(1)};
    Error error(tessera_jit_function_invoke(scratch, args, 3, nullptr, nullptr));
    EXPECT_EQ(error.code(), TESSERA_JIT_OUT_OF_RANGE) << n;
    EXPECT_THAT(error.message(),
                HasSubstr("@scratch: run-time check failed at <source>:2:8: 'memref.alloc' of "
                          "more than 17179869184 bytes, or with a negative size"));
  }
  tessera_jit_module_destroy(module);
}

TEST_F(BoundaryTest, IntegerDivisionNeverTraps) {
  const std::string source = R"mlir(func.func @div(%a: i32, %b: i32) -> i32 {
  %q = arith.divsi %a, %b : i32
  return %q : i32
}
func.func @rem(%a: i64, %b: i64) -> i64 {
  %r = arith.remui %a, %b : i64
  return %r : i64
}
func.func @map_div(%x: memref<?xi32>, %y: memref<?xi32>) {
  tile.map ins(%x, %x : memref<?xi32>, memref<?xi32>) outs(%y : memref<?xi32>) {
  ^bb0(%p: i32, %q: i32):
    %z = arith.constant 0 : i32
    %d = arith.floordivsi %p, %z : i32
    tile.yield %d : i32
  }
  return
})mlir";
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context_, source.data(), source.size(), nullptr, &module));
  tessera_jit_function_t* div = nullptr;
  tessera_jit_function_t* rem = nullptr;
  tessera_jit_function_t* map_div = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(module, "div", 3, &div));
  ASSERT_OK(tessera_jit_module_get_function(module, "rem", 3, &rem));
  ASSERT_OK(tessera_jit_module_get_function(module, "map_div", 7, &map_div));
  struct Case {
    tessera_jit_function_t* function;
    int64_t a, b, expected;
  };
  const int64_t min32 = -(int64_t{1} << 31);
  for (const Case& c : {Case{div, 7, 2, 3}, Case{div, 7, 0, 7}, Case{div, min32, -1, min32},
                        Case{rem, 7, 0, 0}, Case{rem, 7, 4, 3}}) {
    tessera_jit_arg_t args[] = {Int(c.a), Int(c.b)};
    tessera_jit_arg_t result{};
    ASSERT_OK(tessera_jit_function_invoke(c.function, args, 2, nullptr, &result));
    EXPECT_EQ(result.value.i, c.expected) << c.a << " / " << c.b;
  }
  int32_t x[3] = {5, -6, 7};
  int32_t y[3] = {0, 0, 0};
  int64_t shape[] = {3};
  DLTensor xv{x, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, shape, nullptr, 0};
  DLTensor yv{y, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, shape, nullptr, 0};
  tessera_jit_arg_t args[2] = {};
  args[0].kind = args[1].kind = TESSERA_JIT_ARG_TENSOR;
  args[0].value.tensor = &xv;
  args[1].value.tensor = &yv;
  ASSERT_OK(tessera_jit_function_invoke(map_div, args, 2, nullptr, nullptr));
  EXPECT_EQ(y[0], 5);
  EXPECT_EQ(y[1], -6);
  EXPECT_EQ(y[2], 7);
  tessera_jit_module_destroy(module);
}

TEST_F(BoundaryTest, Fp8TensorsTakeDlpackFloat8CodesAndDecodeExactly) {
  // DLPack 1.1: kDLFloat8_e4m3fn = 10, kDLFloat8_e5m2 = 12.
  const std::string source = R"mlir(
func.func @mm(%a: memref<?x?xf8E4M3FN>, %b: memref<?x?xf8E4M3FN>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c : memref<?x?xf8E4M3FN>, memref<?x?xf8E4M3FN> -> memref<?x?xf32>
  return
})mlir";
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context_, source.data(), source.size(), nullptr, &module));
  tessera_jit_function_t* mm = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(module, "mm", 2, &mm));
  tessera_jit_arg_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_OK(tessera_jit_function_get_arg_info(mm, 0, 0, &info));
  EXPECT_EQ(info.dtype.code, 10);
  EXPECT_EQ(info.dtype.bits, 8);
  // A [4, 1]: 1.0 (0x38), -448 (0xFE), the smallest subnormal 2^-9 (0x01), NaN (0x7F); B = 2.
  uint8_t a[4] = {0x38, 0xFE, 0x01, 0x7F};
  uint8_t b[1] = {0x40};
  float c[4] = {0, 0, 0, 0};
  int64_t a_shape[] = {4, 1}, b_shape[] = {1, 1}, c_shape[] = {4, 1};
  DLTensor av{a, {kDLCPU, 0}, 2, {10, 8, 1}, a_shape, nullptr, 0};
  DLTensor bv{b, {kDLCPU, 0}, 2, {10, 8, 1}, b_shape, nullptr, 0};
  DLTensor cv{c, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, c_shape, nullptr, 0};
  tessera_jit_arg_t args[3] = {};
  for (tessera_jit_arg_t& arg : args) arg.kind = TESSERA_JIT_ARG_TENSOR;
  args[0].value.tensor = &av;
  args[1].value.tensor = &bv;
  args[2].value.tensor = &cv;
  ASSERT_OK(tessera_jit_function_invoke(mm, args, 3, nullptr, nullptr));
  EXPECT_EQ(c[0], 2.0f);
  EXPECT_EQ(c[1], -896.0f);
  EXPECT_EQ(c[2], std::ldexp(1.0f, -8));
  EXPECT_TRUE(std::isnan(c[3]));
  // The e5m2 code, or an 8-bit int, for an e4m3 tensor: refused before anything runs.
  for (DLDataType wrong : {DLDataType{12, 8, 1}, DLDataType{kDLInt, 8, 1}}) {
    av.dtype = wrong;
    Error error(tessera_jit_function_invoke(mm, args, 3, nullptr, nullptr));
    EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT);
    EXPECT_THAT(error.message(), HasSubstr("does not match the element type"));
  }
  av.dtype = {12, 8, 1};
  Error error(tessera_jit_function_invoke(mm, args, 3, nullptr, nullptr));
  EXPECT_THAT(error.message(), HasSubstr("dtype float8_e5m2 does not match"));
  tessera_jit_module_destroy(module);
}

TEST_F(BoundaryTest, EmptyTensorsWithHugeDimensionsReturnAtOnce) {
  // 2^50 rows of nothing: no element to compute, so no loop over the rows either.
  int64_t shape[] = {int64_t{1} << 50, 0};
  DLTensor empty{nullptr, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
  tessera_jit_arg_t args[2] = {};
  args[0].kind = args[1].kind = TESSERA_JIT_ARG_TENSOR;
  args[0].value.tensor = &empty;
  args[1].value.tensor = &empty;
  ASSERT_OK(tessera_jit_function_invoke(Function("softmax"), args, 2, nullptr, nullptr));
}

TEST_F(BoundaryTest, CallGraphsThatFanOutAreBounded) {
  std::string source =
      "func.func @entry(%x: memref<?xf32>) {\n"
      "  func.call @f0(%x) : (memref<?xf32>) -> ()\n  return\n}\n";
  for (int level = 0; level < 12; ++level) {
    source += "func.func private @f" + std::to_string(level) + "(%x: memref<?xf32>) {\n";
    for (int call = 0; call < 4; ++call) {
      source += level + 1 < 12 ? "  func.call @f" + std::to_string(level + 1) +
                                     "(%x) : (memref<?xf32>) -> ()\n"
                               : "";
    }
    source += "  return\n}\n";
  }
  Error error(Compile(source));
  EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(error.message(), HasSubstr("reach more than 4096 function bodies"));
}

TEST_F(BoundaryTest, GemmKernelCallSizesMustFitTheirBuffers) {
  ASSERT_OK(tessera_jit_context_register_default_libraries(context_, "host"));
  // C[M,N] = A[M,K]·B[K,N], row-major, with every size an argument of the entry.
  const std::string source = R"mlir(func.func @gemm(%m: i32, %n: i32, %k: i32, %lda: i32,
    %a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>) {
  %layout = arith.constant 101 : i32
  %no = arith.constant 111 : i32
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  tessera_nvidia.kernel_call %layout, %no, %no, %m, %n, %k, %one, %a, %lda, %b, %n, %zero, %c, %n {
      callee = "cblas_sgemm", arch = "host", binding = "c_abi", provenance = "vendor_library",
      accuracy = "reference_exact", determinism = "deterministic"}
      : (i32, i32, i32, i32, i32, i32, f32, memref<?xf32>, i32, memref<?xf32>, i32, f32,
         memref<?xf32>, i32) -> ()
  return
})mlir";
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context_, source.data(), source.size(), nullptr, &module));
  tessera_jit_function_t* gemm = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(module, "gemm", 4, &gemm));
  GuardedTensor a({2 * 3}, 1.0f), b({3 * 4}, 1.0f), c({2 * 4}, 7.0f);
  tessera_jit_arg_t good[] = {Int(2), Int(4), Int(3), Int(3), a.arg(), b.arg(), c.arg()};
  ASSERT_OK(tessera_jit_function_invoke(gemm, good, 7, nullptr, nullptr));
  EXPECT_TRUE(c.AllEqual(3.0f) && c.CanariesIntact());
  struct Case {
    int64_t m, n, k, lda;
    const char* why;
  };
  for (const Case& bad : {Case{100000, 4, 3, 3, "the sizes given for A reach past its buffer"},
                          Case{2, 4, 3, 2, "the leading dimension of A is smaller"},
                          Case{2, 5, 3, 3, "the sizes given for B reach past its buffer"},
                          Case{-1, 4, 3, 3, "M, N and K must be >= 0"}}) {
    tessera_jit_arg_t args[] = {Int(bad.m), Int(bad.n), Int(bad.k), Int(bad.lda),
                                a.arg(),    b.arg(),    c.arg()};
    Error error(tessera_jit_function_invoke(gemm, args, 7, nullptr, nullptr));
    EXPECT_EQ(error.code(), TESSERA_JIT_OUT_OF_RANGE) << bad.why;
    EXPECT_THAT(error.message(), AllOf(HasSubstr("@gemm: run-time check failed at <source>:7:3"),
                                       HasSubstr(bad.why)));
  }
  EXPECT_TRUE(c.AllEqual(3.0f) && c.CanariesIntact());
  tessera_jit_module_destroy(module);
}

TEST(BoundaryCacheTest, ADiskHitChecksTheSameShapeContract) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/boundary_cache";
  for (int round = 0; round < 2; ++round) {  // a compile, then a disk hit in a new context
    tessera_jit_context_options_t options;
    tessera_jit_context_options_init(&options);
    options.default_target = "host";
    options.cache_dir = dir.c_str();
    tessera_jit_context_t* context = nullptr;
    ASSERT_OK(tessera_jit_context_create(&options, &context));
    tessera_jit_module_t* module = nullptr;
    ASSERT_OK(tessera_jit_compile(context, kSource, sizeof(kSource) - 1, nullptr, &module));
    tessera_jit_cache_stats_t stats;
    stats.struct_size = sizeof(stats);
    ASSERT_OK(tessera_jit_context_get_cache_stats(context, &stats));
    EXPECT_EQ(stats.disk_hits, round == 0 ? 0u : 1u);
    tessera_jit_function_t* saxpy = nullptr;
    ASSERT_OK(tessera_jit_module_get_function(module, "saxpy", 5, &saxpy));
    GuardedTensor x({4}, 1.0f), y({8}, 1.0f), out({8}, 7.0f);
    tessera_jit_arg_t args[] = {Float(1), x.arg(), y.arg(), out.arg()};
    Error error(tessera_jit_function_invoke(saxpy, args, 4, nullptr, nullptr));
    EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT) << round;
    EXPECT_THAT(error.message(), HasSubstr("dimension 0 of argument #1 'x' is 4 but argument #3 "
                                           "'out' has 8 (it must be 1 or that): tile.map at "
                                           "<source>:3:3"));
    EXPECT_TRUE(out.AllEqual(7.0f));
    tessera_jit_module_destroy(module);
    tessera_jit_context_destroy(context);
  }
}

TEST(BoundaryLifetimeTest, AContextDestroyedWhileModulesLiveStaysUsableByThem) {
  tessera_jit_context_options_t options;
  tessera_jit_context_options_init(&options);
  options.default_target = "host";
  options.cache_dir = "";
  tessera_jit_context_t* context = nullptr;
  ASSERT_OK(tessera_jit_context_create(&options, &context));
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context, kSource, sizeof(kSource) - 1, nullptr, &module));
  tessera_jit_context_destroy(context);  // the module still holds it
  tessera_jit_function_t* saxpy = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(module, "saxpy", 5, &saxpy));
  Tensor x({4}, 1.0f), y({4}, 1.0f), out({4});
  tessera_jit_arg_t args[] = {Float(3), x.arg(), y.arg(), out.arg()};
  ASSERT_OK(tessera_jit_function_invoke(saxpy, args, 4, nullptr, nullptr));
  EXPECT_EQ(out.data[3], 4.0f);
  tessera_jit_module_destroy(module);  // frees the context too (ASan checks)
}

TEST(BoundaryLifetimeTest, DelegateIdentitiesStayValidUnderConcurrentQueries) {
  tessera_jit_context_t* context = nullptr;
  ASSERT_OK(tessera_jit_context_create(nullptr, &context));
  ASSERT_OK(tessera_jit_context_register_default_libraries(context, "host"));
  const size_t count = tessera_jit_context_get_delegate_count(context);
  ASSERT_GT(count, 0u);
  size_t size = 0;
  const char* first = tessera_jit_context_get_delegate_identity(context, 0, &size);
  ASSERT_NE(first, nullptr);
  const std::string expected(first, size);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        size_t n = 0;
        const char* text = tessera_jit_context_get_delegate_identity(context, i % count, &n);
        ASSERT_NE(text, nullptr);
        ASSERT_EQ(std::strlen(text), n);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(std::string(first, size), expected);  // the first pointer is still valid
  tessera_jit_context_destroy(context);
}

}  // namespace

namespace tessera::testing {
namespace {

// Streams and events (API 0.9): NULL handles and unknown flags are refused first; without a
// GPU every call is UNAVAILABLE, saying what needed one. (tests/gpu checks them on a device.)
TEST(BoundaryStreamTest, StreamAndEventCallsAreCheckedAndUnavailableWithoutAGpu) {
  tessera_jit_context_t* context = MemoryOnlyHostContext();
  ASSERT_NE(context, nullptr);
  void* stream = reinterpret_cast<void*>(1);
  tessera_jit_event_t* event = reinterpret_cast<tessera_jit_event_t*>(1);
  int32_t done = 7;
  float ms = 1.0f;
  auto code = [](tessera_jit_error_t* raw) { return Error(raw).code(); };
  EXPECT_EQ(code(tessera_jit_stream_create(nullptr, 0, &stream)), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_EQ(code(tessera_jit_stream_create(context, 0, nullptr)), TESSERA_JIT_INVALID_ARGUMENT);
  {
    Error unknown(tessera_jit_stream_create(context, 0x6, &stream));
    EXPECT_EQ(unknown.code(), TESSERA_JIT_INVALID_ARGUMENT);
    EXPECT_THAT(unknown.message(), ::testing::HasSubstr("unknown flags 0x6"));
    EXPECT_EQ(stream, nullptr);
  }
  EXPECT_EQ(code(tessera_jit_event_create(context, 0x2, &event)), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_EQ(event, nullptr);
  EXPECT_EQ(code(tessera_jit_event_create(nullptr, 0, &event)), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_EQ(code(tessera_jit_stream_query(context, nullptr, nullptr)),
            TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_EQ(code(tessera_jit_stream_wait_event(context, nullptr, nullptr)),
            TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_EQ(code(tessera_jit_stream_destroy(nullptr, nullptr)), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_EQ(code(tessera_jit_stream_destroy(context, nullptr)), TESSERA_JIT_OK);
  EXPECT_EQ(code(tessera_jit_stream_synchronize(nullptr, nullptr)), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_EQ(code(tessera_jit_event_record(nullptr, nullptr)), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_EQ(code(tessera_jit_event_query(nullptr, &done)), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_EQ(code(tessera_jit_event_synchronize(nullptr)), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_EQ(code(tessera_jit_event_elapsed_time(nullptr, nullptr, &ms)),
            TESSERA_JIT_INVALID_ARGUMENT);
  tessera_jit_event_destroy(nullptr);
  if (tessera_jit_is_gpu_available()) {
    tessera_jit_context_destroy(context);
    GTEST_SKIP() << "a GPU is present: tests/gpu checks streams and events";
  }
  {
    Error unavailable(tessera_jit_stream_create(context, TESSERA_JIT_STREAM_NON_BLOCKING, &stream));
    EXPECT_EQ(unavailable.code(), TESSERA_JIT_UNAVAILABLE);
    EXPECT_THAT(unavailable.message(), ::testing::HasSubstr("a stream needs a GPU"));
    EXPECT_EQ(stream, nullptr);
  }
  EXPECT_EQ(code(tessera_jit_event_create(context, 0, &event)), TESSERA_JIT_UNAVAILABLE);
  EXPECT_EQ(event, nullptr);
  EXPECT_EQ(code(tessera_jit_stream_query(context, nullptr, &done)), TESSERA_JIT_UNAVAILABLE);
  EXPECT_EQ(done, 0);
  EXPECT_EQ(code(tessera_jit_stream_synchronize(context, nullptr)), TESSERA_JIT_UNAVAILABLE);
  tessera_jit_context_destroy(context);
}

// NumPy 2 exports an empty array with zero strides: nothing to lay out, so nothing to refuse.
// ---------------------------------------------------------------------------------------------
// The arbiter at the C API (API 0.10): budgets, batch invariance, plans.

constexpr char kMatmul[] = R"(
func.func @mm(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  tile.matmul %a, %b -> %c : memref<64x64xf32>, memref<64x64xf32> -> memref<64x64xf32>
  return
}
)";

std::string TempPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name;
}

/// A memory-only host context with `plan_path` (or none) and OpenBLAS registered; the error
/// of creating it.
tessera_jit_error_t* ArbiterContext(const char* plan_path, int32_t strict, int32_t budget_ms,
                                    tessera_jit_context_t** out) {
  tessera_jit_context_options_t options;
  tessera_jit_context_options_init(&options);
  options.default_target = "host";
  options.cache_dir = "";
  options.plan_path = plan_path;
  options.plan_strict = strict;
  options.arbitration_budget_ms = budget_ms;
  tessera_jit_error_t* error = tessera_jit_context_create(&options, out);
  if (error == nullptr) {
    Error registered(tessera_jit_context_register_default_libraries(*out, "host"));
    EXPECT_EQ(registered.code(), TESSERA_JIT_OK) << registered.message();
  }
  return error;
}

TEST(BoundaryArbiterTest, BadArbiterOptionsAreRefusedWithTheirField) {
  tessera_jit_context_t* context = nullptr;
  Error missing(ArbiterContext("/nonexistent/plan.json", 0, 0, &context));
  EXPECT_EQ(missing.code(), TESSERA_JIT_NOT_FOUND);
  EXPECT_THAT(missing.message(), HasSubstr("plan_path: cannot read the plan file "
                                           "'/nonexistent/plan.json'"));
  const std::string damaged = TempPath("damaged_plan.json");
  {
    std::ofstream(damaged)
        << "{\"format\": \"tessera-jit-plan\", \"version\": 1, \"decisions\": [1]}";
  }
  Error bad(ArbiterContext(damaged.c_str(), 0, 0, &context));
  EXPECT_EQ(bad.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(bad.message(), HasSubstr("not a Tessera plan: decision 1 is not an object"));
  Error strict(ArbiterContext(nullptr, 1, 0, &context));
  EXPECT_THAT(strict.message(), HasSubstr("plan_strict is set without a plan_path"));
  for (int32_t budget : {-1, 3600001}) {
    Error error(ArbiterContext(nullptr, 0, budget, &context));
    EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT) << budget;
    EXPECT_THAT(error.message(), HasSubstr("arbitration_budget_ms must be 0"));
  }

  ASSERT_OK(ArbiterContext(nullptr, 0, 0, &context));
  tessera_jit_compile_options_t options;
  tessera_jit_compile_options_init(&options);
  options.flags = 0x80u;
  tessera_jit_module_t* module = nullptr;
  Error flags(tessera_jit_compile(context, kMatmul, sizeof(kMatmul) - 1, &options, &module));
  EXPECT_THAT(flags.message(), HasSubstr("flags: unknown flags 0x80"));
  options.flags = 0;
  options.arbitration_budget_ms = -5;
  Error budget(tessera_jit_compile(context, kMatmul, sizeof(kMatmul) - 1, &options, &module));
  EXPECT_THAT(budget.message(), HasSubstr("arbitration_budget_ms must be 0 (the context's)"));
  EXPECT_EQ(module, nullptr);

  Error null_context(tessera_jit_context_write_plan(nullptr, "p", 1));
  EXPECT_EQ(null_context.code(), TESSERA_JIT_INVALID_ARGUMENT);
  Error null_path(tessera_jit_context_write_plan(context, nullptr, 0));
  EXPECT_THAT(null_path.message(), HasSubstr("path is NULL or empty"));
  Error nul(tessera_jit_context_write_plan(context, "a\0b", 3));
  EXPECT_THAT(nul.message(), HasSubstr("path has a NUL byte"));
  Error unwritable(tessera_jit_context_write_plan(context, "/nonexistent/dir/p.json", 23));
  EXPECT_EQ(unwritable.code(), TESSERA_JIT_UNAVAILABLE);
  // Not NUL-terminated: only path_size bytes are the path.
  const std::string path = TempPath("empty_plan.jsonXXXX");
  ASSERT_OK(tessera_jit_context_write_plan(context, path.data(), path.size() - 4));
  std::ifstream written(path.substr(0, path.size() - 4));
  std::string text((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("\"decisions\": []"));
  tessera_jit_context_destroy(context);
}

TEST(BoundaryArbiterTest, APlanWrittenByOneContextIsReplayedByAnother) {
  tessera_jit_context_t* measuring = nullptr;
  ASSERT_OK(ArbiterContext(nullptr, 0, 50, &measuring));
  tessera_jit_compile_options_t options;
  tessera_jit_compile_options_init(&options);
  options.flags = TESSERA_JIT_BATCH_INVARIANT;
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(measuring, kMatmul, sizeof(kMatmul) - 1, &options, &module));
  const std::string decisions = Text(module, TESSERA_JIT_TEXT_DECISIONS);
  EXPECT_THAT(decisions,
              AllOf(HasSubstr("\"batch_invariant\": true"), HasSubstr("\"budget_ms\": 50"),
                    HasSubstr("\"batch_invariance\": \"by construction\"")));
  const std::string module_plan = Text(module, TESSERA_JIT_TEXT_PLAN);
  EXPECT_THAT(module_plan, AllOf(HasSubstr("\"format\": \"tessera-jit-plan\""),
                                 HasSubstr("\"determinism\": \"batch_invariant\"")));
  tessera_jit_module_destroy(module);
  const std::string path = TempPath("replayed_plan.json");
  ASSERT_OK(tessera_jit_context_write_plan(measuring, path.data(), path.size()));
  tessera_jit_context_destroy(measuring);

  tessera_jit_context_t* replaying = nullptr;
  ASSERT_OK(ArbiterContext(path.c_str(), 1, 0, &replaying));
  ASSERT_OK(tessera_jit_compile(replaying, kMatmul, sizeof(kMatmul) - 1, &options, &module));
  EXPECT_THAT(Text(module, TESSERA_JIT_TEXT_DECISIONS),
              AllOf(HasSubstr("\"source\": \"pinned\""), HasSubstr("pinned by the plan")));
  tessera_jit_module_destroy(module);
  // Strict: the run_to_run level is another point, not in the plan.
  options.flags = TESSERA_JIT_DETERMINISTIC;
  Error unseen(tessera_jit_compile(replaying, kMatmul, sizeof(kMatmul) - 1, &options, &module));
  EXPECT_EQ(unseen.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(unseen.message(), HasSubstr("<source>:3:3: error: strict replay: tile.matmul"));
  tessera_jit_context_destroy(replaying);
}

TEST(BoundaryStrideTest, AnEmptyTensorsStridesAreNotChecked) {
  tessera_jit_context_t* context = MemoryOnlyHostContext();
  ASSERT_NE(context, nullptr);
  const char* source = R"(func.func @copy(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%v: f32):
    tile.yield %v : f32
  }
  return
})";
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context, source, std::strlen(source), nullptr, &module));
  tessera_jit_function_t* function = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(module, "copy", 4, &function));
  Tensor x({0, 3}), y({0, 3});
  int64_t zero_strides[] = {0, 0};
  x.view.strides = zero_strides;
  y.view.strides = zero_strides;
  tessera_jit_arg_t args[2] = {};
  args[0].kind = args[1].kind = TESSERA_JIT_ARG_TENSOR;
  args[0].value.tensor = &x.view;
  args[1].value.tensor = &y.view;
  ASSERT_OK(tessera_jit_function_invoke(function, args, 2, nullptr, nullptr));
  Tensor z({2, 3});  // with elements, the same strides are refused
  z.view.strides = zero_strides;
  args[0].value.tensor = &z.view;
  args[1].value.tensor = &z.view;
  Error refused(tessera_jit_function_invoke(function, args, 2, nullptr, nullptr));
  EXPECT_EQ(refused.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(refused.message(), ::testing::HasSubstr("expected a dense row-major tensor"));
  tessera_jit_module_destroy(module);
  tessera_jit_context_destroy(context);
}

}  // namespace
}  // namespace tessera::testing
