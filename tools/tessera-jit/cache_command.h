// `tessera-jit cache stats|ls|explain FILE|clear`: inspect and clear the compile cache on disk.
#ifndef TESSERA_TOOLS_TESSERA_JIT_CACHE_COMMAND_H_
#define TESSERA_TOOLS_TESSERA_JIT_CACHE_COMMAND_H_

#include <ostream>

namespace tessera::tools {

/// argv[0] is the program, argv[1] "cache". Returns the exit status.
int RunCacheCommand(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace tessera::tools

#endif  // TESSERA_TOOLS_TESSERA_JIT_CACHE_COMMAND_H_
