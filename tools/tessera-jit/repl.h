// `tessera-jit repl`: an interactive session — paste or load Tessera IR, list its entries, run
// and time an entry with random inputs, show its PTX.
#ifndef TESSERA_TOOLS_TESSERA_JIT_REPL_H_
#define TESSERA_TOOLS_TESSERA_JIT_REPL_H_

#include <istream>
#include <ostream>

namespace tessera::tools {

/// Reads commands and IR lines from `in` until :quit or end of input; `prompt` prints a prompt
/// before each line (for terminals). Returns 0.
int RunRepl(std::istream& in, std::ostream& out, bool prompt);

}  // namespace tessera::tools

#endif  // TESSERA_TOOLS_TESSERA_JIT_REPL_H_
