// The compile service over the cache tiers: hits and misses with their reasons,
// spelling-insensitive keys, every key component, every kind of damaged entry, eviction, an
// unwritable directory, and single flight across threads and across processes.
#include "service/compile_service.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/codegen/host_object.h"
#include "jit/codegen/toolchain.h"
#include "jit/compiler.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "runtime/host_executable.h"
#include "runtime/memref_descriptor.h"
#include "service/artifact.h"
#include "tests/service/sources.h"

extern char** environ;

namespace tessera::service {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Scratch(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  fs::path dir = fs::path(tmp != nullptr ? tmp : "/tmp") / ("cache_test_" + name);
  fs::remove_all(dir);
  return dir.string();
}

CompileServiceOptions OnDisk(const std::string& root) {
  CompileServiceOptions options;
  options.disk_root = root;
  return options;
}

fs::path EntryDir(const std::string& root, const std::string& digest) {
  return fs::path(root) / "v1" / "entries" / digest;
}

TEST(CompileCacheTest, MemoryHitThenDiskHitInAFreshCache) {
  const std::string root = Scratch("hits");
  jit::CompileOptions options;
  std::string digest;
  {
    CompileService cache(OnDisk(root));
    auto first = cache.Compile(kSaxpy, options);
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_EQ(first->source, ModuleSource::kCompiled);
    EXPECT_EQ(first->miss.ToString(), "not cached");
    auto second = cache.Compile(kSaxpy, options);
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(second->source, ModuleSource::kMemory);
    EXPECT_EQ(second->module, first->module);
    EXPECT_EQ(cache.LookupByKey(first->digest), first->module);
    digest = first->digest;
    ServiceStats stats = cache.stats();
    EXPECT_EQ(stats.compiles, 1u);
    EXPECT_EQ(stats.memory_hits, 1u);
    EXPECT_EQ(stats.misses_by_reason[cache::MissReason::kNotCached], 1u);
    EXPECT_EQ(stats.memory_entries, 1u);
  }
  CompileService fresh(OnDisk(root));  // a new process, as far as memory goes
  auto third = fresh.Compile(kSaxpy, options);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->source, ModuleSource::kDisk);
  EXPECT_EQ(third->digest, digest);
  ExpectSaxpyWorks(*third->module);
  EXPECT_EQ(fresh.stats().disk_hits, 1u);
}

// A hit is machine code: loading it from disk links the stored object and generates none, and
// it computes the same bits as the cold compile.
TEST(CompileCacheTest, DiskHitGeneratesNoCodeAndMatchesTheColdCompileBitwise) {
  const std::string root = Scratch("warm");
  const char* source = R"mlir(
func.func @gelu(%x: memref<?xf32>, %y: memref<?xf32>) {
  tile.map ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%v: f32):
    %t = math.tanh %v : f32
    %e = math.exp %t : f32
    %r = arith.mulf %e, %v : f32
    tile.yield %r : f32
  }
  return
}
)mlir";
  auto run = [](const jit::CompiledModule& module) {
    std::vector<float> x(1000), y(1000);
    for (size_t i = 0; i < x.size(); ++i) x[i] = -8.0f + 0.016f * static_cast<float>(i);
    runtime::MemRefDescriptor descriptors[2] = {runtime::MakeMemRefDescriptor(x.data(), {1000}),
                                                runtime::MakeMemRefDescriptor(y.data(), {1000})};
    void* args[] = {descriptors[0].data(), descriptors[1].data()};
    auto entry = module.host->Lookup("gelu");
    EXPECT_TRUE(entry.ok()) << entry.status();
    if (entry.ok()) (*entry)(args);
    return y;
  };
  jit::CompileOptions options;
  std::vector<float> cold;
  const uint64_t before_cold = jit::HostCodegenCount();
  {
    CompileService cache(OnDisk(root));
    auto compiled = cache.Compile(source, options);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_EQ(compiled->source, ModuleSource::kCompiled);
    EXPECT_GT(jit::HostCodegenCount(), before_cold);
    EXPECT_FALSE(compiled->module->host_object.object.empty());
    EXPECT_EQ(compiled->module->host_object.cpu, runtime::HostCpu());
    cold = run(*compiled->module);
  }
  CompileService fresh(OnDisk(root));
  const uint64_t before_warm = jit::HostCodegenCount();
  auto warm = fresh.Compile(source, options);
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_EQ(warm->source, ModuleSource::kDisk);
  const std::vector<float> again = run(*warm->module);
  EXPECT_EQ(jit::HostCodegenCount(), before_warm) << "a disk hit generated host code";
  ASSERT_EQ(again.size(), cold.size());
  EXPECT_EQ(std::memcmp(again.data(), cold.data(), cold.size() * sizeof(float)), 0);

  // nvptx: the launch code is machine code too; linking it generates none.
  jit::CompileOptions nvptx;
  nvptx.target = runtime::Target::kNvptx;
  {
    CompileService cache(OnDisk(root));
    ASSERT_TRUE(cache.Compile(source, nvptx).ok());
  }
  CompileService fresh_nvptx(OnDisk(root));
  const uint64_t before_link = jit::HostCodegenCount();
  auto device = fresh_nvptx.Compile(source, nvptx);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ(device->source, ModuleSource::kDisk);
  auto launch_code = jit::LoadHostCode(*device->module);
  ASSERT_TRUE(launch_code.ok()) << launch_code.status();
  EXPECT_TRUE((*launch_code)->Lookup("gelu").ok());
  EXPECT_EQ(jit::HostCodegenCount(), before_link);
}

// The trust boundary holds for machine code too: an object that needs a symbol outside the
// allowlist and the runtime is refused before it is linked.
TEST(CompileCacheTest, MachineCodeReachingProcessSymbolsIsRefusedBeforeLinking) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(R"ir(
declare i32 @getpid()
define void @_tessera_packed_leak(ptr %args) {
  %pid = call i32 @getpid()
  ret void
}
)ir",
                                                                   error, context);
  ASSERT_NE(module, nullptr) << error.getMessage().str();
  auto object = jit::CompileHostObject(*module, 2);
  ASSERT_TRUE(object.ok()) << object.status();
  auto loaded = runtime::HostExecutable::Load(*object, {"leak"});
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(loaded.status().message(),
              HasSubstr("the host code references symbols outside the runtime allowlist "
                        "(allocation, memcpy/memset, libm) and the registered libraries: getpid"));
  // With the symbol provided by the runtime it links.
  static int fake_getpid_calls = 0;
  int (*fake)() = [] { return ++fake_getpid_calls; };
  auto provided =
      runtime::HostExecutable::Load(*object, {"leak"}, {{"getpid", reinterpret_cast<void*>(fake)}});
  ASSERT_TRUE(provided.ok()) << provided.status();
  auto entry = (*provided)->Lookup("leak");
  ASSERT_TRUE(entry.ok());
  (*entry)(nullptr);
  EXPECT_EQ(fake_getpid_calls, 1);
}

TEST(CompileCacheTest, MachineCodeForAnotherCpuIsRefusedNeverRun) {
  CompileService cache;
  auto compiled = cache.Compile(kSaxpy, jit::CompileOptions());
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  runtime::HostObject other = compiled->module->host_object;
  other.cpu = "znver4+0123456789abcdef";
  auto loaded = runtime::HostExecutable::Load(other, {"saxpy"});
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(loaded.status().message(),
              HasSubstr("the host code was generated for CPU znver4+0123456789abcdef, and this "
                        "machine's is " +
                        runtime::HostCpu()));
}

TEST(CompileCacheTest, SpellingDoesNotMatterMeaningDoes) {
  CompileService cache(OnDisk(Scratch("spelling")));
  jit::CompileOptions options;
  auto original = cache.Compile(kSaxpy, options);
  auto respelled = cache.Compile(kSaxpyRespelled, options);
  ASSERT_TRUE(original.ok() && respelled.ok());
  EXPECT_EQ(respelled->source, ModuleSource::kMemory);
  EXPECT_EQ(respelled->digest, original->digest);
  std::string changed = kSaxpy;
  changed.replace(changed.find("arith.addf"), 10, "arith.subf");
  auto different = cache.Compile(changed, options);
  ASSERT_TRUE(different.ok());
  EXPECT_EQ(different->source, ModuleSource::kCompiled);
  EXPECT_NE(different->digest, original->digest);
}

TEST(CompileCacheTest, AMissParsesOnceAndAHitByTextNotAtAll) {
  CompileService cache(OnDisk(Scratch("parse_once")));
  jit::CompileOptions options;
  const std::string source = std::string(kSaxpy) + "// parsed once\n";
  uint64_t before = jit::ParseCount();
  auto cold = cache.Compile(source, options);
  ASSERT_TRUE(cold.ok()) << cold.status();
  EXPECT_EQ(cold->source, ModuleSource::kCompiled);
  EXPECT_EQ(jit::ParseCount() - before, 1u) << "the key's parse is the one the compile uses";
  before = jit::ParseCount();
  auto hit = cache.Compile(source, options);
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->source, ModuleSource::kMemory);
  EXPECT_EQ(jit::ParseCount(), before);
  // A syntax error: one parse, reported under the caller's source name.
  options.source_name = "broken.mlir";
  before = jit::ParseCount();
  auto broken = cache.Compile("func.func @f( {", options);
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(broken.status().message(), HasSubstr("broken.mlir:1:"));
  EXPECT_EQ(jit::ParseCount() - before, 1u);
}

TEST(CompileCacheTest, EachKeyComponentAloneMisses) {
  const std::string root = Scratch("components");
  CompileService cache(OnDisk(root));
  jit::CompileOptions base;
  base.target = runtime::Target::kNvptx;
  ASSERT_TRUE(cache.Compile(kSaxpy, base).ok());
  std::vector<std::pair<std::string, jit::CompileOptions>> variants;
  jit::CompileOptions v = base;
  v.target = runtime::Target::kHost;
  variants.emplace_back("target", v);
  v = base;
  v.arch = "sm_80";
  variants.emplace_back("arch", v);
  v = base;
  v.opt_level = 3;
  variants.emplace_back("opt_level", v);
  v = base;
  v.deterministic = true;
  variants.emplace_back("deterministic", v);
  for (const auto& [what, options] : variants) {
    auto result = cache.Compile(kSaxpy, options);
    ASSERT_TRUE(result.ok()) << what << ": " << result.status();
    EXPECT_EQ(result->source, ModuleSource::kCompiled) << what;
  }
  // A different toolchain: the old entry is found through the base key and named.
  CompileServiceOptions newer = OnDisk(root);
  newer.toolchain.llvm = "99.0.0";
  CompileService upgraded(newer);
  auto result = upgraded.Compile(kSaxpy, base);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->source, ModuleSource::kCompiled);
  EXPECT_THAT(result->miss.ToString(), HasSubstr("stale: llvm "));
  EXPECT_THAT(result->miss.ToString(), HasSubstr("→ 99.0.0"));
  EXPECT_EQ(upgraded.stats().misses_by_reason[cache::MissReason::kStale], 1u);
  // Another CPU (the cache holds machine code): a stale miss that names it (beside the llvm
  // change of the entry before it).
  CompileServiceOptions elsewhere = OnDisk(root);
  elsewhere.toolchain.host_cpu = "znver4+0123456789abcdef";
  CompileService other_machine(elsewhere);
  auto moved = other_machine.Compile(kSaxpy, base);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->source, ModuleSource::kCompiled);
  EXPECT_THAT(moved->miss.ToString(),
              HasSubstr("host_cpu " + runtime::HostCpu() + " → znver4+0123456789abcdef"));
}

enum class Damage { kTruncate, kFlipBit, kForeignFormat, kNoManifest, kHalfWritten };

class DamagedEntryTest : public ::testing::TestWithParam<std::pair<Damage, const char*>> {};

TEST_P(DamagedEntryTest, IsAMissThatRecompiles) {
  const auto [damage, reason] = GetParam();
  const std::string root = Scratch(std::string("damage_") + reason);
  jit::CompileOptions options;
  std::string digest;
  {
    CompileService cache(OnDisk(root));
    auto first = cache.Compile(kSaxpy, options);
    ASSERT_TRUE(first.ok());
    digest = first->digest;
  }
  const fs::path dir = EntryDir(root, digest);
  const fs::path payload = dir / "payload.bin";
  const fs::path manifest = dir / "manifest.txt";
  switch (damage) {
    case Damage::kTruncate:
      fs::resize_file(payload, fs::file_size(payload) / 2);
      break;
    case Damage::kFlipBit: {
      std::fstream file(payload, std::ios::in | std::ios::out | std::ios::binary);
      file.seekg(100);
      char byte = 0;
      file.read(&byte, 1);
      byte ^= 0x10;
      file.seekp(100);
      file.write(&byte, 1);
      break;
    }
    case Damage::kForeignFormat: {
      std::ifstream in(manifest);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const std::string current = "format=" + std::to_string(kArtifactFormatVersion);
      text.replace(text.find(current), current.size(), "format=0");
      std::ofstream(manifest) << text;
      break;
    }
    case Damage::kNoManifest:
      fs::remove(manifest);
      break;
    case Damage::kHalfWritten:
      // A writer died between its payload and its manifest, and left its staging directory.
      fs::remove(manifest);
      fs::create_directories(fs::path(root) / "v1" / "tmp" / (digest + ".999.0.0"));
      break;
  }
  CompileService cache(OnDisk(root));
  auto again = cache.Compile(kSaxpy, options);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->source, ModuleSource::kCompiled);
  EXPECT_THAT(again->miss.ToString(), StartsWith(reason));
  ExpectSaxpyWorks(*again->module);
  // The entry was rewritten whole: a fresh cache hits it.
  CompileService later(OnDisk(root));
  auto hit = later.Compile(kSaxpy, options);
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(hit->source, ModuleSource::kDisk);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, DamagedEntryTest,
    ::testing::Values(std::make_pair(Damage::kTruncate, "truncated payload"),
                      std::make_pair(Damage::kFlipBit, "checksum mismatch"),
                      std::make_pair(Damage::kForeignFormat, "artifact format 0 → "),
                      std::make_pair(Damage::kNoManifest, "manifest missing"),
                      std::make_pair(Damage::kHalfWritten, "manifest missing")));

TEST(CompileCacheTest, EvictsLeastRecentlyUsedBeyondTheBound) {
  const std::string root = Scratch("evict");
  CompileServiceOptions options = OnDisk(root);
  options.disk_max_bytes = 1;  // keeps only the newest entry
  CompileService cache(options);
  jit::CompileOptions compile;
  for (int level = 0; level < 3; ++level) {
    compile.opt_level = level;
    ASSERT_TRUE(cache.Compile(kSaxpy, compile).ok());
  }
  EXPECT_EQ(cache.disk()->List().size(), 1u);
  CompileService fresh(OnDisk(root));
  compile.opt_level = 2;
  auto kept = fresh.Compile(kSaxpy, compile);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->source, ModuleSource::kDisk);
}

TEST(CompileCacheTest, UnwritableDirectoryDegradesToMemoryOnly) {
  const std::string file = Scratch("not_a_dir");
  std::ofstream(file) << "a file where the cache directory should be";
  CompileService cache(OnDisk(file + "/cache"));
  EXPECT_FALSE(cache.stats().disk_enabled);
  jit::CompileOptions options;
  auto first = cache.Compile(kSaxpy, options);
  ASSERT_TRUE(first.ok()) << first.status();
  ExpectSaxpyWorks(*first->module);
  auto second = cache.Compile(kSaxpy, options);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->source, ModuleSource::kMemory);
}

TEST(CompileCacheTest, ThreadsCompileANewKeyOnce) {
  CompileService cache(OnDisk(Scratch("threads")));
  jit::CompileOptions options;
  options.target = runtime::Target::kNvptx;
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<const jit::CompiledModule>> modules(8);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      auto result = cache.Compile(kSaxpy, options);
      if (result.ok()) modules[i] = result->module;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(cache.stats().compiles, 1u);
  for (const auto& module : modules) EXPECT_EQ(module, modules[0]);
}

TEST(CompileCacheTest, ProcessesCompileANewKeyOnce) {
  const std::string root = Scratch("processes");
  const std::string source_path = root + ".mlir";
  std::ofstream(source_path) << kSaxpy;
  const char* srcdir = std::getenv("TEST_SRCDIR");
  std::string child = srcdir != nullptr
                          ? std::string(srcdir) + "/tessera_jit/tests/service/service_child"
                          : "tests/service/service_child";
  std::vector<pid_t> pids;
  std::vector<std::string> outputs;
  for (int i = 0; i < 8; ++i) {
    std::string output = root + ".out" + std::to_string(i);
    outputs.push_back(output);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    const char* argv[] = {child.c_str(), root.c_str(), source_path.c_str(), nullptr};
    pid_t pid = 0;
    ASSERT_EQ(
        posix_spawn(&pid, child.c_str(), &actions, nullptr, const_cast<char**>(argv), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  int compiled = 0;
  std::set<std::string> cubins;
  for (const std::string& output : outputs) {
    std::ifstream in(output);
    std::string how, cubin;
    in >> how >> cubin;
    compiled += how == "compiled";
    EXPECT_TRUE(how == "compiled" || how == "disk") << how;
    cubins.insert(cubin);
  }
  EXPECT_EQ(compiled, 1);
  EXPECT_EQ(cubins.size(), 1u);  // every process got identical artifacts
}

TEST(CompileCacheTest, ExplainSaysWhatWouldHappen) {
  const std::string root = Scratch("explain");
  CompileService cache(OnDisk(root));
  jit::CompileOptions options;
  auto before = cache.Explain(kSaxpy, options);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->verdict, "miss: not cached");
  ASSERT_TRUE(cache.Compile(kSaxpy, options).ok());
  EXPECT_EQ(cache.Explain(kSaxpy, options)->verdict, "memory hit");
  CompileService fresh(OnDisk(root));
  EXPECT_EQ(fresh.Explain(kSaxpyRespelled, options)->verdict, "disk hit");
}

TEST(CompileCacheTest, CompileErrorsPassThroughUncached) {
  CompileService cache(OnDisk(Scratch("errors")));
  jit::CompileOptions options;
  options.source_name = "broken.mlir";
  auto result = cache.Compile("func.func @f(%x: memref<4xf32>) {\n  tile.nope %x\n}", options);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("broken.mlir:2:"));
  EXPECT_EQ(cache.stats().compiles, 0u);
}

}  // namespace
}  // namespace tessera::service
