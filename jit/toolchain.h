// The versions of everything that shapes compiled code: an input to the compile cache key and
// the digest the arbiter's decision records are keyed by.
#ifndef TESSERA_JIT_TOOLCHAIN_H_
#define TESSERA_JIT_TOOLCHAIN_H_

#include <string>

namespace tessera::jit {

struct Toolchain {
  std::string tessera;    ///< Tessera's own version
  std::string llvm;       ///< LLVM/MLIR version
  std::string cuda;       ///< CUDA toolkit headers the build used
  std::string nvjitlink;  ///< the nvJitLink actually loaded

  /// This build and process (computed once).
  static const Toolchain& Current();
  /// "tessera 0.1.0, llvm 22.1.8, cuda 13.0, nvjitlink 13.0".
  std::string ToString() const;
};

}  // namespace tessera::jit

#endif  // TESSERA_JIT_TOOLCHAIN_H_
