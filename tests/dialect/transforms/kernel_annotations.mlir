// RUN: tessera-opt %s --tessera-align-workgroup-buffers --tessera-reserve-mma-registers | FileCheck %s

// Workgroup buffers become 16-byte aligned (a larger alignment stays); a kernel that issues
// mma.sync gets nvvm.minctasm = 1, others keep ptxas's own register choice.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @plain
    // CHECK-SAME: workgroup(%{{.*}} : memref<64xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 64 : i64})
    // CHECK-NOT: nvvm.minctasm
    // CHECK: gpu.return
    gpu.func @plain() workgroup(%a : memref<64xf16, #gpu.address_space<workgroup>>,
                                %b : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 64 : i64}) kernel {
      gpu.return
    }
    // CHECK-LABEL: gpu.func @tensor_cores
    // CHECK-SAME: nvvm.minctasm = 1 : i32
    gpu.func @tensor_cores(%a0: vector<2xf16>, %a1: vector<2xf16>, %a2: vector<2xf16>, %a3: vector<2xf16>,
                           %b0: vector<2xf16>, %b1: vector<2xf16>, %c: f32) kernel {
      %d = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%c, %c, %c, %c]
          {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
          : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      gpu.return
    }
  }
}
