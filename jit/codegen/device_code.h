// The device side of an nvptx module: each gpu.module's PTX (and its cubin, linked by
// nvJitLink) as a DeviceImage, embedded in host launch code whose symbols are checked against
// the trust boundary at compile time.
#ifndef TESSERA_JIT_CODEGEN_DEVICE_CODE_H_
#define TESSERA_JIT_CODEGEN_DEVICE_CODE_H_

#include "absl/status/status.h"
#include "jit/compiled_module.h"
#include "mlir/IR/BuiltinOps.h"

namespace tessera::jit {

/// nvptx target: fills CompiledModule::device_images, ::host_llvm_ir and ::host_object (the
/// launch code's machine code) from the lowered `module`.
absl::Status EmitDeviceCode(mlir::ModuleOp module, CompiledModule& out);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_CODEGEN_DEVICE_CODE_H_
