// The threads JIT'd host code runs its parallel loops on. The host lowering outlines the outer
// loop of each Tile op (rows, output tiles, column blocks) and calls tessera_rt_parallel_for,
// which splits the iterations into contiguous chunks across the current pool. Every output
// element is computed by one chunk in a fixed order, so results are bitwise identical for
// every thread count and partition.
#ifndef TESSERA_RUNTIME_THREAD_POOL_H_
#define TESSERA_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/host_executable.h"

namespace tessera::runtime {

/// The symbol outlined loops call:
/// `void tessera_rt_parallel_for(void (*body)(void* context, int64_t begin, int64_t end),
///                               void* context, int64_t begin, int64_t end, int64_t cost)`,
/// where `cost` estimates the elements one iteration touches.
inline constexpr char kParallelForSymbol[] = "tessera_rt_parallel_for";

using LoopBody = void (*)(void* context, int64_t begin, int64_t end);

/// `threads` − 1 worker threads plus the calling thread. Thread-safe: any number of threads
/// may run ParallelFor at once (a caller executes its own chunks and helps with nobody else's,
/// so nested or concurrent use cannot deadlock).
class ThreadPool {
 public:
  /// `threads` is clamped to [1, 1024]. When the system refuses a thread, the pool keeps the
  /// ones it has (threads() says how many): a smaller pool computes the same results.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return threads_; }

  /// Runs body(context, b, e) over [begin, end) split into contiguous chunks: one per thread
  /// at most, and none smaller than kMinChunkWork elements of `cost` each. Returns when all
  /// chunks are done. `body` must not throw.
  void ParallelFor(LoopBody body, void* context, int64_t begin, int64_t end, int64_t cost);

  /// Chunks run by worker threads (not the caller) since the pool started. How many depends on
  /// timing: a caller may finish every chunk before a worker wakes.
  int64_t worker_chunks() const { return worker_chunks_.load(std::memory_order_relaxed); }

  /// ParallelFor calls split into more than one chunk since the pool started.
  int64_t split_loops() const { return split_loops_.load(std::memory_order_relaxed); }

  /// Elements below which splitting off another chunk costs more than it saves.
  static constexpr int64_t kMinChunkWork = 1 << 15;

 private:
  struct Batch;
  void Work();
  static void RunChunks(Batch& batch, std::atomic<int64_t>* counter);

  int threads_;
  std::mutex mutex_;
  std::condition_variable work_available_;
  std::condition_variable batch_released_;
  std::deque<Batch*> queue_;
  bool stopping_ = false;
  std::atomic<int64_t> worker_chunks_{0};
  std::atomic<int64_t> split_loops_{0};
  std::vector<std::thread> workers_;
};

/// The threads the process may run on (its CPU affinity), at least 1.
int AvailableCores();

/// The default thread count: $TESSERA_JIT_NUM_THREADS when it is a number in [1, 1024], else
/// AvailableCores().
int DefaultThreadCount();

/// The pool of DefaultThreadCount() threads, created on first use.
ThreadPool& DefaultThreadPool();

/// While alive, parallel loops run on this thread use `pool` (e.g. a context's own pool).
class ScopedThreadPool {
 public:
  explicit ScopedThreadPool(ThreadPool* pool);
  ~ScopedThreadPool();
  ScopedThreadPool(const ScopedThreadPool&) = delete;
  ScopedThreadPool& operator=(const ScopedThreadPool&) = delete;

 private:
  ThreadPool* previous_;
};

/// Runs task(0) … task(count − 1) on this thread's pool (the enclosing ScopedThreadPool's, else
/// the default one), up to one task per thread at a time, and returns when all are done;
/// inline, in order, inside a chunk of another parallel loop. For coarse independent work
/// (each task is one chunk's worth): the compiler's kernels. `task` must not throw.
void RunTasks(int64_t count, const std::function<void(int64_t)>& task);

/// (name, address) of tessera_rt_parallel_for, for HostExecutable's runtime symbols.
RuntimeSymbolList ParallelSymbols();

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_THREAD_POOL_H_
