// The identity of everything that shapes compiled code: an input to the compile cache key and
// the digest the arbiter's decision records are keyed by.
#ifndef TESSERA_JIT_CODEGEN_TOOLCHAIN_H_
#define TESSERA_JIT_CODEGEN_TOOLCHAIN_H_

#include <cstdint>
#include <string>

namespace tessera::jit {

struct Toolchain {
  std::string tessera;    ///< the compiler's build identity (jit/build_identity.h)
  std::string llvm;       ///< LLVM/MLIR version
  std::string cuda;       ///< CUDA toolkit headers the build used
  std::string nvjitlink;  ///< the nvJitLink actually loaded
  /// The CPU host machine code is generated for (runtime::HostCpu): part of the compile cache key,
  /// since the cache stores machine code.
  std::string host_cpu;

  /// This build and process (computed once).
  static const Toolchain& Current();
  /// "tessera 3f9a…, llvm 22.1.8, cuda 13.0, nvjitlink 13.0".
  std::string ToString() const;
};

/// The CUDA toolkit an nvptx compile reads at run time (libdevice for math functions).
struct CudaToolkitIdentity {
  std::string version;    ///< version.json's "cuda" version, else include/cuda.h's CUDA_VERSION
  std::string libdevice;  ///< XXH3-64 of nvvm/libdevice/libdevice.10.bc, 16 hex digits
                          ///< ("missing" when absent)
};

/// The identity of the toolkit at `root` (computed once per root per process). Thread-safe.
CudaToolkitIdentity DescribeCudaToolkit(const std::string& root);

/// A cheap stand-in for DescribeCudaToolkit: size, modification time and inode of libdevice,
/// version.json and cuda.h (three stat calls, once per root per process), for lookups that
/// must not read the toolkit — a toolkit replaced in place changes it for the next process.
/// Thread-safe.
std::string CudaToolkitFingerprint(const std::string& root);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_CODEGEN_TOOLCHAIN_H_
