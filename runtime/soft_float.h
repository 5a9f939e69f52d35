// The bf16 conversion helpers LLVM calls on x86 CPUs without AVX512-BF16 (it legalises a bf16
// value it only moves — a scalar argument stored to memory — through f32 and
// `__truncsfbf2`). libgcc before GCC 13 has none of them, so host code JIT'd on such a CPU
// would not link; these are Tessera's own, resolved for every host module, so bf16 behaves
// the same on every CPU (round to nearest even, subnormals kept, NaNs kept quiet — what
// tessera-expand-arith does for the conversions the IR spells out).
#ifndef TESSERA_RUNTIME_SOFT_FLOAT_H_
#define TESSERA_RUNTIME_SOFT_FLOAT_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace tessera::runtime {

/// The address of Tessera's implementation of the compiler-runtime helper `name`
/// ("__truncsfbf2", "__truncdfbf2", "__extendbfsf2"), or null.
void* SoftFloatHelper(absl::string_view name);

/// The conversions themselves, on bit patterns (for tests).
uint16_t FloatToBf16Bits(float value);
uint16_t DoubleToBf16Bits(double value);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_SOFT_FLOAT_H_
