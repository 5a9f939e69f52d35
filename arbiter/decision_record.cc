#include "arbiter/decision_record.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/json_nesting.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace tessera::arbiter {
namespace {

namespace json = llvm::json;

json::Array Strings(const std::vector<std::string>& values) {
  json::Array array;
  for (const std::string& value : values) array.push_back(value);
  return array;
}

json::Object PointJson(const ArbitrationPoint& p) {
  json::Array shape;
  for (int64_t size : p.shape) shape.push_back(size);
  return json::Object{{"op", p.op},
                      {"location", p.location},
                      {"function", p.function},
                      {"target", p.target},
                      {"arch", p.arch},
                      {"device", p.device},
                      {"element_types", Strings(p.element_types)},
                      {"shape", std::move(shape)},
                      {"transpose_a", p.transpose_a},
                      {"transpose_b", p.transpose_b},
                      {"bias", p.bias},
                      {"activation", p.activation},
                      {"residual", p.residual},
                      {"numeric_policy", p.numeric_policy},
                      {"layout", p.layout},
                      {"deterministic", p.deterministic},
                      {"batch_invariant", p.batch_invariant},
                      {"forced", p.forced},
                      {"forced_by", p.forced_by}};
}

json::Object CandidateJson(const CandidateOutcome& o) {
  const Candidate& c = o.candidate;
  return json::Object{{"id", c.id},
                      {"provenance", c.provenance},
                      {"tier", c.Tier()},
                      {"determinism", c.determinism},
                      {"accuracy", c.accuracy},
                      {"atol", c.budget.atol},
                      {"rtol", c.budget.rtol},
                      {"covers", c.covers},
                      {"identity", c.identity},
                      {"route", c.route},
                      {"inapplicable", c.inapplicable},
                      {"unavailable", c.unavailable},
                      {"gate", o.gate},
                      {"reason", o.reason},
                      {"error_ratio", o.error_ratio},
                      {"max_abs_error", o.max_abs_error},
                      {"worst_probe", o.worst_probe},
                      {"median_s", o.median_s},
                      {"spread", o.spread},
                      {"samples", o.samples},
                      {"race", o.race},
                      {"batch_invariance", o.batch_invariance}};
}

json::Object RecordJson(const DecisionRecord& r) {
  json::Array candidates;
  for (const CandidateOutcome& outcome : r.candidates) candidates.push_back(CandidateJson(outcome));
  return json::Object{{"key", r.key},
                      {"base_key", r.base_key},
                      {"toolchain", r.toolchain},
                      {"point", PointJson(r.point)},
                      {"shape_bucket", r.shape_bucket},
                      {"candidates", std::move(candidates)},
                      {"winner", r.winner},
                      {"route", r.route},
                      {"reason", r.reason},
                      {"separation", r.separation},
                      {"noise", r.noise},
                      {"timing_source", r.timing_source},
                      {"measured_shape", r.measured_shape},
                      {"created", r.created},
                      {"arbitration_ms", r.arbitration_ms},
                      {"budget_ms", r.budget_ms},
                      {"measured_ms", r.measured_ms},
                      {"source", r.source},
                      {"composed", r.composed}};
}

std::string Print(json::Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", value);
  return text;
}

/// Reads fields of one JSON object, remembering the first one missing or mistyped.
class Fields {
 public:
  Fields(const json::Object* object, std::string where)
      : object_(object), where_(std::move(where)) {
    if (object_ == nullptr) Fail("not an object");
  }
  void Str(const char* name, std::string& out) {
    if (!ok()) return;
    if (auto value = object_->getString(name)) {
      out = value->str();
    } else {
      Fail(absl::StrCat("field '", name, "' missing or not a string"));
    }
  }
  void Num(const char* name, double& out) {
    if (!ok()) return;
    if (auto value = object_->getNumber(name)) {
      out = *value;
    } else {
      Fail(absl::StrCat("field '", name, "' missing or not a number"));
    }
  }
  void Int(const char* name, int& out) {
    double value = 0;
    Num(name, value);
    out = static_cast<int>(value);
  }
  void Bool(const char* name, bool& out) {
    if (!ok()) return;
    if (auto value = object_->getBoolean(name)) {
      out = *value;
    } else {
      Fail(absl::StrCat("field '", name, "' missing or not a boolean"));
    }
  }
  /// Fields added after records were first stored: absent reads as the default.
  void OptionalStr(const char* name, std::string& out) {
    if (ok() && object_->get(name) != nullptr) Str(name, out);
  }
  void OptionalNum(const char* name, double& out) {
    if (ok() && object_->get(name) != nullptr) Num(name, out);
  }
  void OptionalBool(const char* name, bool& out) {
    if (ok() && object_->get(name) != nullptr) Bool(name, out);
  }
  const json::Array* Array(const char* name) {
    if (!ok()) return nullptr;
    const json::Array* array = object_->getArray(name);
    if (array == nullptr) Fail(absl::StrCat("field '", name, "' missing or not an array"));
    return array;
  }
  const json::Object* Object(const char* name) {
    if (!ok()) return nullptr;
    const json::Object* object = object_->getObject(name);
    if (object == nullptr) Fail(absl::StrCat("field '", name, "' missing or not an object"));
    return object;
  }
  void Fail(const std::string& what) {
    if (error_.empty()) error_ = absl::StrCat(where_, ": ", what);
  }
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  const json::Object* object_;
  std::string where_;
  std::string error_;
};

std::string ReadPoint(const json::Object* object, ArbitrationPoint& p) {
  Fields f(object, "decision record point");
  f.Str("op", p.op);
  f.Str("location", p.location);
  f.Str("function", p.function);
  f.Str("target", p.target);
  f.Str("arch", p.arch);
  f.Str("device", p.device);
  if (const json::Array* types = f.Array("element_types")) {
    for (const json::Value& value : *types) {
      if (auto text = value.getAsString()) p.element_types.push_back(text->str());
    }
  }
  if (const json::Array* shape = f.Array("shape")) {
    for (const json::Value& value : *shape) {
      if (auto size = value.getAsInteger()) p.shape.push_back(*size);
    }
  }
  f.Bool("transpose_a", p.transpose_a);
  f.Bool("transpose_b", p.transpose_b);
  f.Bool("bias", p.bias);
  f.Str("activation", p.activation);
  f.OptionalBool("residual", p.residual);
  f.Str("numeric_policy", p.numeric_policy);
  f.Str("layout", p.layout);
  f.Bool("deterministic", p.deterministic);
  f.OptionalBool("batch_invariant", p.batch_invariant);
  f.Str("forced", p.forced);
  f.Str("forced_by", p.forced_by);
  return f.error();
}

std::string ReadCandidate(const json::Object* object, CandidateOutcome& o) {
  Fields f(object, "decision record candidate");
  Candidate& c = o.candidate;
  f.Str("id", c.id);
  f.Str("provenance", c.provenance);
  f.Str("determinism", c.determinism);
  f.Str("accuracy", c.accuracy);
  f.Num("atol", c.budget.atol);
  f.Num("rtol", c.budget.rtol);
  f.Str("covers", c.covers);
  f.Str("identity", c.identity);
  f.Str("route", c.route);
  f.Str("inapplicable", c.inapplicable);
  f.Str("unavailable", c.unavailable);
  f.Str("gate", o.gate);
  f.Str("reason", o.reason);
  f.Num("error_ratio", o.error_ratio);
  f.Num("max_abs_error", o.max_abs_error);
  f.Str("worst_probe", o.worst_probe);
  f.Num("median_s", o.median_s);
  f.Num("spread", o.spread);
  f.Int("samples", o.samples);
  f.OptionalStr("race", o.race);
  f.OptionalStr("batch_invariance", o.batch_invariance);
  return f.error();
}

std::string ReadRecord(const json::Object* object, DecisionRecord& r) {
  Fields f(object, "decision record");
  f.Str("key", r.key);
  f.Str("base_key", r.base_key);
  f.Str("toolchain", r.toolchain);
  if (const json::Object* point = f.Object("point")) {
    if (std::string error = ReadPoint(point, r.point); !error.empty()) f.Fail(error);
  }
  f.Str("shape_bucket", r.shape_bucket);
  if (const json::Array* candidates = f.Array("candidates")) {
    for (const json::Value& value : *candidates) {
      CandidateOutcome outcome;
      if (std::string error = ReadCandidate(value.getAsObject(), outcome); !error.empty()) {
        f.Fail(error);
        break;
      }
      r.candidates.push_back(std::move(outcome));
    }
  }
  f.Str("winner", r.winner);
  f.Str("route", r.route);
  f.Str("reason", r.reason);
  f.Num("separation", r.separation);
  f.Num("noise", r.noise);
  f.Str("timing_source", r.timing_source);
  f.Str("measured_shape", r.measured_shape);
  f.Str("created", r.created);
  f.Num("arbitration_ms", r.arbitration_ms);
  f.OptionalNum("budget_ms", r.budget_ms);
  f.OptionalNum("measured_ms", r.measured_ms);
  f.Str("source", r.source);
  f.OptionalStr("composed", r.composed);
  return f.error();
}

absl::StatusOr<json::Value> Parse(const std::string& text) {
  // Records come from disk and from a fleet's cache: measured before the recursive parser.
  if (!JsonNestingWithin(text, 32)) {
    return absl::DataLossError("decision records nest deeper than 32 levels");
  }
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value) {
    return absl::DataLossError(
        absl::StrCat("decision records are not valid JSON: ", llvm::toString(value.takeError())));
  }
  return std::move(*value);
}

std::string Duration(double seconds) {
  if (seconds >= 1) return absl::StrFormat("%.3f s", seconds);
  if (seconds >= 1e-3) return absl::StrFormat("%.3f ms", seconds * 1e3);
  return absl::StrFormat("%.2f us", seconds * 1e6);
}

}  // namespace

const CandidateOutcome* DecisionRecord::Find(const std::string& id) const {
  for (const CandidateOutcome& outcome : candidates) {
    if (outcome.candidate.id == id) return &outcome;
  }
  return nullptr;
}

bool DecisionRecord::Delegated() const {
  if (winner.empty() || winner == kCompiledCandidate) return false;
  const CandidateOutcome* outcome = Find(winner);
  return outcome == nullptr || outcome->candidate.provenance != "compiled";
}

std::string ToJson(const DecisionRecord& record) { return Print(RecordJson(record)); }

std::string ToJson(const std::vector<DecisionRecord>& records) {
  json::Array array;
  for (const DecisionRecord& record : records) array.push_back(RecordJson(record));
  return Print(std::move(array));
}

absl::StatusOr<DecisionRecord> RecordFromJson(const std::string& text) {
  absl::StatusOr<json::Value> value = Parse(text);
  if (!value.ok()) return value.status();
  DecisionRecord record;
  if (std::string error = ReadRecord(value->getAsObject(), record); !error.empty()) {
    return absl::DataLossError(error);
  }
  return record;
}

absl::StatusOr<std::vector<DecisionRecord>> RecordsFromJson(const std::string& text) {
  absl::StatusOr<json::Value> value = Parse(text);
  if (!value.ok()) return value.status();
  const json::Array* array = value->getAsArray();
  if (array == nullptr) return absl::DataLossError("decision records: expected a JSON array");
  std::vector<DecisionRecord> records;
  for (const json::Value& element : *array) {
    DecisionRecord record;
    if (std::string error = ReadRecord(element.getAsObject(), record); !error.empty()) {
      return absl::DataLossError(error);
    }
    records.push_back(std::move(record));
  }
  return records;
}

std::string FormatRecord(const DecisionRecord& r) {
  const ArbitrationPoint& p = r.point;
  std::string text = absl::StrCat(p.op, " at ", p.location, " in @", p.function, "\n");
  absl::StrAppend(&text, "  shape ", p.ShapeText(), " (bucket ", r.shape_bucket, "), ",
                  p.DtypeText(), ", ", p.Movement(), ", policy ", p.numeric_policy, ", ", p.layout,
                  ", determinism ", p.DeterminismLevel(), "\n");
  absl::StrAppend(&text, "  target ", p.target, p.arch == p.target ? "" : " " + p.arch, " on ",
                  p.device, "\n");
  if (!p.forced.empty()) absl::StrAppend(&text, "  forced: ", p.forced, " by ", p.forced_by, "\n");
  absl::StrAppend(&text, "  winner: ", r.winner, " — ", r.reason, "\n");
  absl::StrAppend(&text, "  route: ", r.route, "\n");
  absl::StrAppend(&text, "  decided: ", r.source, "; timing: ", r.timing_source,
                  r.measured_shape.empty() ? "" : absl::StrCat(" at ", r.measured_shape),
                  absl::StrFormat("; arbitration %.1f ms", r.arbitration_ms),
                  r.budget_ms > 0 ? absl::StrFormat(" (candidates ran %.1f of a %.0f ms budget)",
                                                    r.measured_ms, r.budget_ms)
                                  : "",
                  r.noise > 0 ? absl::StrFormat("; separation %.1f%%, noise %.1f%%",
                                                r.separation * 100, r.noise * 100)
                              : "",
                  "\n");
  if (!r.composed.empty()) absl::StrAppend(&text, "  composed: ", r.composed, "\n");
  for (const CandidateOutcome& o : r.candidates) {
    const Candidate& c = o.candidate;
    absl::StrAppend(&text, "  - ", c.id, " [", c.Tier(), ", ", c.determinism, ", ", c.accuracy,
                    absl::StrFormat(" atol %g rtol %g", c.budget.atol, c.budget.rtol), "]");
    if (o.samples > 0) {
      absl::StrAppend(&text, ": median ", Duration(o.median_s),
                      absl::StrFormat(" ±%.1f%% (%d samples)", o.spread * 100, o.samples));
    }
    if (o.error_ratio >= 0) {
      absl::StrAppend(&text, absl::StrFormat("; error %.3g of budget (max |out−ref| %.3g, %s)",
                                             o.error_ratio, o.max_abs_error, o.worst_probe));
    }
    if (!o.race.empty()) absl::StrAppend(&text, "; ", o.race);
    if (!o.batch_invariance.empty() && o.gate != "batch invariance") {
      absl::StrAppend(&text, "; batch invariance ", o.batch_invariance);
    }
    if (!o.gate.empty()) {
      absl::StrAppend(&text, "; removed by ", o.gate, ": ", o.reason);
    } else if (!o.reason.empty()) {
      absl::StrAppend(&text, "; ", o.reason);
    }
    absl::StrAppend(&text, "\n      ", c.identity, "\n");
  }
  return text;
}

}  // namespace tessera::arbiter
