// The C API over the compiler and the runtime: handles, argument checking, DLPack → memref
// descriptors, invoke on the host or on the GPU.
#include <algorithm>
#include <cstddef>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <atomic>
#include <map>
#include <set>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/call_once.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/strings/match.h"
#include "absl/types/span.h"
#include "base/float16.h"
#include "arbiter/decision_cache.h"
#include "arbiter/decision_record.h"
#include "service/compile_service.h"
#include "capi/include/tessera_jit.h"
#include "jit/compile_options.h"
#include "jit/compiler.h"
#include "jit/entry_contract.h"
#include "jit/delegates/registry.h"
#include "jit/runtime/checked_call.h"
#include "jit/runtime/delegate_abi.h"
#include "jit/runtime/gpu_runtime.h"
#include "jit/runtime/kernel_abi.h"

using tessera::jit::CompiledModule;
using tessera::jit::ElementType;
using tessera::jit::EntryArgument;
using tessera::jit::EntryFunction;
using tessera::jit::HostExecutable;
using tessera::jit::PackedEntry;
using tessera::jit::Target;
using tessera::jit::runtime::GpuRuntime;

struct tessera_jit_error {
  absl::Status status;
};

struct tessera_jit_context {
  Target default_target = Target::kHost;
  int device = 0;
  tessera_jit_log_level_t log_level = TESSERA_JIT_LOG_WARNING;
  std::unique_ptr<tessera::service::CompileService> service;
  std::shared_ptr<tessera::jit::delegates::DelegateRegistry> delegates =
      std::make_shared<tessera::jit::delegates::DelegateRegistry>();
  /// The arbiter's decisions: `<cache root>/decisions` beside the compile cache (memory only
  /// when the compile cache has no disk tier).
  std::shared_ptr<tessera::arbiter::DecisionCache> decisions;
  absl::Mutex mu;
  std::string last_miss_reason ABSL_GUARDED_BY(mu);
  /// Every identity text handed out by _get_delegate_identity: interned, so each pointer stays
  /// valid for the life of the context whatever other threads ask for.
  std::set<std::string> delegate_identities ABSL_GUARDED_BY(mu);
  /// The caller's reference plus one per live module: a context destroyed while modules live
  /// is freed with the last of them.
  std::atomic<int> references{1};
};

struct tessera_jit_function {
  tessera_jit_module* module = nullptr;
  const EntryFunction* entry = nullptr;
  PackedEntry entry_point = nullptr;
};

struct tessera_jit_module {
  tessera_jit_context* context = nullptr;
  std::shared_ptr<const CompiledModule> compiled;  // shared with the compile cache
  std::string all_ptx;
  std::string decisions_json;

  /// nvptx: the JIT'd host code that launches the kernels, created on first lookup.
  absl::once_flag device_host_once;
  absl::Status device_host_status;
  std::unique_ptr<HostExecutable> device_host;

  absl::Mutex mu;
  std::map<std::string, std::unique_ptr<tessera_jit_function>> functions ABSL_GUARDED_BY(mu);

  const HostExecutable* executable() const {
    return compiled->host != nullptr ? compiled->host.get() : device_host.get();
  }
};

namespace {

/// The context options of API 0.1 (up to log_level): the smallest struct accepted.
constexpr size_t kContextOptionsMinimumSize =
    offsetof(tessera_jit_context_options_t, log_level) + sizeof(tessera_jit_log_level_t);
/// The argument description of API 0.1 (up to type).
constexpr size_t kArgInfoMinimumSize =
    offsetof(tessera_jit_arg_info_t, type) + sizeof(const char*);
/// The compile options of API 0.1 (up to opt_level).
constexpr size_t kCompileOptionsMinimumSize =
    offsetof(tessera_jit_compile_options_t, opt_level) + sizeof(int32_t);

/// `text` with control bytes other than newline and tab written as `\xNN`: user bytes quoted
/// in a message (a name with a NUL in it) never cut or garble it for a C caller.
std::string EscapeControlBytes(absl::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7f) {
      absl::StrAppend(&escaped, "\\x", absl::Hex(byte, absl::kZeroPad2));
    } else {
      escaped.push_back(c);
    }
  }
  return escaped;
}

tessera_jit_error_t* MakeError(absl::Status status) {
  if (status.ok()) return nullptr;
  return new tessera_jit_error{
      absl::Status(status.code(), EscapeControlBytes(status.message()))};
}

void ReleaseContext(tessera_jit_context* context) {
  if (context->references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete context;
}

tessera_jit_error_t* InvalidArgument(absl::string_view message) {
  return MakeError(absl::InvalidArgumentError(message));
}

/// Checks the `struct_size` of a caller's option struct.
absl::Status CheckStructSize(size_t given, size_t minimum, absl::string_view name) {
  if (given >= minimum) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(name, ".struct_size is ", given,
                                                 "; expected at least ", minimum,
                                                 " (initialise it with ", name, "'s _init)"));
}

bool GpuAvailable() { return GpuRuntime::Get().ok(); }

// ---------------------------------------------------------------------------------------------
// Arguments

/// The DLPack dtypes an element type accepts.
bool DtypeMatches(const ElementType& element, DLDataType dtype) {
  if (dtype.lanes != 1) return false;
  switch (element.type_class) {
    case ElementType::Class::kFloat:
      return dtype.code == kDLFloat && dtype.bits == element.bits;
    case ElementType::Class::kBFloat:
      return dtype.code == kDLBfloat && dtype.bits == 16;
    case ElementType::Class::kIndex:
      return dtype.code == kDLInt && dtype.bits == 64;
    case ElementType::Class::kInt:
      // i1 is stored as one byte; newer DLPack calls it kDLBool (6).
      if (element.bits == 1) return dtype.bits == 8 && (dtype.code <= kDLUInt || dtype.code == 6);
      return (dtype.code == kDLInt || dtype.code == kDLUInt) && dtype.bits == element.bits;
  }
  return false;
}

std::string DescribeDtype(DLDataType dtype) {
  const char* name = dtype.code == kDLInt      ? "int"
                     : dtype.code == kDLUInt   ? "uint"
                     : dtype.code == kDLFloat  ? "float"
                     : dtype.code == kDLBfloat ? "bfloat"
                                               : "code";
  return absl::StrCat(name, static_cast<int>(dtype.bits),
                      dtype.lanes != 1 ? absl::StrCat("x", dtype.lanes) : "");
}

std::string ShapeText(const int64_t* shape, int ndim) {
  std::vector<std::string> sizes;
  for (int d = 0; d < ndim; ++d) sizes.push_back(std::to_string(shape[d]));
  return absl::StrCat("[", absl::StrJoin(sizes, ", "), "]");
}

/// A memref descriptor built from a DLTensor: {allocated, aligned, offset, sizes, strides}.
absl::Status BuildDescriptor(const EntryFunction& entry, size_t index, const DLTensor* tensor,
                             bool read_only, Target target, int device,
                             absl::InlinedVector<int64_t, 11>& descriptor) {
  const EntryArgument& expected = entry.arguments[index];
  auto where = [&] {
    return absl::StrCat(tessera::jit::DescribeArgument(entry, index), " of @", entry.name, " (",
                        expected.type, ")");
  };
  if (tensor == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(where(), ": expected a DLTensor, found NULL"));
  }
  if (!DtypeMatches(expected.element, tensor->dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(where(), ": dtype ",
                                                   DescribeDtype(tensor->dtype),
                                                   " does not match the element type"));
  }
  if (tensor->ndim != expected.rank) {
    return absl::InvalidArgumentError(absl::StrCat(where(), ": expected rank ", expected.rank,
                                                   ", found ", tensor->ndim));
  }
  if (tensor->ndim > 0 && tensor->shape == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(where(), ": shape is NULL"));
  }
  int64_t elements = 1;
  int64_t extent = 1;  // the product of the non-zero sizes: what strides are computed from
  for (int d = 0; d < tensor->ndim; ++d) {
    if (tensor->shape[d] < 0 || (expected.shape[d] >= 0 && tensor->shape[d] != expected.shape[d])) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(), ": shape ", ShapeText(tensor->shape, tensor->ndim), " does not match"));
    }
    elements *= tensor->shape[d] == 0 ? 0 : 1;
    if (tensor->shape[d] > 0 && __builtin_mul_overflow(extent, tensor->shape[d], &extent)) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(), ": shape ", ShapeText(tensor->shape, tensor->ndim),
          " has more elements than 64 bits can count"));
    }
  }
  if (elements != 0) elements = extent;
  const int64_t element_bytes = (expected.element.bits + 7) / 8;
  int64_t bytes = 0;
  uintptr_t end = 0;
  if (__builtin_mul_overflow(extent, element_bytes, &bytes) ||
      __builtin_add_overflow(reinterpret_cast<uintptr_t>(tensor->data), tensor->byte_offset,
                             &end) ||
      __builtin_add_overflow(end, static_cast<uintptr_t>(bytes), &end)) {
    return absl::InvalidArgumentError(absl::StrCat(
        where(), ": shape ", ShapeText(tensor->shape, tensor->ndim), " at byte offset ",
        tensor->byte_offset, " spans more bytes than the address space holds"));
  }
  // Identity-layout memrefs are dense row-major: strides must say so (or be NULL).
  if (tensor->strides != nullptr) {
    int64_t stride = 1;
    for (int d = tensor->ndim - 1; d >= 0; --d) {
      if (tensor->shape[d] > 1 && tensor->strides[d] != stride) {
        return absl::InvalidArgumentError(absl::StrCat(
            where(), ": expected a dense row-major tensor, found strides ",
            ShapeText(tensor->strides, tensor->ndim)));
      }
      stride *= tensor->shape[d];
    }
  }
  if (tensor->data == nullptr && elements > 0) {
    return absl::InvalidArgumentError(absl::StrCat(where(), ": data is NULL"));
  }
  const uintptr_t address = reinterpret_cast<uintptr_t>(tensor->data) + tensor->byte_offset;
  if (elements > 0 && address % static_cast<uintptr_t>(element_bytes) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        where(), ": data + byte_offset (0x", absl::Hex(address), ") is not aligned to the ",
        element_bytes, "-byte element type"));
  }
  if (read_only && expected.written) {
    return absl::InvalidArgumentError(absl::StrCat(
        where(), ": the tensor is read-only, but @", entry.name, " writes this argument"));
  }
  const DLDeviceType device_type = tensor->device.device_type;
  if (target == Target::kHost && device_type != kDLCPU && device_type != kDLCUDAHost) {
    return absl::InvalidArgumentError(absl::StrCat(
        where(), ": the module runs on the host; expected host memory (kDLCPU), found device "
                 "type ",
        static_cast<int>(device_type)));
  }
  if (target == Target::kNvptx &&
      ((device_type != kDLCUDA && device_type != kDLCUDAManaged) ||
       tensor->device.device_id != device)) {
    return absl::InvalidArgumentError(absl::StrCat(
        where(), ": the module runs on CUDA device ", device,
        "; expected memory of that device (kDLCUDA), found device type ",
        static_cast<int>(device_type), " id ", tensor->device.device_id));
  }
  // `address` (data + byte_offset, computed as an integer: NULL data with an offset is no
  // pointer arithmetic) was checked above not to overflow.
  const auto base = static_cast<int64_t>(address);
  descriptor.assign(3 + 2 * static_cast<size_t>(tensor->ndim), 0);
  descriptor[0] = base;
  descriptor[1] = base;
  int64_t stride = 1;
  for (int d = tensor->ndim - 1; d >= 0; --d) {
    descriptor[3 + d] = tensor->shape[d];
    descriptor[3 + tensor->ndim + d] = stride;
    stride *= tensor->shape[d];
  }
  return absl::OkStatus();
}

/// Stores a scalar argument in `slot` in the entry's type.
absl::Status StoreScalar(const EntryFunction& entry, size_t index, const tessera_jit_arg_t& arg,
                         std::array<unsigned char, 8>& slot) {
  const EntryArgument& expected = entry.arguments[index];
  auto where = [&] {
    return absl::StrCat(tessera::jit::DescribeArgument(entry, index), " of @", entry.name, " (",
                        expected.type, ")");
  };
  const ElementType& element = expected.element;
  if (element.type_class == ElementType::Class::kFloat ||
      element.type_class == ElementType::Class::kBFloat) {
    if (arg.kind != TESSERA_JIT_ARG_FLOAT) {
      return absl::InvalidArgumentError(absl::StrCat(where(), ": expected a float scalar"));
    }
    const float narrow = static_cast<float>(arg.value.f);
    if (element.type_class == ElementType::Class::kBFloat) {
      const uint16_t bits = tessera::FloatToBfloat(narrow);
      std::memcpy(slot.data(), &bits, sizeof(bits));
    } else if (element.bits == 16) {
      const uint16_t bits = tessera::FloatToHalf(narrow);
      std::memcpy(slot.data(), &bits, sizeof(bits));
    } else if (element.bits == 32) {
      std::memcpy(slot.data(), &narrow, sizeof(narrow));
    } else {
      std::memcpy(slot.data(), &arg.value.f, sizeof(double));
    }
    return absl::OkStatus();
  }
  if (arg.kind != TESSERA_JIT_ARG_INT) {
    return absl::InvalidArgumentError(absl::StrCat(where(), ": expected an integer scalar"));
  }
  const int bits = element.bits;
  int64_t value = arg.value.i;
  if (bits < 64) {
    int64_t low = bits == 1 ? 0 : -(int64_t{1} << (bits - 1));
    int64_t high = bits == 1 ? 1 : (int64_t{1} << bits) - 1;  // signed or unsigned use
    if (value < low || value > high) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), ": ", value, " does not fit in ", bits, " bits"));
    }
  }
  std::memcpy(slot.data(), &value, sizeof(value));  // little-endian: the low bytes are the value
  return absl::OkStatus();
}

DLDataType ToDtype(const ElementType& element) {
  switch (element.type_class) {
    case ElementType::Class::kFloat:
      return {kDLFloat, static_cast<uint8_t>(element.bits), 1};
    case ElementType::Class::kBFloat:
      return {kDLBfloat, 16, 1};
    case ElementType::Class::kIndex:
      return {kDLInt, 64, 1};
    case ElementType::Class::kInt:
      if (element.bits == 1) return {kDLUInt, 8, 1};
      return {kDLInt, static_cast<uint8_t>(element.bits), 1};
  }
  return {kDLFloat, 32, 1};
}

tessera_jit_arg_t LoadResult(const EntryArgument& result, const std::array<unsigned char, 8>& slot) {
  tessera_jit_arg_t out{};
  if (result.element.type_class == ElementType::Class::kBFloat ||
      (result.element.type_class == ElementType::Class::kFloat && result.element.bits == 16)) {
    out.kind = TESSERA_JIT_ARG_FLOAT;
    uint16_t bits;
    std::memcpy(&bits, slot.data(), sizeof(bits));
    out.value.f = result.element.type_class == ElementType::Class::kBFloat
                      ? tessera::BfloatToFloat(bits)
                      : tessera::HalfToFloat(bits);
    return out;
  }
  if (result.element.type_class == ElementType::Class::kFloat) {
    out.kind = TESSERA_JIT_ARG_FLOAT;
    if (result.element.bits == 32) {
      float value;
      std::memcpy(&value, slot.data(), sizeof(value));
      out.value.f = value;
    } else {
      std::memcpy(&out.value.f, slot.data(), sizeof(double));
    }
    return out;
  }
  out.kind = TESSERA_JIT_ARG_INT;
  int64_t value = 0;
  std::memcpy(&value, slot.data(), (result.element.bits + 7) / 8);
  // Sign-extend narrow integers.
  if (result.element.bits < 64 && result.element.bits > 1) {
    int shift = 64 - result.element.bits;
    value = (value << shift) >> shift;
  }
  out.value.i = value;
  return out;
}

}  // namespace

extern "C" {

void tessera_jit_get_api_version(int* out_major, int* out_minor) {
  if (out_major != nullptr) *out_major = TESSERA_JIT_API_MAJOR;
  if (out_minor != nullptr) *out_minor = TESSERA_JIT_API_MINOR;
}

tessera_jit_error_code_t tessera_jit_error_code(const tessera_jit_error_t* error) {
  return error == nullptr ? TESSERA_JIT_OK
                          : static_cast<tessera_jit_error_code_t>(error->status.code());
}

const char* tessera_jit_error_message(const tessera_jit_error_t* error, size_t* out_size) {
  if (error == nullptr) {
    if (out_size != nullptr) *out_size = 0;
    return "";
  }
  if (out_size != nullptr) *out_size = error->status.message().size();
  return error->status.message().data();
}

void tessera_jit_error_destroy(tessera_jit_error_t* error) { delete error; }

tessera_jit_error_t* tessera_jit_context_create(const tessera_jit_context_options_t* options,
                                                tessera_jit_context_t** out_context) {
  if (out_context == nullptr) return InvalidArgument("out_context is NULL");
  tessera_jit_context_options_t defaults;
  tessera_jit_context_options_init(&defaults);
  if (options == nullptr) options = &defaults;
  if (absl::Status status = CheckStructSize(options->struct_size,
                                            kContextOptionsMinimumSize,
                                            "tessera_jit_context_options_t");
      !status.ok()) {
    return MakeError(status);
  }
  auto context = std::make_unique<tessera_jit_context>();
  context->device = options->device_ordinal;
  context->log_level = options->log_level;
  // Fields after log_level arrived in API 0.2; a 0.1 caller's struct ends before them.
  auto has = [&](size_t end) { return options->struct_size >= end; };
  tessera::service::CompileServiceOptions service;
  service.logger = tessera::Logger(static_cast<tessera::LogLevel>(options->log_level));
  if (has(offsetof(tessera_jit_context_options_t, cache_dir) + sizeof(const char*)) &&
      options->cache_dir != nullptr) {
    service.disk_root = options->cache_dir;
  }
  if (has(offsetof(tessera_jit_context_options_t, cache_memory_bytes) + sizeof(uint64_t)) &&
      options->cache_memory_bytes != 0) {
    service.memory_max_bytes = options->cache_memory_bytes;
  }
  if (has(TESSERA_JIT_CONTEXT_OPTIONS_STRUCT_SIZE) && options->cache_disk_bytes != 0) {
    service.disk_max_bytes = options->cache_disk_bytes;
  }
  context->service = std::make_unique<tessera::service::CompileService>(std::move(service));
  const tessera::service::ServiceStats cache_stats = context->service->stats();
  context->decisions = std::make_shared<tessera::arbiter::DecisionCache>(
      cache_stats.disk_enabled ? cache_stats.disk_root + "/decisions" : "");
  if (options->default_target != nullptr) {
    auto target = tessera::jit::ParseTarget(options->default_target);
    if (!target.ok()) {
      return MakeError(absl::InvalidArgumentError(
          absl::StrCat("tessera_jit_context_options_t.default_target: ", target.status().message())));
    }
    context->default_target = *target;
  } else {
    context->default_target = GpuAvailable() ? Target::kNvptx : Target::kHost;
    if (context->default_target == Target::kHost) {
      tessera::Logger(static_cast<tessera::LogLevel>(options->log_level))
          .Info("no GPU available; the default target is host");
    }
  }
  *out_context = context.release();
  return nullptr;
}

void tessera_jit_context_destroy(tessera_jit_context_t* context) {
  if (context != nullptr) ReleaseContext(context);
}

tessera_jit_error_t* tessera_jit_context_get_cache_stats(tessera_jit_context_t* context,
                                                         tessera_jit_cache_stats_t* out_stats) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (out_stats == nullptr) return InvalidArgument("out_stats is NULL");
  if (absl::Status status = CheckStructSize(out_stats->struct_size,
                                            TESSERA_JIT_CACHE_STATS_STRUCT_SIZE,
                                            "tessera_jit_cache_stats_t");
      !status.ok()) {
    return MakeError(status);
  }
  tessera::service::ServiceStats stats = context->service->stats();
  out_stats->memory_hits = stats.memory_hits;
  out_stats->disk_hits = stats.disk_hits;
  out_stats->compiles = stats.compiles;
  out_stats->misses_not_cached = 0;
  out_stats->misses_stale = 0;
  out_stats->misses_damaged = 0;
  for (const auto& [reason, count] : stats.misses_by_reason) {
    switch (reason) {
      case tessera::cache::MissReason::kNotCached:
      case tessera::cache::MissReason::kTierOff:
        out_stats->misses_not_cached += count;
        break;
      case tessera::cache::MissReason::kStale:
        out_stats->misses_stale += count;
        break;
      default:
        out_stats->misses_damaged += count;
    }
  }
  out_stats->memory_entries = stats.memory_entries;
  out_stats->memory_bytes = stats.memory_bytes;
  out_stats->disk_enabled = stats.disk_enabled ? 1 : 0;
  out_stats->disk_entries = 0;
  out_stats->disk_bytes = 0;
  if (stats.disk_enabled) {
    for (const auto& entry : context->service->disk()->List()) {
      ++out_stats->disk_entries;
      out_stats->disk_bytes += entry.bytes;
    }
  }
  absl::MutexLock lock(&context->mu);
  std::snprintf(out_stats->last_miss_reason, sizeof(out_stats->last_miss_reason), "%s",
                context->last_miss_reason.c_str());
  return nullptr;
}

tessera_jit_error_t* tessera_jit_context_register_library(tessera_jit_context_t* context,
                                                          const char* name, const char* path) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (name == nullptr || path == nullptr) return InvalidArgument("name or path is NULL");
  return MakeError(context->delegates->RegisterLibrary(name, path));
}

tessera_jit_error_t* tessera_jit_context_register_default_libraries(
    tessera_jit_context_t* context, const char* target) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  Target chosen = context->default_target;
  if (target != nullptr) {
    auto parsed = tessera::jit::ParseTarget(target);
    if (!parsed.ok()) return MakeError(parsed.status());
    chosen = *parsed;
  }
  return MakeError(context->delegates->RegisterDefaultLibraries(chosen));
}

tessera_jit_error_t* tessera_jit_context_declare_matmul_provider(
    tessera_jit_context_t* context, const tessera_jit_matmul_provider_t* provider) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (provider == nullptr) return InvalidArgument("provider is NULL");
  if (absl::Status status = CheckStructSize(provider->struct_size,
                                            TESSERA_JIT_MATMUL_PROVIDER_STRUCT_SIZE,
                                            "tessera_jit_matmul_provider_t");
      !status.ok()) {
    return MakeError(status);
  }
  auto text = [](const char* value) { return value == nullptr ? std::string() : std::string(value); };
  tessera::jit::delegates::MatmulProvider declared;
  declared.name = text(provider->name);
  declared.library = text(provider->library);
  declared.callee = text(provider->callee);
  auto target = tessera::jit::ParseTarget(text(provider->target));
  if (!target.ok()) {
    return MakeError(absl::InvalidArgumentError(
        absl::StrCat("tessera_jit_matmul_provider_t.target: ", target.status().message())));
  }
  declared.target = *target;
  declared.abi = *target == Target::kHost ? "cblas_sgemm" : "cublasSgemm_v2";
  declared.arch = text(provider->arch);
  declared.provenance = text(provider->provenance);
  declared.covers = text(provider->covers);
  declared.determinism = text(provider->determinism);
  declared.accuracy = text(provider->accuracy);
  if (provider->tolerance != 0) declared.tolerance = provider->tolerance;
  if (provider->tolerance_rel != 0) declared.tolerance_rel = provider->tolerance_rel;
  if (absl::Status status = context->delegates->DeclareMatmulProvider(declared); !status.ok()) {
    return MakeError(status);
  }
  return nullptr;
}

tessera_jit_error_t* tessera_jit_context_register_kernel_image(
    tessera_jit_context_t* context, const char* name, const void* data, size_t size,
    tessera_jit_image_format_t format, const char* arch) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (name == nullptr || (data == nullptr && size > 0)) return InvalidArgument("name or data is NULL");
  std::string bytes(static_cast<const char*>(data), size);
  switch (format) {
    case TESSERA_JIT_IMAGE_PTX:
      return MakeError(context->delegates->RegisterPtx(name, std::move(bytes)));
    case TESSERA_JIT_IMAGE_CUBIN:
      return MakeError(context->delegates->RegisterCubin(name, std::move(bytes)));
    case TESSERA_JIT_IMAGE_CUDA_SOURCE: {
      std::string target_arch = arch != nullptr ? arch : "sm_90";
      if (arch == nullptr) {
        if (auto runtime = GpuRuntime::Get(); runtime.ok()) {
          auto info = (*runtime)->Info(context->device);
          if (info.ok() && tessera::jit::ValidateArch(info->arch).ok()) target_arch = info->arch;
        }
      }
      return MakeError(context->delegates->RegisterCudaSource(name, bytes, target_arch));
    }
  }
  return InvalidArgument(absl::StrCat("unknown image format ", static_cast<int>(format)));
}

size_t tessera_jit_context_get_delegate_count(tessera_jit_context_t* context) {
  return context == nullptr ? 0 : context->delegates->Identities().size();
}

const char* tessera_jit_context_get_delegate_identity(tessera_jit_context_t* context,
                                                      size_t index, size_t* out_size) {
  if (out_size != nullptr) *out_size = 0;
  if (context == nullptr) return nullptr;
  auto identities = context->delegates->Identities();
  if (index >= identities.size()) return nullptr;
  absl::MutexLock lock(&context->mu);
  const std::string& text = *context->delegate_identities.insert(identities[index].ToString()).first;
  if (out_size != nullptr) *out_size = text.size();
  return text.c_str();
}

uint64_t tessera_jit_get_delegate_dispatch_count(void) {
  return tessera::jit::runtime::DelegateDispatchCount();
}

int tessera_jit_is_gpu_available(void) { return GpuAvailable() ? 1 : 0; }

int32_t tessera_jit_device_count(void) {
  auto runtime = GpuRuntime::Get();
  return runtime.ok() ? (*runtime)->device_count() : 0;
}

tessera_jit_error_t* tessera_jit_device_get_info(int32_t ordinal,
                                                 tessera_jit_device_info_t* out_info) {
  if (out_info == nullptr) return InvalidArgument("out_info is NULL");
  if (absl::Status status = CheckStructSize(out_info->struct_size,
                                            TESSERA_JIT_DEVICE_INFO_STRUCT_SIZE,
                                            "tessera_jit_device_info_t");
      !status.ok()) {
    return MakeError(status);
  }
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) return MakeError(runtime.status());
  auto info = (*runtime)->Info(ordinal);
  if (!info.ok()) return MakeError(info.status());
  out_info->ordinal = info->ordinal;
  std::snprintf(out_info->name, sizeof(out_info->name), "%s", info->name.c_str());
  std::snprintf(out_info->arch, sizeof(out_info->arch), "%s", info->arch.c_str());
  out_info->total_memory_bytes = info->total_memory;
  out_info->multiprocessors = info->multiprocessors;
  return nullptr;
}

tessera_jit_error_t* tessera_jit_compile(tessera_jit_context_t* context, const char* source,
                                         size_t source_size,
                                         const tessera_jit_compile_options_t* options,
                                         tessera_jit_module_t** out_module) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (source == nullptr && source_size > 0) return InvalidArgument("source is NULL");
  if (out_module == nullptr) return InvalidArgument("out_module is NULL");
  tessera_jit_compile_options_t defaults;
  tessera_jit_compile_options_init(&defaults);
  if (options == nullptr) options = &defaults;
  if (absl::Status status = CheckStructSize(options->struct_size, kCompileOptionsMinimumSize,
                                            "tessera_jit_compile_options_t");
      !status.ok()) {
    return MakeError(status);
  }
  tessera::jit::CompileOptions compile;
  compile.target = context->default_target;
  if (options->target != nullptr) {
    auto target = tessera::jit::ParseTarget(options->target);
    if (!target.ok()) {
      return MakeError(absl::InvalidArgumentError(
          absl::StrCat("tessera_jit_compile_options_t.target: ", target.status().message())));
    }
    compile.target = *target;
  }
  if (options->arch != nullptr) {
    compile.arch = options->arch;
  } else if (compile.target == Target::kNvptx) {
    auto runtime = GpuRuntime::Get();
    if (runtime.ok()) {
      auto info = (*runtime)->Info(context->device);
      if (info.ok() && tessera::jit::ValidateArch(info->arch).ok()) compile.arch = info->arch;
    }
  }
  compile.opt_level = options->opt_level;
  compile.deterministic = (options->flags & TESSERA_JIT_DETERMINISTIC) != 0;
  compile.delegates = context->delegates;
  compile.decisions = context->decisions;
  if (options->struct_size >= TESSERA_JIT_COMPILE_OPTIONS_STRUCT_SIZE &&
      options->matmul_delegate != nullptr) {
    compile.matmul_delegate = options->matmul_delegate;
  }
  absl::StatusOr<tessera::service::CompileResult> compiled =
      context->service->Compile(absl::string_view(source, source_size), compile);
  if (!compiled.ok()) return MakeError(compiled.status());
  if (compiled->source == tessera::service::ModuleSource::kCompiled) {
    absl::MutexLock lock(&context->mu);
    context->last_miss_reason = compiled->miss.ToString();
  }
  auto module = std::make_unique<tessera_jit_module>();
  context->references.fetch_add(1, std::memory_order_relaxed);
  module->context = context;
  module->compiled = std::move(compiled->module);
  for (const auto& image : module->compiled->device_images) {
    absl::StrAppend(&module->all_ptx, "// gpu.module @", image.module_name, "\n", image.ptx);
  }
  module->decisions_json = tessera::arbiter::ToJson(module->compiled->decisions);
  *out_module = module.release();
  return nullptr;
}

void tessera_jit_module_destroy(tessera_jit_module_t* module) {
  if (module == nullptr) return;
  tessera_jit_context* context = module->context;
  if (module->device_host != nullptr) {
    tessera::jit::runtime::ScopedCurrentContext keep_callers_context;
    // The host code's destructors unload the device image on the module's device.
    tessera::jit::runtime::InvocationScope scope(module->context->device, nullptr);
    if (auto runtime = GpuRuntime::Get(); runtime.ok()) {
      (void)(*runtime)->Activate(module->context->device);
    }
    module->device_host.reset();
  }
  delete module;
  ReleaseContext(context);
}

size_t tessera_jit_module_get_entry_count(const tessera_jit_module_t* module) {
  return module == nullptr ? 0 : module->compiled->entries.size();
}

const char* tessera_jit_module_get_entry_name(const tessera_jit_module_t* module, size_t index,
                                              size_t* out_size) {
  if (module == nullptr || index >= module->compiled->entries.size()) {
    if (out_size != nullptr) *out_size = 0;
    return nullptr;
  }
  const std::string& name = module->compiled->entries[index].name;
  if (out_size != nullptr) *out_size = name.size();
  return name.c_str();
}

tessera_jit_error_t* tessera_jit_module_get_text(const tessera_jit_module_t* module,
                                                 tessera_jit_text_kind_t kind,
                                                 const char** out_data, size_t* out_size) {
  if (module == nullptr) return InvalidArgument("module is NULL");
  if (out_data == nullptr || out_size == nullptr) return InvalidArgument("out_data or out_size is NULL");
  const std::string* text = nullptr;
  switch (kind) {
    case TESSERA_JIT_TEXT_LLVM:
      text = &module->compiled->host_llvm_ir;
      break;
    case TESSERA_JIT_TEXT_PTX:
      text = &module->all_ptx;
      break;
    case TESSERA_JIT_TEXT_CUBIN:
      if (!module->compiled->device_images.empty()) {
        text = &module->compiled->device_images.front().cubin;
      }
      break;
    case TESSERA_JIT_TEXT_DECISIONS:
      *out_data = module->decisions_json.c_str();  // "[]" for a module without Tile ops
      *out_size = module->decisions_json.size();
      return nullptr;
    default:
      return InvalidArgument(absl::StrCat("unknown text kind ", static_cast<int>(kind)));
  }
  if (text == nullptr || text->empty()) {
    return MakeError(absl::NotFoundError(absl::StrCat(
        "the module has no ", kind == TESSERA_JIT_TEXT_LLVM ? "LLVM IR" : kind == TESSERA_JIT_TEXT_PTX ? "PTX" : "cubin",
        " (compiled for ", tessera::jit::TargetName(module->compiled->options.target), ")")));
  }
  *out_data = text->c_str();
  *out_size = text->size();
  return nullptr;
}

tessera_jit_error_t* tessera_jit_module_get_function(tessera_jit_module_t* module,
                                                     const char* name, size_t name_size,
                                                     tessera_jit_function_t** out_function) {
  if (module == nullptr) return InvalidArgument("module is NULL");
  if (name == nullptr) return InvalidArgument("name is NULL");
  if (out_function == nullptr) return InvalidArgument("out_function is NULL");
  std::string key(name, name_size);
  const EntryFunction* entry = nullptr;
  std::vector<std::string> names;
  for (const EntryFunction& candidate : module->compiled->entries) {
    names.push_back(candidate.name);
    if (candidate.name == key) entry = &candidate;
  }
  if (entry == nullptr) {
    return MakeError(absl::NotFoundError(absl::StrCat(
        "no entry function @", key, "; the module has: ", absl::StrJoin(names, ", "))));
  }
  if (module->compiled->options.target == Target::kNvptx) {
    absl::call_once(module->device_host_once, [module] {
      auto host = tessera::jit::LoadHostCode(*module->compiled);
      if (host.ok()) {
        module->device_host = std::move(*host);
      } else {
        module->device_host_status = host.status();
      }
    });
    if (!module->device_host_status.ok()) return MakeError(module->device_host_status);
  }
  absl::MutexLock lock(&module->mu);
  std::unique_ptr<tessera_jit_function>& function = module->functions[key];
  if (function == nullptr) {
    auto entry_point = module->executable()->Lookup(key);
    if (!entry_point.ok()) return MakeError(entry_point.status());
    function = std::make_unique<tessera_jit_function>(
        tessera_jit_function{module, entry, *entry_point});
  }
  *out_function = function.get();
  return nullptr;
}

size_t tessera_jit_function_get_arg_count(const tessera_jit_function_t* function) {
  return function == nullptr ? 0 : function->entry->arguments.size();
}

size_t tessera_jit_function_get_result_count(const tessera_jit_function_t* function) {
  return function == nullptr ? 0 : function->entry->results.size();
}

tessera_jit_error_t* tessera_jit_function_get_arg_info(const tessera_jit_function_t* function,
                                                       int result, size_t index,
                                                       tessera_jit_arg_info_t* out_info) {
  if (function == nullptr) return InvalidArgument("function is NULL");
  if (out_info == nullptr) return InvalidArgument("out_info is NULL");
  if (absl::Status status = CheckStructSize(out_info->struct_size, kArgInfoMinimumSize,
                                            "tessera_jit_arg_info_t");
      !status.ok()) {
    return MakeError(status);
  }
  const std::vector<EntryArgument>& list =
      result != 0 ? function->entry->results : function->entry->arguments;
  if (index >= list.size()) {
    return InvalidArgument(absl::StrCat("@", function->entry->name, " has ", list.size(),
                                        result != 0 ? " result(s)" : " argument(s)",
                                        "; index ", index, " is out of range"));
  }
  const EntryArgument& argument = list[index];
  out_info->kind = argument.kind == EntryArgument::Kind::kMemRef ? TESSERA_JIT_ARG_TENSOR
                   : argument.element.type_class == ElementType::Class::kFloat ||
                           argument.element.type_class == ElementType::Class::kBFloat
                       ? TESSERA_JIT_ARG_FLOAT
                       : TESSERA_JIT_ARG_INT;
  out_info->dtype = ToDtype(argument.element);
  out_info->ndim = static_cast<int32_t>(argument.rank);
  out_info->shape = argument.shape.empty() ? nullptr : argument.shape.data();
  out_info->type = argument.type.c_str();
  if (out_info->struct_size >= TESSERA_JIT_ARG_INFO_STRUCT_SIZE) {
    out_info->name = argument.name.c_str();
    out_info->written = argument.written ? 1 : 0;
  }
  return nullptr;
}

tessera_jit_error_t* tessera_jit_function_invoke(tessera_jit_function_t* function,
                                                 const tessera_jit_arg_t* args, size_t num_args,
                                                 void* stream, tessera_jit_arg_t* out_result) {
  if (function == nullptr) return InvalidArgument("function is NULL");
  const EntryFunction& entry = *function->entry;
  tessera_jit_module* module = function->module;
  const Target target = module->compiled->options.target;
  const int device = module->context->device;
  if (num_args != entry.arguments.size()) {
    return InvalidArgument(absl::StrCat("@", entry.name, " takes ", entry.arguments.size(),
                                        " argument(s), found ", num_args));
  }
  if (num_args > 0 && args == nullptr) return InvalidArgument("args is NULL");

  // Inline storage: no heap allocation on the invoke path for up to 16 arguments of rank ≤ 4.
  absl::InlinedVector<absl::InlinedVector<int64_t, 11>, 16> descriptors(num_args);
  absl::InlinedVector<std::array<unsigned char, 8>, 17> scalars(num_args + 1);
  absl::InlinedVector<void*, 17> packed(num_args + 1, nullptr);
  absl::InlinedVector<tessera::jit::PassedArgument, 16> passed(num_args);
  for (size_t i = 0; i < num_args; ++i) {
    const EntryArgument& expected = entry.arguments[i];
    if (expected.kind == EntryArgument::Kind::kMemRef) {
      const bool read_only = args[i].kind == TESSERA_JIT_ARG_TENSOR_READ_ONLY;
      if (args[i].kind != TESSERA_JIT_ARG_TENSOR && !read_only) {
        return InvalidArgument(absl::StrCat(tessera::jit::DescribeArgument(entry, i), " of @",
                                            entry.name, " (", expected.type,
                                            "): expected a tensor"));
      }
      if (absl::Status status = BuildDescriptor(entry, i, args[i].value.tensor, read_only,
                                                target, device, descriptors[i]);
          !status.ok()) {
        return MakeError(status);
      }
      packed[i] = descriptors[i].data();
      passed[i].sizes = descriptors[i].data() + 3;
    } else {
      if (absl::Status status = StoreScalar(entry, i, args[i], scalars[i]); !status.ok()) {
        return MakeError(status);
      }
      packed[i] = scalars[i].data();
      passed[i].value = args[i].value.i;
    }
  }
  packed[num_args] = scalars[num_args].data();  // the scalar result, if any
  if (absl::Status status = tessera::jit::CheckShapeContract(entry, passed); !status.ok()) {
    return MakeError(status);
  }

  // Runs the entry; with run-time checks in its code, a failed one ends it with OUT_OF_RANGE.
  const std::vector<std::string>& checks = module->compiled->runtime_checks;
  auto run = [&]() -> absl::Status {
    if (checks.empty()) {
      function->entry_point(packed.data());
      return absl::OkStatus();
    }
    const int64_t failed = tessera::jit::runtime::CallChecked(function->entry_point, packed.data());
    if (failed < 0) return absl::OkStatus();
    return absl::OutOfRangeError(absl::StrCat(
        "@", entry.name, ": run-time check failed at ",
        failed < static_cast<int64_t>(checks.size()) ? checks[failed] : "an unknown location",
        "\n(the entry stopped there: outputs may be partly written)"));
  };
  if (target == Target::kHost) {
    if (absl::Status status = run(); !status.ok()) return MakeError(status);
  } else {
    auto runtime = GpuRuntime::Get();
    if (!runtime.ok()) {
      return MakeError(absl::UnavailableError(absl::StrCat(
          "@", entry.name, " runs on the GPU, which is not available: ",
          runtime.status().message())));
    }
    tessera::jit::runtime::ScopedCurrentContext keep_callers_context;
    tessera::jit::runtime::InvocationScope scope(device, static_cast<CUstream>(stream));
    if (absl::Status status = (*runtime)->Activate(device); !status.ok()) {
      return MakeError(status);
    }
    module->device_host->RunInitializers();  // loads the device image, once
    if (!scope.status().ok()) return MakeError(scope.status());
    if (absl::Status status = run(); !status.ok()) return MakeError(status);
    if (!scope.status().ok()) return MakeError(scope.status());
  }
  if (out_result != nullptr && !entry.results.empty()) {
    *out_result = LoadResult(entry.results.front(), scalars[num_args]);
  }
  return nullptr;
}

tessera_jit_error_t* tessera_jit_buffer_alloc(tessera_jit_context_t* context, size_t size,
                                              void** out_device_pointer) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (out_device_pointer == nullptr) return InvalidArgument("out_device_pointer is NULL");
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) return MakeError(runtime.status());
  tessera::jit::runtime::ScopedCurrentContext keep_callers_context;
  auto pointer = (*runtime)->Allocate(context->device, size);
  if (!pointer.ok()) return MakeError(pointer.status());
  *out_device_pointer = reinterpret_cast<void*>(*pointer);
  return nullptr;
}

tessera_jit_error_t* tessera_jit_buffer_free(tessera_jit_context_t* context,
                                             void* device_pointer) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (device_pointer == nullptr) return nullptr;
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) return MakeError(runtime.status());
  tessera::jit::runtime::ScopedCurrentContext keep_callers_context;
  return MakeError(
      (*runtime)->Free(context->device, reinterpret_cast<CUdeviceptr>(device_pointer)));
}

tessera_jit_error_t* tessera_jit_buffer_copy(tessera_jit_context_t* context, void* destination,
                                             const void* source, size_t size,
                                             tessera_jit_copy_kind_t kind) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if ((destination == nullptr || source == nullptr) && size > 0) {
    return InvalidArgument("destination or source is NULL");
  }
  if (kind < TESSERA_JIT_COPY_HOST_TO_DEVICE || kind > TESSERA_JIT_COPY_DEVICE_TO_DEVICE) {
    return InvalidArgument(absl::StrCat("unknown copy kind ", static_cast<int>(kind)));
  }
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) return MakeError(runtime.status());
  tessera::jit::runtime::ScopedCurrentContext keep_callers_context;
  using tessera::jit::runtime::CopyKind;
  const CopyKind copy = kind == TESSERA_JIT_COPY_HOST_TO_DEVICE   ? CopyKind::kHostToDevice
                        : kind == TESSERA_JIT_COPY_DEVICE_TO_HOST ? CopyKind::kDeviceToHost
                                                                  : CopyKind::kDeviceToDevice;
  return MakeError((*runtime)->Copy(context->device, destination, source, size, copy, nullptr));
}

tessera_jit_error_t* tessera_jit_stream_synchronize(tessera_jit_context_t* context,
                                                    void* stream) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) return MakeError(runtime.status());
  tessera::jit::runtime::ScopedCurrentContext keep_callers_context;
  return MakeError((*runtime)->Synchronize(context->device, static_cast<CUstream>(stream)));
}

}  // extern "C"
