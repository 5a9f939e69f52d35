#include "arbiter/plan.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/json_nesting.h"
#include "base/sha256.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace tessera::arbiter {
namespace {

namespace json = llvm::json;

/// The fields of an entry, in file order.
struct Field {
  const char* name;
  std::string PlanEntry::* member;
};
constexpr Field kFields[] = {
    {"point", &PlanEntry::point},       {"op", &PlanEntry::op},
    {"function", &PlanEntry::function}, {"location", &PlanEntry::location},
    {"shape", &PlanEntry::shape},       {"determinism", &PlanEntry::determinism},
    {"winner", &PlanEntry::winner},     {"identity", &PlanEntry::identity},
    {"device", &PlanEntry::device},     {"source", &PlanEntry::source},
    {"record", &PlanEntry::record},
};

}  // namespace

std::string PlanKey(const ArbitrationPoint& p) {
  return Sha256Hex(absl::StrCat(
      kPlanFormat, "\nop=", p.op, "\nbucket=", p.ShapeBucket(), "\ndtype=", p.DtypeText(),
      "\ntarget=", p.target, "\narch=", p.arch, "\nlayout=", p.layout,
      "\npolicy=", p.numeric_policy, "\nmovement=", p.Movement(),
      "\ndeterminism=", p.DeterminismLevel(), "\nforced=", p.forced, "\n",
      p.probe_source.empty() ? "" : absl::StrCat("body=", Sha256Hex(p.probe_source), "\n")));
}

absl::Status Plan::Add(PlanEntry entry) {
  auto [it, inserted] = by_point_.emplace(entry.point, entries_.size());
  if (!inserted) {
    const PlanEntry& earlier = entries_[it->second];
    if (earlier.winner == entry.winner && earlier.identity == entry.identity) {
      return absl::OkStatus();
    }
    if (earlier.winner == entry.winner) {
      return absl::InvalidArgumentError(absl::StrCat(
          name_, ": entries ", it->second + 1, " and ", entries_.size() + 1, " pin '", entry.winner,
          "' for one point (", entry.op, " ", entry.shape, ") with different identities ('",
          earlier.identity, "', '", entry.identity, "')"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ": entries ", it->second + 1, " and ", entries_.size() + 1,
                     " pin different candidates ('", earlier.winner, "', '", entry.winner,
                     "') for one point (", entry.op, " ", entry.shape, ")"));
  }
  entries_.push_back(std::move(entry));
  return absl::OkStatus();
}

Plan Plan::FromRecords(const std::vector<DecisionRecord>& records) {
  Plan plan;
  plan.AddRecords(records);
  return plan;
}

void Plan::AddRecords(const std::vector<DecisionRecord>& records) {
  for (const DecisionRecord& r : records) {
    // Not decided yet; or reverted for its entry, which is not the point's decision.
    if (r.source == kPendingSource || r.source == "reverted") continue;
    PlanEntry entry;
    entry.point = PlanKey(r.point);
    if (by_point_.count(entry.point) != 0) continue;
    entry.op = r.point.op;
    entry.function = r.point.function;
    entry.location = r.point.location;
    entry.shape = r.point.ShapeText();
    entry.determinism = r.point.DeterminismLevel();
    entry.winner = r.winner;
    if (const CandidateOutcome* winner = r.Find(r.winner)) {
      entry.identity = winner->candidate.identity;
    }
    entry.device = r.point.device;
    entry.source = r.source;
    entry.record = r.key;
    (void)Add(std::move(entry));
  }
}

absl::StatusOr<Plan> Plan::Parse(const std::string& text, const std::string& name) {
  Plan plan;
  plan.name_ = name;
  auto invalid = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": not a Tessera plan: ", what));
  };
  if (!JsonNestingWithin(text, kMaxPlanNesting)) {
    return invalid(absl::StrCat("nested deeper than ", kMaxPlanNesting, " levels"));
  }
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value)
    return invalid(absl::StrCat("not valid JSON (", llvm::toString(value.takeError()), ")"));
  const json::Object* object = value->getAsObject();
  if (object == nullptr) return invalid("expected a JSON object");
  std::optional<llvm::StringRef> format = object->getString("format");
  if (!format || *format != kPlanFormat) {
    return invalid(absl::StrCat("\"format\" must be \"", kPlanFormat, "\""));
  }
  std::optional<int64_t> version = object->getInteger("version");
  if (!version || *version != kPlanVersion) {
    return invalid(absl::StrCat("\"version\" must be ", kPlanVersion, " (this build reads ",
                                kPlanVersion, ")"));
  }
  const json::Array* decisions = object->getArray("decisions");
  if (decisions == nullptr) return invalid("\"decisions\" must be an array");
  for (size_t i = 0; i < decisions->size(); ++i) {
    const json::Object* e = (*decisions)[i].getAsObject();
    if (e == nullptr) return invalid(absl::StrCat("decision ", i + 1, " is not an object"));
    PlanEntry entry;
    for (const Field& field : kFields) {
      std::optional<llvm::StringRef> text = e->getString(field.name);
      if (!text) {
        return invalid(
            absl::StrCat("decision ", i + 1, ": \"", field.name, "\" missing or not a string"));
      }
      entry.*field.member = text->str();
    }
    if (entry.point.size() != 64 || entry.winner.empty()) {
      return invalid(absl::StrCat("decision ", i + 1,
                                  ": \"point\" must be 64 hex digits and \"winner\" non-empty"));
    }
    absl::Status added = plan.Add(std::move(entry));
    if (!added.ok()) return added;
  }
  return plan;
}

absl::StatusOr<std::shared_ptr<const Plan>> Plan::Load(const std::string& path) {
  // Measured before it is read: a huge file, a device or a FIFO is never read into memory.
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the plan file '", path, "' is not a regular file"));
  }
  if (stat(path.c_str(), &info) == 0 && static_cast<uint64_t>(info.st_size) > kMaxPlanBytes) {
    return absl::InvalidArgumentError(absl::StrCat("the plan file '", path, "' has ", info.st_size,
                                                   " bytes; at most ", kMaxPlanBytes, " are read"));
  }
  std::string text;
  if (!ReadFile(path, text)) {
    return absl::NotFoundError(absl::StrCat("cannot read the plan file '", path, "'"));
  }
  if (text.size() > kMaxPlanBytes) {  // it grew meanwhile
    return absl::InvalidArgumentError(absl::StrCat("the plan file '", path, "' has ", text.size(),
                                                   " bytes; at most ", kMaxPlanBytes, " are read"));
  }
  absl::StatusOr<Plan> plan = Parse(text, path);
  if (!plan.ok()) return plan.status();
  return std::make_shared<const Plan>(*std::move(plan));
}

std::string Plan::ToJson() const {
  json::Array decisions;
  for (const PlanEntry& entry : entries_) {
    json::Object object;
    for (const Field& field : kFields) object[field.name] = entry.*field.member;
    decisions.push_back(std::move(object));
  }
  json::Object plan{
      {"format", kPlanFormat}, {"version", kPlanVersion}, {"decisions", std::move(decisions)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", json::Value(std::move(plan))) << "\n";
  return text;
}

const PlanEntry* Plan::Find(const ArbitrationPoint& point) const {
  auto it = by_point_.find(PlanKey(point));
  return it == by_point_.end() ? nullptr : &entries_[it->second];
}

std::string Plan::Digest() const {
  std::string text;
  for (const PlanEntry& entry : entries_) {
    absl::StrAppend(&text, entry.point, "=", entry.winner, "@", entry.identity, ";");
  }
  return Sha256Hex(text);
}

}  // namespace tessera::arbiter
