// The CLI's one argument parser: each subcommand declares its flags and positionals, then
// parses argv in one call with uniform messages ("--arch needs a value", "unknown option
// '--x'", "unexpected argument 'y'").
#ifndef TESSERA_TOOLS_TESSERA_JIT_FLAGS_H_
#define TESSERA_TOOLS_TESSERA_JIT_FLAGS_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "service/compile_request.h"

namespace tessera::tools {

/// What a kernel image file holds, by its extension.
enum class KernelFile {
  kCudaSource,  ///< .cu: compiled in process with NVRTC for the compile's arch
  kPtx,         ///< .ptx
  kCubin,       ///< .cubin
};

/// The kind of `path` by extension; nullopt for any other file.
std::optional<KernelFile> KernelFileOf(const std::string& path);

/// The delegates a command registers: --library NAME=PATH, --kernel NAME=FILE (repeatable),
/// --default-libraries.
struct DelegateFlags {
  std::vector<std::pair<std::string, std::string>> libraries;
  std::vector<std::pair<std::string, std::string>> kernels;
  bool default_libraries = false;
};

class Flags {
 public:
  /// Handles a flag's value; returns an error message, or "" when the value is good.
  using Handler = std::function<std::string(const std::string& value)>;

  /// `--name VALUE`, handled by `handler`; `what` names the value in "needs …" messages.
  Flags& Value(const std::string& name, const std::string& what, Handler handler);
  /// `--name VALUE` stored in `out`.
  Flags& String(const std::string& name, std::string* out, const std::string& what = "a value");
  /// `--name N` stored in `out`, at least `minimum`.
  template <typename Integer>
  Flags& Int(const std::string& name, Integer* out, Integer minimum, const std::string& what) {
    return Value(name, what, [=](const std::string& value) {
      Integer parsed = 0;
      if (!absl::SimpleAtoi(value, &parsed) || parsed < minimum) {
        return absl::StrCat(name, " needs ", what, ", found '", value, "'");
      }
      *out = parsed;
      return std::string();
    });
  }
  /// `--name` (no value) sets `out`.
  Flags& Switch(const std::string& name, bool* out);
  /// The next bare argument goes to `out` (in declaration order).
  Flags& Positional(std::string* out);

  /// --library, --kernel and --default-libraries into `delegates`.
  Flags& Delegates(DelegateFlags* delegates);

  /// The common compile flags: --target, --arch, -O, --deterministic, --batch-invariant, the
  /// delegate flags, --matmul-delegate, --budget-ms, --plan, --plan-strict.
  Flags& CompileRequest(service::CompileRequest* options, DelegateFlags* delegates);

  /// Parses argv[first…]; an error message, or "".
  std::string Parse(int argc, char** argv, int first) const;

 private:
  struct Flag {
    bool takes_value = true;
    std::string what;
    Handler handler;
  };
  std::map<std::string, Flag> flags_;
  std::vector<std::string*> positionals_;
};

/// Parses NAME=PATH into `out`; false when malformed.
bool ParseLibrary(const std::string& text, std::vector<std::pair<std::string, std::string>>& out);

}  // namespace tessera::tools

#endif  // TESSERA_TOOLS_TESSERA_JIT_FLAGS_H_
