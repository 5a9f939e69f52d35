// Results of host code are bitwise identical for every thread count (1, 2, 3, 8) and every
// batch size (1, 7, 64, 257), for map, reduce, softmax, matmul, norm, argmax and causal
// attention (whose batch is its sequence): the parallel loops split only the independent outer
// iterations, never the order in which one output element is accumulated. Each Tile op runs on
// pools of each size; row i of a batch must equal row i of every other batch and thread count, and
// the 8-thread pool must really have split the loops (which thread runs a chunk is timing; that
// chunks do run concurrently on workers is ThreadPoolTest's).
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "jit/compiler.h"
#include "runtime/thread_pool.h"
#include "tests/jit/host_tensor.h"

namespace tessera::jit {
namespace {

using ::tessera::testing::FillUniform;
using ::tessera::testing::HostTensor;

constexpr int64_t kCols = 1000;  // not a multiple of the lanes or the column block
constexpr int64_t kMaxBatch = 257;

struct Case {
  std::string name;
  std::string source;
  int64_t output_cols;            // per batch row
  bool batch_is_reduced = false;  // axis-0 reduce: the output is one row over the batch
  bool as_sequence = false;       // x is [1, 1, batch, kCols]: Q, K and V of causal attention
};

std::vector<Case> Cases() {
  return {
      {"map", R"mlir(
func.func @f(%x: memref<?x1000xf32>, %y: memref<?x1000xf32>) {
  tile.map ins(%x : memref<?x1000xf32>) outs(%y : memref<?x1000xf32>) {
  ^bb0(%v: f32):
    %t = math.tanh %v : f32
    %e = math.exp %v : f32
    %r = arith.addf %t, %e : f32
    tile.yield %r : f32
  }
  return
}
)mlir",
       kCols},
      {"reduce_rows", R"mlir(
func.func @f(%x: memref<?x1000xf32>, %y: memref<?xf32>) {
  tile.reduce sum %x -> %y axis = 1 : memref<?x1000xf32> -> memref<?xf32>
  return
}
)mlir",
       1},
      {"reduce_columns", R"mlir(
func.func @f(%x: memref<?x1000xf32>, %y: memref<1000xf32>) {
  tile.reduce sum %x -> %y axis = 0 : memref<?x1000xf32> -> memref<1000xf32>
  return
}
)mlir",
       kCols, true},
      {"softmax", R"mlir(
func.func @f(%x: memref<?x1000xf32>, %y: memref<?x1000xf32>) {
  tile.softmax %x -> %y : memref<?x1000xf32> -> memref<?x1000xf32>
  return
}
)mlir",
       kCols},
      {"matmul", R"mlir(
func.func @f(%x: memref<?x1000xf32>, %w: memref<1000x96xf32>, %b: memref<96xf32>, %y: memref<?x96xf32>) {
  tile.matmul %x, %w -> %y bias(%b : memref<96xf32>) activation(gelu) : memref<?x1000xf32>, memref<1000x96xf32> -> memref<?x96xf32>
  return
}
)mlir",
       96},
      {"norm", R"mlir(
func.func @f(%x: memref<?x1000xf32>, %y: memref<?x1000xf32>) {
  tile.norm layer %x -> %y : memref<?x1000xf32> -> memref<?x1000xf32>
  return
}
)mlir",
       kCols},
      // The indices are i32: 4 bytes per output like the f32 buffer that receives them.
      {"argmax", R"mlir(
func.func @f(%x: memref<?x1000xf32>, %y: memref<?xi32>) {
  tile.reduce argmax %x -> %y axis = 1 : memref<?x1000xf32> -> memref<?xi32>
  return
}
)mlir",
       1},
      // Causal: query i sees keys 0..i, the same keys in every batch that holds row i.
      {"causal_attention", R"mlir(
func.func @f(%q: memref<1x1x?x1000xf32>, %k: memref<1x1x?x1000xf32>, %v: memref<1x1x?x1000xf32>, %o: memref<1x1x?x1000xf32>) {
  tile.attention %q, %k, %v -> %o scale(0.01) causal : memref<1x1x?x1000xf32>, memref<1x1x?x1000xf32>, memref<1x1x?x1000xf32> -> memref<1x1x?x1000xf32>
  return
}
)mlir",
       kCols, false, true},
  };
}

class ParallelDeterminismTest : public ::testing::TestWithParam<Case> {};

TEST_P(ParallelDeterminismTest, BitwiseIdenticalForEveryThreadCountAndBatch) {
  const Case& c = GetParam();
  CompileOptions options;
  options.target = Target::kHost;
  auto module = Compile(c.source, options);
  ASSERT_TRUE(module.ok()) << module.status();
  auto entry = (*module)->host->Lookup("f");
  ASSERT_TRUE(entry.ok()) << entry.status();

  std::vector<float> input(kMaxBatch * kCols);
  FillUniform(input, 11, -4.0f, 4.0f);
  HostTensor<float> weights({kCols, 96}), bias({96});
  FillUniform(weights.data(), 12);
  FillUniform(bias.data(), 13);

  std::vector<uint32_t> reference;  // 1 thread, for each batch: the output bits
  int64_t split_loops = 0;
  for (int threads : {1, 2, 3, 8}) {
    runtime::ThreadPool pool(threads);
    runtime::ScopedThreadPool scope(&pool);
    std::vector<std::vector<uint32_t>> by_batch;
    for (int64_t batch : {int64_t{1}, int64_t{7}, int64_t{64}, kMaxBatch}) {
      HostTensor<float> x(c.as_sequence ? std::vector<int64_t>{1, 1, batch, kCols}
                                        : std::vector<int64_t>{batch, kCols});
      std::memcpy(x.data().data(), input.data(), sizeof(float) * x.size());
      const int64_t rows = c.batch_is_reduced ? 1 : batch;
      HostTensor<float> y(c.as_sequence        ? std::vector<int64_t>{1, 1, batch, kCols}
                          : c.output_cols == 1 ? std::vector<int64_t>{rows}
                          : c.batch_is_reduced ? std::vector<int64_t>{c.output_cols}
                                               : std::vector<int64_t>{rows, c.output_cols});
      std::vector<void*> args{x.descriptor()};
      if (c.as_sequence) {
        args.push_back(x.descriptor());
        args.push_back(x.descriptor());
      }
      if (c.name == "matmul") {
        args.push_back(weights.descriptor());
        args.push_back(bias.descriptor());
      }
      args.push_back(y.descriptor());
      (*entry)(args.data());
      std::vector<uint32_t> bits(y.size());
      std::memcpy(bits.data(), y.data().data(), sizeof(float) * y.size());
      by_batch.push_back(bits);
    }
    // Across batches: the rows a smaller batch computes are the same bits in a larger one
    // (an axis-0 reduction sums a different batch, so only thread counts are compared).
    if (!c.batch_is_reduced) {
      const std::vector<uint32_t>& largest = by_batch.back();
      for (const auto& smaller : by_batch) {
        for (size_t i = 0; i < smaller.size(); ++i) {
          ASSERT_EQ(smaller[i], largest[i]) << c.name << ", " << threads << " threads, element "
                                            << i << " of a batch of " << smaller.size();
        }
      }
    }
    std::vector<uint32_t> all;
    for (const auto& bits : by_batch) all.insert(all.end(), bits.begin(), bits.end());
    if (threads == 1) {
      reference = all;
    } else {
      ASSERT_EQ(all.size(), reference.size());
      for (size_t i = 0; i < all.size(); ++i) {
        ASSERT_EQ(all[i], reference[i])
            << c.name << ": " << threads << " threads differ from 1 thread at element " << i;
      }
    }
    if (threads == 8) split_loops = pool.split_loops();
  }
  // Not vacuous: the larger batches were split into chunks for the 8-thread pool.
  EXPECT_GT(split_loops, 0) << c.name;
}

INSTANTIATE_TEST_SUITE_P(EveryTileOp, ParallelDeterminismTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

TEST(ThreadPoolTest, ConcurrentCallersShareOnePoolAndCoverEveryIteration) {
  runtime::ThreadPool pool(3);
  constexpr int64_t kIterations = 1 << 16;
  std::vector<std::vector<int>> hits(4, std::vector<int>(kIterations, 0));
  auto body = [](void* context, int64_t begin, int64_t end) {
    auto* counts = static_cast<std::vector<int>*>(context);
    for (int64_t i = begin; i < end; ++i) ++(*counts)[static_cast<size_t>(i)];
  };
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int repeat = 0; repeat < 20; ++repeat) {
        pool.ParallelFor(body, &hits[t], 0, kIterations, 1);
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  for (const auto& counts : hits) {
    for (int count : counts) ASSERT_EQ(count, 20);
  }
}

// Two chunks of one loop run at the same time on two threads: chunk 0 waits until chunk 1 has
// run, so whichever thread takes chunk 0 (the caller or a worker), another thread must run
// chunk 1 — deterministic, whatever the timing.
TEST(ThreadPoolTest, ChunksRunConcurrentlyOnWorkers) {
  runtime::ThreadPool pool(2);
  ASSERT_EQ(pool.threads(), 2);  // else chunk 0 would wait forever for a worker
  std::atomic<bool> second_ran{false};
  auto body = [](void* context, int64_t begin, int64_t) {
    auto* flag = static_cast<std::atomic<bool>*>(context);
    if (begin == 0) {
      while (!flag->load()) std::this_thread::yield();
    } else {
      flag->store(true);
    }
  };
  pool.ParallelFor(body, &second_ran, 0, 2, runtime::ThreadPool::kMinChunkWork);
  EXPECT_TRUE(second_ran.load());
  EXPECT_EQ(pool.split_loops(), 1);
  EXPECT_EQ(pool.worker_chunks(), 1);
}

}  // namespace
}  // namespace tessera::jit
