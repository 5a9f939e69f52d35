// Matmul providers: delegates that can serve tile.matmul — arbiter candidates — and the
// contract each declares (built in: openblas, cublas; others declared by the host).
#ifndef TESSERA_JIT_DELEGATES_MATMUL_PROVIDER_H_
#define TESSERA_JIT_DELEGATES_MATMUL_PROVIDER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "jit/compile_options.h"
#include "runtime/delegate_identity.h"

namespace tessera::jit::delegates {

using runtime::MatmulProvider;

/// The built-in providers (openblas → cblas_sgemm on the host, cublas → cublasSgemm_v2 on
/// nvptx): candidates whenever a library is registered under their name.
const std::vector<MatmulProvider>& BuiltinMatmulProviders();

/// The built-in provider called `name`, or null.
const MatmulProvider* BuiltinMatmulProvider(absl::string_view name);

/// OK when `provider` is a well-formed contract (known abi for its target, closed enums, the
/// delegation contract's tolerance rules); InvalidArgument naming the field otherwise.
absl::Status ValidateMatmulProvider(const MatmulProvider& provider);

}  // namespace tessera::jit::delegates

#endif  // TESSERA_JIT_DELEGATES_MATMUL_PROVIDER_H_
