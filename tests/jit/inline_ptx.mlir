// inline_ptx in device code: the PTX text lands verbatim inside the kernel, its operands bound
// to the kernel's registers, on every arch generation (PTX ISA per arch).
// RUN: tessera-jit compile %s --target nvptx --arch sm_90 --emit ptx | FileCheck %s
// RUN: tessera-jit compile %s --target nvptx --arch sm_100a --emit ptx | FileCheck %s --check-prefix=SM100A
// RUN: tessera-jit compile %s --target nvptx --arch sm_120 --emit ptx | FileCheck %s --check-prefix=SM120
// RUN: not tessera-jit compile %s 2>&1 | FileCheck %s --check-prefix=HOST
// The op stays valid at every stage of the lowering (tessera-opt verifies after each pass).
// RUN: tessera-opt %s --tessera-lower-to-nvvm='arch=sm_90' | FileCheck %s --check-prefix=OPT
// OPT: gpu.binary @tessera_kernels_exp2_map_0
// OPT: gpu.binary @raw

// CHECK: .version 8.0
// CHECK: .target sm_90
// SM100A: .version 8.6
// SM100A: .target sm_100a
// SM100A: ex2.approx.ftz.f32
// SM120: .version 8.7
// SM120: .target sm_120
// SM120: ex2.approx.ftz.f32
// HOST: FAILED_PRECONDITION: {{.*}}inline_ptx.mlir:{{[0-9]+}}:10: error: 'tessera_nvidia.inline_ptx' needs the nvptx target (its PTX runs only on NVIDIA GPUs); this compile targets host

// In a tile.map body: one instruction per element, between the element's load and store.
// CHECK-LABEL: .entry exp2_map_0(
// CHECK: ld.global.b32 [[IN:%r[0-9]+]]
// CHECK: ex2.approx.ftz.f32 [[OUT:%r[0-9]+]], [[IN]];
// CHECK: st.global.b32 [{{.*}}], [[OUT]];
// Two results and two operands, in the order of the constraints; $$ prints a literal `$`.
// CHECK-LABEL: .entry pairs_map_0(
// CHECK: min.f32 [[LO:%r[0-9]+]], [[A:%r[0-9]+]], [[B:%r[0-9]+]]; max.f32 [[HI:%r[0-9]+]], [[A]], [[B]]; // $
// CHECK-DAG: st.global.b32 [{{.*}}], [[LO]];
// CHECK-DAG: st.global.b32 [{{.*}}], [[HI]];
module attributes {gpu.container_module} {
func.func @exp2(%x: memref<?xf32>, %y: memref<?xf32>) {
  tile.map ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%v: f32):
    %e = tessera_nvidia.inline_ptx %v {ptx = "ex2.approx.ftz.f32 $0, $1;", constraints = "=f,f",
        arch = "sm_75+", accuracy = "tolerance_bounded", tolerance_rel = 1.0e-6,
        determinism = "deterministic"} : (f32) -> f32
    tile.yield %e : f32
  }
  func.call @pairs(%x, %y, %x, %y) : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
  return
}

func.func @pairs(%a: memref<?xf32>, %b: memref<?xf32>, %lo: memref<?xf32>, %hi: memref<?xf32>) {
  tile.map ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%lo, %hi : memref<?xf32>, memref<?xf32>) {
  ^bb0(%u: f32, %w: f32):
    %l, %h = tessera_nvidia.inline_ptx %u, %w {
        ptx = "min.f32 $0, $2, $3; max.f32 $1, $2, ${3}; // $$", constraints = "=f,=f,f,f",
        arch = "sm_75+", accuracy = "reference_exact", determinism = "deterministic"}
        : (f32, f32) -> (f32, f32)
    tile.yield %l, %h : f32, f32
  }
  return
}

// In a raw gpu.func kernel: a side-effecting fence is kept even though it produces nothing.
// CHECK-LABEL: .entry fence(
// CHECK: membar.gl;
  gpu.module @raw {
    gpu.func @fence() kernel attributes {tessera.determinism = "deterministic"} {
      tessera_nvidia.inline_ptx {ptx = "membar.gl;", constraints = "~{memory}", arch = "sm_75+",
          accuracy = "reference_exact", determinism = "deterministic", has_side_effects} : () -> ()
      gpu.return
    }
  }
}
