// How probe data is stored in the element types of a Tile op's operands (f32, f16, bf16): the
// prober uploads inputs encoded this way and decodes the result before it is checked.
#ifndef TESSERA_ARBITER_ELEMENT_STORAGE_H_
#define TESSERA_ARBITER_ELEMENT_STORAGE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessera::arbiter {

/// Bytes per element of `element` ("f32" 4, "f16" and "bf16" 2); 0 for a type probes do not
/// store.
size_t StorageBytes(absl::string_view element);

/// `values` stored as `element`, little-endian as the devices read them. Every value must be
/// finite and exactly representable in `element` — probe inputs are, by construction
/// (MakeInputs) — so no rounding mode is assumed; InvalidArgument names the first that is not.
absl::StatusOr<std::vector<uint8_t>> EncodeStorage(const std::vector<float>& values,
                                                   absl::string_view element);

/// `count` elements of `element` at `data`, widened to float (exact for f32, f16 and bf16);
/// empty for a type StorageBytes does not know.
std::vector<float> DecodeStorage(const void* data, size_t count, absl::string_view element);

/// The spacing of `element`'s values relative to their magnitude (2^-23 for f32, 2^-10 for
/// f16, 2^-7 for bf16): at most what storing a result in it adds to its relative error.
double StorageUlp(absl::string_view element);

}  // namespace tessera::arbiter

#endif  // TESSERA_ARBITER_ELEMENT_STORAGE_H_
