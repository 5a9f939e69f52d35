// Device images and the launch code around them.
#include "jit/codegen/device_code.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "jit/codegen/host_code.h"
#include "jit/codegen/host_object.h"
#include "jit/codegen/nvjitlink.h"
#include "jit/delegates/registry.h"
#include "jit/stage_clock.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "runtime/device_image.h"
#include "runtime/thread_pool.h"

namespace tessera::jit {

absl::Status EmitDeviceCode(mlir::ModuleOp module, CompiledModule& out) {
  std::vector<mlir::gpu::BinaryOp> binaries(module.getOps<mlir::gpu::BinaryOp>().begin(),
                                            module.getOps<mlir::gpu::BinaryOp>().end());
  mlir::Builder builder(module.getContext());
  // One image per gpu.binary object; each kernel of the Tile lowering has its own module.
  std::vector<mlir::gpu::ObjectAttr> objects;
  for (mlir::gpu::BinaryOp binary : binaries) {
    for (mlir::Attribute attribute : binary.getObjects()) {
      auto object = llvm::cast<mlir::gpu::ObjectAttr>(attribute);
      DeviceImage image;
      image.module_name = binary.getName().str();
      image.ptx = object.getObject().getValue().str();
      image.kernels = delegates::PtxEntries(image.ptx);
      out.device_images.push_back(std::move(image));
      objects.push_back(object);
    }
  }
  std::optional<StageClock> cubin_clock;
  if (out.options.link_cubin) {
    cubin_clock.emplace(out.stage_ms, "cubin");
    // nvJitLink handles are independent: the images link in parallel on this thread's pool.
    std::vector<absl::Status> linked(out.device_images.size());
    runtime::RunTasks(static_cast<int64_t>(out.device_images.size()), [&](int64_t i) {
      DeviceImage& image = out.device_images[static_cast<size_t>(i)];
      absl::StatusOr<std::string> cubin =
          LinkPtxToCubin(image.ptx, out.options.arch, out.options.opt_level);
      if (cubin.ok()) {
        image.cubin = *std::move(cubin);
      } else if (image.ptx.find("// begin inline asm") != std::string::npos) {
        // The user's own PTX (inline_ptx; LLVM marks it "begin inline asm") is theirs to fix,
        // not a compiler bug.
        linked[static_cast<size_t>(i)] = absl::InvalidArgumentError(absl::StrCat(
            "nvJitLink rejected gpu.module @", image.module_name,
            ", which holds inline PTX from tessera_nvidia.inline_ptx: ", cubin.status().message()));
      } else {
        linked[static_cast<size_t>(i)] = cubin.status();
      }
    });
    for (const absl::Status& status : linked) TESSERA_RETURN_IF_ERROR(status);
  }
  // The host code embeds both: the runtime loads the cubin, or JITs the PTX if the driver
  // rejects it (or there is none: PTX only).
  size_t next = 0;
  for (mlir::gpu::BinaryOp binary : binaries) {
    llvm::SmallVector<mlir::Attribute> packed_objects;
    for (size_t i = 0; i < binary.getObjects().size(); ++i, ++next) {
      const DeviceImage& image = out.device_images[next];
      mlir::gpu::ObjectAttr object = objects[next];
      packed_objects.push_back(mlir::gpu::ObjectAttr::get(
          module.getContext(), object.getTarget(), mlir::gpu::CompilationTarget::Binary,
          builder.getStringAttr(runtime::PackDeviceImage(image.cubin, image.ptx)),
          object.getProperties(), object.getKernels()));
    }
    binary.setObjectsAttr(builder.getArrayAttr(packed_objects));
  }
  cubin_clock.reset();
  StageClock host_clock(out.stage_ms, "host-object");
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> host = mlir::translateModuleToLLVMIR(module, context);
  if (host == nullptr) return absl::InternalError("translating the host code to LLVM IR failed");
  for (const EntryFunction& entry : out.entries) {
    TESSERA_RETURN_IF_ERROR(AddPackedWrapper(*host, entry.name));
  }
  {
    llvm::raw_string_ostream os(out.host_llvm_ir);
    host->print(os, nullptr);
  }

  // The launch code's machine code, now: loading the module (a cache hit too) only links it,
  // on the first function lookup. Its external symbols are checked against the trust boundary
  // now, so a forbidden one fails the compile. It is compiled without optimisation (LLVM O0,
  // fast instruction selection) at every opt_level: it only unpacks descriptors and calls the
  // driver, which costs microseconds per launch, while LLVM's O2 pipeline and instruction
  // selection cost ~7 ms per compile (docs/performance.md).
  TESSERA_ASSIGN_OR_RETURN(out.host_object, CompileHostObject(*host, /*opt_level=*/0));
  TESSERA_ASSIGN_OR_RETURN(runtime::RuntimeSymbolList symbols, HostSymbols(out));
  return runtime::CheckHostObject(out.host_object, symbols);
}

}  // namespace tessera::jit
