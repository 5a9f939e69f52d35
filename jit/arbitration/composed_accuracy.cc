#include "jit/arbitration/composed_accuracy.h"

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "arbiter/candidate.h"
#include "arbiter/decision_record.h"
#include "arbiter/op_probe.h"
#include "arbiter/plan.h"
#include "jit/arbitration/entry_probe.h"

namespace tessera::jit {
namespace {

/// Every dynamic size of a probe (which stays under kMaxEntryProbeBytes).
constexpr int64_t kDynamicSize = 64;
/// The seed of the probe's inputs.
constexpr uint32_t kProbeSeed = 2024;
/// At most this many ops revert per entry before the check gives up on it.
constexpr int kMaxReverts = 8;

std::string BudgetText(const arbiter::AccuracyBudget& budget) {
  return absl::StrFormat("atol %g, rtol %g", budget.atol, budget.rtol);
}

/// An entry's budget, where it comes from, and how its atol applies: as declared, or (the
/// delegates' budgets) scaled by each output's magnitude as the op probes do.
struct EntryBudget {
  arbiter::AccuracyBudget budget;
  std::string text;
  arbiter::AtolScale scale = arbiter::AtolScale::kAbsolute;
};

EntryBudget BudgetOf(const CompiledModule& module, const EntryFunction& entry) {
  if (auto declared = module.declared_accuracy.find(entry.name);
      declared != module.declared_accuracy.end()) {
    return {declared->second,
            absl::StrCat(BudgetText(declared->second), ", declared by tessera.accuracy"),
            arbiter::AtolScale::kAbsolute};
  }
  arbiter::AccuracyBudget strictest{std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::infinity()};
  for (const arbiter::DecisionRecord& record : module.decisions) {
    // The delegates' budgets: an op on the compiled lowering (or a variant) adds nothing.
    if (record.point.function != entry.name || !record.Delegated()) continue;
    if (const arbiter::CandidateOutcome* winner = record.Find(record.winner)) {
      strictest.atol = std::min(strictest.atol, winner->candidate.budget.atol);
      strictest.rtol = std::min(strictest.rtol, winner->candidate.budget.rtol);
    }
  }
  return {strictest,
          absl::StrCat(BudgetText(strictest),
                       ", the strictest of its delegates' budgets, atol "
                       "scaled by each output's magnitude up to 1"),
          arbiter::AtolScale::kOutputMagnitude};
}

std::string Ratio(double ratio) { return absl::StrFormat("%.3g", ratio); }

}  // namespace

absl::Status CheckComposedAccuracy(const Recompile& recompile,
                                   std::unique_ptr<CompiledModule>& module) {
  const auto delegated = [](const arbiter::DecisionRecord& r) { return r.Delegated(); };
  CompileOptions base = module->options;
  InternalCompileOptions unchecked;
  unchecked.check_composed_accuracy = false;
  // Recompiles replay the decisions made (nothing is measured again) but for reverted ops.
  auto replay = std::make_shared<arbiter::Plan>(arbiter::Plan::FromRecords(module->decisions));
  for (arbiter::DecisionRecord& r : module->decisions) {
    // Every decision must replay as made: not one still pending (its incumbent is not in a
    // plan), nor two ops of one point decided apart (no decision cache).
    const arbiter::PlanEntry* pinned = replay->Find(r.point);
    const bool pending = r.source == arbiter::kPendingSource;
    const bool replays = pending ? !delegated(r) : pinned != nullptr && pinned->winner == r.winner;
    if (!replays) {
      for (arbiter::DecisionRecord& other : module->decisions) {
        if (delegated(other)) {
          other.composed =
              pending ? "not checked yet: a decision of the module is pending (the check runs "
                        "when it is measured)"
                      : "not checked: two ops of one arbitration point were decided apart (no "
                        "decision cache), so the check cannot replay the decisions";
        }
      }
      return absl::OkStatus();
    }
  }
  base.plan = std::move(replay);
  base.plan_strict = false;
  CompileOptions reference_options = base;
  reference_options.dump_stages = false;
  InternalCompileOptions reference_plan = unchecked;
  for (const arbiter::DecisionRecord& r : module->decisions) {
    if (delegated(r)) {
      reference_plan.revert_to_compiled[r.point.location] =
          "the composed accuracy check's reference plan";
    }
  }
  if (reference_plan.revert_to_compiled.empty()) return absl::OkStatus();

  std::unique_ptr<CompiledModule> reference;
  std::unique_ptr<CompiledModule> current;      ///< once an op reverted: the module under test
  std::map<std::string, std::string> reverted;  ///< location → why
  std::map<std::string, std::string> notes;     ///< location → what the check found
  for (const EntryFunction& entry : module->entries) {
    std::vector<const arbiter::DecisionRecord*> ops;
    for (const arbiter::DecisionRecord& r : module->decisions) {
      if (r.point.function == entry.name && delegated(r)) ops.push_back(&r);
    }
    if (ops.empty()) continue;
    auto note_all = [&](const std::string& text) {
      for (const arbiter::DecisionRecord* r : ops) {
        if (reverted.count(r->point.location) == 0) notes[r->point.location] = text;
      }
    };
    EntryProbe probe;
    if (std::string why = MakeEntryProbe(entry, kDynamicSize, kProbeSeed, probe); !why.empty()) {
      note_all(absl::StrCat("not checked: @", entry.name, " cannot be probed: ", why));
      continue;
    }
    if (reference == nullptr) {
      absl::StatusOr<std::unique_ptr<CompiledModule>> compiled =
          recompile(reference_options, reference_plan);
      if (!compiled.ok()) return compiled.status();
      reference = *std::move(compiled);
    }
    absl::StatusOr<std::vector<float>> expected = RunEntryOnHost(*reference, entry, probe);
    if (expected.ok() && expected->empty()) {
      note_all(absl::StrCat("not checked: @", entry.name,
                            " writes no tensor (a scalar result is not compared)"));
      continue;
    }
    if (!expected.ok()) {
      note_all(absl::StrCat("not checked: the reference plan failed on @", entry.name,
                            "'s probe: ", expected.status().message()));
      continue;
    }
    const EntryBudget budget = BudgetOf(*module, entry);
    const std::vector<arbiter::OutputSegment> outputs = WrittenSegments(entry, probe);
    const auto compare = [&](const std::vector<float>& out) {
      return arbiter::CompareOutputs(out, *expected, budget.budget, outputs, budget.scale).ratio;
    };
    const CompiledModule& serving = current != nullptr ? *current : *module;
    absl::StatusOr<std::vector<float>> out = RunEntryOnHost(serving, entry, probe);
    double ratio = out.ok() ? compare(*out) : std::numeric_limits<double>::infinity();
    const std::string where = absl::StrCat("@", entry.name, " on a probe (every dynamic size ",
                                           kDynamicSize, ") against the reference plan");
    for (int round = 0; ratio > 1 && round < kMaxReverts; ++round) {
      // Which op's reversion lowers the error most: it contributes the most.
      const arbiter::DecisionRecord* worst = nullptr;
      double best = std::numeric_limits<double>::infinity();
      std::unique_ptr<CompiledModule> best_module;
      for (const arbiter::DecisionRecord* r : ops) {
        // A forced candidate stays: the caller asked for it.
        if (reverted.count(r->point.location) != 0 || !r->point.forced.empty()) continue;
        InternalCompileOptions reverting = unchecked;
        for (const auto& [location, why] : reverted) reverting.revert_to_compiled[location] = why;
        reverting.revert_to_compiled[r->point.location] = "the composed accuracy check";
        absl::StatusOr<std::unique_ptr<CompiledModule>> candidate = recompile(base, reverting);
        if (!candidate.ok()) return candidate.status();
        absl::StatusOr<std::vector<float>> tried = RunEntryOnHost(**candidate, entry, probe);
        const double tried_ratio =
            tried.ok() ? compare(*tried) : std::numeric_limits<double>::infinity();
        if (worst == nullptr || tried_ratio < best) {
          worst = r;
          best = tried_ratio;
          best_module = *std::move(candidate);
        }
      }
      if (worst == nullptr) {
        std::vector<std::string> forced;
        for (const arbiter::DecisionRecord* r : ops) {
          if (reverted.count(r->point.location) == 0) {
            forced.push_back(absl::StrCat(r->point.op, " at ", r->point.location, " ('", r->winner,
                                          "', ", r->point.forced_by, ")"));
          }
        }
        return absl::InvalidArgumentError(absl::StrCat(
            ops.front()->point.location, ": error: @", entry.name, " exceeds its accuracy budget (",
            budget.text, "): the composed accuracy check ran ", where, " and found error ",
            Ratio(ratio), " of the budget with forced candidates ",
            "that cannot revert: ", absl::StrJoin(forced, ", "),
            "; force fewer delegates or declare a looser tessera.accuracy"));
      }
      reverted[worst->point.location] =
          absl::StrCat("reverted to the compiled lowering by the composed accuracy check: ", where,
                       ", the entry's error was ", Ratio(ratio), " of its budget (", budget.text,
                       ") with '", worst->winner, "' here (within its own op budget), ",
                       Ratio(best), " with this op reverted — the largest reduction");
      current = std::move(best_module);
      ratio = best;
    }
    note_all(ratio <= 1
                 ? absl::StrCat("checked ", where, ": error ", Ratio(ratio), " of its budget (",
                                budget.text, ")")
                 : absl::StrCat("checked ", where, ": error ", Ratio(ratio), " of its budget (",
                                budget.text, ") after ", kMaxReverts, " reversions; gave up"));
  }
  std::vector<arbiter::DecisionRecord> records = std::move(module->decisions);
  if (current != nullptr) {
    current->options = module->options;
    current->declared_accuracy = module->declared_accuracy;
    module = std::move(current);
  }
  for (arbiter::DecisionRecord& r : records) {
    if (auto it = reverted.find(r.point.location); it != reverted.end()) {
      r.source = "reverted";
      r.reason = it->second;
      r.composed = it->second;
      r.winner = arbiter::kCompiledCandidate;
      if (const arbiter::CandidateOutcome* compiled = r.Find(arbiter::kCompiledCandidate)) {
        r.route = compiled->candidate.route;
      }
    } else if (auto note = notes.find(r.point.location); note != notes.end()) {
      r.composed = note->second;
    }
  }
  module->decisions = std::move(records);
  return absl::OkStatus();
}

}  // namespace tessera::jit
