// libFuzzer target over tessera_jit_compile, for both targets: the first byte picks the target
// (even: host, odd: nvptx), the rest is the source, passed with its exact length (no NUL).
// Every input must compile or fail with an error — never crash, leak past its buffer or abort.
// A module that compiles has each entry looked up (which JIT-links nvptx host code).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "tessera_jit.h"
#include "tests/fuzz/fuzz_context.h"

using tessera::fuzz::MemoryOnlyHostContext;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  tessera_jit_compile_options_t options;
  tessera_jit_compile_options_init(&options);
  options.target = (data[0] & 1) != 0 ? "nvptx" : "host";
  options.arch = "sm_90";
  tessera_jit_module_t* module = nullptr;
  tessera_jit_error_t* error =
      tessera_jit_compile(MemoryOnlyHostContext(), reinterpret_cast<const char*>(data + 1),
                          size - 1, &options, &module);
  if (error != nullptr) {
    // Every failure has a code and a message.
    if (tessera_jit_error_code(error) == TESSERA_JIT_OK) std::abort();
    size_t length = 0;
    if (tessera_jit_error_message(error, &length) == nullptr || length == 0) std::abort();
    tessera_jit_error_destroy(error);
    return 0;
  }
  for (size_t i = 0; i < tessera_jit_module_get_entry_count(module); ++i) {
    size_t length = 0;
    const char* name = tessera_jit_module_get_entry_name(module, i, &length);
    tessera_jit_function_t* function = nullptr;
    tessera_jit_error_destroy(tessera_jit_module_get_function(module, name, length, &function));
  }
  tessera_jit_module_destroy(module);
  return 0;
}
