// tile.attention_backward: its assembly round-trips with every setting the forward has; a
// `tessera.deterministic` training step (forward, then backward) passes the determinism check
// before anything is dispatched and compiles for the host and the GPU; each verifier rule
// refuses with its message.
// RUN: tessera-opt %s -split-input-file | FileCheck %s
// RUN: tessera-opt %s -split-input-file -tessera-verify-determinism="all-functions=true" | FileCheck %s
// RUN: tessera-jit compile %s --target host --deterministic | FileCheck %s --check-prefix=HOST
// RUN: tessera-jit compile %s --target nvptx --arch sm_90 --deterministic | FileCheck %s --check-prefix=PTX

// CHECK-LABEL: func.func @training_step
// CHECK: tile.attention %{{.*}}, %{{.*}}, %{{.*}} -> %{{.*}} bias(%{{.*}} : memref<1x8x?x?xf32>) lse(%{{.*}} : memref<?x8x?xf32>) causal window(64, 0) softcap(3.000000e+01) dropout(1.000000e-01, 5)
// CHECK: tile.attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} -> %{{.*}}, %{{.*}}, %{{.*}} bias(%{{.*}} : memref<1x8x?x?xf32>) causal window(64, 0) softcap(3.000000e+01) dropout(1.000000e-01, 5) : memref<?x8x?x32xbf16>, memref<?x8x?x32xbf16>, memref<?x2x?x32xbf16>, memref<?x2x?x32xbf16>, memref<?x8x?x32xbf16>, memref<?x8x?xf32> -> memref<?x8x?x32xf32>, memref<?x2x?x32xf32>, memref<?x2x?x32xf32>
func.func @training_step(%q: memref<?x8x?x32xbf16>, %k: memref<?x2x?x32xbf16>,
                         %v: memref<?x2x?x32xbf16>, %bias: memref<1x8x?x?xf32>,
                         %o: memref<?x8x?x32xbf16>, %lse: memref<?x8x?xf32>,
                         %do: memref<?x8x?x32xbf16>, %dq: memref<?x8x?x32xf32>,
                         %dk: memref<?x2x?x32xf32>, %dv: memref<?x2x?x32xf32>)
    attributes {tessera.deterministic} {
  tile.attention %q, %k, %v -> %o bias(%bias : memref<1x8x?x?xf32>) lse(%lse : memref<?x8x?xf32>)
      causal window(64, 0) softcap(30.0) dropout(0.1, 5)
      : memref<?x8x?x32xbf16>, memref<?x2x?x32xbf16>, memref<?x2x?x32xbf16> -> memref<?x8x?x32xbf16>
  tile.attention_backward %do, %q, %k, %v, %o, %lse -> %dq, %dk, %dv
      bias(%bias : memref<1x8x?x?xf32>) causal window(64, 0) softcap(30.0) dropout(0.1, 5)
      : memref<?x8x?x32xbf16>, memref<?x8x?x32xbf16>, memref<?x2x?x32xbf16>,
        memref<?x2x?x32xbf16>, memref<?x8x?x32xbf16>, memref<?x8x?xf32>
        -> memref<?x8x?x32xf32>, memref<?x2x?x32xf32>, memref<?x2x?x32xf32>
  return
}

// HOST: compiled for host
// HOST: entry @training_step (10 arguments)
// PTX: gpu.module @tessera_kernels_training_step_attention_backward_dq_1: 1 kernel(s)
// PTX: gpu.module @tessera_kernels_training_step_attention_backward_dk_2: 1 kernel(s)
// PTX: gpu.module @tessera_kernels_training_step_attention_backward_dv_3: 1 kernel(s)
