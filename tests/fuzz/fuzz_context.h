// The context the compile and package fuzzers share: host by default, a memory-only cache
// (nothing left behind, nothing stale reused), errors only on stderr. Made once per process;
// aborts if it cannot be made (the fuzzer cannot run without it).
#ifndef TESSERA_TESTS_FUZZ_FUZZ_CONTEXT_H_
#define TESSERA_TESTS_FUZZ_FUZZ_CONTEXT_H_

#include <cstdlib>

#include "tessera_jit.h"

namespace tessera::fuzz {

inline tessera_jit_context_t* MemoryOnlyHostContext() {
  static tessera_jit_context_t* context = [] {
    tessera_jit_context_options_t options;
    tessera_jit_context_options_init(&options);
    options.default_target = "host";
    options.cache_dir = "";
    options.cache_memory_bytes = 64 << 20;
    options.log_level = TESSERA_JIT_LOG_ERROR;
    tessera_jit_context_t* created = nullptr;
    if (tessera_jit_context_create(&options, &created) != nullptr) std::abort();
    return created;
  }();
  return context;
}

}  // namespace tessera::fuzz

#endif  // TESSERA_TESTS_FUZZ_FUZZ_CONTEXT_H_
