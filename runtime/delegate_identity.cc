// Names and one-line forms of the delegate vocabulary.
#include "runtime/delegate_identity.h"

#include "absl/strings/str_cat.h"

namespace tessera::runtime {

absl::string_view PointerSpaceName(PointerSpace space) {
  switch (space) {
    case PointerSpace::kInferred:
      return "inferred";
    case PointerSpace::kHost:
      return "host";
    case PointerSpace::kDevice:
      return "device";
  }
  return "unknown";
}

std::string DelegateIdentity::ToString() const {
  const std::string space =
      kind == "library" ? absl::StrCat(", ", PointerSpaceName(pointers), " pointers") : "";
  return absl::StrCat(name, " (", kind, space, ") ", soname.empty() ? "" : soname + " ",
                      version.empty() ? "" : version + " ", "sha256:", sha256.substr(0, 16),
                      path.empty() ? "" : " " + path);
}

std::string MatmulProvider::ToString() const {
  return absl::StrCat("matmul provider ", name, ": ", callee, " (", abi, ") in ", library, " for ",
                      TargetName(target), " ", arch, ", ", provenance, ", ", covers, ", ",
                      determinism, ", ", accuracy,
                      tolerance ? absl::StrCat(", tolerance ", *tolerance) : "",
                      tolerance_rel ? absl::StrCat(", tolerance_rel ", *tolerance_rel) : "");
}

}  // namespace tessera::runtime
