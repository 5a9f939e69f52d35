// The entry points JIT'd nvptx host code calls to load its device image and launch kernels
// (the `mgpu*` ABI that MLIR's gpu-to-llvm lowering emits), implemented on GpuRuntime. Launches
// go to the stream of the enclosing InvocationScope (runtime/invocation.h): an invoke
// enqueues on the caller's stream and returns without waiting.
#ifndef TESSERA_RUNTIME_LAUNCH_ENTRY_POINTS_H_
#define TESSERA_RUNTIME_LAUNCH_ENTRY_POINTS_H_

#include <string>
#include <utility>
#include <vector>

namespace tessera::runtime {

/// (name, address) of every `mgpu*` entry point, for HostExecutable's runtime symbols.
std::vector<std::pair<std::string, void*>> LaunchEntryPoints();

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_LAUNCH_ENTRY_POINTS_H_
