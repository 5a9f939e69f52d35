// Running an entry function from the command line: random inputs of the requested shapes, a
// checksum, timing, and host-vs-device agreement when both run. Shared by `tessera-jit run`
// and the REPL; built on the C API.
#ifndef TESSERA_TOOLS_TESSERA_JIT_RUNNER_H_
#define TESSERA_TOOLS_TESSERA_JIT_RUNNER_H_

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "tools/tessera-jit/flags.h"

namespace tessera::tools {

struct RunOptions {
  std::string entry;
  /// "auto" (nvptx when a GPU is present, else host), "host" or "nvptx".
  std::string target = "auto";
  std::string arch;  ///< empty: the device's
  /// The size of every dynamic dimension unless --shape gives the argument's shape.
  int64_t size = 64;
  std::map<int, std::vector<int64_t>> shapes;  ///< argument index → shape
  std::map<int, double> scalars;               ///< argument index → value (default 1)
  int runs = 10;
  uint32_t seed = 1;
  /// Delegates: libraries and kernel images to register, the target's default set, and a matmul
  /// provider for the run on the chosen target (the host reference never uses one).
  DelegateFlags delegates;
  std::string matmul_delegate;
};

/// Compiles `source` (or loads it, when it is an ahead-of-time package), runs `options.entry`
/// and prints the report to `out`. Returns the process
/// exit status (0 on success); errors are printed to `out` with their code.
int RunEntry(const std::string& source, const std::string& source_name, const RunOptions& options,
             std::ostream& out);

/// Parses "4x784" (or "" for a rank-0 shape); false on malformed text.
bool ParseShape(const std::string& text, std::vector<int64_t>& shape);

}  // namespace tessera::tools

#endif  // TESSERA_TOOLS_TESSERA_JIT_RUNNER_H_
