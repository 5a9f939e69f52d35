// Matmul providers and their contracts.
#include "jit/delegates/matmul_provider.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "dialect/DelegationContract.h"

namespace tessera::jit::delegates {

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
    return absl::InvalidArgumentError(absl::StrCat("matmul provider '", p.name, "': ", what));
  };
  if (p.name.empty()) return bad("needs a non-empty name");
  if (p.name == "compiled" || p.name.rfind("compiled.", 0) == 0) {
    return bad(
        "'compiled' and 'compiled.<schedule>' name the compiled lowering and its kernel "
        "variants");
  }
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
  // A host provider's envelope is `host`; an nvptx provider's names GPUs.
  const bool host_envelope = p.arch == "host";
  if (host_envelope != (p.target == Target::kHost)) {
    return bad(absl::StrCat("arch '", p.arch, "' does not fit the ", TargetName(p.target),
                            " target (host providers declare arch 'host', nvptx providers a "
                            "GPU envelope such as 'sm_80+')"));
  }
  return absl::OkStatus();
}

}  // namespace tessera::jit::delegates
