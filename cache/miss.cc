// Miss reasons as text.
#include "cache/miss.h"

#include "absl/strings/str_cat.h"

namespace tessera::cache {

absl::string_view MissReasonName(MissReason reason) {
  switch (reason) {
    case MissReason::kNotCached:
      return "not cached";
    case MissReason::kTierOff:
      return "disk cache off";
    case MissReason::kStale:
      return "stale";
    case MissReason::kFormat:
      return "artifact format";
    case MissReason::kDamaged:
      return "damaged";
    case MissReason::kUnloadable:
      return "unloadable";
  }
  return "unknown";
}

std::string Miss::ToString() const {
  switch (reason) {
    case MissReason::kNotCached:
      return detail.empty() ? "not cached" : absl::StrCat("not cached (", detail, ")");
    case MissReason::kStale:
      return detail.empty() ? "stale" : absl::StrCat("stale: ", detail);
    case MissReason::kFormat:
      return absl::StrCat("artifact format ", detail);
    case MissReason::kTierOff:
    case MissReason::kDamaged:
    case MissReason::kUnloadable:
      return detail.empty() ? std::string(MissReasonName(reason)) : detail;
  }
  return detail;
}

}  // namespace tessera::cache
