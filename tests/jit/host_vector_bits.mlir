// The host pipeline sizes the matmul's register tile by the vector width of the CPU code is
// generated for (tessera-jit's --host-cpu; here the pipeline option, 0 = this machine's).
// RUN: tessera-opt %s --tessera-lower-to-host='host-vector-bits=128' | FileCheck %s --check-prefix=V128
// RUN: tessera-opt %s --tessera-lower-to-host='host-vector-bits=256' | FileCheck %s --check-prefix=V256
// RUN: tessera-opt %s --tessera-lower-to-host='host-vector-bits=512' | FileCheck %s --check-prefix=V512

// V128: vector<4xf32>
// V128-NOT: vector<8xf32>
// V128-NOT: vector<16xf32>
// V256: vector<8xf32>
// V256-NOT: vector<16xf32>
// V512: vector<16xf32>
func.func @mm(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}
