// Tensor arguments that share memory, at invoke (host target): an op's written argument may be
// the very same buffer as one it reads element by element (tile.map's outs over its ins, a
// matmul's C over its residual), and must otherwise share no byte with the op's other operands.
// Every refusal names both arguments and the op, and comes before anything runs; what is allowed
// computes what disjoint buffers compute (plain C++ here). The contract travels in packages, and
// two operands that are one buffer already in the IR are refused at compile time.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera_jit.h"
#include "tests/capi/capi_test_util.h"

namespace {

using ::tessera::testing::CompiledModuleTest;
using ::tessera::testing::Error;
using ::tessera::testing::MemoryOnlyHostContext;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kSource[] = R"mlir(
func.func @twice_plus_one(%x: memref<?xf32>, %y: memref<?xf32>) {
  tile.map ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%a: f32):
    %one = arith.constant 1.0 : f32
    %t = arith.addf %a, %a : f32
    %r = arith.addf %t, %one : f32
    tile.yield %r : f32
  }
  return
}

func.func @matmul_residual(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %r: memref<?x?xf32>,
                           %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c residual(%r : memref<?x?xf32>)
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}

func.func @softmax_rows(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.softmax %x -> %y : memref<?x?xf32> -> memref<?x?xf32>
  return
}

func.func @rotate(%x: memref<?x?x16xf32>, %cos: memref<?x8xf32>, %sin: memref<?x8xf32>,
                  %y: memref<?x?x16xf32>) {
  tile.rope half %x, %cos, %sin -> %y
      : memref<?x?x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x?x16xf32>
  return
}

func.func @widen_rows(%x: memref<1x?xf32>, %y: memref<2x?xf16>) {
  tile.map ins(%x : memref<1x?xf32>) outs(%y : memref<2x?xf16>) {
  ^bb0(%a: f32):
    %r = arith.truncf %a : f32 to f16
    tile.yield %r : f16
  }
  return
}

func.func @rms_residual(%x: memref<?x8xf32>, %r: memref<?x8xf32>, %y: memref<?x8xf32>,
                        %h: memref<?x8xf32>) {
  tile.norm rms %x residual(%r : memref<?x8xf32>) -> %y residual_out(%h : memref<?x8xf32>)
      : memref<?x8xf32> -> memref<?x8xf32>
  return
}
)mlir";

/// A float32 view of `count` elements of `base`, starting `offset` elements in: tensors of one
/// allocation that overlap however a test needs.
struct View {
  View(std::vector<float>& base, size_t offset, std::vector<int64_t> dims)
      : shape(std::move(dims)) {
    tensor.data = base.data();
    tensor.byte_offset = offset * sizeof(float);
    tensor.device = {kDLCPU, 0};
    tensor.ndim = static_cast<int32_t>(shape.size());
    tensor.dtype = {kDLFloat, 32, 1};
    tensor.shape = shape.data();
  }
  tessera_jit_arg_t arg() const { return ::tessera::testing::TensorArg(&tensor); }
  std::vector<int64_t> shape;
  DLTensor tensor{};
};

std::vector<float> Ramp(size_t count, float scale) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = scale * static_cast<float>((i * 7) % 11) - 2.0f;
  return values;
}

class ArgumentOverlapTest : public CompiledModuleTest {
 protected:
  ArgumentOverlapTest() : CompiledModuleTest(kSource) {}

  Error Invoke(const char* name, std::vector<tessera_jit_arg_t> args) {
    return Error(
        tessera_jit_function_invoke(Function(name), args.data(), args.size(), nullptr, nullptr));
  }
  void Run(const char* name, std::vector<tessera_jit_arg_t> args) {
    Error error = Invoke(name, std::move(args));
    ASSERT_EQ(error.code(), TESSERA_JIT_OK) << name << ": " << error.message();
  }
};

TEST_F(ArgumentOverlapTest, MapComputesInPlaceOverTheSameBuffer) {
  std::vector<float> buffer = Ramp(1000, 0.5f);
  const std::vector<float> before = buffer;
  View x(buffer, 0, {1000}), y(buffer, 0, {1000});
  Error error = Invoke("twice_plus_one", {x.arg(), y.arg()});
  ASSERT_EQ(error.code(), TESSERA_JIT_OK) << error.message();
  for (size_t i = 0; i < buffer.size(); ++i) {
    ASSERT_EQ(buffer[i], before[i] + before[i] + 1.0f) << i;
  }
}

TEST_F(ArgumentOverlapTest, MapRefusesAnOutputShiftedOverItsInput) {
  std::vector<float> buffer = Ramp(1001, 0.5f);
  const std::vector<float> before = buffer;
  for (size_t shift : {1, 999}) {
    View x(buffer, 0, {1000}), y(buffer, shift, {1000});
    Error error = Invoke("twice_plus_one", {x.arg(), y.arg()});
    EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT);
    EXPECT_THAT(error.message(),
                AllOf(HasSubstr("@twice_plus_one: argument #1 'y' (written) overlaps argument #0 "
                                "'x'"),
                      HasSubstr("tile.map at <source>:3:3 writes one while it reads the other, "
                                "element by element"),
                      HasSubstr("pass the same buffer or disjoint ones")));
    // Refused before anything ran.
    EXPECT_EQ(buffer, before);
  }
}

TEST_F(ArgumentOverlapTest, SoftmaxAndRopeComputeInPlaceAsOutOfPlace) {
  // Softmax reads each row (its maximum, its sum) before writing it; rope rotates each pair of
  // features from both of its inputs. In place gives the bits of disjoint buffers.
  std::vector<float> rows = Ramp(2 * 7 * 300, 0.25f);
  View x(rows, 0, {7, 300}), y(rows, 7 * 300, {7, 300});
  Run("softmax_rows", {x.arg(), y.arg()});
  std::vector<float> in_place(rows.begin(), rows.begin() + 7 * 300);
  View same(in_place, 0, {7, 300});
  Run("softmax_rows", {same.arg(), same.arg()});
  EXPECT_TRUE(std::equal(in_place.begin(), in_place.end(), rows.begin() + 7 * 300));

  std::vector<float> tables = Ramp(3 * 5 * 16, 0.125f);  // cos, sin, then room for an output
  View cos(tables, 0, {5, 8}), sin(tables, 40, {5, 8});
  std::vector<float> features = Ramp(2 * 3 * 5 * 16, 0.5f);
  View fx(features, 0, {3, 5, 16}), fy(features, 3 * 5 * 16, {3, 5, 16});
  Run("rotate", {fx.arg(), cos.arg(), sin.arg(), fy.arg()});
  std::vector<float> rotated(features.begin(), features.begin() + 3 * 5 * 16);
  View fsame(rotated, 0, {3, 5, 16});
  Run("rotate", {fsame.arg(), cos.arg(), sin.arg(), fsame.arg()});
  EXPECT_TRUE(std::equal(rotated.begin(), rotated.end(), features.begin() + 3 * 5 * 16));
  // Rope's output over its tables is refused: every row reads them.
  View over_cos(tables, 0, {3, 5, 16});
  Error refused = Invoke("rotate", {fx.arg(), cos.arg(), sin.arg(), over_cos.arg()});
  EXPECT_EQ(refused.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(refused.message(), HasSubstr("argument #3 'y' (written) overlaps argument #1 'cos'"));
}

TEST_F(ArgumentOverlapTest, MapRefusesTheSameBytesAsOtherElements) {
  // A 1 x 8 f32 input broadcast over a 2 x 8 f16 output spans the same 32 bytes, but row 1
  // would read what row 0 wrote: not the same buffer.
  std::vector<float> buffer = Ramp(8, 1.0f);
  const std::vector<float> before = buffer;
  View x(buffer, 0, {1, 8}), y(buffer, 0, {2, 8});
  y.tensor.dtype = {kDLFloat, 16, 1};
  Error error = Invoke("widen_rows", {x.arg(), y.arg()});
  EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(error.message(), HasSubstr("argument #1 'y' (written) spans the bytes, as other "
                                         "elements, of argument #0 'x'"));
  EXPECT_EQ(buffer, before);
}

TEST_F(ArgumentOverlapTest, AdjacentAndEmptyTensorsDoNotOverlap) {
  std::vector<float> buffer = Ramp(200, 0.25f);
  const std::vector<float> before = buffer;
  View x(buffer, 0, {100}), y(buffer, 100, {100});
  Error adjacent = Invoke("twice_plus_one", {x.arg(), y.arg()});
  ASSERT_EQ(adjacent.code(), TESSERA_JIT_OK) << adjacent.message();
  for (size_t i = 0; i < 100; ++i) ASSERT_EQ(buffer[100 + i], before[i] + before[i] + 1.0f);
  // Empty tensors span no byte, wherever they point.
  View empty_x(buffer, 3, {0}), empty_y(buffer, 5, {0});
  Error empty = Invoke("twice_plus_one", {empty_x.arg(), empty_y.arg()});
  EXPECT_EQ(empty.code(), TESSERA_JIT_OK) << empty.message();
}

TEST_F(ArgumentOverlapTest, MatmulRefusesCSharingMemoryWithAOrB) {
  constexpr int64_t n = 24;
  std::vector<float> buffer = Ramp(3 * n * n, 0.125f);
  const std::vector<float> before = buffer;
  View a(buffer, 0, {n, n}), b(buffer, n * n, {n, n}), r(buffer, 2 * n * n, {n, n});
  struct Case {
    size_t c_offset;
    const char* expected;
  } cases[] = {
      {0, "argument #3 'c' (written) is the same buffer as argument #0 'a'"},
      {n * n, "argument #3 'c' (written) is the same buffer as argument #1 'b'"},
      {n * n / 2, "argument #3 'c' (written) overlaps argument #0 'a'"},
      {n * n + 1, "argument #3 'c' (written) overlaps argument #1 'b'"},
  };
  for (const Case& c : cases) {
    View out(buffer, c.c_offset, {n, n});
    Error error = Invoke("matmul_residual", {a.arg(), b.arg(), r.arg(), out.arg()});
    EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT) << c.expected;
    EXPECT_THAT(error.message(),
                AllOf(HasSubstr(c.expected),
                      HasSubstr("tile.matmul at <source>:15:3 writes one while it reads the other; "
                                "pass a buffer of its own")));
    EXPECT_EQ(buffer, before);
  }
}

TEST_F(ArgumentOverlapTest, MatmulAccumulatesIntoItsResidual) {
  // C = A·B + C, as BLAS's beta = 1: the residual is read element by element before C is
  // written. Odd sizes reach every kernel's edges (and the shifted last panels).
  constexpr int64_t m = 29, k = 50, n = 70;
  std::vector<float> buffer = Ramp(m * k + k * n + m * n, 0.0625f);
  const std::vector<float> before = buffer;
  View a(buffer, 0, {m, k}), b(buffer, m * k, {k, n}), c(buffer, m * k + k * n, {m, n});
  Error error = Invoke("matmul_residual", {a.arg(), b.arg(), c.arg(), c.arg()});
  ASSERT_EQ(error.code(), TESSERA_JIT_OK) << error.message();
  const float* pa = before.data();
  const float* pb = pa + m * k;
  const float* pr = pb + k * n;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      // The f32 policy: each product rounded, then added, K ascending; then the residual.
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        const float product = pa[i * k + p] * pb[p * n + j];
        sum += product;
      }
      sum += pr[i * n + j];
      ASSERT_EQ(buffer[m * k + k * n + i * n + j], sum) << i << ", " << j;
    }
  }
}

TEST_F(ArgumentOverlapTest, NormRefusesOneBufferForBothOutputs) {
  std::vector<float> buffer = Ramp(4 * 8 * 3, 0.5f);
  View x(buffer, 0, {4, 8}), r(buffer, 32, {4, 8}), out(buffer, 64, {4, 8});
  Error error = Invoke("rms_residual", {x.arg(), r.arg(), out.arg(), out.arg()});
  EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(error.message(),
              AllOf(HasSubstr("argument #2 'y' (written) is the same buffer as argument #3 'h'"),
                    HasSubstr("tile.norm at <source>:43:3 writes both")));
  // Input + residual written over the input, the output over the residual: element by element.
  std::vector<float> disjoint = Ramp(4 * 8 * 4, 0.5f);
  View dx(disjoint, 0, {4, 8}), dr(disjoint, 32, {4, 8}), dy(disjoint, 64, {4, 8}),
      dh(disjoint, 96, {4, 8});
  Error reference = Invoke("rms_residual", {dx.arg(), dr.arg(), dy.arg(), dh.arg()});
  ASSERT_EQ(reference.code(), TESSERA_JIT_OK) << reference.message();
  std::vector<float> in_place = Ramp(4 * 8 * 4, 0.5f);
  View px(in_place, 0, {4, 8}), pr(in_place, 32, {4, 8});
  Error shared = Invoke("rms_residual", {px.arg(), pr.arg(), pr.arg(), px.arg()});
  ASSERT_EQ(shared.code(), TESSERA_JIT_OK) << shared.message();
  for (size_t i = 0; i < 32; ++i) {
    EXPECT_EQ(in_place[i], disjoint[96 + i]) << i;       // h over x
    EXPECT_EQ(in_place[32 + i], disjoint[64 + i]) << i;  // y over r
  }
}

TEST_F(ArgumentOverlapTest, PackagesKeepTheRules) {
  const char* data = nullptr;
  size_t size = 0;
  ASSERT_OK(tessera_jit_module_get_text(module_, TESSERA_JIT_TEXT_PACKAGE, &data, &size));
  tessera_jit_module_t* loaded = nullptr;
  ASSERT_OK(tessera_jit_module_load(context_, data, size, "host", nullptr, &loaded));
  tessera_jit_function_t* function = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(loaded, "twice_plus_one", 14, &function));
  std::vector<float> buffer = Ramp(101, 1.0f);
  View x(buffer, 0, {100}), y(buffer, 1, {100});
  tessera_jit_arg_t args[] = {x.arg(), y.arg()};
  Error error(tessera_jit_function_invoke(function, args, 2, nullptr, nullptr));
  EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(error.message(), HasSubstr("argument #1 'y' (written) overlaps argument #0 'x'"));
  tessera_jit_module_destroy(loaded);
}

/// Compiles `source` on a fresh host context; returns the compile's error.
Error Compile(const std::string& source) {
  tessera_jit_context_t* context = MemoryOnlyHostContext();
  tessera_jit_module_t* module = nullptr;
  Error error(tessera_jit_compile(context, source.data(), source.size(), nullptr, &module));
  tessera_jit_module_destroy(module);
  tessera_jit_context_destroy(context);
  return error;
}

TEST(ArgumentOverlapCompileTest, OneArgumentPassedForAReadAndAWrittenOperandIsRefused) {
  Error error = Compile(R"mlir(
func.func private @product(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  tile.matmul %a, %b -> %c : memref<8x8xf32>, memref<8x8xf32> -> memref<8x8xf32>
  return
}
func.func @square_in_place(%x: memref<8x8xf32>) {
  func.call @product(%x, %x, %x) : (memref<8x8xf32>, memref<8x8xf32>, memref<8x8xf32>) -> ()
  return
}
)mlir");
  EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(error.message(),
              AllOf(HasSubstr("<source>:3:3: error: 'tile.matmul' writes argument #0 'x' of "
                              "@square_in_place while it reads it as another operand"),
                    HasSubstr("must be a buffer of its own")));
}

TEST(ArgumentOverlapCompileTest, OneAllocationPassedForTwoOutputsIsRefused) {
  Error error = Compile(R"mlir(
func.func private @norm(%x: memref<4x8xf32>, %r: memref<4x8xf32>, %y: memref<4x8xf32>,
                        %h: memref<4x8xf32>) {
  tile.norm rms %x residual(%r : memref<4x8xf32>) -> %y residual_out(%h : memref<4x8xf32>)
      : memref<4x8xf32> -> memref<4x8xf32>
  return
}
func.func @f(%x: memref<4x8xf32>, %r: memref<4x8xf32>) {
  %t = memref.alloc() : memref<4x8xf32>
  func.call @norm(%x, %r, %t, %t)
      : (memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>) -> ()
  memref.dealloc %t : memref<4x8xf32>
  return
}
)mlir");
  EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(error.message(),
              HasSubstr("'tile.norm' writes the buffer of 'memref.alloc' at <source>:9:8 through "
                        "two of its operands"));
}

TEST(ArgumentOverlapCompileTest, ElementwiseOperandsMayBeOneArgument) {
  Error error = Compile(R"mlir(
func.func private @scale(%x: memref<?xf32>, %y: memref<?xf32>) {
  tile.map ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%a: f32):
    %r = arith.addf %a, %a : f32
    tile.yield %r : f32
  }
  return
}
func.func @f(%x: memref<?xf32>) {
  func.call @scale(%x, %x) : (memref<?xf32>, memref<?xf32>) -> ()
  return
}
)mlir");
  EXPECT_EQ(error.code(), TESSERA_JIT_OK) << error.message();
}

}  // namespace
