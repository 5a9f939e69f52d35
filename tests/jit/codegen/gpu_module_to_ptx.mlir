// tessera-gpu-module-to-ptx alone: each gpu.module with one #nvvm.target becomes a gpu.binary
// holding PTX for that chip, the libdevice functions its kernels call linked in (no __nv_
// symbol is left to resolve); a module without a target, or a toolkit without libdevice, is an
// error located at the gpu.module.
// RUN: not tessera-opt %s --split-input-file --tessera-gpu-module-to-ptx 2>/dev/null | FileCheck %s
// RUN: tessera-opt %s --split-input-file --verify-diagnostics --tessera-gpu-module-to-ptx=cuda-toolkit=%S/no-such-toolkit

// CHECK: gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = "{{.*}}.target sm_90{{.*}}.visible .entry exp{{.*}}"
// CHECK-NOT: __nv_expf
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  // expected-error @+1 {{PTX generation failed: kernels call libdevice math functions, but}}
  gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
    llvm.func @__nv_expf(f32) -> f32
    llvm.func @exp(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel} {
      %x = llvm.load %p : !llvm.ptr<1> -> f32
      %y = llvm.call @__nv_expf(%x) : (f32) -> f32
      llvm.store %y, %p : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}

// -----

// CHECK: gpu.binary @plain [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = "{{.*}}.target sm_80{{.*}}.visible .entry nop
module attributes {gpu.container_module} {
  gpu.module @plain [#nvvm.target<chip = "sm_80">] {
    llvm.func @nop() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{expected exactly one #nvvm.target on gpu.module @untargeted}}
  gpu.module @untargeted {
    llvm.func @nop() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}
