// Modules and functions: compile through the context's compile service, entries and texts,
// function lookup (nvptx: the launch code is JIT-loaded on the first lookup) and argument info.
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "arbiter/decision_record.h"
#include "capi/arguments.h"
#include "capi/handles.h"
#include "runtime/thread_pool.h"
#include "service/package.h"

using tessera::capi::CheckStructSize;
using tessera::capi::InvalidArgument;
using tessera::capi::MakeError;
using tessera::runtime::ElementType;
using tessera::runtime::EntryArgument;
using tessera::runtime::EntryFunction;
using tessera::runtime::Target;

namespace tessera::capi {
namespace {

/// A module handle over `loaded` (which holds a reference on `context`).
std::unique_ptr<tessera_jit_module> WrapModule(
    tessera_jit_context* context, std::unique_ptr<tessera::service::LoadedModule> loaded) {
  auto module = std::make_unique<tessera_jit_module>();
  context->references.fetch_add(1, std::memory_order_relaxed);
  module->context = context;
  module->loaded = std::move(loaded);
  {
    absl::MutexLock lock(&context->mu);
    context->decided.AddRecords(module->loaded->incumbent_decisions());
  }
  return module;
}

/// What every module of `context` is loaded with.
tessera::service::LoadOptions LoadOptionsFor(tessera_jit_context* context) {
  tessera::service::LoadOptions load;
  load.device = context->device;
  load.threads = context->threads;
  load.on_swap = [context](const std::vector<tessera::arbiter::DecisionRecord>& records) {
    absl::MutexLock lock(&context->mu);
    context->decided.AddRecords(records);
  };
  return load;
}

}  // namespace
}  // namespace tessera::capi

extern "C" {

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
  if (absl::Status status = CheckStructSize(
          options->struct_size, TESSERA_JIT_STRUCT_SIZE(tessera_jit_compile_options_t, opt_level),
          "tessera_jit_compile_options_t");
      !status.ok()) {
    return MakeError(status);
  }
  tessera::service::CompileRequest compile;
  compile.target = context->default_target;
  if (options->target != nullptr) {
    auto target = tessera::runtime::ParseTarget(options->target);
    if (!target.ok()) {
      return MakeError(absl::InvalidArgumentError(
          absl::StrCat("tessera_jit_compile_options_t.target: ", target.status().message())));
    }
    compile.target = *target;
  }
  if (options->arch != nullptr) {
    compile.arch = options->arch;
  } else if (compile.target == Target::kNvptx) {
    absl::StatusOr<std::string> arch = tessera::capi::DefaultArch(context);
    if (!arch.ok()) return MakeError(arch.status());
    compile.arch = *arch;
  }
  constexpr uint32_t kKnownFlags = TESSERA_JIT_DETERMINISTIC | TESSERA_JIT_BATCH_INVARIANT |
                                   TESSERA_JIT_BACKGROUND_DECISIONS |
                                   TESSERA_JIT_BACKGROUND_DETERMINISTIC | TESSERA_JIT_PTX_ONLY;
  if ((options->flags & ~kKnownFlags) != 0) {
    return InvalidArgument(absl::StrCat("tessera_jit_compile_options_t.flags: unknown flags 0x",
                                        absl::Hex(options->flags & ~kKnownFlags)));
  }
  compile.opt_level = options->opt_level;
  compile.link_cubin = (options->flags & TESSERA_JIT_PTX_ONLY) == 0;
  compile.batch_invariant = (options->flags & TESSERA_JIT_BATCH_INVARIANT) != 0;
  compile.deterministic =
      compile.batch_invariant || (options->flags & TESSERA_JIT_DETERMINISTIC) != 0;
  const bool background = (options->flags & TESSERA_JIT_BACKGROUND_DECISIONS) != 0;
  if (!background && (options->flags & TESSERA_JIT_BACKGROUND_DETERMINISTIC) != 0) {
    return InvalidArgument(
        "tessera_jit_compile_options_t.flags: TESSERA_JIT_BACKGROUND_DETERMINISTIC needs "
        "TESSERA_JIT_BACKGROUND_DECISIONS");
  }
  // Host only: a swap of nvptx code would also swap its loaded device image.
  compile.background_decisions = background && compile.target == Target::kHost;
  compile.background_deterministic = (options->flags & TESSERA_JIT_BACKGROUND_DETERMINISTIC) != 0;
  compile.delegates = context->delegates;
  compile.decisions = context->decisions;
  compile.plan = context->plan;
  compile.plan_strict = context->plan_strict;
  compile.arbitration_budget_ms = context->arbitration_budget_ms;
  if (TESSERA_JIT_HOLDS(options, tessera_jit_compile_options_t, arbitration_budget_ms) &&
      options->arbitration_budget_ms != 0) {
    if (options->arbitration_budget_ms < 1 || options->arbitration_budget_ms > 3600000) {
      return InvalidArgument(absl::StrCat(
          "tessera_jit_compile_options_t.arbitration_budget_ms must be 0 (the context's) or in "
          "[1, 3600000], found ",
          options->arbitration_budget_ms));
    }
    compile.arbitration_budget_ms = options->arbitration_budget_ms;
  }
  if (TESSERA_JIT_HOLDS(options, tessera_jit_compile_options_t, matmul_delegate) &&
      options->matmul_delegate != nullptr) {
    compile.matmul_delegate = options->matmul_delegate;
  }
  if (TESSERA_JIT_HOLDS(options, tessera_jit_compile_options_t, host_cpu) &&
      options->host_cpu != nullptr && compile.target == Target::kHost) {
    compile.host_cpu = options->host_cpu;
  }
  // The kernels of an nvptx module compile (and link) in parallel on the context's threads.
  tessera::runtime::ScopedThreadPool threads(context->threads);
  absl::StatusOr<tessera::service::CompileResult> compiled =
      context->service->Compile(absl::string_view(source, source_size), compile);
  if (!compiled.ok()) return MakeError(compiled.status());
  if (compiled->source == tessera::service::ModuleSource::kCompiled) {
    absl::MutexLock lock(&context->mu);
    context->last_miss_reason = compiled->miss.ToString();
  }
  tessera::service::LoadOptions load = tessera::capi::LoadOptionsFor(context);
  load.background_requested = background;
  load.background_deterministic = compile.background_deterministic;
  auto loaded = std::make_unique<tessera::service::LoadedModule>(std::move(compiled->module),
                                                                 std::move(load));
  if (loaded->PendingDecisions() > 0) {
    absl::MutexLock lock(&context->mu);
    if (context->background == nullptr) {
      context->background =
          std::make_unique<tessera::service::BackgroundDecisions>(context->service.get());
    }
    loaded->MeasureInBackground(*context->background, std::string(source, source_size), compile);
  }
  *out_module = tessera::capi::WrapModule(context, std::move(loaded)).release();
  return nullptr;
}

tessera_jit_error_t* tessera_jit_package_write(const tessera_jit_module_t* const* modules,
                                               size_t count, void* buffer, size_t buffer_size,
                                               size_t* out_size) {
  if (modules == nullptr && count > 0) return InvalidArgument("modules is NULL");
  if (out_size == nullptr) return InvalidArgument("out_size is NULL");
  if (buffer == nullptr && buffer_size > 0) return InvalidArgument("buffer is NULL");
  if (count == 0 || count > tessera::service::kMaxPackageEntries) {
    return InvalidArgument(absl::StrCat(
        "a package holds 1 to ", tessera::service::kMaxPackageEntries, " modules, not ", count));
  }
  std::vector<tessera::service::PackageEntry> entries;
  entries.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const tessera_jit_module_t* module = modules[i];
    if (module == nullptr) return InvalidArgument(absl::StrCat("modules[", i, "] is NULL"));
    // The code serving now, as TESSERA_JIT_TEXT_PACKAGE takes it.
    entries.push_back(module->loaded->ServingPackageEntry());
  }
  absl::StatusOr<std::string> package = tessera::service::WritePackage(entries);
  if (!package.ok()) return MakeError(package.status());
  *out_size = package->size();
  if (buffer_size < package->size()) {
    if (buffer == nullptr) return nullptr;  // the size query
    return MakeError(absl::OutOfRangeError(absl::StrCat("the package is ", package->size(),
                                                        " bytes; the buffer holds ", buffer_size)));
  }
  std::memcpy(buffer, package->data(), package->size());
  return nullptr;
}

tessera_jit_error_t* tessera_jit_module_load(tessera_jit_context_t* context, const void* data,
                                             size_t size, const char* target, const char* arch,
                                             tessera_jit_module_t** out_module) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (data == nullptr && size > 0) return InvalidArgument("data is NULL");
  if (out_module == nullptr) return InvalidArgument("out_module is NULL");
  tessera::service::CompileRequest load;
  load.target = context->default_target;
  if (target != nullptr) {
    auto parsed = tessera::runtime::ParseTarget(target);
    if (!parsed.ok()) {
      return MakeError(absl::InvalidArgumentError(
          absl::StrCat("tessera_jit_module_load: target: ", parsed.status().message())));
    }
    load.target = *parsed;
  }
  if (arch != nullptr) {
    load.arch = arch;
  } else if (load.target == Target::kNvptx) {
    absl::StatusOr<std::string> device_arch = tessera::capi::DefaultArch(context);
    if (!device_arch.ok()) return MakeError(device_arch.status());
    load.arch = *device_arch;
  }
  load.delegates = context->delegates;
  auto loaded = context->service->LoadPackage(
      data == nullptr ? absl::string_view()
                      : absl::string_view(static_cast<const char*>(data), size),
      load);
  if (!loaded.ok()) return MakeError(loaded.status());
  *out_module = tessera::capi::WrapModule(
                    context, std::make_unique<tessera::service::LoadedModule>(
                                 std::move(*loaded), tessera::capi::LoadOptionsFor(context)))
                    .release();
  return nullptr;
}

void tessera_jit_module_destroy(tessera_jit_module_t* module) {
  if (module == nullptr) return;
  tessera_jit_context* context = module->context;
  delete module;  // the loaded module abandons its background work and unloads its code
  tessera::capi::ReleaseContext(context);
}

size_t tessera_jit_module_get_entry_count(const tessera_jit_module_t* module) {
  return module == nullptr ? 0 : module->loaded->entries().size();
}

const char* tessera_jit_module_get_entry_name(const tessera_jit_module_t* module, size_t index,
                                              size_t* out_size) {
  if (module == nullptr || index >= module->loaded->entries().size()) {
    if (out_size != nullptr) *out_size = 0;
    return nullptr;
  }
  const std::string& name = module->loaded->entries()[index].name;
  if (out_size != nullptr) *out_size = name.size();
  return name.c_str();
}

tessera_jit_error_t* tessera_jit_module_get_text(const tessera_jit_module_t* module,
                                                 tessera_jit_text_kind_t kind,
                                                 const char** out_data, size_t* out_size) {
  if (module == nullptr) return InvalidArgument("module is NULL");
  if (out_data == nullptr || out_size == nullptr)
    return InvalidArgument("out_data or out_size is NULL");
  tessera::service::ModuleText text_kind;
  switch (kind) {
    case TESSERA_JIT_TEXT_LLVM:
      text_kind = tessera::service::ModuleText::kLlvm;
      break;
    case TESSERA_JIT_TEXT_PTX:
      text_kind = tessera::service::ModuleText::kPtx;
      break;
    case TESSERA_JIT_TEXT_CUBIN:
      text_kind = tessera::service::ModuleText::kCubin;
      break;
    case TESSERA_JIT_TEXT_PACKAGE:
      text_kind = tessera::service::ModuleText::kPackage;
      break;
    case TESSERA_JIT_TEXT_DECISIONS:
      text_kind = tessera::service::ModuleText::kDecisions;
      break;
    case TESSERA_JIT_TEXT_PLAN:
      text_kind = tessera::service::ModuleText::kPlan;
      break;
    default:
      return InvalidArgument(absl::StrCat("unknown text kind ", static_cast<int>(kind)));
  }
  absl::StatusOr<absl::string_view> text = module->loaded->Text(text_kind);
  if (!text.ok()) return MakeError(text.status());
  *out_data = text->data();
  *out_size = text->size();
  return nullptr;
}

tessera_jit_error_t* tessera_jit_module_get_function(tessera_jit_module_t* module, const char* name,
                                                     size_t name_size,
                                                     tessera_jit_function_t** out_function) {
  if (module == nullptr) return InvalidArgument("module is NULL");
  if (name == nullptr) return InvalidArgument("name is NULL");
  if (out_function == nullptr) return InvalidArgument("out_function is NULL");
  const absl::string_view key(name, name_size);
  // The loaded module caches its functions and loads nvptx launch code once; outside the
  // handle map's lock, so a slow first load does not hold up lookups of other functions.
  absl::StatusOr<tessera::service::LoadedModule::Function*> function =
      module->loaded->GetFunction(key);
  if (!function.ok()) return MakeError(function.status());
  absl::MutexLock lock(&module->mu);
  auto [it, inserted] = module->functions.try_emplace(std::string(key));
  if (inserted) {
    it->second = std::make_unique<tessera_jit_function>();
    it->second->module = module;
    it->second->function = *function;
  }
  *out_function = it->second.get();
  return nullptr;
}

size_t tessera_jit_function_get_arg_count(const tessera_jit_function_t* function) {
  return function == nullptr ? 0 : function->function->entry().arguments.size();
}

size_t tessera_jit_function_get_result_count(const tessera_jit_function_t* function) {
  return function == nullptr ? 0 : function->function->entry().results.size();
}

tessera_jit_error_t* tessera_jit_function_get_arg_info(const tessera_jit_function_t* function,
                                                       int result, size_t index,
                                                       tessera_jit_arg_info_t* out_info) {
  if (function == nullptr) return InvalidArgument("function is NULL");
  if (out_info == nullptr) return InvalidArgument("out_info is NULL");
  if (absl::Status status = CheckStructSize(out_info->struct_size,
                                            TESSERA_JIT_STRUCT_SIZE(tessera_jit_arg_info_t, type),
                                            "tessera_jit_arg_info_t");
      !status.ok()) {
    return MakeError(status);
  }
  const EntryFunction& entry = function->function->entry();
  const std::vector<EntryArgument>& list = result != 0 ? entry.results : entry.arguments;
  if (index >= list.size()) {
    return InvalidArgument(absl::StrCat("@", entry.name, " has ", list.size(),
                                        result != 0 ? " result(s)" : " argument(s)", "; index ",
                                        index, " is out of range"));
  }
  const EntryArgument& argument = list[index];
  out_info->kind = argument.kind == EntryArgument::Kind::kMemRef ? TESSERA_JIT_ARG_TENSOR
                   : argument.element.type_class == ElementType::Class::kFloat ||
                           argument.element.type_class == ElementType::Class::kBFloat
                       ? TESSERA_JIT_ARG_FLOAT
                       : TESSERA_JIT_ARG_INT;
  out_info->dtype = tessera::capi::ToDtype(argument.element);
  out_info->ndim = static_cast<int32_t>(argument.rank);
  out_info->shape = argument.shape.empty() ? nullptr : argument.shape.data();
  out_info->type = argument.type.c_str();
  if (TESSERA_JIT_HOLDS(out_info, tessera_jit_arg_info_t, name)) {
    out_info->name = argument.name.c_str();
  }
  if (TESSERA_JIT_HOLDS(out_info, tessera_jit_arg_info_t, written)) {
    out_info->written = argument.written ? 1 : 0;
  }
  if (TESSERA_JIT_HOLDS(out_info, tessera_jit_arg_info_t, size_from)) {
    out_info->size_from = argument.size_from.empty() ? nullptr : argument.size_from.data();
  }
  return nullptr;
}

}  // extern "C"
