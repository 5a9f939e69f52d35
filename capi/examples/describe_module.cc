// A C++ program on the C API: compiles a Tessera IR file for the host target and prints each
// entry's signature, as the C API describes it, then what the library found at run time (its
// build info). Exit status 0 when the file compiles and has at least one entry.
//
//   describe_module path/to/module.mlir
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "tessera_jit.h"

namespace {

// Owns a tessera_jit_error_t* (null: success) and says what failed.
bool Failed(tessera_jit_error_t* error, const char* what) {
  if (error == nullptr) return false;
  std::cerr << what << " failed (code " << tessera_jit_error_code(error)
            << "): " << tessera_jit_error_message(error, nullptr) << "\n";
  tessera_jit_error_destroy(error);
  return true;
}

struct ContextDeleter {
  void operator()(tessera_jit_context_t* context) const { tessera_jit_context_destroy(context); }
};
struct ModuleDeleter {
  void operator()(tessera_jit_module_t* module) const { tessera_jit_module_destroy(module); }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: describe_module path/to/module.mlir\n";
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  if (!file) {
    std::cerr << "cannot read " << argv[1] << "\n";
    return 1;
  }
  std::stringstream text;
  text << file.rdbuf();
  const std::string source = text.str();

  int major = 0;
  int minor = 0;
  tessera_jit_get_api_version(&major, &minor);
  std::cout << "C API " << major << "." << minor << " (built against " << TESSERA_JIT_API_MAJOR
            << "." << TESSERA_JIT_API_MINOR << ")\n";

  tessera_jit_context_options_t context_options;
  tessera_jit_context_options_init(&context_options);
  context_options.default_target = "host";
  tessera_jit_context_t* raw_context = nullptr;
  if (Failed(tessera_jit_context_create(&context_options, &raw_context), "context_create")) {
    return 1;
  }
  std::unique_ptr<tessera_jit_context_t, ContextDeleter> context(raw_context);

  tessera_jit_module_t* raw_module = nullptr;
  if (Failed(tessera_jit_compile(context.get(), source.data(), source.size(), nullptr, &raw_module),
             "compile")) {
    return 1;
  }
  std::unique_ptr<tessera_jit_module_t, ModuleDeleter> module(raw_module);

  const size_t entries = tessera_jit_module_get_entry_count(module.get());
  for (size_t i = 0; i < entries; ++i) {
    size_t size = 0;
    const char* name = tessera_jit_module_get_entry_name(module.get(), i, &size);
    tessera_jit_function_t* function = nullptr;
    if (Failed(tessera_jit_module_get_function(module.get(), name, size, &function),
               "module_get_function")) {
      return 1;
    }
    std::cout << "@" << std::string(name, size) << "(";
    const size_t args = tessera_jit_function_get_arg_count(function);
    for (size_t a = 0; a < args; ++a) {
      tessera_jit_arg_info_t info;
      info.struct_size = TESSERA_JIT_ARG_INFO_STRUCT_SIZE;
      if (Failed(tessera_jit_function_get_arg_info(function, 0, a, &info), "get_arg_info")) {
        return 1;
      }
      std::cout << (a ? ", " : "") << (info.name[0] != '\0' ? "%" : "") << info.name
                << (info.name[0] != '\0' ? ": " : "") << info.type
                << (info.written ? " (written)" : "");
    }
    std::cout << ")\n";
  }
  std::cout << "build info: " << tessera_jit_get_build_info() << "\n";
  return entries > 0 ? 0 : 1;
}
