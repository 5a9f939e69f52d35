#include "jit/arbitration/entry_probe.h"

#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "arbiter/element_storage.h"
#include "base/float16.h"
#include "base/status_macros.h"
#include "runtime/checked_call.h"
#include "runtime/entry_contract.h"

namespace tessera::jit {
namespace {

/// The probe storage name of a tensor element ("f32", "f16", "bf16"), or "" for another type.
std::string StorageName(const ElementType& element) {
  if (element.type_class == ElementType::Class::kBFloat && element.bits == 16) return "bf16";
  if (element.type_class != ElementType::Class::kFloat) return "";
  if (element.bits == 32) return "f32";
  if (element.bits == 16) return "f16";
  return "";
}

/// The written tensor arguments of `entry` in argument order: index and storage type.
std::vector<std::pair<size_t, std::string>> WrittenTensors(const EntryFunction& entry) {
  std::vector<std::pair<size_t, std::string>> written;
  for (size_t i = 0; i < entry.arguments.size(); ++i) {
    const EntryArgument& argument = entry.arguments[i];
    if (argument.kind != EntryArgument::Kind::kMemRef || !argument.written) continue;
    std::string storage = StorageName(argument.element);
    if (arbiter::StorageBytes(storage) != 0) written.emplace_back(i, std::move(storage));
  }
  return written;
}

}  // namespace

std::string MakeEntryProbe(const EntryFunction& entry, int64_t dynamic_size, uint32_t seed,
                           EntryProbe& probe) {
  probe = EntryProbe();
  probe.dynamic_size = dynamic_size;
  double bytes = 0;
  std::vector<runtime::PassedArgument> passed(entry.arguments.size());
  for (size_t i = 0; i < entry.arguments.size(); ++i) {
    const EntryArgument& argument = entry.arguments[i];
    const ElementType& element = argument.element;
    if (argument.kind == EntryArgument::Kind::kScalar) {
      const bool integer = element.type_class == ElementType::Class::kInt ||
                           element.type_class == ElementType::Class::kIndex;
      const bool f32_or_f64 = element.type_class == ElementType::Class::kFloat &&
                              (element.bits == 32 || element.bits == 64);
      if (!integer && !f32_or_f64) {
        return absl::StrCat("it takes a ", argument.type,
                            " scalar (the probe passes f32, f64 and "
                            "integer scalars only)");
      }
      probe.shapes.emplace_back();
      probe.buffers.emplace_back();
      passed[i].value = 1;
      continue;
    }
    const std::string storage = StorageName(element);
    if (storage.empty()) {
      return absl::StrCat("it takes ", argument.type,
                          " (the probe fills f32, f16 and bf16 tensors only)");
    }
    std::vector<int64_t> shape;
    double count = 1;
    for (int64_t size : argument.shape) {
      shape.push_back(size < 0 ? dynamic_size : size);
      count *= static_cast<double>(shape.back());
    }
    bytes += static_cast<double>(arbiter::StorageBytes(storage)) * count;
    if (bytes > kMaxEntryProbeBytes) return kEntryProbeTooLarge;
    std::vector<float> values(static_cast<size_t>(count));
    std::mt19937 random(seed + static_cast<uint32_t>(i));
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (float& value : values) {
      value = uniform(random);
      // Rounded to the type, so that the encoding below is exact.
      if (storage == "f16") value = HalfToFloat(FloatToHalf(value));
      if (storage == "bf16") value = BfloatToFloat(FloatToBfloat(value));
    }
    absl::StatusOr<std::vector<uint8_t>> stored = arbiter::EncodeStorage(values, storage);
    if (!stored.ok()) return std::string(stored.status().message());
    probe.shapes.push_back(std::move(shape));
    probe.buffers.push_back(*std::move(stored));
    passed[i].sizes = probe.shapes.back().data();
  }
  if (absl::Status status = runtime::CheckShapeContract(entry, passed); !status.ok()) {
    return absl::StrCat("its shape contract does not hold with every dynamic size ", dynamic_size,
                        " (", status.message(), ")");
  }
  return "";
}

PackedEntryArguments::PackedEntryArguments(const EntryFunction& entry, const EntryProbe& probe,
                                           const std::vector<void*>& data) {
  const size_t n = entry.arguments.size();
  descriptors.resize(n);
  scalars.resize(n + 1);
  packed.assign(n + 1, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const EntryArgument& argument = entry.arguments[i];
    if (argument.kind == EntryArgument::Kind::kMemRef) {
      descriptors[i] = runtime::MakeMemRefDescriptor(data[i], probe.shapes[i]);
      packed[i] = descriptors[i].data();
      continue;
    }
    scalars[i].fill(0);
    if (argument.element.type_class == ElementType::Class::kFloat) {
      if (argument.element.bits == 32) {
        const float half = 0.5f;
        std::memcpy(scalars[i].data(), &half, sizeof(half));
      } else {
        const double half = 0.5;
        std::memcpy(scalars[i].data(), &half, sizeof(half));
      }
    } else {
      scalars[i][0] = 1;  // little-endian 1 of any integer width
    }
    packed[i] = scalars[i].data();
  }
  packed[n] = scalars[n].data();
}

std::vector<float> WrittenValues(const EntryFunction& entry,
                                 const std::vector<std::vector<uint8_t>>& buffers) {
  std::vector<float> written;
  for (const auto& [i, storage] : WrittenTensors(entry)) {
    const std::vector<float> values = arbiter::DecodeStorage(
        buffers[i].data(), buffers[i].size() / arbiter::StorageBytes(storage), storage);
    written.insert(written.end(), values.begin(), values.end());
  }
  return written;
}

std::vector<arbiter::OutputSegment> WrittenSegments(const EntryFunction& entry,
                                                    const EntryProbe& probe) {
  std::vector<arbiter::OutputSegment> segments;
  for (const auto& [i, storage] : WrittenTensors(entry)) {
    segments.push_back(
        {static_cast<int64_t>(probe.buffers[i].size() / arbiter::StorageBytes(storage)), storage});
  }
  return segments;
}

absl::Status CallProbeEntry(const CompiledModule& module, runtime::PackedEntry entry, void** args) {
  if (module.runtime_checks.empty()) {
    entry(args);
    return absl::OkStatus();
  }
  const int64_t failed = runtime::CallChecked(entry, args);
  if (failed < 0) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "a run-time check failed on the probe at ",
      failed < static_cast<int64_t>(module.runtime_checks.size()) ? module.runtime_checks[failed]
                                                                  : "an unknown location"));
}

absl::StatusOr<std::vector<float>> RunEntryOnHost(const CompiledModule& module,
                                                  const EntryFunction& entry,
                                                  const EntryProbe& probe) {
  absl::StatusOr<runtime::PackedEntry> entry_point = module.host->Lookup(entry.name);
  if (!entry_point.ok()) return entry_point.status();
  std::vector<std::vector<uint8_t>> buffers = probe.buffers;
  std::vector<void*> data;
  for (std::vector<uint8_t>& buffer : buffers) data.push_back(buffer.data());
  PackedEntryArguments arguments(entry, probe, data);
  TESSERA_RETURN_IF_ERROR(CallProbeEntry(module, *entry_point, arguments.packed.data()));
  return WrittenValues(entry, buffers);
}

}  // namespace tessera::jit
