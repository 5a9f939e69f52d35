// Compile options: the envelope arch and the CUDA toolkit location.
#include "jit/compile_options.h"

#include <cstdlib>

#include "jit/codegen/cuda_libraries.h"

namespace tessera::jit {

std::string EnvelopeArch(const CompileOptions& options) {
  return options.target == Target::kHost ? "host" : options.arch;
}

std::string ResolveCudaToolkit(const CompileOptions& options) {
  if (!options.cuda_toolkit.empty()) return options.cuda_toolkit;
  return LibdeviceComponent().root;
}

}  // namespace tessera::jit
