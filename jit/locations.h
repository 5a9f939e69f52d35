// Source locations as the compiler's messages print them.
#ifndef TESSERA_JIT_LOCATIONS_H_
#define TESSERA_JIT_LOCATIONS_H_

#include <string>

#include "mlir/IR/Location.h"

namespace tessera::jit {

/// `file:line:col` for a location that holds one (fused and named locations are searched),
/// else MLIR's own printing of the location.
std::string FormatLocation(mlir::Location location);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_LOCATIONS_H_
