// libFuzzer target over tessera_jit_module_load: the bytes of an ahead-of-time package. The
// first byte chooses how the rest is used — as the whole package (the SHA-256 at its end must
// catch any change), or as a package body sealed here with a correct SHA-256, so that the
// mutations reach the entry table, the toolchain and machine checks and the artifact reader
// behind the digest. Loading must succeed or return an error, and a loaded module's entries
// are listed; it never crashes. The seeds are real packages (regressions/package).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/sha256.h"
#include "tessera_jit.h"
#include "tests/fuzz/fuzz_context.h"

using tessera::fuzz::MemoryOnlyHostContext;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) != 0) bytes += tessera::Sha256Hex(bytes);
  const char* target = (data[0] & 2) != 0 ? "nvptx" : nullptr;
  tessera_jit_module_t* module = nullptr;
  tessera_jit_error_t* error =
      tessera_jit_module_load(MemoryOnlyHostContext(), bytes.data(), bytes.size(), target,
                              target ? "sm_90" : nullptr, &module);
  if (error != nullptr) {
    if (module != nullptr) std::abort();  // an error leaves no module behind
    tessera_jit_error_destroy(error);
    return 0;
  }
  for (size_t i = 0; i < tessera_jit_module_get_entry_count(module); ++i) {
    size_t length = 0;
    if (tessera_jit_module_get_entry_name(module, i, &length) == nullptr) std::abort();
  }
  tessera_jit_module_destroy(module);
  return 0;
}
