// Pinned replay (docs/arbiter.md "Plans"): the decisions of a module or a context exported as a
// plan file, and loaded back with measurement off, so every arbitration point takes the
// candidate the plan pins — the deterministic alternative to autotuning. A plan names points
// by a key without the device, so a plan made on one machine replays on another.
#ifndef TESSERA_ARBITER_PLAN_H_
#define TESSERA_ARBITER_PLAN_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "arbiter/arbitration_point.h"
#include "arbiter/decision_record.h"

namespace tessera::arbiter {

/// The plan format ("format" and "version" in the file).
inline constexpr char kPlanFormat[] = "tessera-jit-plan";
inline constexpr int kPlanVersion = 1;
/// The largest plan file Load reads.
inline constexpr size_t kMaxPlanBytes = 16u << 20;
/// A plan nests 3 levels (the plan, its decisions, one decision); deeper is refused unparsed.
inline constexpr int kMaxPlanNesting = 16;

/// What a plan pins for one point.
struct PlanEntry {
  std::string point;  ///< PlanKey of the point (64 hex digits)
  std::string op;     ///< for people: op, function, location and shape where it was decided
  std::string function;
  std::string location;
  std::string shape;
  std::string determinism;  ///< the point's determinism level
  std::string winner;       ///< the pinned candidate id
  std::string identity;     ///< the winner's identity when it was decided
  std::string device;       ///< where it was decided
  std::string source;       ///< how it was decided ("measured", "cache", …)
  std::string record;       ///< the decision record's key
};

/// The key a plan names a point by: op kind, shape bucket, dtypes, target, arch, layout,
/// numeric policy, movement, determinism level and forcing (the decision key without device,
/// toolchain and candidate identities).
std::string PlanKey(const ArbitrationPoint& point);

class Plan {
 public:
  Plan() = default;
  /// The plan of `records` (one entry per point; the first record of a point wins).
  static Plan FromRecords(const std::vector<DecisionRecord>& records);
  /// Adds the points of `records` this plan lacks (a point it has keeps its entry).
  void AddRecords(const std::vector<DecisionRecord>& records);
  /// InvalidArgument naming `name` (the file) and the entry when `text` is not a plan: bad
  /// JSON, another format or version, a missing field, two entries pinning different
  /// candidates for one point.
  static absl::StatusOr<Plan> Parse(const std::string& text, const std::string& name);
  /// Reads and parses the file at `path` (NotFound when it cannot be read, InvalidArgument
  /// over kMaxPlanBytes).
  static absl::StatusOr<std::shared_ptr<const Plan>> Load(const std::string& path);

  std::string ToJson() const;
  /// The entry for `point`, or null.
  const PlanEntry* Find(const ArbitrationPoint& point) const;
  /// Where it came from (the file), for messages.
  const std::string& name() const { return name_; }
  /// SHA-256 of the entries (what it pins; enters the compile-cache key).
  std::string Digest() const;
  size_t size() const { return entries_.size(); }
  const std::vector<PlanEntry>& entries() const { return entries_; }

 private:
  absl::Status Add(PlanEntry entry);

  std::string name_ = "<plan>";
  std::vector<PlanEntry> entries_;
  std::map<std::string, size_t> by_point_;
};

}  // namespace tessera::arbiter

#endif  // TESSERA_ARBITER_PLAN_H_
