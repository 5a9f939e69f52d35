// Run-time checks in JIT'd host code that fail as a status, not an abort: user IR that indexes
// memrefs itself gets MLIR's runtime verification (bounds of memref.load/store/dim/copy…),
// whose failures call tessera_rt_check_failed(id); inside CallChecked that returns control to
// the caller, skipping the rest of the entry, and reports which check failed.
#ifndef TESSERA_RUNTIME_CHECKED_CALL_H_
#define TESSERA_RUNTIME_CHECKED_CALL_H_

#include <cstdint>

#include "runtime/host_executable.h"

namespace tessera::runtime {

/// The symbol the lowered checks call: `void tessera_rt_check_failed(int64_t id)`.
inline constexpr char kCheckFailedSymbol[] = "tessera_rt_check_failed";

/// Calls `entry(args)`. Returns -1 when it ran to the end, else the id of the run-time check
/// that failed (the entry was left at that point: nothing after the check ran, and memory it
/// allocated is not freed). Reentrant and thread-safe (the state is per thread).
int64_t CallChecked(PackedEntry entry, void** args);

/// (name, address) of the check-failure entry point, for HostExecutable's runtime symbols.
RuntimeSymbolList RuntimeCheckSymbols();

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_CHECKED_CALL_H_
