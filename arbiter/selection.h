// The state of one arbitration, shared by its steps (arbiter.cc, gates.cc, replay.cc, race.cc):
// the candidates' outcomes, the record being written and the time spent measuring, with the
// helpers every step uses. Internal to //arbiter:arbiter.
#ifndef TESSERA_ARBITER_SELECTION_H_
#define TESSERA_ARBITER_SELECTION_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "arbiter/arbiter.h"
#include "arbiter/arbitration_point.h"
#include "arbiter/candidate.h"
#include "arbiter/decision_record.h"

namespace tessera::arbiter::internal {

/// The batch invariance of a candidate that needs no probe to prove it.
inline constexpr char kByConstruction[] = "by construction";

/// Held while candidates run for time: measurements of concurrent arbitrations would disturb
/// each other.
absl::Mutex& MeasurementMutex();

/// "tile.matmul (shape …, f32, …)": the point for messages.
std::string Describe(const ArbitrationPoint& p);

/// InvalidArgument `message`, prefixed with the op's location.
absl::Status Error(const ArbitrationPoint& point, const std::string& message);

/// A candidate's contract (what the full decision key covers, and what a stale record is
/// compared by).
std::string ContractText(const Candidate& c);

/// `seconds` for people: "1.234 ms".
std::string Duration(double seconds);

/// Removes `o` from the field: `gate` removed it for `reason`.
void Remove(CandidateOutcome& o, const char* gate, std::string reason);

/// One arbitration: the outcome of every candidate so far and the record being written.
struct Selection {
  Selection(const ArbitrationPoint& point, const std::vector<Candidate>& candidates,
            const ArbitrationContext& context);

  CandidateOutcome* Outcome(const std::string& id);
  std::string CandidateIds() const;
  /// The candidates no gate removed.
  std::vector<CandidateOutcome*> Alive();
  bool Forced() const;
  /// Why this point's candidates cannot be probed here ("" when they can): a point the probes
  /// do not cover (ProbeCoverage), or no prober or device.
  std::string CannotProbe() const;
  /// How long candidates may run (ArbitrationContext::budget_s).
  double Budget() const;

  void Win(const CandidateOutcome& winner, std::string reason);
  /// A forced candidate removed by a gate fails the compile, naming the gate.
  absl::Status CheckForced();
  /// The compile fails listing each candidate and the gate that removed it.
  absl::Status NoSurvivor();

  const ArbitrationPoint& point;
  const ArbitrationContext& context;
  std::vector<CandidateOutcome> outcomes;
  DecisionRecord record;
  bool probed = false;
  bool untimed = false;  ///< the budget ran out before any sample: the record is not kept
  /// Decided unprobed for a reason the same op, toolchain and device give again (its probe
  /// cannot bind, its reference does not compile): kept, so that it is not deferred and
  /// tried again by every process.
  bool settled_unprobed = false;
  std::string incumbent;  ///< the winner of a stale record, kept when within noise
  /// The accuracy gate's estimate of each survivor's cost (seconds per multiply-add).
  std::map<std::string, double> seconds_per_mac;
  double spent = 0;  ///< seconds candidates ran under the budget
};

}  // namespace tessera::arbiter::internal

#endif  // TESSERA_ARBITER_SELECTION_H_
