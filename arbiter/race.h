// The race (selection step 7): the survivors of the gates timed round robin under the time
// budget, each stopped once its median is known well enough or dropped once it cannot win,
// then the noise rule picks the winner. Internal to //arbiter:arbiter.
#ifndef TESSERA_ARBITER_RACE_H_
#define TESSERA_ARBITER_RACE_H_

#include <vector>

#include "absl/status/status.h"
#include "arbiter/decision_record.h"
#include "arbiter/selection.h"

namespace tessera::arbiter::internal {

/// Step 7: the survivors race under the budget, then the noise rule.
absl::Status Measure(Selection& s, const std::vector<CandidateOutcome*>& alive);

/// Gates 5–7 for an op with a probe function (arbiter/op_probe.h): the compiled lowering's
/// output on each probe is the reference (it runs even when forcing removed it from the
/// field); every other survivor must match it within its budget; then the race at
/// kOpTimedSize, its timed output checked too.
absl::Status ChooseByOpProbes(Selection& s);

}  // namespace tessera::arbiter::internal

#endif  // TESSERA_ARBITER_RACE_H_
