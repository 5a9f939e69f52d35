// The essential instructions of each generated kernel, pinned in the PTX.
// RUN: tessera-jit compile %s --target nvptx --arch sm_90 --emit ptx | FileCheck %s
// RUN: tessera-jit compile %s --target nvptx --arch sm_80 --emit ptx | FileCheck %s --check-prefix=SM80

// CHECK: .version 8.0
// CHECK: .target sm_90
// SM80: .version 8.0
// SM80: .target sm_80
// SM80: .entry saxpy_map_0

// map: one thread per element (256 per block), scalar loads and stores, IEEE-rounded mul and
// add (never contracted into an fma, so results match the host reference bit for bit).
// CHECK-LABEL: .entry saxpy_map_0(
// CHECK: .maxntid 256, 1, 1
// CHECK-NOT: .shared
// CHECK: mov.u32 {{.*}}%ctaid.x
// CHECK: mov.u32 {{.*}}%tid.x
// CHECK: ld.global.b32
// CHECK: ld.global.b32
// CHECK: mul.rn.f32
// CHECK-NEXT: add.rn.f32
// CHECK: st.global.b32
// CHECK: ret;
func.func @saxpy(%alpha: f32, %x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>) {
  tile.map ins(%alpha, %x, %y : f32, memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %xi: f32, %yi: f32):
    %ax = arith.mulf %a, %xi : f32
    %r = arith.addf %ax, %yi : f32
    tile.yield %r : f32
  }
  return
}

// matmul: 16x16 threads, A and B tiles of 16x16 f32 in shared memory, a barrier around each
// K step, the A row read from shared memory four floats at a time, no fma.
// CHECK-LABEL: .entry mm_matmul_0(
// CHECK: .maxntid 16, 16, 1
// CHECK: .shared .align 16 .b8 __wg_mm_matmul_0_0[1024];
// CHECK: .shared .align 16 .b8 __wg_mm_matmul_0_1[1024];
// CHECK: st.shared.b32
// CHECK: st.shared.b32
// CHECK: bar.sync 0;
// CHECK: ld.shared.v4.b32
// CHECK: mul.rn.f32
// CHECK: add.rn.f32
// CHECK-NOT: fma.rn.f32
// CHECK: bar.sync 0;
// CHECK: st.global.b32
// CHECK: ret;
func.func @mm(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}

// matmul under policy fma: the same kernel, each K step one fma.rn.f32 (no separate multiply).
// CHECK-LABEL: .entry mm_fma_matmul_0(
// CHECK: bar.sync 0;
// CHECK-NOT: mul.rn.f32
// CHECK: fma.rn.f32
// CHECK-NOT: mul.rn.f32
// CHECK: bar.sync 0;
// CHECK: ret;
func.func @mm_fma(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c policy(fma) : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}

// reduce: 256 threads per output, a 256-float shared buffer and a fixed tree of barriers.
// CHECK-LABEL: .entry rows_reduce_0(
// CHECK: .maxntid 256, 1, 1
// CHECK: .shared .align 16 .b8 __wg_rows_reduce_0_0[1024];
// CHECK: st.shared.b32
// CHECK-COUNT-8: bar.sync 0;
// CHECK: st.global.b32
// CHECK: ret;
func.func @rows(%x: memref<?x?xf32>, %y: memref<?xf32>) {
  tile.reduce sum %x -> %y axis = 1 : memref<?x?xf32> -> memref<?xf32>
  return
}

// softmax: exp from libdevice (range reduction around ex2.approx), inlined — no call remains.
// CHECK-LABEL: .entry probs_softmax_0(
// CHECK: .shared .align 16 .b8 __wg_probs_softmax_0_0[1024];
// CHECK: bar.sync 0;
// CHECK: ex2.approx.ftz.f32
// CHECK: div.rn.f32
// CHECK-NOT: call
// CHECK: ret;
func.func @probs(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.softmax %x -> %y : memref<?x?xf32> -> memref<?x?xf32>
  return
}

// The gelu epilogue's erf comes from libdevice, linked and inlined.
// CHECK-LABEL: .entry dense_matmul_0(
// CHECK-NOT: call
// CHECK-NOT: __nv_erff
// CHECK: ret;
func.func @dense(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %bias: memref<?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf32>) activation(gelu)
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}
