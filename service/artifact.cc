// A small length-prefixed binary format for compiled modules.
#include "service/artifact.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "arbiter/decision_record.h"
#include "runtime/entry_contract.h"
#include "service/binary_io.h"

namespace tessera::service {
namespace {

constexpr char kMagic[8] = {'T', 'S', 'R', 'A', 'R', 'T', '\n', '\0'};

void WriteArgument(Writer& w, const runtime::EntryArgument& argument) {
  w.I64(static_cast<int64_t>(argument.kind));
  w.String(argument.name);
  w.String(argument.type);
  w.I64(static_cast<int64_t>(argument.element.type_class));
  w.I64(argument.element.bits);
  w.I64(argument.rank);
  w.U64(argument.shape.size());
  for (int64_t size : argument.shape) w.I64(size);
  w.I64(argument.written);
}

bool ReadArgument(Reader& r, runtime::EntryArgument& argument) {
  int kind = 0;
  int type_class = 0;
  uint64_t dims = 0;
  if (!r.Int(kind) || !r.String(argument.name) || !r.String(argument.type) || !r.Int(type_class) ||
      !r.Int(argument.element.bits) || !r.I64(argument.rank) || !r.Count(dims)) {
    return false;
  }
  // What the compiler can describe (jit/admission/ir_allowlist.cc): anything else is a damaged
  // artifact, never a value invoke would trust.
  const int bits = argument.element.bits;
  if (kind < 0 || kind > static_cast<int>(runtime::EntryArgument::Kind::kScalar) ||
      type_class < 0 || type_class > static_cast<int>(runtime::ElementType::Class::kFloat8E5M2) ||
      (bits != 1 && bits != 8 && bits != 16 && bits != 32 && bits != 64) || argument.rank < 0 ||
      argument.rank > 64) {
    return false;
  }
  argument.kind = static_cast<runtime::EntryArgument::Kind>(kind);
  argument.element.type_class = static_cast<runtime::ElementType::Class>(type_class);
  argument.shape.resize(dims);
  for (int64_t& size : argument.shape) {
    if (!r.I64(size)) return false;
  }
  int written = 0;
  if (!r.Int(written)) return false;
  argument.written = written != 0;
  return true;
}

void WriteSizeSource(Writer& w, const runtime::SizeSource& source) {
  w.I64(static_cast<int64_t>(source.kind));
  w.I64(source.argument);
  w.I64(source.dim);
  w.I64(source.value);
}

bool ReadSizeSource(Reader& r, runtime::SizeSource& source) {
  int kind = 0;
  if (!r.Int(kind) || kind < 0 || kind > static_cast<int>(runtime::SizeSource::Kind::kConstant)) {
    return false;
  }
  source.kind = static_cast<runtime::SizeSource::Kind>(kind);
  return r.I64(source.argument) && r.I64(source.dim) && r.I64(source.value);
}

/// A size source read from disk must name an argument of its entry of the right kind, so a
/// damaged artifact can never make invoke index past the argument list.
bool ValidSizeSource(const runtime::SizeSource& source, const runtime::EntryFunction& entry) {
  if (source.kind == runtime::SizeSource::Kind::kConstant) return true;
  if (source.argument < 0 || source.argument >= static_cast<int64_t>(entry.arguments.size())) {
    return false;
  }
  const runtime::EntryArgument& argument = entry.arguments[source.argument];
  if (source.kind == runtime::SizeSource::Kind::kScalar) {
    return argument.kind == runtime::EntryArgument::Kind::kScalar;
  }
  return argument.kind == runtime::EntryArgument::Kind::kMemRef && source.dim >= 0 &&
         source.dim < argument.rank;
}

/// Whether `index` names a tensor argument of `entry`.
bool IsTensorArgument(int64_t index, const runtime::EntryFunction& entry) {
  return index >= 0 && index < static_cast<int64_t>(entry.arguments.size()) &&
         entry.arguments[index].kind == runtime::EntryArgument::Kind::kMemRef;
}

}  // namespace

std::string SerializeArtifact(const jit::CompiledModule& module) {
  Writer w;
  w.String(std::string(kMagic, sizeof(kMagic)));
  w.I64(kArtifactFormatVersion);
  const jit::CompileOptions& o = module.options;
  w.I64(static_cast<int64_t>(o.target));
  w.String(o.arch);
  w.I64(o.opt_level);
  w.I64(o.deterministic);
  w.I64(o.link_cubin);
  w.String(o.source_name);
  w.U64(module.entries.size());
  for (const runtime::EntryFunction& entry : module.entries) {
    w.String(entry.name);
    w.I64(entry.deterministic);
    w.U64(entry.arguments.size());
    for (const runtime::EntryArgument& argument : entry.arguments) WriteArgument(w, argument);
    w.U64(entry.results.size());
    for (const runtime::EntryArgument& result : entry.results) WriteArgument(w, result);
    w.U64(entry.size_constraints.size());
    for (const runtime::SizeConstraint& constraint : entry.size_constraints) {
      WriteSizeSource(w, constraint.size);
      WriteSizeSource(w, constraint.must_equal);
      w.String(constraint.reason);
      w.I64(static_cast<int64_t>(constraint.relation));
    }
    w.U64(entry.overlaps.size());
    for (const runtime::ArgumentOverlap& overlap : entry.overlaps) {
      w.I64(overlap.written);
      w.I64(overlap.other);
      w.I64(overlap.same_buffer_allowed);
      w.String(overlap.reason);
    }
  }
  w.String(module.host_llvm_ir);
  w.String(module.host_object.object);
  w.String(module.host_object.cpu);
  for (const std::vector<std::string>* list :
       {&module.host_object.initializers, &module.host_object.finalizers}) {
    w.U64(list->size());
    for (const std::string& item : *list) w.String(item);
  }
  for (const std::vector<std::string>* list :
       {&module.delegate_symbols, &module.delegate_identities}) {
    w.U64(list->size());
    for (const std::string& item : *list) w.String(item);
  }
  w.U64(module.runtime_checks.size());
  for (const std::string& message : module.runtime_checks) w.String(message);
  w.String(o.matmul_delegate);
  w.String(arbiter::ToJson(module.decisions));
  w.U64(module.device_images.size());
  for (const jit::DeviceImage& image : module.device_images) {
    w.String(image.module_name);
    w.U64(image.kernels.size());
    for (const std::string& kernel : image.kernels) w.String(kernel);
    w.String(image.ptx);
    w.String(image.cubin);
  }
  return w.Take();
}

absl::StatusOr<std::unique_ptr<jit::CompiledModule>> DeserializeArtifact(const std::string& bytes) {
  Reader r(bytes);
  auto broken = [&](absl::string_view what) {
    return absl::DataLossError(
        absl::StrCat("malformed artifact (", what, " at byte ", r.at(), ")"));
  };
  std::string magic;
  int version = 0;
  if (!r.String(magic) || magic != std::string(kMagic, sizeof(kMagic))) return broken("magic");
  if (!r.Int(version)) return broken("version");
  if (version != kArtifactFormatVersion) {
    return absl::DataLossError(
        absl::StrCat("artifact format ", version, " → ", kArtifactFormatVersion));
  }
  auto module = std::make_unique<jit::CompiledModule>();
  jit::CompileOptions& o = module->options;
  int target = 0;
  int deterministic = 0;
  int link_cubin = 0;
  if (!r.Int(target) || !r.String(o.arch) || !r.Int(o.opt_level) || !r.Int(deterministic) ||
      !r.Int(link_cubin) || !r.String(o.source_name)) {
    return broken("options");
  }
  o.target = static_cast<runtime::Target>(target);
  o.deterministic = deterministic != 0;
  o.link_cubin = link_cubin != 0;
  uint64_t entries = 0;
  if (!r.Count(entries)) return broken("entries");
  module->entries.resize(entries);
  for (runtime::EntryFunction& entry : module->entries) {
    int entry_deterministic = 0;
    uint64_t arguments = 0;
    uint64_t results = 0;
    if (!r.String(entry.name) || !r.Int(entry_deterministic) || !r.Count(arguments)) {
      return broken("entry");
    }
    entry.deterministic = entry_deterministic != 0;
    entry.arguments.resize(arguments);
    for (runtime::EntryArgument& argument : entry.arguments) {
      if (!ReadArgument(r, argument)) return broken("argument");
    }
    if (!r.Count(results)) return broken("results");
    entry.results.resize(results);
    for (runtime::EntryArgument& result : entry.results) {
      if (!ReadArgument(r, result)) return broken("result");
    }
    for (const runtime::EntryArgument& argument : entry.arguments) {
      if (argument.rank < 0 || argument.shape.size() != static_cast<size_t>(argument.rank)) {
        return broken("argument shape");
      }
    }
    uint64_t constraints = 0;
    if (!r.Count(constraints)) return broken("shape contract");
    entry.size_constraints.resize(constraints);
    for (runtime::SizeConstraint& constraint : entry.size_constraints) {
      int64_t relation = 0;
      if (!ReadSizeSource(r, constraint.size) || !ReadSizeSource(r, constraint.must_equal) ||
          !r.String(constraint.reason) || !r.I64(relation) || relation < 0 ||
          relation > static_cast<int64_t>(runtime::SizeRelation::kAtMost) ||
          !ValidSizeSource(constraint.size, entry) ||
          !ValidSizeSource(constraint.must_equal, entry)) {
        return broken("shape contract");
      }
      constraint.relation = static_cast<runtime::SizeRelation>(relation);
    }
    uint64_t overlaps = 0;
    if (!r.Count(overlaps)) return broken("overlap contract");
    entry.overlaps.resize(overlaps);
    for (runtime::ArgumentOverlap& overlap : entry.overlaps) {
      int same_buffer_allowed = 0;
      if (!r.I64(overlap.written) || !r.I64(overlap.other) || !r.Int(same_buffer_allowed) ||
          !r.String(overlap.reason) || overlap.written == overlap.other ||
          !IsTensorArgument(overlap.written, entry) || !IsTensorArgument(overlap.other, entry)) {
        return broken("overlap contract");
      }
      overlap.same_buffer_allowed = same_buffer_allowed != 0;
    }
    runtime::DeriveSizeSources(entry);
  }
  uint64_t images = 0;
  if (!r.String(module->host_llvm_ir) || !r.String(module->host_object.object) ||
      !r.String(module->host_object.cpu)) {
    return broken("host code");
  }
  // Structors are called by name: only the names the compiler gives them are accepted.
  for (auto [list, prefix] : {std::pair{&module->host_object.initializers, "_tessera_init_"},
                              std::pair{&module->host_object.finalizers, "_tessera_fini_"}}) {
    uint64_t count = 0;
    if (!r.Count(count)) return broken("host structors");
    list->resize(count);
    for (size_t i = 0; i < list->size(); ++i) {
      if (!r.String((*list)[i]) || (*list)[i] != absl::StrCat(prefix, i)) {
        return broken("host structor");
      }
    }
  }
  for (std::vector<std::string>* list : {&module->delegate_symbols, &module->delegate_identities}) {
    uint64_t count = 0;
    if (!r.Count(count)) return broken("delegates");
    list->resize(count);
    for (std::string& item : *list) {
      if (!r.String(item)) return broken("delegate");
    }
  }
  uint64_t checks = 0;
  if (!r.Count(checks)) return broken("run-time checks");
  module->runtime_checks.resize(checks);
  for (std::string& message : module->runtime_checks) {
    if (!r.String(message)) return broken("run-time check");
  }
  std::string decisions;
  if (!r.String(o.matmul_delegate) || !r.String(decisions)) return broken("decisions");
  absl::StatusOr<std::vector<arbiter::DecisionRecord>> records =
      arbiter::RecordsFromJson(decisions);
  if (!records.ok()) return broken(records.status().message());
  module->decisions = *std::move(records);
  if (!r.Count(images)) return broken("images");
  module->device_images.resize(images);
  for (jit::DeviceImage& image : module->device_images) {
    uint64_t kernels = 0;
    if (!r.String(image.module_name) || !r.Count(kernels)) return broken("image");
    image.kernels.resize(kernels);
    for (std::string& kernel : image.kernels) {
      if (!r.String(kernel)) return broken("kernel");
    }
    if (!r.String(image.ptx) || !r.String(image.cubin)) return broken("image payload");
  }
  if (!r.AtEnd()) return broken("trailing bytes");
  return module;
}

}  // namespace tessera::service
