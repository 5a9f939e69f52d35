// The delegation contract's terms.
#include "dialect/DelegationContract.h"

#include <cmath>
#include <cstdio>

#include "dialect/ArchEnvelope.h"

namespace tessera {
namespace {

/// Spells a bound the same way on every platform: `nan`, `inf`, `-inf` or `%e`.
std::string FormatBound(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[64];
  std::snprintf(text, sizeof(text), "%e", value);
  return text;
}

std::string OneOf(std::string_view field, std::string_view first, std::string_view second,
                  std::string_view found) {
  return std::string(field) + " must be " + std::string(first) + " or " + std::string(second) +
         ", found '" + std::string(found) + "'";
}

}  // namespace

std::optional<std::string> CheckContractTerms(const ContractTerms& terms) {
  if (terms.arch.empty()) return std::string("requires a non-empty `arch`");
  std::string envelope_error;
  if (!ParseArchEnvelope(terms.arch, &envelope_error)) return envelope_error;
  if (terms.provenance && *terms.provenance != "vendor_library" &&
      *terms.provenance != "handwritten_kernel") {
    return OneOf("provenance", "vendor_library", "handwritten_kernel", *terms.provenance);
  }
  if (terms.covers && *terms.covers != "root_only" && *terms.covers != "whole_region") {
    return OneOf("covers", "root_only", "whole_region", *terms.covers);
  }
  if (terms.determinism != "deterministic" && terms.determinism != "nondeterministic") {
    return OneOf("determinism", "deterministic", "nondeterministic", terms.determinism);
  }
  for (const auto& [name, bound] :
       {std::pair<const char*, std::optional<double>>{"tolerance", terms.tolerance},
        {"tolerance_rel", terms.tolerance_rel}}) {
    if (bound && !(std::isfinite(*bound) && *bound > 0.0)) {
      return std::string("`") + name + "` must be finite and greater than zero, found " +
             FormatBound(*bound);
    }
  }
  const bool has_bound = terms.tolerance.has_value() || terms.tolerance_rel.has_value();
  if (terms.accuracy == "tolerance_bounded") {
    if (!has_bound) {
      return std::string("accuracy=tolerance_bounded requires `tolerance` and/or `tolerance_rel`");
    }
  } else if (terms.accuracy == "reference_exact") {
    if (has_bound) return std::string("accuracy=reference_exact must not carry a tolerance");
  } else {
    return OneOf("accuracy", "reference_exact", "tolerance_bounded", terms.accuracy);
  }
  return std::nullopt;
}

}  // namespace tessera
