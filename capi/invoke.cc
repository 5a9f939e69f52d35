// Invoke: every argument checked (capi/arguments.h) and the entry's contract, sizes and
// overlaps (runtime/entry_contract.h), before anything runs; then the loaded module runs the entry
// on the host, or enqueues its kernels on the caller's stream (service/loaded_module.h).
#include <array>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "capi/arguments.h"
#include "capi/handles.h"
#include "runtime/entry_contract.h"
#include "runtime/memref_descriptor.h"

using tessera::capi::CheckStructSize;
using tessera::capi::InvalidArgument;
using tessera::capi::MakeError;
using tessera::runtime::EntryArgument;
using tessera::runtime::EntryFunction;
using tessera::runtime::Target;

extern "C" {

tessera_jit_error_t* tessera_jit_function_invoke(tessera_jit_function_t* function,
                                                 const tessera_jit_arg_t* args, size_t num_args,
                                                 void* stream, tessera_jit_arg_t* out_result) {
  if (function == nullptr) return InvalidArgument("function is NULL");
  const EntryFunction& entry = function->function->entry();
  tessera::service::LoadedModule& module = *function->module->loaded;
  const Target target = module.target();
  const int device = function->module->context->device;
  if (num_args != entry.arguments.size()) {
    return InvalidArgument(absl::StrCat("@", entry.name, " takes ", entry.arguments.size(),
                                        " argument(s), found ", num_args));
  }
  if (num_args > 0 && args == nullptr) return InvalidArgument("args is NULL");

  // Inline storage: no heap allocation on the invoke path for up to 16 arguments of rank ≤ 4.
  absl::InlinedVector<tessera::runtime::MemRefDescriptor, 16> descriptors(num_args);
  absl::InlinedVector<std::array<unsigned char, 8>, 17> scalars(num_args + 1);
  absl::InlinedVector<void*, 17> packed(num_args + 1, nullptr);
  absl::InlinedVector<tessera::runtime::PassedArgument, 16> passed(num_args);
  for (size_t i = 0; i < num_args; ++i) {
    const EntryArgument& expected = entry.arguments[i];
    if (expected.kind == EntryArgument::Kind::kMemRef) {
      const bool read_only = args[i].kind == TESSERA_JIT_ARG_TENSOR_READ_ONLY;
      if (args[i].kind != TESSERA_JIT_ARG_TENSOR && !read_only) {
        return InvalidArgument(absl::StrCat(tessera::runtime::DescribeArgument(entry, i), " of @",
                                            entry.name, " (", expected.type,
                                            "): expected a tensor"));
      }
      if (absl::Status status = tessera::capi::BuildDescriptor(
              entry, i, args[i].value.tensor, read_only, target, device, descriptors[i], passed[i]);
          !status.ok()) {
        return MakeError(status);
      }
      packed[i] = descriptors[i].data();
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
  if (absl::Status status = tessera::runtime::CheckShapeContract(entry, passed); !status.ok()) {
    return MakeError(status);
  }
  if (absl::Status status = tessera::runtime::CheckArgumentOverlaps(entry, passed); !status.ok()) {
    return MakeError(status);
  }

  if (absl::Status status = module.Run(*function->function, packed.data(), stream); !status.ok()) {
    return MakeError(status);
  }
  if (out_result != nullptr && !entry.results.empty()) {
    *out_result = tessera::capi::LoadResult(entry.results.front(), scalars[num_args]);
  }
  return nullptr;
}

}  // extern "C"
