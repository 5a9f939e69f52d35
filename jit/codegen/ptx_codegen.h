// gpu.module → PTX in process, with libdevice linked lazily and only when a kernel calls into
// it. Replaces upstream gpu-module-to-binary{format=isa}, which parses and links all of
// libdevice (~0.5 MB of bitcode) on every compile.
#ifndef TESSERA_JIT_CODEGEN_PTX_CODEGEN_H_
#define TESSERA_JIT_CODEGEN_PTX_CODEGEN_H_

#include <memory>
#include <string>

#include "mlir/Pass/Pass.h"

namespace tessera::jit {

/// The pass `tessera-gpu-module-to-ptx`: every gpu.module carrying one #nvvm.target (chip,
/// PTX features, O level) becomes a gpu.binary holding its PTX (format `assembly`). Kernels
/// that call libdevice functions (`__nv_*`) get them from `<cuda_toolkit>/nvvm/libdevice`;
/// a missing libdevice is an error naming the path. Thread-safe to run in parallel compiles.
std::unique_ptr<mlir::Pass> CreateGpuModuleToPtxPass(const std::string& cuda_toolkit);

/// Registers the pass with the pass registry (option: cuda-toolkit).
void RegisterGpuModuleToPtxPass();

}  // namespace tessera::jit

#endif  // TESSERA_JIT_CODEGEN_PTX_CODEGEN_H_
