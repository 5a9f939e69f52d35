// The host kernels that copy an operand into a packed buffer (matmul's packed B, attention's
// packed K) fall back to a kernel without the copy when the system refuses the allocation — and
// the fallback gives the same bits. Each case runs once normally, then in a forked child whose
// address space is capped so that the packed copy cannot be allocated; the child sends its
// output bits back through a pipe.
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/compiler.h"
#include "runtime/thread_pool.h"
#include "tests/jit/host_tensor.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TESSERA_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TESSERA_SANITIZED 1
#endif
#endif

namespace tessera::jit {
namespace {

using ::tessera::testing::FillUniform;
using ::tessera::testing::HostTensor;

/// The process's address space in bytes (/proc/self/statm, first field).
int64_t AddressSpaceBytes() {
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  long pages = 0;
  if (statm == nullptr || std::fscanf(statm, "%ld", &pages) != 1) pages = 0;
  if (statm != nullptr) std::fclose(statm);
  return static_cast<int64_t>(pages) * sysconf(_SC_PAGESIZE);
}

/// Runs `run` (which fills `output`) in a child whose address space may grow by at most
/// `headroom` bytes, on a one-thread pool; returns the child's output bits. Sets `skipped` when
/// the process's hard limit is already below that cap.
std::vector<float> RunWithCappedMemory(const std::function<void()>& run,
                                       const std::vector<float>& output, int64_t headroom,
                                       bool* skipped) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    runtime::ThreadPool pool(1);
    runtime::ScopedThreadPool scope(&pool);
    rlimit limit{};
    if (getrlimit(RLIMIT_AS, &limit) != 0) _exit(2);
    limit.rlim_cur = static_cast<rlim_t>(AddressSpaceBytes() + headroom);
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < limit.rlim_cur) _exit(5);
    if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(2);
    // Not vacuous: a mapping of the packed copy's size really is refused now (mmap, which a
    // compiler cannot elide as it may an unused malloc).
    void* probe = mmap(nullptr, static_cast<size_t>(2 * headroom), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (probe != MAP_FAILED) _exit(4);
    run();
    const char* bytes = reinterpret_cast<const char*>(output.data());
    size_t left = output.size() * sizeof(float);
    while (left > 0) {
      const ssize_t written = write(fds[1], bytes, left);
      if (written <= 0) _exit(3);
      bytes += written;
      left -= static_cast<size_t>(written);
    }
    _exit(0);
  }
  close(fds[1]);
  std::vector<float> received(output.size());
  char* bytes = reinterpret_cast<char*>(received.data());
  size_t left = received.size() * sizeof(float);
  while (left > 0) {
    const ssize_t got = read(fds[0], bytes, left);
    if (got <= 0) break;
    bytes += got;
    left -= static_cast<size_t>(got);
  }
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 5) {
    *skipped = true;  // a hard address-space limit below the cap: nothing to learn here
    return {};
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  if (left != 0) return {};
  return received;
}

std::unique_ptr<CompiledModule> CompileForHost(const std::string& source) {
  CompileOptions options;
  options.target = Target::kHost;
  auto compiled = Compile(source, options);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return compiled.ok() ? std::move(compiled).value() : nullptr;
}

void ExpectSameBits(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

constexpr int64_t kHeadroom = int64_t{48} << 20;  // the 128 MiB packed copies do not fit

TEST(AllocationFallbackTest, AttentionWithoutPackedKGivesTheSameBits) {
#ifdef TESSERA_SANITIZED
  GTEST_SKIP() << "the sanitizers reserve address space an RLIMIT_AS cap would refuse";
#endif
  auto module = CompileForHost(R"mlir(
func.func @f(%q: memref<?x?x?x?xf32>, %k: memref<?x?x?x?xf32>, %v: memref<?x?x?x?xf32>, %o: memref<?x?x?x?xf32>) {
  tile.attention %q, %k, %v -> %o causal : memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32> -> memref<?x?x?x?xf32>
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
  auto entry = module->host->Lookup("f");
  ASSERT_TRUE(entry.ok()) << entry.status();
  // K: 2^21 keys of 16 floats, 128 MiB; 8 queries (each key serves 8 query rows: K is packed
  // when the allocation succeeds) see the last 8 prefixes.
  const int64_t keys = int64_t{1} << 21;
  HostTensor<float> q({1, 1, 8, 16}), k({1, 1, keys, 16}), v({1, 1, keys, 4}), o({1, 1, 8, 4});
  FillUniform(q.data(), 31, -1.0f, 1.0f);
  FillUniform(k.data(), 32, -1.0f, 1.0f);
  FillUniform(v.data(), 33, -1.0f, 1.0f);
  void* args[] = {q.descriptor(), k.descriptor(), v.descriptor(), o.descriptor()};
  auto run = [&] { (*entry)(args); };
  run();
  const std::vector<float> packed = o.data();
  std::fill(o.data().begin(), o.data().end(), 0.0f);
  bool skipped = false;
  std::vector<float> fallback = RunWithCappedMemory(run, o.data(), kHeadroom, &skipped);
  if (skipped) GTEST_SKIP() << "the hard RLIMIT_AS is below the cap this test sets";
  ExpectSameBits(fallback, packed);
}

TEST(AllocationFallbackTest, MatmulWithoutPackedBGivesTheSameBits) {
#ifdef TESSERA_SANITIZED
  GTEST_SKIP() << "the sanitizers reserve address space an RLIMIT_AS cap would refuse";
#endif
  auto module = CompileForHost(R"mlir(
func.func @f(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c activation(gelu) : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
  auto entry = module->host->Lookup("f");
  ASSERT_TRUE(entry.ok()) << entry.status();
  // B: 4096 x 8192 floats, 128 MiB; 7 rows of C (the tiled kernel's regime).
  HostTensor<float> a({7, 4096}), b({4096, 8192}), c({7, 8192});
  FillUniform(a.data(), 41, -1.0f, 1.0f);
  FillUniform(b.data(), 42, -1.0f, 1.0f);
  void* args[] = {a.descriptor(), b.descriptor(), c.descriptor()};
  auto run = [&] { (*entry)(args); };
  run();
  const std::vector<float> tiled = c.data();
  std::fill(c.data().begin(), c.data().end(), 0.0f);
  bool skipped = false;
  std::vector<float> fallback = RunWithCappedMemory(run, c.data(), kHeadroom, &skipped);
  if (skipped) GTEST_SKIP() << "the hard RLIMIT_AS is below the cap this test sets";
  ExpectSameBits(fallback, tiled);
}

}  // namespace
}  // namespace tessera::jit
