// Background decisions at the C API (TESSERA_JIT_BACKGROUND_DECISIONS): compile returns with the
// incumbent, a worker measures, the measured module swaps in at the next invoke (results stay
// the reference's throughout), the state of each decision can be read and waited for, and a
// deterministic function is decided at compile unless swaps are allowed there.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "capi_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera_jit.h"

namespace tessera::testing {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

constexpr char kMatmul[] = R"(
func.func @mm(%a: memref<48x40xf32>, %b: memref<40x32xf32>, %c: memref<48x32xf32>) {
  tile.matmul %a, %b -> %c : memref<48x40xf32>, memref<40x32xf32> -> memref<48x32xf32>
  return
}
func.func @mm_exact(%a: memref<48x40xf32>, %b: memref<40x32xf32>, %c: memref<48x32xf32>)
    attributes {tessera.deterministic} {
  tile.matmul %a, %b -> %c : memref<48x40xf32>, memref<40x32xf32> -> memref<48x32xf32>
  return
}
)";

/// A memory-only host context with OpenBLAS registered: the matmul has a contest.
tessera_jit_context_t* ContestContext() {
  tessera_jit_context_t* context = MemoryOnlyHostContext();
  if (context != nullptr) {
    Error registered(tessera_jit_context_register_default_libraries(context, "host"));
    EXPECT_EQ(registered.code(), TESSERA_JIT_OK) << registered.message();
  }
  return context;
}

tessera_jit_decision_info_t Decision(tessera_jit_module_t* module, size_t index) {
  tessera_jit_decision_info_t info{};
  info.struct_size = sizeof(info);
  Error error(tessera_jit_module_get_decision(module, index, &info));
  EXPECT_EQ(error.code(), TESSERA_JIT_OK) << error.message();
  return info;
}

/// Runs `entry` on fixed inputs and checks C against a double-precision reference.
void ExpectTheProduct(tessera_jit_module_t* module, const char* entry) {
  tessera_jit_function_t* function = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(module, entry, std::strlen(entry), &function));
  Tensor a({48, 40}), b({40, 32}), c({48, 32}, -7.0f);
  for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = std::sin(0.1f * i);
  for (size_t i = 0; i < b.data.size(); ++i) b.data[i] = std::cos(0.3f * i);
  tessera_jit_arg_t args[] = {a.arg(), b.arg(), c.arg()};
  ASSERT_OK(tessera_jit_function_invoke(function, args, 3, nullptr, nullptr));
  double worst = 0;
  for (int i = 0; i < 48; ++i) {
    for (int j = 0; j < 32; ++j) {
      double ref = 0;
      for (int k = 0; k < 40; ++k) ref += double{a.data[i * 40 + k]} * b.data[k * 32 + j];
      worst = std::max(worst, std::fabs(c.data[i * 32 + j] - ref));
    }
  }
  EXPECT_LE(worst, 1e-4) << entry;
}

TEST(BackgroundDecisionsTest, TheIncumbentServesUntilTheMeasuredModuleSwapsIn) {
  tessera_jit_context_t* context = ContestContext();
  ASSERT_NE(context, nullptr);
  tessera_jit_compile_options_t options;
  tessera_jit_compile_options_init(&options);
  options.flags = TESSERA_JIT_BACKGROUND_DECISIONS;
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context, kMatmul, sizeof(kMatmul) - 1, &options, &module));
  ASSERT_EQ(tessera_jit_module_get_decision_count(module), 2u);
  // Nothing swaps before an invoke or a query: the compile's own records.
  const std::string compiled = Text(module, TESSERA_JIT_TEXT_DECISIONS);
  EXPECT_THAT(compiled, HasSubstr("\"source\": \"pending\""));
  EXPECT_THAT(compiled, HasSubstr("incumbent while the decision is measured in the background"));
  // A pending decision is not in the module's plan.
  EXPECT_THAT(Text(module, TESSERA_JIT_TEXT_PLAN), ::testing::Not(HasSubstr("\"mm\"")));

  // @mm: pending (or, on a fast machine, already swapped in); the incumbent is the compiled
  // lowering.
  tessera_jit_decision_info_t first = Decision(module, 0);
  EXPECT_STREQ(first.op, "tile.matmul");
  EXPECT_STREQ(first.function, "mm");
  EXPECT_THAT(first.state, AnyOf(TESSERA_JIT_DECISION_PENDING, TESSERA_JIT_DECISION_DECIDED));
  if (first.state == TESSERA_JIT_DECISION_PENDING) {
    EXPECT_STREQ(first.serving, "compiled");
    EXPECT_STREQ(first.winner, "");
  }
  // @mm_exact is deterministic: decided at compile, and says why.
  tessera_jit_decision_info_t exact = Decision(module, 1);
  EXPECT_EQ(exact.state, TESSERA_JIT_DECISION_DECIDED);
  EXPECT_THAT(exact.detail, HasSubstr("background decisions are off in a deterministic function"));

  // Invokes meanwhile compute the product (whoever serves).
  ExpectTheProduct(module, "mm");
  size_t pending = 99;
  ASSERT_OK(tessera_jit_module_wait_decisions(module, -1, &pending));
  EXPECT_EQ(pending, 0u);
  tessera_jit_decision_info_t landed = Decision(module, 0);
  EXPECT_EQ(landed.state, TESSERA_JIT_DECISION_DECIDED);
  EXPECT_STREQ(landed.detail, "measured in the background and swapped in");
  EXPECT_THAT(std::string(landed.winner), AnyOf("compiled", "openblas"));
  EXPECT_STREQ(landed.serving, landed.winner);
  const std::string measured = Text(module, TESSERA_JIT_TEXT_DECISIONS);
  EXPECT_THAT(measured, ::testing::Not(HasSubstr("\"source\": \"pending\"")));
  EXPECT_THAT(measured, HasSubstr("\"source\": \"measured\""));
  EXPECT_THAT(Text(module, TESSERA_JIT_TEXT_PLAN), HasSubstr("\"function\": \"mm\""));
  // The function handed out before the swap and one looked up after both run the measured code.
  ExpectTheProduct(module, "mm");
  ExpectTheProduct(module, "mm_exact");
  tessera_jit_module_destroy(module);

  // The next compile finds the measured module and the decisions: nothing pending.
  ASSERT_OK(tessera_jit_compile(context, kMatmul, sizeof(kMatmul) - 1, &options, &module));
  EXPECT_EQ(Decision(module, 0).state, TESSERA_JIT_DECISION_DECIDED);
  EXPECT_STREQ(Decision(module, 0).detail, "decided at compile");
  ASSERT_OK(tessera_jit_module_wait_decisions(module, 0, &pending));
  EXPECT_EQ(pending, 0u);
  tessera_jit_module_destroy(module);
  tessera_jit_context_destroy(context);
}

TEST(BackgroundDecisionsTest, ADeterministicFunctionSwapsOnlyWhenAllowed) {
  tessera_jit_context_t* context = ContestContext();
  ASSERT_NE(context, nullptr);
  tessera_jit_compile_options_t options;
  tessera_jit_compile_options_init(&options);
  options.flags = TESSERA_JIT_BACKGROUND_DECISIONS | TESSERA_JIT_BACKGROUND_DETERMINISTIC;
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context, kMatmul, sizeof(kMatmul) - 1, &options, &module));
  const std::string compiled = Text(module, TESSERA_JIT_TEXT_DECISIONS);
  // Both functions' decisions are left to the background.
  size_t pending_records = 0;
  for (size_t at = compiled.find("\"source\": \"pending\""); at != std::string::npos;
       at = compiled.find("\"source\": \"pending\"", at + 1)) {
    ++pending_records;
  }
  EXPECT_EQ(pending_records, 2u);
  ASSERT_OK(tessera_jit_module_wait_decisions(module, -1, nullptr));
  EXPECT_EQ(Decision(module, 1).state, TESSERA_JIT_DECISION_DECIDED);
  EXPECT_STREQ(Decision(module, 1).detail, "measured in the background and swapped in");
  ExpectTheProduct(module, "mm_exact");
  tessera_jit_module_destroy(module);
  tessera_jit_context_destroy(context);
}

TEST(BackgroundDecisionsTest, HostileCallsAndDestroyWhilePending) {
  tessera_jit_context_t* context = ContestContext();
  ASSERT_NE(context, nullptr);
  EXPECT_EQ(tessera_jit_module_get_decision_count(nullptr), 0u);
  Error null_module(tessera_jit_module_get_decision(nullptr, 0, nullptr));
  EXPECT_EQ(null_module.code(), TESSERA_JIT_INVALID_ARGUMENT);
  Error null_wait(tessera_jit_module_wait_decisions(nullptr, 0, nullptr));
  EXPECT_EQ(null_wait.code(), TESSERA_JIT_INVALID_ARGUMENT);
  {
    // The longest waits are no limit (never an overflow of the clock).
    tessera_jit_compile_options_t background;
    tessera_jit_compile_options_init(&background);
    background.flags = TESSERA_JIT_BACKGROUND_DECISIONS;
    background.arbitration_budget_ms = 20;
    const std::string source = std::string(kMatmul) + "func.func @longest() { return }\n";
    tessera_jit_module_t* module = nullptr;
    ASSERT_OK(tessera_jit_compile(context, source.data(), source.size(), &background, &module));
    size_t pending = 99;
    ASSERT_OK(tessera_jit_module_wait_decisions(module, INT64_MAX, &pending));
    EXPECT_EQ(pending, 0u);
    ASSERT_OK(tessera_jit_module_wait_decisions(module, INT64_MIN, &pending));
    EXPECT_EQ(pending, 0u);
    tessera_jit_module_destroy(module);
  }

  tessera_jit_compile_options_t options;
  tessera_jit_compile_options_init(&options);
  options.flags = TESSERA_JIT_BACKGROUND_DETERMINISTIC;  // alone, it means nothing
  tessera_jit_module_t* refused = nullptr;
  Error alone(tessera_jit_compile(context, kMatmul, sizeof(kMatmul) - 1, &options, &refused));
  EXPECT_THAT(alone.message(), HasSubstr("TESSERA_JIT_BACKGROUND_DETERMINISTIC needs "
                                         "TESSERA_JIT_BACKGROUND_DECISIONS"));
  EXPECT_EQ(refused, nullptr);
  options.flags = TESSERA_JIT_BACKGROUND_DECISIONS;
  options.arbitration_budget_ms = 50;
  // Several modules queued, destroyed at once (pending or measuring); then one more whose
  // invokes race the swap from several threads.
  for (int i = 0; i < 3; ++i) {
    const std::string source =
        std::string(kMatmul) + "func.func @other" + std::to_string(i) + "() { return }\n";
    tessera_jit_module_t* module = nullptr;
    ASSERT_OK(tessera_jit_compile(context, source.data(), source.size(), &options, &module));
    tessera_jit_decision_info_t short_info{};
    short_info.struct_size = sizeof(size_t);
    Error too_short(tessera_jit_module_get_decision(module, 0, &short_info));
    EXPECT_THAT(too_short.message(), HasSubstr("tessera_jit_decision_info_t"));
    tessera_jit_decision_info_t info{};
    info.struct_size = sizeof(info);
    Error out_of_range(tessera_jit_module_get_decision(module, 2, &info));
    EXPECT_THAT(out_of_range.message(), HasSubstr("the module has 2 decision(s); index 2"));
    Error no_info(tessera_jit_module_get_decision(module, 0, nullptr));
    EXPECT_EQ(no_info.code(), TESSERA_JIT_INVALID_ARGUMENT);
    tessera_jit_module_destroy(module);
  }
  const std::string source = std::string(kMatmul) + "func.func @racing() { return }\n";
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context, source.data(), source.size(), &options, &module));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([module] {
      for (int i = 0; i < 20; ++i) ExpectTheProduct(module, "mm");
    });
  }
  for (std::thread& thread : threads) thread.join();
  tessera_jit_module_destroy(module);
  // A context destroyed with a module still being measured waits for the worker.
  ASSERT_OK(tessera_jit_compile(context, source.data(), source.size(), &options, &module));
  tessera_jit_module_destroy(module);
  tessera_jit_context_destroy(context);
}

}  // namespace
}  // namespace tessera::testing
