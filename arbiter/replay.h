// Decisions made without measuring: replay of the candidate a plan pins, reuse of the decision
// cache's record, and the incumbent serving while a background decision is pending. Internal to
// //arbiter:arbiter.
#ifndef TESSERA_ARBITER_REPLAY_H_
#define TESSERA_ARBITER_REPLAY_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "arbiter/arbiter.h"
#include "arbiter/candidate.h"
#include "arbiter/decision_record.h"
#include "arbiter/plan.h"
#include "arbiter/selection.h"

namespace tessera::arbiter::internal {

/// Replay (ArbitrationContext::plan): the plan's pinned candidate, nothing probed or timed.
absl::Status Replay(Selection& s, const Plan& plan);

/// Reuse (ArbitrationContext::cache): the record cached under `keys` when it is fresh, as this
/// point's decision. Otherwise nullopt; a stale record's winner becomes the incumbent, and
/// `stale_note` says what changed since it (comparing `candidates`).
std::optional<DecisionRecord> Reuse(Selection& s, const DecisionKeys& keys,
                                    const std::vector<Candidate>& candidates,
                                    std::string& stale_note);

/// Whether this contest is left to the background (ArbitrationContext::defer): not a forced
/// point, probes can run, and not deterministic unless allowed.
bool Deferred(const Selection& s);

/// The incumbent (a stale record's winner, else the compiled lowering) serves while the
/// decision is pending.
void Defer(Selection& s);

}  // namespace tessera::arbiter::internal

#endif  // TESSERA_ARBITER_REPLAY_H_
