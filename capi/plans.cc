// Plans: the decisions a context's compiles made, written as a plan file that
// tessera_jit_context_options_t.plan_path replays (docs/arbiter.md).
#include <unistd.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "capi/handles.h"

using tessera::capi::InvalidArgument;
using tessera::capi::MakeError;

extern "C" {

tessera_jit_error_t* tessera_jit_context_write_plan(tessera_jit_context_t* context,
                                                    const char* path, size_t path_size) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (path == nullptr || path_size == 0) return InvalidArgument("path is NULL or empty");
  const std::string target(path, path_size);
  if (target.find('\0') != std::string::npos) return InvalidArgument("path has a NUL byte");
  std::string text;
  {
    absl::MutexLock lock(&context->mu);
    text = context->decided.ToJson();
  }
  // Written beside the target and renamed, so a reader never sees half a plan.
  const std::string temporary =
      absl::StrCat(target, ".tmp.", getpid(), ".", reinterpret_cast<uintptr_t>(&text));
  if (!tessera::WriteFile(temporary, text)) {
    std::remove(temporary.c_str());
    return MakeError(
        absl::UnavailableError(absl::StrCat("cannot write the plan file '", target, "'")));
  }
  if (std::rename(temporary.c_str(), target.c_str()) != 0) {
    std::remove(temporary.c_str());
    return MakeError(absl::UnavailableError(
        absl::StrCat("cannot write the plan file '", target, "' (rename failed)")));
  }
  return nullptr;
}

}  // extern "C"
