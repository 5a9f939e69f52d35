// runtime/host_object_shape.h on a real host object (CompileHostObject: a .bss global reached
// through the GOT, a libm call through the PLT) and on forgeries of it, one rule each — the
// shapes fuzzing and an audit of JITLink's ELF reader found to crash or mislead the linker.
#include "runtime/host_object_shape.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/codegen/host_object.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "runtime/host_executable.h"
#include "tests/runtime/elf_edit.h"

namespace tessera::runtime {
namespace {

using ::tessera::testing::ElfEdit;
using ::testing::HasSubstr;

constexpr char kModule[] = R"(
@buffer = global [256 x float] zeroinitializer, align 16
declare float @sinf(float)
define float @entry(float %x) {
  %p = getelementptr [256 x float], ptr @buffer, i64 0, i64 3
  %v = load float, ptr %p
  %s = call float @sinf(float %x)
  %r = fadd float %s, %v
  store float %r, ptr @buffer
  ret float %r
}
)";

const std::string& RealObject() {
  static const std::string* object = [] {
    llvm::LLVMContext context;
    llvm::SMDiagnostic diagnostic;
    std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(kModule, diagnostic, context);
    EXPECT_NE(module, nullptr) << diagnostic.getMessage().str();
    auto compiled = jit::CompileHostObject(*module, 2);
    EXPECT_TRUE(compiled.ok()) << compiled.status();
    return new std::string(compiled.ok() ? compiled->object : "");
  }();
  return *object;
}

/// What CheckHostObjectShape says of the real object after `forge` edits it.
absl::Status CheckForged(const std::function<void(ElfEdit&)>& forge) {
  std::string object = RealObject();
  ElfEdit elf(object);
  forge(elf);
  return CheckHostObjectShape(object);
}

uint64_t SectionOfType(ElfEdit& elf, uint32_t type) {
  const uint64_t header = elf.FirstOfType(type);
  EXPECT_NE(header, 0u) << "the real object has no section of type " << type;
  return header;
}

void ExpectRefused(const std::function<void(ElfEdit&)>& forge, const std::string& why) {
  absl::Status status = CheckForged(forge);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr(why));
}

TEST(HostObjectShapeTest, TheCompilersOwnObjectHasTheShapeAndNoUnwindTables) {
  ASSERT_FALSE(RealObject().empty());
  EXPECT_TRUE(CheckHostObjectShape(RealObject()).ok()) << CheckHostObjectShape(RealObject());
  EXPECT_EQ(RealObject().find(".eh_frame"), std::string::npos);
}

TEST(HostObjectShapeTest, OnlyX86_64RelocatableObjects) {
  ExpectRefused([](ElfEdit& elf) { elf.Write(0x12, 183 /* EM_AARCH64 */, 2); },
                "not an x86-64 ELF relocatable object");
  ExpectRefused([](ElfEdit& elf) { elf.Write(0x10, 3 /* ET_DYN */, 2); },
                "not an x86-64 ELF relocatable object");
  EXPECT_EQ(CheckHostObjectShape("not an object").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckHostObjectShape("").code(), absl::StatusCode::kInvalidArgument);
}

TEST(HostObjectShapeTest, SectionsAreOfTheCompiledKindsAtAddressZeroSanelyAligned) {
  ExpectRefused(
      [](ElfEdit& elf) {
        elf.Write(SectionOfType(elf, ElfEdit::kNobits) + ElfEdit::kShType, 18 /* SYMTAB_SHNDX */,
                  4);
      },
      "has type 18");
  ExpectRefused(
      [](ElfEdit& elf) {
        elf.Write(SectionOfType(elf, ElfEdit::kNobits) + ElfEdit::kShAddr, 0x1000);
      },
      "has an address");
  ExpectRefused(
      [](ElfEdit& elf) {
        elf.Write(SectionOfType(elf, ElfEdit::kNobits) + ElfEdit::kShAddralign, 48);
      },
      "is aligned to 48");
  ExpectRefused(
      [](ElfEdit& elf) {
        elf.Write(SectionOfType(elf, ElfEdit::kNobits) + ElfEdit::kShAddralign, uint64_t{1} << 20);
      },
      "is aligned to 1048576");
}

TEST(HostObjectShapeTest, SectionZeroIsTheNullSection) {
  // JITLink reads section 0 like any other unless it is SHT_NULL: a forged one would carry an
  // .eh_frame or a symbol table past every other check.
  ExpectRefused(
      [](ElfEdit& elf) {
        elf.Write(elf.SectionHeaders()[0] + ElfEdit::kShType, 1 /* PROGBITS */, 4);
      },
      "section 0 is not the null section");
  ExpectRefused([](ElfEdit& elf) { elf.Write(elf.SectionHeaders()[0] + ElfEdit::kShSize, 64); },
                "section 0 is not the null section");
}

TEST(HostObjectShapeTest, ZeroFilledMemoryIsAllocatedAndBounded) {
  ExpectRefused(
      [](ElfEdit& elf) {
        const uint64_t bss = SectionOfType(elf, ElfEdit::kNobits);
        elf.Write(bss + ElfEdit::kShFlags, elf.Read(bss + ElfEdit::kShFlags, 8) & ~uint64_t{2});
      },
      "holds no bytes and is not allocated");
  ExpectRefused(
      [](ElfEdit& elf) {
        elf.Write(SectionOfType(elf, ElfEdit::kNobits) + ElfEdit::kShSize, uint64_t{1} << 30);
      },
      "bytes of zero-initialised memory");
  ExpectRefused(
      [](ElfEdit& elf) {
        elf.Write(SectionOfType(elf, ElfEdit::kNobits) + ElfEdit::kShSize, ~uint64_t{0});
      },
      "bytes of zero-initialised memory");
}

TEST(HostObjectShapeTest, SymbolsStartNullAndNameSectionsThatExist) {
  ExpectRefused(
      [](ElfEdit& elf) {
        const uint64_t symbols =
            elf.Read(SectionOfType(elf, ElfEdit::kSymtab) + ElfEdit::kShOffset, 8);
        elf.Write(symbols + 8 /* st_value */, 1);
      },
      "the first symbol is not the null symbol");
  ExpectRefused(
      [](ElfEdit& elf) {
        const uint64_t symbols =
            elf.Read(SectionOfType(elf, ElfEdit::kSymtab) + ElfEdit::kShOffset, 8);
        elf.Write(symbols + 24 + 6 /* symbol 1's st_shndx */, 0xfff0, 2);
      },
      "is out of range");
}

TEST(HostObjectShapeTest, OnlyLocalSectionSymbolsMayNameUnallocatedSections) {
  ExpectRefused(
      [](ElfEdit& elf) {
        const uint64_t symtab = SectionOfType(elf, ElfEdit::kSymtab);
        const uint64_t strtab_index = elf.Read(symtab + ElfEdit::kShLink, 4);
        const uint64_t symbol = elf.Read(symtab + ElfEdit::kShOffset, 8) + 24;      // symbol 1
        elf.Write(symbol + 4, (1 /* STB_GLOBAL */ << 4) | 3 /* STT_SECTION */, 1);  // st_info
        elf.Write(symbol + 6, strtab_index, 2);  // st_shndx: the (unallocated) string table
      },
      "is defined in a section that is not allocated");
}

TEST(HostObjectShapeTest, GotRelocationsNameTheirSymbol) {
  // JITLink keys GOT entries by name: every unnamed target would share one entry. An st_name
  // pointing at any NUL byte names a symbol "" as well as st_name 0 does.
  ExpectRefused(
      [](ElfEdit& elf) {
        const uint64_t symtab = SectionOfType(elf, ElfEdit::kSymtab);
        const uint64_t strtab = elf.SectionHeaders().at(elf.Read(symtab + ElfEdit::kShLink, 4));
        const uint64_t last_nul = elf.Read(strtab + ElfEdit::kShSize, 8) - 1;
        const uint64_t rela = SectionOfType(elf, ElfEdit::kRela);
        const uint64_t first = elf.Read(rela + ElfEdit::kShOffset, 8);
        bool found = false;
        for (uint64_t entry = first; entry < first + elf.Read(rela + ElfEdit::kShSize, 8);
             entry += 24) {
          const uint64_t info = elf.Read(entry + 8, 8), type = info & 0xffffffff;
          if (type != 9 && type != 41 && type != 42) continue;  // GOTPCREL, GOTPCRELX, REX_…
          const uint64_t symbol = elf.Read(symtab + ElfEdit::kShOffset, 8) + 24 * (info >> 32);
          elf.Write(symbol, last_nul, 4);  // st_name
          found = true;
          break;
        }
        EXPECT_TRUE(found) << "the real object reaches @buffer without a GOT relocation";
      },
      "asks for a GOT entry of an unnamed symbol");
}

TEST(HostObjectShapeTest, RelocationsUseTheSymbolTableAndPatchAllocatedContents) {
  ExpectRefused(
      [](ElfEdit& elf) { elf.Write(SectionOfType(elf, ElfEdit::kRela) + ElfEdit::kShLink, 0, 4); },
      "does not use the object's symbol table");
  ExpectRefused(
      [](ElfEdit& elf) {
        elf.Write(SectionOfType(elf, ElfEdit::kSymtab) + ElfEdit::kShType, 1 /* PROGBITS */, 4);
      },
      "does not use the object's symbol table");
  ExpectRefused(
      [](ElfEdit& elf) {
        // Retarget the relocations at .bss: JITLink would patch a block with no working memory.
        const std::vector<uint64_t> headers = elf.SectionHeaders();
        const uint64_t bss = SectionOfType(elf, ElfEdit::kNobits);
        for (size_t i = 0; i < headers.size(); ++i) {
          if (headers[i] == bss)
            elf.Write(SectionOfType(elf, ElfEdit::kRela) + ElfEdit::kShInfo, i, 4);
        }
      },
      "which is not allocated with contents");
  ExpectRefused(
      [](ElfEdit& elf) {
        elf.Write(SectionOfType(elf, ElfEdit::kRela) + ElfEdit::kShInfo, 0xffff, 4);
      },
      "which does not exist");
}

TEST(HostObjectShapeTest, EachRelocationNamesARealSymbolWithAKindTheCodeModelUses) {
  auto first_relocation_info = [](ElfEdit& elf) {
    return elf.Read(SectionOfType(elf, ElfEdit::kRela) + ElfEdit::kShOffset, 8) + 8;
  };
  ExpectRefused(
      [&](ElfEdit& elf) {
        const uint64_t info = first_relocation_info(elf);
        elf.Write(info, elf.Read(info, 8) & 0xffffffff);  // symbol 0
      },
      "names symbol 0, which does not exist");
  ExpectRefused(
      [&](ElfEdit& elf) {
        const uint64_t info = first_relocation_info(elf);
        elf.Write(info, (elf.Read(info, 8) & 0xffffffff) | (uint64_t{0x7fffffff} << 32));
      },
      "which does not exist");
  ExpectRefused(
      [&](ElfEdit& elf) {
        const uint64_t info = first_relocation_info(elf);
        elf.Write(info, (elf.Read(info, 8) & ~uint64_t{0xffffffff}) | 23 /* TPOFF32 */);
      },
      "has type 23, not one host code uses");
}

}  // namespace
}  // namespace tessera::runtime
