// Errors at the C boundary: statuses with escaped messages, and the error accessors.
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "capi/handles.h"

namespace tessera::capi {
namespace {

/// `text` with control bytes other than newline and tab written as `\xNN`: user bytes quoted
/// in a message (a name with a NUL in it) never cut or garble it for a C caller.
std::string EscapeControlBytes(absl::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7f) {
      absl::StrAppend(&escaped, "\\x", absl::Hex(byte, absl::kZeroPad2));
    } else {
      escaped.push_back(c);
    }
  }
  return escaped;
}

}  // namespace

tessera_jit_error_t* MakeError(absl::Status status) {
  if (status.ok()) return nullptr;
  return new tessera_jit_error{absl::Status(status.code(), EscapeControlBytes(status.message()))};
}

tessera_jit_error_t* InvalidArgument(absl::string_view message) {
  return MakeError(absl::InvalidArgumentError(message));
}

absl::Status CheckStructSize(size_t given, size_t minimum, absl::string_view name) {
  if (given >= minimum) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(name, ".struct_size is ", given,
                                                 "; expected at least ", minimum,
                                                 " (initialise it with ", name, "'s _init)"));
}

}  // namespace tessera::capi

extern "C" {

void tessera_jit_get_api_version(int* out_major, int* out_minor) {
  if (out_major != nullptr) *out_major = TESSERA_JIT_API_MAJOR;
  if (out_minor != nullptr) *out_minor = TESSERA_JIT_API_MINOR;
}

tessera_jit_error_code_t tessera_jit_error_code(const tessera_jit_error_t* error) {
  return error == nullptr ? TESSERA_JIT_OK
                          : static_cast<tessera_jit_error_code_t>(error->status.code());
}

const char* tessera_jit_error_message(const tessera_jit_error_t* error, size_t* out_size) {
  if (error == nullptr) {
    if (out_size != nullptr) *out_size = 0;
    return "";
  }
  if (out_size != nullptr) *out_size = error->status.message().size();
  return error->status.message().data();
}

void tessera_jit_error_destroy(tessera_jit_error_t* error) { delete error; }

}  // extern "C"
