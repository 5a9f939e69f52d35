// Invoke: every argument checked (capi/arguments.h) and the entry's shape contract
// (jit/admission/entry_contract.h) before anything runs; then the entry runs on the host, or
// enqueues its kernels on the caller's stream, with run-time checks caught
// (runtime/checked_call.h).
#include <array>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "capi/arguments.h"
#include "capi/handles.h"
#include "jit/admission/entry_contract.h"
#include "runtime/checked_call.h"
#include "runtime/gpu_runtime.h"
#include "runtime/invocation.h"
#include "runtime/memref_descriptor.h"

using tessera::capi::CheckStructSize;
using tessera::capi::InvalidArgument;
using tessera::capi::MakeError;
using tessera::jit::EntryArgument;
using tessera::jit::EntryFunction;
using tessera::jit::Target;
using tessera::runtime::GpuRuntime;

extern "C" {

tessera_jit_error_t* tessera_jit_function_invoke(tessera_jit_function_t* function,
                                                 const tessera_jit_arg_t* args, size_t num_args,
                                                 void* stream, tessera_jit_arg_t* out_result) {
  if (function == nullptr) return InvalidArgument("function is NULL");
  const EntryFunction& entry = *function->entry;
  tessera_jit_module* module = function->module;
  // Background decisions: measured ones swap in here, before anything runs; this invoke then
  // runs one module's code throughout.
  if (module->pending != nullptr) tessera::capi::SwapInMeasuredDecisions(module);
  const bool swapped = module->swapped.load(std::memory_order_acquire);
  const tessera::jit::CompiledModule& serving = swapped ? *module->measured : *module->compiled;
  const tessera::runtime::PackedEntry entry_point =
      swapped ? function->measured_entry_point.load(std::memory_order_acquire)
              : function->entry_point;
  const Target target = serving.options.target;
  const int device = module->context->device;
  if (num_args != entry.arguments.size()) {
    return InvalidArgument(absl::StrCat("@", entry.name, " takes ", entry.arguments.size(),
                                        " argument(s), found ", num_args));
  }
  if (num_args > 0 && args == nullptr) return InvalidArgument("args is NULL");

  // Inline storage: no heap allocation on the invoke path for up to 16 arguments of rank ≤ 4.
  absl::InlinedVector<tessera::runtime::MemRefDescriptor, 16> descriptors(num_args);
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
      if (absl::Status status = tessera::capi::BuildDescriptor(
              entry, i, args[i].value.tensor, read_only, target, device, descriptors[i]);
          !status.ok()) {
        return MakeError(status);
      }
      packed[i] = descriptors[i].data();
      passed[i].sizes = descriptors[i].data() + 3;
    } else {
      if (absl::Status status = tessera::capi::StoreScalar(entry, i, args[i], scalars[i]);
          !status.ok()) {
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
  const std::vector<std::string>& checks = serving.runtime_checks;
  auto run = [&]() -> absl::Status {
    tessera::runtime::ScopedThreadPool threads(module->context->threads);
    if (checks.empty()) {
      entry_point(packed.data());
      return absl::OkStatus();
    }
    const int64_t failed = tessera::runtime::CallChecked(entry_point, packed.data());
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
      return MakeError(absl::UnavailableError(
          absl::StrCat("@", entry.name,
                       " runs on the GPU, which is not available: ", runtime.status().message())));
    }
    tessera::runtime::ScopedCurrentContext keep_callers_context;
    const auto& registry = serving.options.delegates;
    tessera::runtime::InvocationScope scope(device, static_cast<CUstream>(stream),
                                            registry != nullptr ? registry->runtime() : nullptr);
    if (absl::Status status = (*runtime)->Activate(device); !status.ok()) {
      return MakeError(status);
    }
    module->device_host->RunInitializers();  // loads the device image, once
    if (!scope.status().ok()) return MakeError(scope.status());
    if (absl::Status status = run(); !status.ok()) return MakeError(status);
    if (!scope.status().ok()) return MakeError(scope.status());
  }
  if (out_result != nullptr && !entry.results.empty()) {
    *out_result = tessera::capi::LoadResult(entry.results.front(), scalars[num_args]);
  }
  return nullptr;
}

}  // extern "C"
