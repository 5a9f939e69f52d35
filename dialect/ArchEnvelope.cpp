// Arch envelopes: the grammar and the match against a compile.
#include "dialect/ArchEnvelope.h"

#include <cctype>

namespace tessera {
namespace {

/// The version of `sm_<digits>` (at most three digits, no leading zero), with what follows the
/// digits left in `rest`; nullopt when `text` does not start that way.
std::optional<int> ParseVersion(std::string_view text, std::string_view* rest) {
  if (text.substr(0, 3) != "sm_") return std::nullopt;
  size_t end = 3;
  int version = 0;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])) && end < 6) {
    version = version * 10 + (text[end] - '0');
    ++end;
  }
  if (end == 3 || text[3] == '0' ||
      (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])))) {
    return std::nullopt;
  }
  *rest = text.substr(end);
  return version;
}

}  // namespace

std::optional<GpuArch> ParseGpuArch(std::string_view text) {
  std::string_view rest;
  std::optional<int> version = ParseVersion(text, &rest);
  if (!version || (rest != "" && rest != "a")) return std::nullopt;
  return GpuArch{*version, rest == "a"};
}

std::optional<ArchEnvelope> ParseArchEnvelope(std::string_view text, std::string* error) {
  if (text == "host") return ArchEnvelope{ArchEnvelope::Kind::kHost, 0};
  std::string_view rest;
  std::optional<int> version = ParseVersion(text, &rest);
  if (version && rest.empty()) return ArchEnvelope{ArchEnvelope::Kind::kExactly, *version};
  if (version && rest == "+") return ArchEnvelope{ArchEnvelope::Kind::kOrNewer, *version};
  if (version && rest == "a") return ArchEnvelope{ArchEnvelope::Kind::kArchSpecific, *version};
  if (error != nullptr) {
    *error =
        std::string(
            "expected `arch` to be an envelope: `sm_90` (exactly), `sm_80+` (that "
            "arch or newer), `sm_90a` (an arch-specific feature set) or `host` "
            "(a host C-ABI delegate)") +
        (version && rest == "a+" ? "; arch-specific features do not carry to newer GPUs" : "") +
        ", found '" + std::string(text) + "'";
  }
  return std::nullopt;
}

bool EnvelopeIncludes(const ArchEnvelope& envelope, std::string_view compile_arch) {
  if (envelope.kind == ArchEnvelope::Kind::kHost) return compile_arch == "host";
  std::optional<GpuArch> arch = ParseGpuArch(compile_arch);
  if (!arch) return false;
  switch (envelope.kind) {
    case ArchEnvelope::Kind::kExactly:
      return arch->version == envelope.version;
    case ArchEnvelope::Kind::kOrNewer:
      return arch->version >= envelope.version;
    case ArchEnvelope::Kind::kArchSpecific:
      return arch->version == envelope.version && arch->arch_specific;
    case ArchEnvelope::Kind::kHost:
      break;
  }
  return false;
}

std::string DescribeEnvelope(const ArchEnvelope& envelope) {
  const std::string sm = "sm_" + std::to_string(envelope.version);
  switch (envelope.kind) {
    case ArchEnvelope::Kind::kHost:
      return "the host target only";
    case ArchEnvelope::Kind::kExactly:
      return sm + " (or " + sm + "a) only";
    case ArchEnvelope::Kind::kOrNewer:
      return sm + " or newer";
    case ArchEnvelope::Kind::kArchSpecific:
      return sm + "a only";
  }
  return "";
}

}  // namespace tessera
