// Which forms of the original Tessera's `tile` dialect this project accepts, decided on the text
// before MLIR's parser sees it. Its own Tile ops and the original's launch-level kernels
// (docs/original-ir.md) parse; the original's other forms are refused by name, with a location,
// before anything else about the text (its fragment-level fixtures declare type aliases, which
// the source limits refuse, and the refusal must name the form, not the alias).
#ifndef TESSERA_JIT_ADMISSION_TILE_FORMS_H_
#define TESSERA_JIT_ADMISSION_TILE_FORMS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tessera::jit {

/// InvalidArgument `name:line:col: error: …` at the first `tile.` op, attribute or type that is
/// neither one of this project's Tile ops nor an imported launch-level kernel:
/// * marker-only ops (`tile.training_kernel`, `tile.control_*`): they carry no computation;
/// * packed and block-scaled matmuls (`#tile.packed_format`: int4, nvfp4, mx formats);
/// * any other `tile.*_kernel`;
/// * the fragment-level form (`tile.view`, `tile.mma`, `!tile.fragment`, …).
/// Other unknown names are left to the parser ("custom op 'tile.conv' is unknown").
/// Outside `//` comments and string literals (except a quoted generic op name, `"tile.mma"(`).
absl::Status CheckTileForms(absl::string_view source, absl::string_view source_name);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_ADMISSION_TILE_FORMS_H_
