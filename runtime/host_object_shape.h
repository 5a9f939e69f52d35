// The shape of a host object the JIT links: what CompileHostObject emits, and nothing else a
// damaged or forged package could bring to JITLink. JITLink's ELF reader and passes trust
// their input (checks that are assertions only, unchecked reads through section and symbol
// indices, EH-frame parsing that ends in llvm_unreachable, fixups written wherever a relocation
// says), so everything they would read is checked here first, through LLVM's bounds-checked
// ELF accessors. Relocation and symbol bounds within blocks are checked on the link graph
// (runtime/link_graph_checks.h).
#ifndef TESSERA_RUNTIME_HOST_OBJECT_SHAPE_H_
#define TESSERA_RUNTIME_HOST_OBJECT_SHAPE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tessera::runtime {

/// The most zero-initialised memory (.bss and common symbols together) a host object may ask
/// the linker to allocate and clear.
inline constexpr uint64_t kMaxHostObjectZeroFillBytes = uint64_t{64} << 20;

/// OK when `object` is an x86-64 ELF64 relocatable object shaped as CompileHostObject emits it:
/// - a null section 0, then sections of the types PROGBITS, NOBITS (allocated), NOTE, SYMTAB
///   (one), STRTAB and RELA,
///   at address 0, aligned to a power of two up to 4096, none named `$__…` (JITLink's own) or
///   `.eh_frame` (host code carries no unwind tables);
/// - a null first symbol; every symbol's section index in range; defined symbols in allocated
///   sections (but local section and file symbols); names unique;
/// - relocations of the kinds the x86-64 code model uses (64, PC32, PLT32, 32, 32S, PC64,
///   GOTPCREL, GOTPCRELX, REX_GOTPCRELX) against the one symbol table, patching an allocated
///   section with contents, naming a symbol (GOT relocations a named one) that is not in a
///   non-allocated section;
/// - at most kMaxHostObjectZeroFillBytes of zero-initialised memory.
/// Otherwise InvalidArgument naming the section, symbol or relocation.
absl::Status CheckHostObjectShape(absl::string_view object);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_HOST_OBJECT_SHAPE_H_
