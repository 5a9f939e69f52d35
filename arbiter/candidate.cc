#include "arbiter/candidate.h"

namespace tessera::arbiter {

AccuracyBudget BudgetFor(const std::string& accuracy, std::optional<double> tolerance,
                         std::optional<double> tolerance_rel) {
  if (accuracy == "reference_exact") return {1e-3, 1e-5};
  return {tolerance.value_or(0.0), tolerance_rel.value_or(0.0)};
}

std::string Candidate::Tier() const {
  return provenance == "compiled" ? "generated" : "hand-tuned";
}

Candidate CompiledCandidate(const std::string& target, const std::string& toolchain) {
  Candidate candidate;
  candidate.id = kCompiledCandidate;
  candidate.provenance = "compiled";
  candidate.determinism = "deterministic";
  candidate.accuracy = "reference_exact";
  candidate.budget = BudgetFor(candidate.accuracy, std::nullopt, std::nullopt);
  candidate.covers = "whole_region";
  candidate.identity = "tessera compiled lowering (" + toolchain + ")";
  candidate.route = "the Tile op lowered by Tessera for " + target;
  candidate.batch_invariance =
      "each output element is accumulated in one fixed order whatever the batch size";
  return candidate;
}

}  // namespace tessera::arbiter
