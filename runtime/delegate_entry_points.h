// The entry points JIT'd host code calls around delegate calls: a process-wide dispatch counter
// (the proof that a refused plan dispatched nothing), status checks of vendor calls, and — from
// the invocation's registry (runtime/delegate_state.h) — the cuBLAS handle bound to the
// caller's stream and launches of kernels from registered images.
#ifndef TESSERA_RUNTIME_DELEGATE_ENTRY_POINTS_H_
#define TESSERA_RUNTIME_DELEGATE_ENTRY_POINTS_H_

#include <cstdint>
#include <string>

#include "runtime/host_executable.h"

namespace tessera::runtime {

/// Delegate calls made by JIT'd code in this process so far.
uint64_t DelegateDispatchCount();

/// (name, address) of every `tessera_rt_*` entry point, for HostExecutable's runtime symbols.
RuntimeSymbolList DelegateEntryPoints();

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_DELEGATE_ENTRY_POINTS_H_
