// Native host code for the entry functions of a module, JIT-linked with LLVM ORC inside a
// trust boundary: external symbols resolve only against a fixed allowlist of C library
// functions the lowering emits (allocation, memcpy/memset, libm, soft-float helpers).
#ifndef TESSERA_RUNTIME_HOST_EXECUTABLE_H_
#define TESSERA_RUNTIME_HOST_EXECUTABLE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/call_once.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/host_target.h"

namespace llvm {
namespace orc {
class JITDylib;
}  // namespace orc
}  // namespace llvm

namespace tessera::runtime {

/// The packed calling convention of every host entry point: `args[i]` points at argument i —
/// at a memref descriptor (`{T* allocated; T* aligned; int64_t offset; int64_t sizes[rank];
/// int64_t strides[rank];}`) for a memref, at the value for a scalar — and, for an entry that
/// returns a scalar, `args[num_args]` points at storage for the result.
using PackedEntry = void (*)(void** args);

/// Prefix of the packed wrapper symbol generated for entry function `f`.
inline constexpr absl::string_view kPackedEntryPrefix = "_tessera_packed_";

/// Whether `name` is a symbol JIT'd host code may resolve outside its own module.
bool IsAllowedHostSymbol(absl::string_view name);

/// Symbols of the service's own runtime that host code may call: (name, address).
using RuntimeSymbolList = std::vector<std::pair<std::string, void*>>;

/// A module's host code as machine code for one CPU: what the compile cache stores, so a hit
/// links it and generates no code.
struct HostObject {
  std::string object;  ///< a relocatable object file (ELF)
  std::string cpu;     ///< the CPU it was generated for (HostTarget::id)
  /// The module's static constructors and destructors, renamed `_tessera_init_<i>` /
  /// `_tessera_fini_<i>`, in the order they run.
  std::vector<std::string> initializers;
  std::vector<std::string> finalizers;
};

/// OK when `object` has the shape CompileHostObject gives it (CheckHostObjectShape: nothing a
/// forged object could use to make JITLink read or write outside it) and every external symbol
/// it needs is in the allowlist or `runtime` — read before anything is linked; InvalidArgument
/// naming what is not. (Relocation and symbol bounds are checked on the link graph, at Load.)
absl::Status CheckHostObject(const HostObject& object, const RuntimeSymbolList& runtime);

/// One module's host code, linked into its own JITDylib of the process's one ORC session (so a
/// load pays for linking its object, not for a session, a linker and a target machine).
/// Thread-safe.
class HostExecutable {
 public:
  /// Links `object` (which must define `_tessera_packed_<name>` for every name in `entries`)
  /// with ORC's object linking layer and resolves every entry now, so a missing or forbidden
  /// symbol is an InvalidArgument naming it. Besides the allowlist, external symbols resolve
  /// against `runtime` only. FailedPrecondition when the object was generated for a CPU whose
  /// code does not run here (CheckHostCodeRunsHere).
  /// The static constructors and destructors do not run here: see RunInitializers.
  static absl::StatusOr<std::unique_ptr<HostExecutable>> Load(
      const HostObject& object, const std::vector<std::string>& entries,
      const RuntimeSymbolList& runtime = {});

  ~HostExecutable();
  HostExecutable(const HostExecutable&) = delete;
  HostExecutable& operator=(const HostExecutable&) = delete;

  /// The packed entry point of entry function `name`; NotFound when there is none.
  absl::StatusOr<PackedEntry> Lookup(absl::string_view name) const;

  /// Runs the module's static constructors, once, on the calling thread; the destructors run
  /// when the executable is destroyed. The caller provides whatever context they need (for
  /// device code: an InvocationScope). No-op for modules without constructors.
  void RunInitializers();

 private:
  HostExecutable(llvm::orc::JITDylib* dylib, std::vector<std::string> initializers,
                 std::vector<std::string> finalizers);
  void RunAll(const std::vector<std::string>& functions) const;

  /// This module's code and symbols, in the process's one ORC session (removed with it).
  llvm::orc::JITDylib* dylib_;
  std::vector<std::string> initializers_;
  std::vector<std::string> finalizers_;
  absl::once_flag initialized_;
  bool ran_initializers_ = false;
};

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_HOST_EXECUTABLE_H_
