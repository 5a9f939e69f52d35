#include "runtime/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <system_error>

namespace tessera::runtime {
namespace {

/// The pool of the enclosing ScopedThreadPool on this thread (null: the default pool).
thread_local ThreadPool* current_pool = nullptr;
/// Whether this thread is running a chunk: a loop started inside one runs inline.
thread_local bool inside_chunk = false;

extern "C" void TesseraParallelFor(LoopBody body, void* context, int64_t begin, int64_t end,
                                   int64_t cost) {
  if (end <= begin) return;
  if (inside_chunk) {
    body(context, begin, end);
    return;
  }
  ThreadPool& pool = current_pool != nullptr ? *current_pool : DefaultThreadPool();
  pool.ParallelFor(body, context, begin, end, cost);
}

}  // namespace

struct ThreadPool::Batch {
  LoopBody body;
  void* context;
  int64_t begin;
  int64_t iterations;
  int64_t chunks;
  std::atomic<int64_t> next{0};  // the next chunk to take
  std::atomic<int64_t> done{0};  // chunks finished
  int users = 0;                 // workers holding this batch (guarded by the pool's mutex)
};

ThreadPool::ThreadPool(int threads) : threads_(std::clamp(threads, 1, 1024)) {
  workers_.reserve(static_cast<size_t>(threads_ - 1));
  for (int i = 1; i < threads_; ++i) {
    try {
      workers_.emplace_back([this] { Work(); });
    } catch (const std::system_error&) {
      break;  // out of threads (EAGAIN): keep what there is
    }
  }
  threads_ = static_cast<int>(workers_.size()) + 1;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_available_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::RunChunks(Batch& batch, std::atomic<int64_t>* counter) {
  const bool outer = inside_chunk;
  inside_chunk = true;
  for (int64_t chunk; (chunk = batch.next.fetch_add(1)) < batch.chunks;) {
    // Chunk c covers iterations [c·n/k, (c+1)·n/k): contiguous, in order, sizes within one.
    const int64_t first = batch.begin + chunk * batch.iterations / batch.chunks;
    const int64_t last = batch.begin + (chunk + 1) * batch.iterations / batch.chunks;
    batch.body(batch.context, first, last);
    if (counter != nullptr) counter->fetch_add(1, std::memory_order_relaxed);
    batch.done.fetch_add(1, std::memory_order_acq_rel);
  }
  inside_chunk = outer;
}

void ThreadPool::ParallelFor(LoopBody body, void* context, int64_t begin, int64_t end,
                             int64_t cost) {
  const int64_t iterations = end - begin;
  if (iterations <= 0) return;
  // Work in elements, saturating (cost and iterations come from tensor sizes).
  const int64_t per = std::max<int64_t>(cost, 1);
  const int64_t by_work =
      iterations > INT64_MAX / per ? INT64_MAX / kMinChunkWork : iterations * per / kMinChunkWork;
  const int64_t chunks = std::min<int64_t>({iterations, threads_, std::max<int64_t>(by_work, 1)});
  if (chunks <= 1) {
    const bool outer = inside_chunk;
    inside_chunk = true;
    body(context, begin, end);
    inside_chunk = outer;
    return;
  }
  split_loops_.fetch_add(1, std::memory_order_relaxed);
  Batch batch;
  batch.body = body;
  batch.context = context;
  batch.begin = begin;
  batch.iterations = iterations;
  batch.chunks = chunks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int64_t i = 1; i < chunks; ++i) queue_.push_back(&batch);
  }
  work_available_.notify_all();
  RunChunks(batch, nullptr);
  std::unique_lock<std::mutex> lock(mutex_);
  // Entries no worker took are dropped; then wait for the chunks workers still run.
  queue_.erase(std::remove(queue_.begin(), queue_.end(), &batch), queue_.end());
  batch_released_.wait(lock, [&] {
    return batch.users == 0 && batch.done.load(std::memory_order_acquire) == chunks;
  });
}

void ThreadPool::Work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_available_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Batch* batch = queue_.front();
    queue_.pop_front();
    ++batch->users;
    lock.unlock();
    RunChunks(*batch, &worker_chunks_);
    lock.lock();
    --batch->users;
    batch_released_.notify_all();
  }
}

int AvailableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

int DefaultThreadCount() {
  if (const char* value = std::getenv("TESSERA_JIT_NUM_THREADS")) {
    char* end = nullptr;
    const long threads = std::strtol(value, &end, 10);
    if (end != value && *end == '\0' && threads >= 1 && threads <= 1024) {
      return static_cast<int>(threads);
    }
  }
  return AvailableCores();
}

ThreadPool& DefaultThreadPool() {
  static ThreadPool* pool = new ThreadPool(DefaultThreadCount());
  return *pool;
}

void RunTasks(int64_t count, const std::function<void(int64_t)>& task) {
  auto body = [](void* context, int64_t begin, int64_t end) {
    const auto& run = *static_cast<const std::function<void(int64_t)>*>(context);
    for (int64_t i = begin; i < end; ++i) run(i);
  };
  // Each task costs a whole chunk, so every task may get a thread of its own.
  TesseraParallelFor(body, const_cast<std::function<void(int64_t)>*>(&task), 0, count,
                     ThreadPool::kMinChunkWork);
}

ScopedThreadPool::ScopedThreadPool(ThreadPool* pool) : previous_(current_pool) {
  current_pool = pool;
}

ScopedThreadPool::~ScopedThreadPool() { current_pool = previous_; }

RuntimeSymbolList ParallelSymbols() {
  return {{kParallelForSymbol, reinterpret_cast<void*>(&TesseraParallelFor)}};
}

}  // namespace tessera::runtime
