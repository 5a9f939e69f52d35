// Delegation: a GEMM served by cuBLAS through its C ABI, a row softmax served by a hand-written
// CUDA kernel, and a fast exp2 written as inline PTX — each with its declared contract. The
// entry is deterministic, so every delegate in it must declare itself deterministic
// (tessera-verify-determinism checks that before anything runs).
func.func @attention_scores(%q: memref<128x64xf32>, %k: memref<128x64xf32>,
                            %scores: memref<128x128xf32>, %probs: memref<128x128xf32>)
    attributes {tessera.deterministic} {
  tessera_nvidia.kernel_call %q, %k, %scores {callee = "cublasSgemm_v2", arch = "sm_80+",
      binding = "c_abi", provenance = "vendor_library", accuracy = "tolerance_bounded",
      tolerance = 1.0e-4, tolerance_rel = 1.0e-5, determinism = "deterministic",
      covers = "root_only"}
      : (memref<128x64xf32>, memref<128x64xf32>, memref<128x128xf32>) -> ()
  tessera_nvidia.kernel_call %scores, %probs {callee = "row_softmax_f32", arch = "sm_90",
      binding = "cuda_kernel", provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", covers = "whole_region"}
      : (memref<128x128xf32>, memref<128x128xf32>) -> ()
  return
}

func.func @exp2_fast(%x: f32) -> f32 {
  %y = tessera_nvidia.inline_ptx %x {ptx = "ex2.approx.ftz.f32 $0, $1;", constraints = "=f,f",
      arch = "sm_75+", accuracy = "tolerance_bounded", tolerance_rel = 2.0e-7,
      determinism = "deterministic"} : (f32) -> f32
  return %y : f32
}
