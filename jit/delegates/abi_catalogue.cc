// The ABI catalogue: signatures from cblas.h and cublas_api.h.
#include "jit/delegates/abi_catalogue.h"

#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "dialect/DelegationContract.h"

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

std::string MatmulProvider::ToString() const {
  return absl::StrCat("matmul provider ", name, ": ", callee, " (", abi, ") in ", library, " for ",
                      TargetName(target), " ", arch, ", ", provenance, ", ", covers, ", ",
                      determinism, ", ", accuracy,
                      tolerance ? absl::StrCat(", tolerance ", *tolerance) : "",
                      tolerance_rel ? absl::StrCat(", tolerance_rel ", *tolerance_rel) : "");
}

const std::vector<MatmulProvider>& BuiltinMatmulProviders() {
  static const auto* providers = new std::vector<MatmulProvider>{
      {"openblas", "openblas", Target::kHost, "cblas_sgemm", "cblas_sgemm", "host",
       "vendor_library", "root_only", "deterministic", "reference_exact"},
      {"cublas", "cublas", Target::kNvptx, "cublasSgemm_v2", "cublasSgemm_v2", "sm_75+",
       "vendor_library", "root_only", "deterministic", "reference_exact"},
  };
  return *providers;
}

const MatmulProvider* BuiltinMatmulProvider(absl::string_view name) {
  for (const MatmulProvider& provider : BuiltinMatmulProviders()) {
    if (provider.name == name) return &provider;
  }
  return nullptr;
}

absl::Status ValidateMatmulProvider(const MatmulProvider& p) {
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(
        absl::StrCat("matmul provider '", p.name, "': ", what));
  };
  if (p.name.empty()) return bad("needs a non-empty name");
  if (p.name == "compiled") return bad("'compiled' names the compiled lowering");
  if (p.library.empty()) return bad("needs the registered library that defines its callee");
  if (p.callee.empty()) return bad("needs a non-empty callee");
  const std::string expected_abi = p.target == Target::kHost ? "cblas_sgemm" : "cublasSgemm_v2";
  if (p.abi != expected_abi) {
    return bad(absl::StrCat("abi must be '", expected_abi, "' for the ", TargetName(p.target),
                            " target, found '", p.abi, "'"));
  }
  ContractTerms terms;
  terms.arch = p.arch;
  terms.provenance = p.provenance;
  terms.covers = p.covers;
  terms.determinism = p.determinism;
  terms.accuracy = p.accuracy;
  terms.tolerance = p.tolerance;
  terms.tolerance_rel = p.tolerance_rel;
  if (std::optional<std::string> fault = CheckContractTerms(terms)) return bad(*fault);
  return absl::OkStatus();
}

}  // namespace tessera::jit::delegates
