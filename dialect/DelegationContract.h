// The delegation contract's terms (docs/design.md §4, docs/ir.md), checked the same way wherever a
// delegate is declared: on a `tessera_nvidia` op by its verifier, and on a matmul provider a
// host declares through the C API. No MLIR.
#ifndef TESSERA_DIALECT_DELEGATIONCONTRACT_H_
#define TESSERA_DIALECT_DELEGATIONCONTRACT_H_

#include <optional>
#include <string>
#include <string_view>

namespace tessera {

/// The terms every delegate declares (values as the IR spells them).
struct ContractTerms {
  std::string_view arch;
  /// "vendor_library" | "handwritten_kernel"; nullopt for a delegate without one (inline_ptx).
  std::optional<std::string_view> provenance;
  /// "root_only" | "whole_region"; nullopt for a delegate without one (inline_ptx).
  std::optional<std::string_view> covers;
  std::string_view determinism;  ///< "deterministic" | "nondeterministic"
  std::string_view accuracy;     ///< "reference_exact" | "tolerance_bounded"
  std::optional<double> tolerance;
  std::optional<double> tolerance_rel;
};

/// Contract rules 2–5, in the contract's order: a non-empty arch that is an envelope
/// (dialect/ArchEnvelope.h), known provenance, covers
/// and determinism, finite positive bounds, and bounds exactly when accuracy is
/// tolerance_bounded. The first fault as a sentence (e.g. "`tolerance` must be finite and
/// greater than zero, found nan"); nullopt when the terms hold.
std::optional<std::string> CheckContractTerms(const ContractTerms& terms);

}  // namespace tessera

#endif  // TESSERA_DIALECT_DELEGATIONCONTRACT_H_
