// Build info: the toolchain's identity, the CUDA components found and the driver.
#include "service/build_info.h"

#include "absl/strings/str_cat.h"
#include "jit/codegen/cuda_libraries.h"
#include "jit/codegen/toolchain.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "runtime/gpu_runtime.h"

namespace tessera::service {

std::string BuildInfoJson(absl::string_view api) {
  const jit::Toolchain& toolchain = jit::Toolchain::Current();
  auto cuda = llvm::json::parse(jit::CudaComponentsJson());
  const absl::Status driver = runtime::GpuRuntime::Get().status();
  llvm::json::Object object{
      {"tessera", toolchain.tessera},
      {"api", std::string(api)},
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
  return text;
}

std::vector<std::string> CudaComponentSearch() {
  std::vector<std::string> lines;
  for (const jit::CudaComponent* component :
       {&jit::NvrtcComponent(), &jit::NvJitLinkComponent(), &jit::LibdeviceComponent()}) {
    for (const std::string& step : component->steps) {
      lines.push_back(absl::StrCat(component->name, ": ", step));
    }
  }
  return lines;
}

}  // namespace tessera::service
