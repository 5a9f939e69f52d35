// Ahead-of-time packages from the CLI: `compile --emit package` writes one (an entry for this
// CPU or per --host-cpu, or one per --arch), `run` loads it with no compiling — with no cache directory at all —
// and a package for GPUs only is refused for the host, naming what it holds.
// RUN: rm -rf %t && mkdir -p %t
// RUN: env TESSERA_JIT_CACHE_DIR=%t/cache tessera-jit compile %s --emit package -o %t/saxpy.tjp
// RUN: env TESSERA_JIT_CACHE_DIR=%t/none tessera-jit run %t/saxpy.tjp --entry saxpy --target host --size 8 --runs 1 | FileCheck %s --check-prefix=OUT
// RUN: env TESSERA_JIT_CACHE_DIR=%t/none tessera-jit cache stats | FileCheck %s --check-prefix=EMPTY
// RUN: env TESSERA_JIT_CACHE_DIR=%t/cache tessera-jit compile %s --target nvptx --arch sm_80,sm_90 --emit package -o %t/gpu.tjp
// RUN: not env TESSERA_JIT_CACHE_DIR=%t/none tessera-jit run %t/gpu.tjp --entry saxpy --target host --size 8 2>&1 | FileCheck %s --check-prefix=FOREIGN
// RUN: not tessera-jit compile %s --emit package 2>&1 | FileCheck %s --check-prefix=NEEDS-O
// RUN: not tessera-jit compile %s --arch sm_80,sm_90 --target nvptx 2>&1 | FileCheck %s --check-prefix=SEVERAL

// Host code for named CPUs: baseline x86-64 and x86-64-v2 run on every x86-64 machine.
// RUN: env TESSERA_JIT_CACHE_DIR=%t/cache tessera-jit compile %s --emit package --host-cpu x86-64,x86-64-v2 -o %t/portable.tjp
// RUN: env TESSERA_JIT_CACHE_DIR=%t/none tessera-jit run %t/portable.tjp --entry saxpy --target host --size 8 --runs 1 | FileCheck %s --check-prefix=OUT
// RUN: env TESSERA_JIT_CACHE_DIR=%t/cache tessera-jit compile %s --host-cpu x86-64-v3 | FileCheck %s --check-prefix=NAMED
// RUN: not tessera-jit compile %s --host-cpu pentium-9000 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not tessera-jit compile %s --host-cpu native,x86-64 2>&1 | FileCheck %s --check-prefix=SEVERAL-CPUS

// RUN: head -c 100 %t/saxpy.tjp > %t/truncated.tjp
// RUN: not env TESSERA_JIT_CACHE_DIR=%t/none tessera-jit run %t/truncated.tjp --entry saxpy --target host 2>&1 | FileCheck %s --check-prefix=DAMAGED

// OUT: target: host
// OUT: entry @saxpy: 4 argument(s)
// EMPTY: entries: {{ *}}0
// FOREIGN: FAILED_PRECONDITION: no entry of the package fits host
// FOREIGN-SAME: nvptx sm_80: target nvptx
// FOREIGN-SAME: nvptx sm_90: target nvptx
// NEEDS-O: --emit package needs -o OUT
// SEVERAL: several --arch values (sm_90,sm_100) are for --emit package
// NAMED: compiled for host (x86-64-v3)
// UNKNOWN: INVALID_ARGUMENT: unknown host CPU 'pentium-9000'; expected native or a 64-bit x86 CPU: {{.*}}x86-64-v3
// SEVERAL-CPUS: several --host-cpu values (native,x86-64-v3) are for --emit package
// DAMAGED: DATA_LOSS: a damaged Tessera package
func.func @saxpy(%alpha: f32, %x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>) {
  tile.map ins(%alpha, %x, %y : f32, memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %xi: f32, %yi: f32):
    %ax = arith.mulf %a, %xi : f32
    %r = arith.addf %ax, %yi : f32
    tile.yield %r : f32
  }
  return
}
