// Arch envelopes: which compiles a delegate can serve (docs/ir.md "Arch envelopes"). Shared by
// the `tessera_nvidia` verifier (the grammar), provider declarations and the compiler (the
// match against a compile's target and arch). No MLIR.
#ifndef TESSERA_DIALECT_ARCHENVELOPE_H_
#define TESSERA_DIALECT_ARCHENVELOPE_H_

#include <optional>
#include <string>
#include <string_view>

namespace tessera {

/// A GPU architecture as a compile names it: `sm_90` → {90, false}, `sm_90a` → {90, true}.
struct GpuArch {
  int version = 0;             ///< the compute capability as major*10 + minor: 75 … 121
  bool arch_specific = false;  ///< the `a` feature set (runs on exactly that hardware)
};

/// `sm_<digits>` or `sm_<digits>a`; nullopt otherwise.
std::optional<GpuArch> ParseGpuArch(std::string_view text);

/// A delegate's declared envelope.
struct ArchEnvelope {
  enum class Kind {
    kHost,          ///< `host`: a host C-ABI delegate; host compiles only
    kExactly,       ///< `sm_90`: that GPU (a compile for sm_90 or sm_90a)
    kOrNewer,       ///< `sm_80+`: that GPU or any newer one
    kArchSpecific,  ///< `sm_90a`: that arch-specific feature set (a compile for sm_90a only)
  };
  Kind kind = Kind::kHost;
  int version = 0;  ///< the GPU version for the sm_ kinds
};

/// The envelope `text` spells, or a sentence saying what was expected.
std::optional<ArchEnvelope> ParseArchEnvelope(std::string_view text, std::string* error);

/// Whether `envelope` includes a compile for `compile_arch`: "host" for the host target, a GPU
/// arch (`sm_90`, `sm_90a`) for nvptx.
bool EnvelopeIncludes(const ArchEnvelope& envelope, std::string_view compile_arch);

/// What `envelope` includes, for messages: "the host target only", "sm_90 (or sm_90a) only",
/// "sm_80 or newer", "sm_90a only".
std::string DescribeEnvelope(const ArchEnvelope& envelope);

}  // namespace tessera

#endif  // TESSERA_DIALECT_ARCHENVELOPE_H_
