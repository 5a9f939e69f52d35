// `--ptx-only` (and `--emit ptx`, which implies it): the compile stops at PTX — nvJitLink never
// runs, the image holds no cubin; the driver compiles the PTX when the module loads.
// RUN: rm -rf %t && mkdir -p %t
// RUN: env TESSERA_JIT_CACHE_DIR=%t tessera-jit compile %s --target nvptx --ptx-only | FileCheck %s --check-prefix=PTXONLY
// RUN: env TESSERA_JIT_CACHE_DIR=%t tessera-jit compile %s --target nvptx | FileCheck %s --check-prefix=LINKED
// RUN: env TESSERA_JIT_CACHE_DIR=%t tessera-jit compile %s --target nvptx --emit ptx | FileCheck %s --check-prefix=PTX
// RUN: not env TESSERA_JIT_CACHE_DIR=%t tessera-jit compile %s --target nvptx --ptx-only --emit cubin -o %t/out.cubin 2>&1 | FileCheck %s --check-prefix=CONFLICT

// PTXONLY: gpu.module @tessera_kernels_saxpy_map_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, 0 bytes of cubin
// LINKED: gpu.module @tessera_kernels_saxpy_map_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[1-9][0-9]*}} bytes of cubin
// PTX: .visible .entry saxpy_map_0(
// CONFLICT: --emit cubin and --ptx-only
func.func @saxpy(%alpha: f32, %x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>) {
  tile.map ins(%alpha, %x, %y : f32, memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %xi: f32, %yi: f32):
    %ax = arith.mulf %a, %xi : f32
    %r = arith.addf %ax, %yi : f32
    tile.yield %r : f32
  }
  return
}
