// The CLI's argument parser.
#include "tools/tessera-jit/flags.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "arbiter/plan.h"

namespace tessera::tools {

bool ParseLibrary(const std::string& text, std::vector<std::pair<std::string, std::string>>& out) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) return false;
  out.emplace_back(text.substr(0, eq), text.substr(eq + 1));
  return true;
}

Flags& Flags::Value(const std::string& name, const std::string& what, Handler handler) {
  flags_[name] = Flag{true, what, std::move(handler)};
  return *this;
}

Flags& Flags::String(const std::string& name, std::string* out, const std::string& what) {
  return Value(name, what, [out](const std::string& value) {
    *out = value;
    return std::string();
  });
}

Flags& Flags::Switch(const std::string& name, bool* out) {
  flags_[name] = Flag{false, "", [out](const std::string&) {
                        *out = true;
                        return std::string();
                      }};
  return *this;
}

Flags& Flags::Positional(std::string* out) {
  positionals_.push_back(out);
  return *this;
}

std::optional<KernelFile> KernelFileOf(const std::string& path) {
  auto ends = [&](absl::string_view suffix) { return absl::EndsWith(path, suffix); };
  if (ends(".cu")) return KernelFile::kCudaSource;
  if (ends(".ptx")) return KernelFile::kPtx;
  if (ends(".cubin")) return KernelFile::kCubin;
  return std::nullopt;
}

Flags& Flags::Delegates(DelegateFlags* delegates) {
  Value("--library", "NAME=PATH", [delegates](const std::string& value) {
    return ParseLibrary(value, delegates->libraries)
               ? std::string()
               : absl::StrCat("--library needs NAME=PATH, found '", value, "'");
  });
  Value("--kernel", "NAME=FILE", [delegates](const std::string& value) {
    if (!ParseLibrary(value, delegates->kernels) ||
        !KernelFileOf(delegates->kernels.back().second)) {
      return absl::StrCat(
          "--kernel needs NAME=FILE with a FILE ending in .cu, .ptx or .cubin, "
          "found '",
          value, "'");
    }
    return std::string();
  });
  Switch("--default-libraries", &delegates->default_libraries);
  return *this;
}

Flags& Flags::CompileRequest(service::CompileRequest* options, DelegateFlags* delegates) {
  Value("--target", "host or nvptx", [options](const std::string& value) {
    auto target = runtime::ParseTarget(value);
    if (!target.ok()) return std::string(target.status().message());
    options->target = *target;
    return std::string();
  });
  String("--arch", &options->arch);
  String("--host-cpu", &options->host_cpu, "a CPU name");
  Int("-O", &options->opt_level, 0, "a level 0-3");
  Switch("--deterministic", &options->deterministic);
  Switch("--batch-invariant", &options->batch_invariant);
  flags_["--ptx-only"] = Flag{false, "", [options](const std::string&) {
                                options->link_cubin = false;
                                return std::string();
                              }};
  Delegates(delegates);
  String("--matmul-delegate", &options->matmul_delegate, "a provider");
  Value("--budget-ms", "milliseconds (1-3600000)", [options](const std::string& value) {
    double ms = 0;
    if (!absl::SimpleAtod(value, &ms) || !(ms >= 1) || ms > 3.6e6) {
      return absl::StrCat("--budget-ms needs milliseconds in [1, 3600000], found '", value, "'");
    }
    options->arbitration_budget_ms = ms;
    return std::string();
  });
  Value("--plan", "a plan file", [options](const std::string& value) {
    auto plan = arbiter::Plan::Load(value);
    if (!plan.ok()) return std::string(plan.status().message());
    options->plan = *std::move(plan);
    return std::string();
  });
  Switch("--plan-strict", &options->plan_strict);
  return *this;
}

std::string Flags::Parse(int argc, char** argv, int first) const {
  size_t positional = 0;
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    if (auto it = flags_.find(arg); it != flags_.end()) {
      std::string value;
      if (it->second.takes_value) {
        if (i + 1 >= argc) return absl::StrCat(arg, " needs ", it->second.what);
        value = argv[++i];
      }
      if (std::string error = it->second.handler(value); !error.empty()) return error;
    } else if (!arg.empty() && arg[0] == '-') {
      return absl::StrCat("unknown option '", arg, "'");
    } else if (positional < positionals_.size()) {
      *positionals_[positional++] = arg;
    } else {
      return absl::StrCat("unexpected argument '", arg, "'");
    }
  }
  return "";
}

}  // namespace tessera::tools
