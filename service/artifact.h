// The on-disk form of a compiled module: everything Compile produced except the live JIT (which
// is rebuilt from the host code's LLVM IR on load).
#ifndef TESSERA_SERVICE_ARTIFACT_H_
#define TESSERA_SERVICE_ARTIFACT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "jit/compiled_module.h"

namespace tessera::service {

/// The artifact format; a different version on disk is a miss.
inline constexpr int kArtifactFormatVersion =
    9;  // 2: delegates; 3: arbiter decisions; 4: shape contracts;
        // 5: run-time guards in host code;
        // 6: host machine code (runtime::HostObject);
        // 7: size relations in shape contracts;
        // 8: no `arbitrate` option (only the compiler's own recompiles turn it off);
        // 9: argument overlaps in contracts (runtime::ArgumentOverlap)

/// Serializes `module` (options, entries, host LLVM IR and machine code, decision records,
/// device images).
std::string SerializeArtifact(const jit::CompiledModule& module);

/// The module back, without CompiledModule::host; DataLoss when `bytes` is not a well-formed
/// artifact of this format version.
absl::StatusOr<std::unique_ptr<jit::CompiledModule>> DeserializeArtifact(const std::string& bytes);

}  // namespace tessera::service

#endif  // TESSERA_SERVICE_ARTIFACT_H_
