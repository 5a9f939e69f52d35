// Ahead-of-time packages: compiled modules as bytes a program ships and loads later — in
// another process, on another machine — with no code generation and no cache directory
// (PJRT's Executable_Serialize / DeserializeAndLoad; the original Tessera's AOT manifest).
//
// A package holds one entry per target it was compiled for (the host CPU it was made on or a
// named x86-64 CPU — several may be there — or an nvptx arch), each an artifact
// (service/artifact.h) with the identity of what made it. Loading picks the entry that fits this
// machine; a package that fits nothing is FAILED_PRECONDITION naming what differs. Bytes that are
// not a whole package of this format (truncated, flipped, foreign, absurd counts) are DATA_LOSS or
// INVALID_ARGUMENT, never a crash: a SHA-256 of the contents guards every byte, and every length is
// checked against what is left.
#ifndef TESSERA_SERVICE_PACKAGE_H_
#define TESSERA_SERVICE_PACKAGE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jit/compile_options.h"
#include "jit/compiled_module.h"

namespace tessera::service {

/// The package format; another version is refused (the artifacts inside change with it).
inline constexpr int kPackageFormatVersion = 1;
/// At most this many entries (targets) in one package.
inline constexpr uint64_t kMaxPackageEntries = 64;

/// One target's compiled module and what must match for it to load.
struct PackageEntry {
  runtime::Target target = runtime::Target::kHost;
  /// host: the CPU its machine code is for (runtime::HostTarget::id: this machine's
  /// runtime::HostCpu(), or a named CPU such as "x86-64-v3"); nvptx: the arch ("sm_90").
  std::string machine;
  /// What else made it, as "name=value" lines in a fixed order: the compiler's build identity,
  /// LLVM, the CUDA headers, the artifact format. All must equal this build's to load.
  std::string toolchain;
  /// service::SerializeArtifact of the module.
  std::string artifact;
};

/// The entry for a compiled module, made by this build on this machine.
PackageEntry MakePackageEntry(const jit::CompiledModule& module);

/// The toolchain lines of this build (PackageEntry::toolchain).
std::string CurrentPackageToolchain();

/// The package's bytes. At most kMaxPackageEntries entries, at most one per (target, machine).
absl::StatusOr<std::string> WritePackage(const std::vector<PackageEntry>& entries);

/// The entries back: DATA_LOSS when `bytes` are damaged (truncated, altered, trailing bytes),
/// INVALID_ARGUMENT when they are not a Tessera package at all or of another format version.
absl::StatusOr<std::vector<PackageEntry>> ReadPackage(absl::string_view bytes);

/// The entry that serves `target` here, made by this build: host — code for this machine's
/// exact CPU if the package has it, else, among the named CPUs whose features this CPU has,
/// the one with the widest vectors, then the most features; nvptx — code for `arch`.
/// FAILED_PRECONDITION naming, for every entry, what differs (for a named CPU, the features this
/// one lacks).
absl::StatusOr<const PackageEntry*> SelectPackageEntry(const std::vector<PackageEntry>& entries,
                                                       runtime::Target target,
                                                       const std::string& arch);

}  // namespace tessera::service

#endif  // TESSERA_SERVICE_PACKAGE_H_
