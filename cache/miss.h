// Why a tier missed: a reason callers can switch on, and a detail for people.
#ifndef TESSERA_CACHE_MISS_H_
#define TESSERA_CACHE_MISS_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tessera::cache {

enum class MissReason {
  kNotCached,   ///< no entry under the key (detail: e.g. "disk cache off")
  kTierOff,     ///< the tier is switched off (unwritable, full) or unreachable (a remote server)
  kStale,       ///< an entry for the same content by another producer (detail: what changed)
  kFormat,      ///< an entry in another payload format (detail: "4 → 5")
  kDamaged,     ///< a half-written, truncated, bit-flipped or unreadable entry (detail: which)
  kUnloadable,  ///< the entry is whole but its module does not load here
};

/// "not cached", "disk cache off", "stale", "artifact format", "damaged", "unloadable".
absl::string_view MissReasonName(MissReason reason);

struct Miss {
  MissReason reason = MissReason::kNotCached;
  std::string detail;

  /// The sentence a log line or `cache explain` shows, e.g. "stale: llvm 22.1.8 → 22.1.9",
  /// "checksum mismatch", "not cached (disk cache off)".
  std::string ToString() const;
};

}  // namespace tessera::cache

#endif  // TESSERA_CACHE_MISS_H_
