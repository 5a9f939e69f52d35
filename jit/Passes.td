// The compiler's own passes: those that need the service's run time (its entry points, the
// delegate registry, the arbiter) and so live in jit/ rather than dialect/. Each runs alone as
// `tessera-opt --<argument>`; the compiler builds them with their factories (jit/passes.h).
#ifndef TESSERA_JIT_PASSES_TD
#define TESSERA_JIT_PASSES_TD

include "mlir/Pass/PassBase.td"

def ArbitrateTileOps : Pass<"tessera-arbitrate-tile-ops", "::mlir::ModuleOp"> {
  let summary = "decide per Tile op between the compiled lowering and the delegates";
  let description = [{
    Every Tile op is an arbitration point whose candidates are the compiled lowering, its kernel
    variants (nvptx) and every matmul provider. The decision is written back on the op as
    `tessera_jit.decision`; a winning variant as `tessera_jit.schedule`; a winning delegate
    replaces the tile.matmul with a `tessera_nvidia.kernel_call`. Run alone, nothing is
    measured: a forced candidate (`delegate`, `tessera.candidate` or the `forced` option) runs
    as declared once the gates admit it, anything else runs compiled. The compiler runs it with
    the arbiter and the registry (jit/arbitration/arbitrate_tile_ops.h).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::cf::ControlFlowDialect",
                           "::mlir::memref::MemRefDialect", "::tessera::nvidia::NVIDIADialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"host\"", "host or nvptx">,
    Option<"arch", "arch", "std::string", /*default=*/"\"host\"",
           "\"host\" or the GPU arch (sm_90)">,
    Option<"deterministic", "deterministic", "bool", /*default=*/"false",
           "the whole compile is deterministic">,
    Option<"forced", "forced", "std::string", /*default=*/"",
           "force this candidate on every tile.matmul (\"compiled\" or a provider id)">,
  ];
}

def LowerDelegateCalls : Pass<"tessera-lower-delegate-calls", "::mlir::ModuleOp"> {
  let summary = "resolve, check and lower tessera_nvidia.kernel_call";
  let description = [{
    Every kernel_call outside gpu.modules is resolved against the delegate registry and lowered:
    `c_abi` to a call of the symbol found in a registered library, its operands checked against
    the C signature catalogue or the op's `signature`; `cuda_kernel` (nvptx) to a launch of the
    registered image's kernel. Run alone, nothing is registered, so every callee is refused
    with the registry's message; the compiler passes its registry
    (jit/delegates/delegate_passes.h).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::arith::ArithDialect",
                           "::mlir::cf::ControlFlowDialect", "::mlir::memref::MemRefDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"host\"", "host or nvptx">,
  ];
}

def LowerRuntimeChecks : Pass<"tessera-lower-runtime-checks", "::mlir::ModuleOp"> {
  let summary = "lower cf.assert to calls that fail the invocation with a status";
  let description = [{
    In the functions of a module (not inside gpu.modules): every `memref.alloc` is checked
    against a size limit and for NULL; integer division and remainder never trap (a zero
    divisor, or INT_MIN / -1, becomes 1); then every `cf.assert` becomes
    `scf.if (!cond) call @tessera_rt_check_failed(id)`, its message kept in the module's
    `tessera_jit.runtime_checks` (jit/codegen/runtime_checks.h).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::cf::ControlFlowDialect",
                           "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def DispatchParallelLoops : Pass<"tessera-dispatch-parallel-loops", "::mlir::ModuleOp"> {
  let summary = "turn calls of outlined parallel loop bodies into tessera_rt_parallel_for";
  let description = [{
    After the conversion to the LLVM dialect, each call of a function marked
    `tessera_jit.parallel_body` becomes `tessera_rt_parallel_for(@task, &captures, begin, end,
    cost)`, with a task that unpacks the captures and calls the body; a body that can fail a
    run-time check stays a direct call (jit/codegen/parallel_dispatch.cc).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def GpuModuleToPtx : Pass<"tessera-gpu-module-to-ptx", "::mlir::ModuleOp"> {
  let summary = "compile each gpu.module with an #nvvm.target to a gpu.binary holding PTX";
  let description = [{
    Each gpu.module (translated to LLVM IR, libdevice linked for only the functions its kernels
    call, optimised) is emitted as PTX by the NVPTX backend, the modules in parallel on the
    compile's threads, and replaced by a gpu.binary (jit/codegen/ptx_codegen.cc).
  }];
  let options = [
    Option<"toolkit", "cuda-toolkit", "std::string", /*default=*/"\"/usr/local/cuda\"",
           "CUDA toolkit holding nvvm/libdevice">,
  ];
}

def ConvertGpuToNvvm : Pass<"tessera-convert-gpu-to-nvvm", "::mlir::gpu::GPUModuleOp"> {
  let summary = "convert-gpu-to-nvvm with its pattern set built once, not on every run";
  let description = [{
    MLIR's `convert-gpu-to-nvvm` (64-bit indices, no redux, memref descriptors, pattern
    rollback allowed) with its type converter, conversion target and patterns frozen when the
    pass manager is initialised, so a session's pass manager builds them once for every
    compile it serves. A gpu.module whose data layout asks for another index width, or a
    context that has loaded dialects since, gets a set built for that run, as upstream builds
    one on every run (jit/codegen/gpu_conversions.cc).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::cf::ControlFlowDialect", "::mlir::memref::MemRefDialect"];
}

def ConvertGpuToLlvm : Pass<"tessera-gpu-to-llvm", "::mlir::ModuleOp"> {
  let summary = "gpu-to-llvm with its pattern set built once, not on every run";
  let description = [{
    MLIR's `gpu-to-llvm` (memref descriptors on host and kernel side): vector transfers lowered
    to rank 1, then gpu.launch_func and the host code converted to the LLVM dialect, with the
    pattern sets frozen when the pass manager is initialised (jit/codegen/gpu_conversions.cc).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect"];
}

#endif  // TESSERA_JIT_PASSES_TD
