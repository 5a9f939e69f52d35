#include "runtime/host_object_shape.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/Error.h"

namespace tessera::runtime {
namespace {

using Elf = llvm::object::ELF64LEFile;
using Section = Elf::Elf_Shdr;
using Symbol = Elf::Elf_Sym;

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("the host code is malformed: ", what));
}

bool IsPowerOfTwoUpToAPage(uint64_t value) {
  return value != 0 && (value & (value - 1)) == 0 && value <= 4096;
}

bool IsAllowedSectionType(uint32_t type) {
  switch (type) {
    case llvm::ELF::SHT_PROGBITS:
    case llvm::ELF::SHT_NOBITS:
    case llvm::ELF::SHT_NOTE:
    case llvm::ELF::SHT_SYMTAB:
    case llvm::ELF::SHT_STRTAB:
    case llvm::ELF::SHT_RELA:
      return true;
    default:
      return false;
  }
}

bool IsAllowedRelocation(uint32_t type) {
  switch (type) {
    case llvm::ELF::R_X86_64_64:
    case llvm::ELF::R_X86_64_PC32:
    case llvm::ELF::R_X86_64_PLT32:
    case llvm::ELF::R_X86_64_32:
    case llvm::ELF::R_X86_64_32S:
    case llvm::ELF::R_X86_64_PC64:
    case llvm::ELF::R_X86_64_GOTPCREL:
    case llvm::ELF::R_X86_64_GOTPCRELX:
    case llvm::ELF::R_X86_64_REX_GOTPCRELX:
      return true;
    default:
      return false;
  }
}

bool IsGotRelocation(uint32_t type) {
  return type == llvm::ELF::R_X86_64_GOTPCREL || type == llvm::ELF::R_X86_64_GOTPCRELX ||
         type == llvm::ELF::R_X86_64_REX_GOTPCRELX;
}

/// The section a symbol is defined in, or null for undefined, absolute and common symbols.
/// Fails for an index out of range or reserved.
absl::Status SymbolSection(const Symbol& symbol, llvm::ArrayRef<Section> sections,
                           const Section*& section) {
  section = nullptr;
  const uint16_t index = symbol.st_shndx;
  if (index == llvm::ELF::SHN_UNDEF || index == llvm::ELF::SHN_ABS ||
      index == llvm::ELF::SHN_COMMON) {
    return absl::OkStatus();
  }
  if (index >= llvm::ELF::SHN_LORESERVE || index >= sections.size()) {
    return Malformed(absl::StrCat("a symbol's section index ", index, " is out of range"));
  }
  section = &sections[index];
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckHostObjectShape(absl::string_view object) {
  auto file = Elf::create(llvm::StringRef(object.data(), object.size()));
  if (!file) return Malformed(llvm::toString(file.takeError()));
  const auto& header = file->getHeader();
  if (header.e_ident[llvm::ELF::EI_CLASS] != llvm::ELF::ELFCLASS64 ||
      header.e_ident[llvm::ELF::EI_DATA] != llvm::ELF::ELFDATA2LSB ||
      header.e_type != llvm::ELF::ET_REL || header.e_machine != llvm::ELF::EM_X86_64) {
    return absl::InvalidArgumentError("the host code is not an x86-64 ELF relocatable object");
  }
  auto sections_or = file->sections();
  if (!sections_or) return Malformed(llvm::toString(sections_or.takeError()));
  const llvm::ArrayRef<Section> sections = *sections_or;
  // Section 0 is the null section, all zero (JITLink reads every section that is not of type
  // SHT_NULL, index 0 included; ELF's extended numbering, which keeps counts there, is more
  // sections than host code has).
  if (sections.empty() || header.e_shstrndx >= llvm::ELF::SHN_LORESERVE) {
    return Malformed("no sections, or extended section numbering");
  }
  {
    const Section& null = sections[0];
    if (null.sh_name != 0 || null.sh_type != llvm::ELF::SHT_NULL || null.sh_flags != 0 ||
        null.sh_addr != 0 || null.sh_offset != 0 || null.sh_size != 0 || null.sh_link != 0 ||
        null.sh_info != 0 || null.sh_addralign != 0 || null.sh_entsize != 0) {
      return Malformed("section 0 is not the null section");
    }
  }

  // Sections.
  const Section* symbol_table = nullptr;
  uint64_t zero_fill = 0;
  for (size_t i = 1; i < sections.size(); ++i) {
    const Section& section = sections[i];
    auto name = file->getSectionName(section);
    if (!name) return Malformed(llvm::toString(name.takeError()));
    const std::string where = absl::StrCat("section ", i, " (", name->str(), ")");
    if (!IsAllowedSectionType(section.sh_type)) {
      return Malformed(absl::StrCat(where, " has type ", uint64_t{section.sh_type},
                                    ", not one host code is compiled to"));
    }
    if (name->starts_with("$__") || *name == ".eh_frame") {
      return Malformed(absl::StrCat(where, ": host code has no section of that name"));
    }
    if (section.sh_addr != 0) return Malformed(absl::StrCat(where, " has an address"));
    if (section.sh_addralign > 1 && !IsPowerOfTwoUpToAPage(section.sh_addralign)) {
      return Malformed(absl::StrCat(where, " is aligned to ", uint64_t{section.sh_addralign}));
    }
    if (section.sh_type == llvm::ELF::SHT_NOBITS) {
      if ((section.sh_flags & llvm::ELF::SHF_ALLOC) == 0) {
        return Malformed(absl::StrCat(where, " holds no bytes and is not allocated"));
      }
      if (section.sh_size > kMaxHostObjectZeroFillBytes - zero_fill) {
        return Malformed(absl::StrCat(where, " asks for more than ", kMaxHostObjectZeroFillBytes,
                                      " bytes of zero-initialised memory"));
      }
      zero_fill += section.sh_size;
    }
    if (section.sh_type == llvm::ELF::SHT_SYMTAB) {
      if (symbol_table != nullptr) return Malformed("more than one symbol table");
      symbol_table = &section;
    }
  }

  // Symbols.
  llvm::ArrayRef<Symbol> symbols;
  std::vector<llvm::StringRef> symbol_names;  // by index
  if (symbol_table != nullptr) {
    auto symbols_or = file->symbols(symbol_table);
    if (!symbols_or) return Malformed(llvm::toString(symbols_or.takeError()));
    symbols = *symbols_or;
    auto strings = file->getStringTableForSymtab(*symbol_table, sections);
    if (!strings) return Malformed(llvm::toString(strings.takeError()));
    if (!symbols.empty()) {
      const Symbol& null = symbols[0];
      if (null.st_name != 0 || null.st_info != 0 || null.st_other != 0 || null.st_shndx != 0 ||
          null.st_value != 0 || null.st_size != 0) {
        return Malformed("the first symbol is not the null symbol");
      }
    }
    absl::flat_hash_set<absl::string_view> names;
    symbol_names.resize(symbols.size());
    for (size_t i = 1; i < symbols.size(); ++i) {
      const Symbol& symbol = symbols[i];
      auto name = symbol.getName(*strings);
      if (!name) return Malformed(llvm::toString(name.takeError()));
      symbol_names[i] = *name;
      const std::string where = absl::StrCat("symbol ", i, " (", name->str(), ")");
      const Section* section = nullptr;
      if (absl::Status status = SymbolSection(symbol, sections, section); !status.ok()) {
        return Malformed(absl::StrCat(where, ": ", status.message()));
      }
      const bool local_section_or_file =
          symbol.getBinding() == llvm::ELF::STB_LOCAL &&
          (symbol.getType() == llvm::ELF::STT_SECTION || symbol.getType() == llvm::ELF::STT_FILE);
      if (section != nullptr && (section->sh_flags & llvm::ELF::SHF_ALLOC) == 0 &&
          !local_section_or_file) {
        return Malformed(absl::StrCat(where, " is defined in a section that is not allocated"));
      }
      if (symbol.st_shndx == llvm::ELF::SHN_COMMON) {
        if (!IsPowerOfTwoUpToAPage(symbol.st_value)) {
          return Malformed(absl::StrCat(where, " is aligned to ", uint64_t{symbol.st_value}));
        }
        if (symbol.st_size > kMaxHostObjectZeroFillBytes - zero_fill) {
          return Malformed(absl::StrCat(where, " asks for more than ", kMaxHostObjectZeroFillBytes,
                                        " bytes of zero-initialised memory"));
        }
        zero_fill += symbol.st_size;
      }
      if (!name->empty() && !names.insert(absl::string_view(name->data(), name->size())).second) {
        return Malformed(absl::StrCat(where, " is named twice"));
      }
    }
  }

  // Relocations.
  for (size_t i = 1; i < sections.size(); ++i) {
    const Section& section = sections[i];
    if (section.sh_type != llvm::ELF::SHT_RELA) continue;
    const std::string where = absl::StrCat("relocation section ", i);
    if (symbol_table == nullptr || section.sh_link >= sections.size() ||
        &sections[section.sh_link] != symbol_table) {
      return Malformed(absl::StrCat(where, " does not use the object's symbol table"));
    }
    if (section.sh_info == 0 || section.sh_info >= sections.size()) {
      return Malformed(absl::StrCat(where, " patches section ", uint64_t{section.sh_info},
                                    ", which does not exist"));
    }
    const Section& patched = sections[section.sh_info];
    if ((patched.sh_flags & llvm::ELF::SHF_ALLOC) == 0 ||
        patched.sh_type != llvm::ELF::SHT_PROGBITS) {
      return Malformed(absl::StrCat(where, " patches section ", uint64_t{section.sh_info},
                                    ", which is not allocated with contents"));
    }
    auto relocations = file->relas(section);
    if (!relocations) return Malformed(llvm::toString(relocations.takeError()));
    for (const auto& relocation : *relocations) {
      const uint32_t type = relocation.getType(/*isMips64EL=*/false);
      const uint32_t index = relocation.getSymbol(/*isMips64EL=*/false);
      const std::string at = absl::StrCat(where, " at offset ", uint64_t{relocation.r_offset});
      if (!IsAllowedRelocation(type)) {
        return Malformed(absl::StrCat(at, " has type ", type, ", not one host code uses"));
      }
      if (index == 0 || index >= symbols.size()) {
        return Malformed(absl::StrCat(at, " names symbol ", index, ", which does not exist"));
      }
      const Symbol& symbol = symbols[index];
      const Section* defined_in = nullptr;
      if (absl::Status status = SymbolSection(symbol, sections, defined_in); !status.ok()) {
        return Malformed(absl::StrCat(at, ": ", status.message()));
      }
      if (defined_in != nullptr && (defined_in->sh_flags & llvm::ELF::SHF_ALLOC) == 0) {
        return Malformed(absl::StrCat(at, " refers to a section that is not allocated"));
      }
      if (IsGotRelocation(type) && symbol_names[index].empty()) {
        return Malformed(absl::StrCat(at, " asks for a GOT entry of an unnamed symbol"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace tessera::runtime
