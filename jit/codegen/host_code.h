// The host side of a compiled module: LLVM IR with a packed wrapper per entry, the symbols it
// may call (the trust boundary), and JIT-loading it with ORC.
#ifndef TESSERA_JIT_CODEGEN_HOST_CODE_H_
#define TESSERA_JIT_CODEGEN_HOST_CODE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jit/compiled_module.h"
#include "llvm/IR/Module.h"
#include "mlir/IR/BuiltinOps.h"
#include "runtime/host_executable.h"

namespace tessera::jit {

/// Adds `void _tessera_packed_<name>(void** args)` calling `_mlir_ciface_<name>`: the uniform
/// calling convention of runtime::HostExecutable (see runtime::PackedEntry).
absl::Status AddPackedWrapper(llvm::Module& module, const std::string& name);

/// The symbols JIT'd host code may call besides the C library allowlist: the device runtime
/// (nvptx), the delegate runtime, and the module's c_abi callees resolved in the registry.
absl::StatusOr<runtime::RuntimeSymbolList> HostSymbols(const CompiledModule& module);

/// host target: translates the lowered `module` to LLVM IR (CompiledModule::host_llvm_ir),
/// generates its machine code (CompiledModule::host_object) and links it (CompiledModule::host).
absl::Status EmitHostCode(mlir::ModuleOp module, CompiledModule& out);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_CODEGEN_HOST_CODE_H_
