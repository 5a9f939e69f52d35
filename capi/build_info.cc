// tessera_jit_get_build_info: what the library is built from and what it found at run time.
#include <string>

#include "absl/strings/str_cat.h"
#include "capi/include/tessera_jit.h"
#include "jit/codegen/cuda_libraries.h"
#include "jit/codegen/toolchain.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "runtime/gpu_runtime.h"

extern "C" {

const char* tessera_jit_get_build_info(void) {
  static const std::string* info = [] {
    const tessera::jit::Toolchain& toolchain = tessera::jit::Toolchain::Current();
    auto cuda = llvm::json::parse(tessera::jit::CudaComponentsJson());
    const absl::Status driver = tessera::runtime::GpuRuntime::Get().status();
    llvm::json::Object object{
        {"tessera", toolchain.tessera},
        {"api", absl::StrCat(TESSERA_JIT_API_MAJOR, ".", TESSERA_JIT_API_MINOR)},
        {"llvm", toolchain.llvm},
        {"cuda_headers", toolchain.cuda},
        {"host_cpu", toolchain.host_cpu},
        {"cuda", cuda ? std::move(*cuda) : llvm::json::Value(nullptr)},
        {"driver",
         llvm::json::Object{{"found", driver.ok()}, {"message", std::string(driver.message())}}}};
    if (!cuda) llvm::consumeError(cuda.takeError());
    std::string text;
    llvm::raw_string_ostream stream(text);
    stream << llvm::json::Value(std::move(object));
    return new std::string(std::move(text));
  }();
  return info->c_str();
}

}  // extern "C"
