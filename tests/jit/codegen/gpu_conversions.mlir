// The frozen GPU conversions give what MLIR's passes give, including a gpu.module whose data
// layout asks for 32-bit indices (it gets a pattern set built for that width, for that run).
// RUN: tessera-opt %s --pass-pipeline='builtin.module(gpu.module(tessera-convert-gpu-to-nvvm))' > %t.frozen
// RUN: tessera-opt %s --pass-pipeline='builtin.module(gpu.module(convert-gpu-to-nvvm))' > %t.upstream
// RUN: diff %t.frozen %t.upstream
// RUN: FileCheck %s < %t.frozen
// RUN: tessera-opt %t.frozen --tessera-gpu-to-llvm > %t.host.frozen
// RUN: tessera-opt %t.frozen --gpu-to-llvm > %t.host.upstream
// RUN: diff %t.host.frozen %t.host.upstream
// RUN: FileCheck %s --check-prefix=HOST < %t.host.frozen

// CHECK-LABEL: gpu.module @wide
// CHECK: llvm.func @ids(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64) attributes {gpu.kernel, nvvm.kernel}
// CHECK: nvvm.read.ptx.sreg.tid.x : i32
// CHECK: llvm.sext %{{.*}} : i32 to i64
// CHECK-LABEL: gpu.module @narrow
// CHECK: llvm.func @ids(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32) attributes {gpu.kernel, nvvm.kernel}
// CHECK: nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NOT: llvm.sext

// HOST: llvm.func @run(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// HOST: gpu.launch_func @wide::@ids blocks in ({{.*}}) threads in ({{.*}}) : i64 args(%{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i64)
module attributes {gpu.container_module} {
  gpu.module @wide {
    gpu.func @ids(%y: memref<?xindex>) kernel {
      %i = gpu.thread_id x
      memref.store %i, %y[%i] : memref<?xindex>
      gpu.return
    }
  }
  gpu.module @narrow attributes {dlti.dl_spec = #dlti.dl_spec<index = 32 : i32>} {
    gpu.func @ids(%y: memref<?xindex>) kernel {
      %i = gpu.thread_id x
      memref.store %i, %y[%i] : memref<?xindex>
      gpu.return
    }
  }
  func.func @run(%y: memref<?xindex>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @wide::@ids blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%y : memref<?xindex>)
    return
  }
}
