// The C signature catalogue: signatures from cblas.h and cublas_api.h.
#include "jit/delegates/c_signatures.h"

#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tessera::jit::delegates {
namespace {

using P = AbiParam;

const std::map<std::string, AbiSignature, std::less<>>& Catalogue() {
  static const auto* catalogue = new std::map<std::string, AbiSignature, std::less<>>{
      // void cblas_sgemm(layout, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)
      {"cblas_sgemm",
       {{P::kI32, P::kI32, P::kI32, P::kI32, P::kI32, P::kI32, P::kF32, P::kF32Array, P::kI32,
         P::kF32Array, P::kI32, P::kF32, P::kF32Array, P::kI32},
        AbiResult::kVoid}},
      {"cblas_dgemm",
       {{P::kI32, P::kI32, P::kI32, P::kI32, P::kI32, P::kI32, P::kF64, P::kF64Array, P::kI32,
         P::kF64Array, P::kI32, P::kF64, P::kF64Array, P::kI32},
        AbiResult::kVoid}},
      // cublasStatus_t cublasSgemm_v2(handle, transa, transb, m, n, k, *alpha, A, lda, B, ldb,
      //                               *beta, C, ldc)
      {"cublasSgemm_v2",
       {{P::kCublasHandle, P::kI32, P::kI32, P::kI32, P::kI32, P::kI32, P::kF32ByPointer,
         P::kF32Array, P::kI32, P::kF32Array, P::kI32, P::kF32ByPointer, P::kF32Array, P::kI32},
        AbiResult::kStatus}},
      {"cublasDgemm_v2",
       {{P::kCublasHandle, P::kI32, P::kI32, P::kI32, P::kI32, P::kI32, P::kF64ByPointer,
         P::kF64Array, P::kI32, P::kF64Array, P::kI32, P::kF64ByPointer, P::kF64Array, P::kI32},
        AbiResult::kStatus}},
      // cublasGemmEx(handle, transa, transb, m, n, k, *alpha, A, Atype, lda, B, Btype, ldb,
      //              *beta, C, Ctype, ldc, computeType, algo) — f32 scaling factors
      {"cublasGemmEx",
       {{P::kCublasHandle, P::kI32, P::kI32, P::kI32, P::kI32, P::kI32, P::kF32ByPointer,
         P::kAnyArray, P::kI32, P::kI32, P::kAnyArray, P::kI32, P::kI32, P::kF32ByPointer,
         P::kAnyArray, P::kI32, P::kI32, P::kI32, P::kI32},
        AbiResult::kStatus}},
  };
  return *catalogue;
}

}  // namespace

const AbiSignature* KnownSignature(absl::string_view callee) {
  auto it = Catalogue().find(callee);
  return it == Catalogue().end() ? nullptr : &it->second;
}

std::string Describe(AbiParam param) {
  switch (param) {
    case P::kI32:
      return "i32";
    case P::kF32:
      return "f32";
    case P::kF64:
      return "f64";
    case P::kF32Array:
      return "memref of f32 (float*)";
    case P::kF64Array:
      return "memref of f64 (double*)";
    case P::kAnyArray:
      return "memref (void*)";
    case P::kF32ByPointer:
      return "f32 (passed as const float*)";
    case P::kF64ByPointer:
      return "f64 (passed as const double*)";
    case P::kCublasHandle:
      return "cuBLAS handle (supplied by the runtime)";
  }
  return "?";
}

}  // namespace tessera::jit::delegates
