// tessera-jit flags: --target nvptx --default-libraries --kernel softmax_kernels=row_softmax_f32.cu
//
// Delegation: a GEMM served by cuBLAS through its C ABI, a row softmax served by a hand-written
// CUDA kernel (row_softmax_f32.cu, beside this file), and a fast exp2 written as inline PTX —
// each with its declared contract. Run from this folder with the flags above, e.g.
//   tessera-jit compile delegates.mlir --target nvptx --default-libraries \
//       --kernel softmax_kernels=row_softmax_f32.cu --emit ptx
// It needs the nvptx target: on the host, the cuda_kernel delegate and the inline PTX are
// refused at compile (FAILED_PRECONDITION). The entry is deterministic, so every delegate in it
// must declare itself deterministic (tessera-verify-determinism checks that before anything
// runs).

// scores = q·kᵀ (cuBLAS, column-major: scoresᵀ = k·qᵀ on the same bytes), then a softmax per
// row of scores (the hand-written kernel: one 256-thread block per row).
func.func @attention_scores(%q: memref<128x64xf32>, %k: memref<128x64xf32>,
                            %scores: memref<128x128xf32>, %probs: memref<128x128xf32>)
    attributes {tessera.deterministic} {
  %no_transpose = arith.constant 0 : i32
  %transpose = arith.constant 1 : i32
  %rows = arith.constant 128 : i32
  %depth = arith.constant 64 : i32
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  tessera_nvidia.kernel_call %transpose, %no_transpose, %rows, %rows, %depth, %one, %k, %depth,
      %q, %depth, %zero, %scores, %rows {callee = "cublasSgemm_v2", arch = "sm_75+",
      binding = "c_abi", provenance = "vendor_library", accuracy = "tolerance_bounded",
      tolerance = 1.0e-4, tolerance_rel = 1.0e-5, determinism = "deterministic",
      covers = "root_only"}
      : (i32, i32, i32, i32, i32, f32, memref<128x64xf32>, i32, memref<128x64xf32>, i32, f32,
         memref<128x128xf32>, i32) -> ()
  tessera_nvidia.kernel_call %scores, %probs, %rows {callee = "row_softmax_f32",
      arch = "sm_75+", binding = "cuda_kernel", provenance = "handwritten_kernel",
      accuracy = "reference_exact", determinism = "deterministic", covers = "whole_region",
      grid = array<i64: 128>, block = array<i64: 256>}
      : (memref<128x128xf32>, memref<128x128xf32>, i32) -> ()
  return
}

// y = 2^x elementwise with PTX's approximate exp2 (flushes subnormals to zero; relative error
// at most 2^-22 ≈ 2.4e-7, declared as 1e-6 with an absolute floor for the flushed results).
func.func @exp2_fast(%x: memref<?xf32>, %y: memref<?xf32>) {
  tile.map ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%v: f32):
    %e = tessera_nvidia.inline_ptx %v {ptx = "ex2.approx.ftz.f32 $0, $1;",
        constraints = "=f,f", arch = "sm_75+", accuracy = "tolerance_bounded",
        tolerance = 1.0e-37, tolerance_rel = 1.0e-6, determinism = "deterministic"}
        : (f32) -> f32
    tile.yield %e : f32
  }
  return
}
