// Ahead-of-time packages (service/package.h): made by one service, loaded by another with no
// code generation and no cache tier; refused cleanly when damaged, foreign, or made for
// another machine or build.
#include "service/package.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/codegen/host_object.h"
#include "jit/codegen/toolchain.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "runtime/host_executable.h"
#include "runtime/host_target.h"
#include "runtime/memref_descriptor.h"
#include "service/artifact.h"
#include "service/binary_io.h"
#include "service/compile_service.h"
#include "tests/runtime/elf_edit.h"
#include "tests/service/sources.h"

namespace tessera::service {
namespace {

using ::testing::HasSubstr;

CompileServiceOptions MemoryOnly() {
  CompileServiceOptions options;
  options.disk_root = "";
  options.remote_url = "";
  return options;
}

std::string SaxpyPackage() {
  CompileService maker(MemoryOnly());
  auto compiled = maker.Compile(kSaxpy, jit::CompileOptions());
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  auto bytes = WritePackage({MakePackageEntry(*compiled->module)});
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return *bytes;
}

/// A package whose body is `body` with a correct digest (for contents the reader must refuse
/// for what they say, not for their checksum).
std::string Sealed(const std::string& body) { return body + Sha256Hex(body); }

TEST(PackageTest, LoadsInAnotherServiceWithNoCodeGenerationAndNoCache) {
  const std::string bytes = SaxpyPackage();
  CompileService loader(MemoryOnly());
  const uint64_t before = jit::HostCodegenCount();
  auto loaded = loader.LoadPackage(bytes, jit::CompileOptions());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(jit::HostCodegenCount(), before) << "loading a package generated host code";
  EXPECT_EQ(loader.stats().compiles, 0u);
  ASSERT_EQ((*loaded)->entries.size(), 1u);
  EXPECT_EQ((*loaded)->entries[0].name, "saxpy");
  ExpectSaxpyWorks(**loaded);
  // The same bytes again: the format is deterministic for one module.
  auto entries = ReadPackage(bytes);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].machine, runtime::HostCpu());
  EXPECT_EQ(*WritePackage(*entries), bytes);
}

TEST(PackageTest, APackageForAnotherMachineOrBuildIsRefusedNamingWhatDiffers) {
  auto entries = ReadPackage(SaxpyPackage());
  ASSERT_TRUE(entries.ok());
  CompileService loader(MemoryOnly());

  std::vector<PackageEntry> other_cpu = *entries;
  other_cpu[0].machine = "znver9+0123456789abcdef";
  auto refused = loader.LoadPackage(*WritePackage(other_cpu), jit::CompileOptions());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("host znver9+0123456789abcdef: host CPU znver9+0123456789abcdef (here " +
                        runtime::HostCpu() + ")"));

  std::vector<PackageEntry> other_build = *entries;
  other_build[0].toolchain =
      "tessera=0000000000000000\n" +
      other_build[0].toolchain.substr(other_build[0].toolchain.find('\n') + 1);
  refused = loader.LoadPackage(*WritePackage(other_build), jit::CompileOptions());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("tessera=0000000000000000 (here tessera=" +
                                                    jit::Toolchain::Current().tessera + ")"));

  jit::CompileOptions nvptx;
  nvptx.target = runtime::Target::kNvptx;
  nvptx.arch = "sm_90";
  refused = loader.LoadPackage(*WritePackage(*entries), nvptx);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("no entry of the package fits nvptx sm_90"));
  EXPECT_THAT(refused.status().message(), HasSubstr("target host"));
}

TEST(PackageTest, SeveralTargetsLoadTheOneThatFits) {
  CompileService maker(MemoryOnly());
  auto host = maker.Compile(kSaxpy, jit::CompileOptions());
  ASSERT_TRUE(host.ok());
  std::vector<PackageEntry> entries;
  for (const char* arch : {"sm_80", "sm_90"}) {
    jit::CompileOptions nvptx;
    nvptx.target = runtime::Target::kNvptx;
    nvptx.arch = arch;
    auto device = maker.Compile(kSaxpy, nvptx);
    ASSERT_TRUE(device.ok()) << device.status();
    entries.push_back(MakePackageEntry(*device->module));
  }
  entries.push_back(MakePackageEntry(*host->module));
  auto bytes = WritePackage(entries);
  ASSERT_TRUE(bytes.ok()) << bytes.status();

  CompileService loader(MemoryOnly());
  auto loaded = loader.LoadPackage(*bytes, jit::CompileOptions());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ExpectSaxpyWorks(**loaded);
  jit::CompileOptions sm90;
  sm90.target = runtime::Target::kNvptx;
  sm90.arch = "sm_90";
  auto device = loader.LoadPackage(*bytes, sm90);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ((*device)->options.arch, "sm_90");
  ASSERT_FALSE((*device)->device_images.empty());
  EXPECT_EQ((*device)->device_images[0].cubin.substr(0, 4),
            "\x7f"
            "ELF");
  sm90.arch = "sm_100";
  EXPECT_EQ(loader.LoadPackage(*bytes, sm90).status().code(),
            absl::StatusCode::kFailedPrecondition);

  // One entry per (target, machine).
  entries.push_back(entries.back());
  EXPECT_EQ(WritePackage(entries).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WritePackage({}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PackageTest, HostileBytesAreCleanErrors) {
  const std::string bytes = SaxpyPackage();
  CompileService loader(MemoryOnly());
  auto code = [&](const std::string& data) {
    return loader.LoadPackage(data, jit::CompileOptions()).status().code();
  };
  EXPECT_EQ(code(""), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code("not a package at all, just text"), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(std::string(1000, '\0')), absl::StatusCode::kInvalidArgument);
  // Every truncation, and a flipped byte anywhere, is damage (the digest covers every byte).
  for (size_t size = 16; size < bytes.size(); size += 1 + size / 8) {
    EXPECT_EQ(code(bytes.substr(0, size)), absl::StatusCode::kDataLoss) << size;
  }
  for (size_t at = 16; at < bytes.size(); at += 1 + at / 16) {
    std::string flipped = bytes;
    flipped[at] ^= 0x20;
    EXPECT_EQ(code(flipped), absl::StatusCode::kDataLoss) << at;
  }
  EXPECT_EQ(code(bytes + "x"), absl::StatusCode::kDataLoss);

  // Well-sealed bodies that lie: a huge entry count, a huge string length, another format,
  // a target that does not exist, an artifact that is not one.
  const std::string magic(bytes, 0, 16);
  auto body = [&](int version, uint64_t count) {
    Writer w;
    w.I64(version);
    w.U64(count);
    return magic + w.Take();
  };
  EXPECT_EQ(code(Sealed(body(kPackageFormatVersion, uint64_t{1} << 60))),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(code(Sealed(body(kPackageFormatVersion, 0))), absl::StatusCode::kDataLoss);
  EXPECT_EQ(code(Sealed(body(kPackageFormatVersion + 1, 1))), absl::StatusCode::kInvalidArgument);
  {
    Writer w;
    w.I64(7);  // no such target
    EXPECT_EQ(code(Sealed(body(kPackageFormatVersion, 1) + w.Take())), absl::StatusCode::kDataLoss);
  }
  {
    Writer w;
    w.I64(0);
    w.U64(uint64_t{1} << 62);  // a machine name longer than the package
    EXPECT_EQ(code(Sealed(body(kPackageFormatVersion, 1) + w.Take())), absl::StatusCode::kDataLoss);
  }
  {
    Writer w;
    w.I64(0);
    w.String(runtime::HostCpu());
    w.String(CurrentPackageToolchain());
    w.String("an artifact? no");
    EXPECT_EQ(code(Sealed(body(kPackageFormatVersion, 1) + w.Take())), absl::StatusCode::kDataLoss);
  }
}

/// The first of two CPUs no x86 machine has both of (AMX is Intel's, MWAITX AMD's) whose code
/// cannot run here.
std::string ACpuThatCannotRunHere() {
  for (const char* cpu : {"graniterapids", "znver5"}) {
    if (!runtime::CheckHostCodeRunsHere(cpu).ok()) return cpu;
  }
  ADD_FAILURE() << "this CPU has the features of both graniterapids and znver5";
  return "";
}

PackageEntry SaxpyEntryFor(const std::string& cpu) {
  CompileService maker(MemoryOnly());
  jit::CompileOptions options;
  options.host_cpu = cpu;
  auto compiled = maker.Compile(kSaxpy, options);
  EXPECT_TRUE(compiled.ok()) << cpu << ": " << compiled.status();
  if (!compiled.ok()) return PackageEntry();
  return MakePackageEntry(*compiled->module);
}

// One package for several machines: host code for named CPUs beside this machine's own. Loading
// takes this machine's exact code when the package has it, else the most specific named CPU
// whose features this one has; a package none of whose CPUs runs here is refused naming the
// features this CPU lacks.
TEST(PackageTest, HostCodeForSeveralCpusLoadsTheMostSpecificThatRunsHere) {
  const std::string foreign = ACpuThatCannotRunHere();
  const PackageEntry baseline = SaxpyEntryFor("x86-64");
  const PackageEntry v3 = SaxpyEntryFor("x86-64-v3");
  const PackageEntry native = SaxpyEntryFor("native");
  const PackageEntry elsewhere = SaxpyEntryFor(foreign);
  EXPECT_EQ(baseline.machine, "x86-64");
  EXPECT_EQ(native.machine, runtime::HostCpu());
  EXPECT_EQ(elsewhere.machine, foreign);
  CompileService loader(MemoryOnly());
  const uint64_t before = jit::HostCodegenCount();
  auto load = [&](const std::vector<PackageEntry>& entries) {
    auto bytes = WritePackage(entries);
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    return loader.LoadPackage(*bytes, jit::CompileOptions());
  };

  auto loaded = load({baseline, elsewhere, native, v3});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->host_object.cpu, runtime::HostCpu());
  ExpectSaxpyWorks(**loaded);

  // Every x86-64 machine runs baseline code; x86-64-v3 (AVX2, FMA) is preferred where it runs.
  loaded = load({baseline, elsewhere, v3});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->host_object.cpu,
            runtime::CheckHostCodeRunsHere("x86-64-v3").ok() ? "x86-64-v3" : "x86-64");
  ExpectSaxpyWorks(**loaded);
  EXPECT_EQ(jit::HostCodegenCount(), before) << "loading a package generated host code";

  auto refused = load({elsewhere});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("host " + foreign + ": host CPU " + foreign + " needs "));
  EXPECT_THAT(refused.status().message(),
              HasSubstr("which this CPU (" + runtime::HostCpu() + ") lacks"));
}

// Machine code in a package is held to the same trust boundary as the cache's: an object that
// needs a process symbol outside the runtime allowlist is refused before it is linked.
TEST(PackageTest, MachineCodeReachingOutsideTheTrustBoundaryIsRefused) {
  CompileService maker(MemoryOnly());
  auto compiled = maker.Compile(kSaxpy, jit::CompileOptions());
  ASSERT_TRUE(compiled.ok());
  llvm::LLVMContext context;
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(R"ir(
declare i32 @system(ptr)
@command = private constant [3 x i8] c"id\00"
define void @_tessera_packed_saxpy(ptr %args) {
  %status = call i32 @system(ptr @command)
  ret void
}
)ir",
                                                                   error, context);
  ASSERT_NE(module, nullptr) << error.getMessage().str();
  auto object = jit::CompileHostObject(*module, 2);
  ASSERT_TRUE(object.ok()) << object.status();
  auto forged = DeserializeArtifact(SerializeArtifact(*compiled->module));  // without its JIT
  ASSERT_TRUE(forged.ok()) << forged.status();
  (*forged)->host_object = *object;
  auto bytes = WritePackage({MakePackageEntry(**forged)});
  ASSERT_TRUE(bytes.ok());
  CompileService loader(MemoryOnly());
  auto refused = loader.LoadPackage(*bytes, jit::CompileOptions());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("the host code references symbols outside the runtime allowlist"));
  EXPECT_THAT(refused.status().message(), HasSubstr("system"));
}

/// A saxpy module's artifact, to be forged through its host object's ELF headers.
class ForgedHostObject {
 public:
  ForgedHostObject() {
    CompileService maker(MemoryOnly());
    auto compiled = maker.Compile(kSaxpy, jit::CompileOptions());
    EXPECT_TRUE(compiled.ok()) << compiled.status();
    auto forged = DeserializeArtifact(SerializeArtifact(*compiled->module));
    EXPECT_TRUE(forged.ok()) << forged.status();
    module_ = std::move(*forged);
    elf_ = std::make_unique<testing::ElfEdit>(module_->host_object.object);
  }

  testing::ElfEdit& elf() { return *elf_; }
  /// What loading a package of the forged module says.
  absl::Status Load() {
    auto bytes = WritePackage({MakePackageEntry(*module_)});
    EXPECT_TRUE(bytes.ok());
    CompileService loader(MemoryOnly());
    return loader.LoadPackage(*bytes, jit::CompileOptions()).status();
  }

 private:
  std::unique_ptr<jit::CompiledModule> module_;
  std::unique_ptr<testing::ElfEdit> elf_;
};

// An object whose symbol table claims far more entries than the file holds (found by the
// package fuzzer: reading them one by one took minutes) is refused at once.
TEST(PackageTest, SymbolTableRunningPastTheEndOfTheObjectIsRefused) {
  ForgedHostObject forged;
  const uint64_t symtab = forged.elf().FirstOfType(testing::ElfEdit::kSymtab);
  ASSERT_NE(symtab, 0u) << "the host object has no symbol table";
  forged.elf().Write(symtab + testing::ElfEdit::kShSize, uint64_t{24} << 36);  // 2^36 symbols
  absl::Status refused = forged.Load();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("the host code is malformed"));
}

// A relocation moved past the end of the section it patches (found by the package fuzzer:
// JITLink wrote the fixup there, outside the memory it allocated) is refused before linking.
TEST(PackageTest, RelocationOutsideItsSectionIsRefused) {
  ForgedHostObject forged;
  testing::ElfEdit& elf = forged.elf();
  const std::vector<uint64_t> headers = elf.SectionHeaders();
  const uint64_t rela = elf.FirstOfType(testing::ElfEdit::kRela);
  ASSERT_NE(rela, 0u) << "the host object has no relocations";
  const uint64_t patched = headers.at(elf.Read(rela + testing::ElfEdit::kShInfo, 4));
  const uint64_t first_relocation = elf.Read(rela + testing::ElfEdit::kShOffset, 8);
  elf.Write(first_relocation, elf.Read(patched + testing::ElfEdit::kShSize, 8) + 0x400000);
  absl::Status refused = forged.Load();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("cannot link the host code: malformed object"));
  EXPECT_THAT(refused.message(), HasSubstr("outside it"));
}

}  // namespace
}  // namespace tessera::service
