// tessera_jit_get_build_info: what the library is built from and what it found at run time.
#include "service/build_info.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "capi/include/tessera_jit.h"

extern "C" {

const char* tessera_jit_get_build_info(void) {
  static const std::string* info = new std::string(tessera::service::BuildInfoJson(
      absl::StrCat(TESSERA_JIT_API_MAJOR, ".", TESSERA_JIT_API_MINOR)));
  return info->c_str();
}

}  // extern "C"
