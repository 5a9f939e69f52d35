// A candidate for an arbitration point: the compiled lowering or a registered delegate, with the
// contract it declares. Tier and accuracy budget are derived from the contract, never set.
#ifndef TESSERA_ARBITER_CANDIDATE_H_
#define TESSERA_ARBITER_CANDIDATE_H_

#include <optional>
#include <string>

namespace tessera::arbiter {

/// The id of the compiled lowering; delegates use their provider name ("openblas").
inline constexpr char kCompiledCandidate[] = "compiled";

/// The elementwise budget `|out − ref| ≤ atol + rtol·|ref|`.
struct AccuracyBudget {
  double atol = 0;
  double rtol = 0;
};

/// `reference_exact` → the oracle's default (atol 1e-3, rtol 1e-5); `tolerance_bounded` → the
/// declared bounds (an absent one is 0).
AccuracyBudget BudgetFor(const std::string& accuracy, std::optional<double> tolerance,
                         std::optional<double> tolerance_rel);

struct Candidate {
  std::string id;           ///< "compiled" or the provider name
  std::string provenance;   ///< "compiled" | "vendor_library" | "handwritten_kernel"
  std::string determinism;  ///< "deterministic" | "nondeterministic"
  std::string accuracy;     ///< "reference_exact" | "tolerance_bounded"
  AccuracyBudget budget;
  std::string covers;  ///< "whole_region" | "root_only"
  std::string
      identity;  ///< what runs, versioned: library soname + version + sha256, or the compiler's
  std::string
      route;  ///< the artifact that runs when it wins, e.g. "kernel_call cblas_sgemm (openblas)"
  /// Gate 1: why it cannot serve this op ("" when it can). Filled by whoever lists candidates.
  std::string inapplicable;
  /// Gate 2: why it cannot run here — library not resolved, no device ("" when it can).
  std::string unavailable;

  /// Why its rows do not depend on the batch size when that holds by construction (the
  /// compiled lowering and its kernel variants); "" when it must prove it (a delegate: the
  /// replay probe at the batch_invariant level).
  std::string batch_invariance;

  bool compiled() const { return id == kCompiledCandidate; }
  bool BatchInvariantByConstruction() const { return !batch_invariance.empty(); }
  /// "generated" for the compiled lowering, "hand-tuned" for delegates (from provenance).
  std::string Tier() const;
};

/// The compiled lowering as a candidate: deterministic by construction, reference_exact.
Candidate CompiledCandidate(const std::string& target, const std::string& toolchain);

}  // namespace tessera::arbiter

#endif  // TESSERA_ARBITER_CANDIDATE_H_
