// RUN: tessera-opt %s -split-input-file -verify-diagnostics
// The delegation contract (docs/design.md §4): one defect per split. The first nine are the original
// contract cases.

func.func @empty_callee(%a: memref<4xf32>) {
  // expected-error @+1 {{requires a non-empty `callee`}}
  tessera_nvidia.kernel_call %a {callee = "", arch = "sm_80+", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @bounded_without_bound(%a: memref<4xf32>) {
  // expected-error @+1 {{accuracy=tolerance_bounded requires `tolerance` and/or `tolerance_rel`}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "tolerance_bounded",
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @exact_with_tolerance(%a: memref<4xf32>) {
  // expected-error @+1 {{accuracy=reference_exact must not carry a tolerance}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "reference_exact", tolerance = 1.0e-3,
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @non_positive_tolerance(%a: memref<4xf32>) {
  // expected-error @+1 {{`tolerance` must be finite and greater than zero}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "tolerance_bounded", tolerance = 0.0,
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @unknown_binding(%a: memref<4xf32>) {
  // expected-error @+1 {{attribute 'binding' failed to satisfy constraint: string attribute whose value is one of: cuda_kernel, c_abi}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "python",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @inline_ptx_without_constraints(%x: f32) -> f32 {
  // expected-error @+1 {{requires a non-empty `constraints` string}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "mov.f32 $0, $1;", constraints = "",
      arch = "sm_80+", accuracy = "reference_exact", determinism = "deterministic"}
      : (f32) -> f32
  return %y : f32
}

// -----

func.func @empty_ptx(%x: f32) -> f32 {
  // expected-error @+1 {{requires non-empty `ptx`}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "", constraints = "=f,f", arch = "sm_80+",
      accuracy = "reference_exact", determinism = "deterministic"} : (f32) -> f32
  return %y : f32
}

// -----

func.func @unknown_provenance(%a: memref<4xf32>) {
  // expected-error @+1 {{attribute 'provenance' failed to satisfy constraint: string attribute whose value is one of: vendor_library, handwritten_kernel}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "downloaded", accuracy = "reference_exact",
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @empty_arch(%a: memref<4xf32>) {
  // expected-error @+1 {{requires a non-empty `arch`}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----
// Bounds: negatives, NaN and infinities are rejected for both bounds.

func.func @negative_tolerance(%a: memref<4xf32>) {
  // expected-error @+1 {{`tolerance` must be finite and greater than zero, found -1.000000e-03}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "tolerance_bounded", tolerance = -1.0e-3,
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @nan_tolerance(%a: memref<4xf32>) {
  // expected-error @+1 {{`tolerance` must be finite and greater than zero, found nan}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "tolerance_bounded",
      tolerance = 0x7FF8000000000000 : f64, determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @nan_tolerance_rel(%a: memref<4xf32>) {
  // expected-error @+1 {{`tolerance_rel` must be finite and greater than zero, found nan}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "tolerance_bounded",
      tolerance_rel = 0x7FF8000000000000 : f64, determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @inf_tolerance_rel(%a: memref<4xf32>) {
  // expected-error @+1 {{`tolerance_rel` must be finite and greater than zero, found inf}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "tolerance_bounded",
      tolerance_rel = 0x7FF0000000000000 : f64, determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @negative_inf_tolerance_rel(%a: memref<4xf32>) {
  // expected-error @+1 {{`tolerance_rel` must be finite and greater than zero, found -inf}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "tolerance_bounded",
      tolerance_rel = 0xFFF0000000000000 : f64, determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @negative_tolerance_rel(%a: memref<4xf32>) {
  // expected-error @+1 {{`tolerance_rel` must be finite and greater than zero, found -1.000000e-05}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "tolerance_bounded", tolerance = 1.0e-3,
      tolerance_rel = -1.0e-5, determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @zero_tolerance_rel(%a: memref<4xf32>) {
  // expected-error @+1 {{`tolerance_rel` must be finite and greater than zero, found 0.000000e+00}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "tolerance_bounded", tolerance_rel = 0.0,
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @integer_tolerance(%a: memref<4xf32>) {
  // expected-error @+1 {{attribute 'tolerance' failed to satisfy constraint: 64-bit float attribute}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "tolerance_bounded", tolerance = 1,
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----
// Fault order: an empty callee is reported before an empty arch and a bad bound.

func.func @order_callee_before_arch(%a: memref<4xf32>) {
  // expected-error @+1 {{requires a non-empty `callee`}}
  tessera_nvidia.kernel_call %a {callee = "", arch = "", binding = "c_abi",
      provenance = "vendor_library", accuracy = "tolerance_bounded", tolerance = -1.0,
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @order_arch_before_bound(%a: memref<4xf32>) {
  // expected-error @+1 {{requires a non-empty `arch`}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "", binding = "c_abi",
      provenance = "vendor_library", accuracy = "tolerance_bounded", tolerance = -1.0,
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @order_bound_before_exact_rule(%a: memref<4xf32>) {
  // expected-error @+1 {{`tolerance` must be finite and greater than zero}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact", tolerance = 0.0,
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @order_ptx_before_constraints(%x: f32) -> f32 {
  // expected-error @+1 {{requires non-empty `ptx`}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "", constraints = "", arch = "",
      accuracy = "reference_exact", determinism = "deterministic"} : (f32) -> f32
  return %y : f32
}

// -----
// Missing required attributes.

func.func @missing_callee(%a: memref<4xf32>) {
  // expected-error @+1 {{requires attribute 'callee'}}
  tessera_nvidia.kernel_call %a {arch = "sm_80+", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @missing_arch(%a: memref<4xf32>) {
  // expected-error @+1 {{requires attribute 'arch'}}
  tessera_nvidia.kernel_call %a {callee = "k", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @missing_binding(%a: memref<4xf32>) {
  // expected-error @+1 {{requires attribute 'binding'}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @missing_provenance(%a: memref<4xf32>) {
  // expected-error @+1 {{requires attribute 'provenance'}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "c_abi",
      accuracy = "reference_exact", determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @missing_accuracy(%a: memref<4xf32>) {
  // expected-error @+1 {{requires attribute 'accuracy'}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "c_abi",
      provenance = "vendor_library", determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @missing_determinism(%a: memref<4xf32>) {
  // expected-error @+1 {{requires attribute 'determinism'}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @inline_ptx_missing_ptx(%x: f32) -> f32 {
  // expected-error @+1 {{requires attribute 'ptx'}}
  %y = tessera_nvidia.inline_ptx %x {constraints = "=f,f", arch = "sm_80+",
      accuracy = "reference_exact", determinism = "deterministic"} : (f32) -> f32
  return %y : f32
}

// -----

func.func @inline_ptx_missing_constraints(%x: f32) -> f32 {
  // expected-error @+1 {{requires attribute 'constraints'}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "mov.f32 $0, $1;", arch = "sm_80+",
      accuracy = "reference_exact", determinism = "deterministic"} : (f32) -> f32
  return %y : f32
}

// -----

func.func @inline_ptx_missing_arch(%x: f32) -> f32 {
  // expected-error @+1 {{requires attribute 'arch'}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "mov.f32 $0, $1;", constraints = "=f,f",
      accuracy = "reference_exact", determinism = "deterministic"} : (f32) -> f32
  return %y : f32
}

// -----

func.func @inline_ptx_missing_accuracy(%x: f32) -> f32 {
  // expected-error @+1 {{requires attribute 'accuracy'}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "mov.f32 $0, $1;", constraints = "=f,f",
      arch = "sm_80+", determinism = "deterministic"} : (f32) -> f32
  return %y : f32
}

// -----

func.func @inline_ptx_missing_determinism(%x: f32) -> f32 {
  // expected-error @+1 {{requires attribute 'determinism'}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "mov.f32 $0, $1;", constraints = "=f,f",
      arch = "sm_80+", accuracy = "reference_exact"} : (f32) -> f32
  return %y : f32
}

// -----
// Unknown enum values, each attribute.

func.func @unknown_accuracy(%a: memref<4xf32>) {
  // expected-error @+1 {{attribute 'accuracy' failed to satisfy constraint: string attribute whose value is one of: reference_exact, tolerance_bounded}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "c_abi",
      provenance = "vendor_library", accuracy = "approximately",
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @unknown_determinism(%a: memref<4xf32>) {
  // expected-error @+1 {{attribute 'determinism' failed to satisfy constraint: string attribute whose value is one of: deterministic, nondeterministic}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "mostly"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @unknown_covers(%a: memref<4xf32>) {
  // expected-error @+1 {{attribute 'covers' failed to satisfy constraint: string attribute whose value is one of: root_only, whole_region}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic", covers = "everything"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @covers_not_a_string(%a: memref<4xf32>) {
  // expected-error @+1 {{attribute 'covers' failed to satisfy constraint: string attribute whose value is one of: root_only, whole_region}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic", covers = true} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @inline_ptx_unknown_accuracy(%x: f32) -> f32 {
  // expected-error @+1 {{attribute 'accuracy' failed to satisfy constraint: string attribute whose value is one of: reference_exact, tolerance_bounded}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "mov.f32 $0, $1;", constraints = "=f,f",
      arch = "sm_80+", accuracy = "exact", determinism = "deterministic"} : (f32) -> f32
  return %y : f32
}

// -----
// The contract rules hold for inline_ptx too.

func.func @inline_ptx_empty_arch(%x: f32) -> f32 {
  // expected-error @+1 {{requires a non-empty `arch`}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "mov.f32 $0, $1;", constraints = "=f,f",
      arch = "", accuracy = "reference_exact", determinism = "deterministic"} : (f32) -> f32
  return %y : f32
}

// -----

func.func @inline_ptx_bounded_without_bound(%x: f32) -> f32 {
  // expected-error @+1 {{accuracy=tolerance_bounded requires `tolerance` and/or `tolerance_rel`}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "ex2.approx.f32 $0, $1;", constraints = "=f,f",
      arch = "sm_80+", accuracy = "tolerance_bounded", determinism = "deterministic"}
      : (f32) -> f32
  return %y : f32
}

// -----

func.func @inline_ptx_exact_with_tolerance_rel(%x: f32) -> f32 {
  // expected-error @+1 {{accuracy=reference_exact must not carry a tolerance}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "mov.f32 $0, $1;", constraints = "=f,f",
      arch = "sm_80+", accuracy = "reference_exact", tolerance_rel = 1.0e-6,
      determinism = "deterministic"} : (f32) -> f32
  return %y : f32
}

// -----

func.func @inline_ptx_infinite_tolerance(%x: f32) -> f32 {
  // expected-error @+1 {{`tolerance` must be finite and greater than zero, found inf}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "ex2.approx.f32 $0, $1;", constraints = "=f,f",
      arch = "sm_80+", accuracy = "tolerance_bounded", tolerance = 0x7FF0000000000000 : f64,
      determinism = "deterministic"} : (f32) -> f32
  return %y : f32
}

// -----
// Beyond the contract: the constraint string matches the operands and results, which are scalars.

func.func @inline_ptx_constraint_arity(%x: f32) -> f32 {
  // expected-error @+1 {{expected `constraints` to describe 1 output(s) and 1 input(s) (the op's results and operands), found 1 output(s) and 2 input(s) in "=f,f,f"}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "add.f32 $0, $1, $2;", constraints = "=f,f,f",
      arch = "sm_80+", accuracy = "reference_exact", determinism = "deterministic"}
      : (f32) -> f32
  return %y : f32
}

// -----

func.func @inline_ptx_memref_operand(%x: memref<4xf32>) {
  // expected-error @+1 {{expected operand #0 to have a type that register class 'l' holds (i64), found 'memref<4xf32>'}}
  tessera_nvidia.inline_ptx %x {ptx = "// $0", constraints = "l", arch = "sm_80+",
      accuracy = "reference_exact", determinism = "deterministic", has_side_effects}
      : (memref<4xf32>) -> ()
  return
}

// -----
// The constraint grammar: results (`=` and a class), operands (a class), `~{memory}` clobbers.

func.func @inline_ptx_unknown_register_class(%x: f32) -> f32 {
  // expected-error @+1 {{expected `constraints` entry #0 ('=q') to be `=` and a register class for a result, a register class for an operand, or the clobber `~{memory}`, without spaces (register classes: h, r, l, f, d)}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "mov.f32 $0, $1;", constraints = "=q,f",
      arch = "sm_80+", accuracy = "reference_exact", determinism = "deterministic"}
      : (f32) -> f32
  return %y : f32
}

// -----

func.func @inline_ptx_unknown_clobber(%x: f32) -> f32 {
  // expected-error @+1 {{expected `constraints` entry #2 ('~{cc}') to be `=` and a register class}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "mov.f32 $0, $1;", constraints = "=f,f,~{cc}",
      arch = "sm_80+", accuracy = "reference_exact", determinism = "deterministic"}
      : (f32) -> f32
  return %y : f32
}

// -----

func.func @inline_ptx_result_after_operand(%x: f32) -> f32 {
  // expected-error @+1 {{expected `constraints` to list results (`=` entries) first, then operands, then clobbers; `constraints` entry #1 ('=f') is out of order}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "mov.f32 $0, $1;", constraints = "f,=f",
      arch = "sm_80+", accuracy = "reference_exact", determinism = "deterministic"}
      : (f32) -> f32
  return %y : f32
}

// -----

func.func @inline_ptx_class_does_not_hold_result(%x: f32) -> i32 {
  // expected-error @+1 {{expected result #0 to have a type that register class 'f' holds (f32), found 'i32'}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "cvt.rzi.s32.f32 $0, $1;", constraints = "=f,f",
      arch = "sm_80+", accuracy = "reference_exact", determinism = "deterministic"}
      : (f32) -> i32
  return %y : i32
}

// -----

func.func @inline_ptx_class_does_not_hold_operand(%x: f64) -> f32 {
  // expected-error @+1 {{expected operand #0 to have a type that register class 'f' holds (f32), found 'f64'}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "cvt.rn.f32.f64 $0, $1;", constraints = "=f,f",
      arch = "sm_80+", accuracy = "reference_exact", determinism = "deterministic"}
      : (f64) -> f32
  return %y : f32
}

// -----

func.func @inline_ptx_index_operand(%x: index) {
  // expected-error @+1 {{expected operand #0 to have a type that register class 'l' holds (i64), found 'index'}}
  tessera_nvidia.inline_ptx %x {ptx = "// $0", constraints = "l", arch = "sm_80+",
      accuracy = "reference_exact", determinism = "deterministic", has_side_effects}
      : (index) -> ()
  return
}

// -----
// Operand references in the PTX text: $N below the count, ${N}, $$ for a literal `$`.

func.func @inline_ptx_reference_out_of_range(%x: f32) -> f32 {
  // expected-error @+1 {{`ptx` refers to $2, but the op has 2 result(s) and operand(s): $0 … $1, results first}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "add.f32 $0, $1, $2;", constraints = "=f,f",
      arch = "sm_80+", accuracy = "reference_exact", determinism = "deterministic"}
      : (f32) -> f32
  return %y : f32
}

// -----

func.func @inline_ptx_braced_reference_out_of_range(%x: f32) -> f32 {
  // expected-error @+1 {{`ptx` refers to ${7}, but the op has 2 result(s) and operand(s)}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "mov.f32 $0, ${7};", constraints = "=f,f",
      arch = "sm_80+", accuracy = "reference_exact", determinism = "deterministic"}
      : (f32) -> f32
  return %y : f32
}

// -----

func.func @inline_ptx_bare_dollar(%x: f32) -> f32 {
  // expected-error @+1 {{expected `$` in `ptx` at offset 12 to start an operand reference ($0, ${0}) or to be `$$` (a literal $), found '$L1;'}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "mov.f32 $0, $L1;", constraints = "=f,f",
      arch = "sm_80+", accuracy = "reference_exact", determinism = "deterministic"}
      : (f32) -> f32
  return %y : f32
}

// -----

func.func @inline_ptx_without_results_or_side_effects(%x: i32) {
  // expected-error @+1 {{expected `has_side_effects` on an inline_ptx without results (otherwise it is removed as dead code)}}
  tessera_nvidia.inline_ptx %x {ptx = "// $0", constraints = "r", arch = "sm_80+",
      accuracy = "reference_exact", determinism = "deterministic"} : (i32) -> ()
  return
}

// -----
// Arch envelopes: `sm_90`, `sm_80+`, `sm_90a` or `host`.

func.func @arch_not_an_envelope(%a: memref<4xf32>) {
  // expected-error @+1 {{expected `arch` to be an envelope: `sm_90` (exactly), `sm_80+` (that arch or newer), `sm_90a` (an arch-specific feature set) or `host` (a host C-ABI delegate), found 'sm90'}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm90", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @arch_specific_or_newer(%a: memref<4xf32>) {
  // expected-error @+1 {{arch-specific features do not carry to newer GPUs, found 'sm_90a+'}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_90a+", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @inline_ptx_arch_list(%x: f32) -> f32 {
  // expected-error @+1 {{expected `arch` to be an envelope}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "mov.f32 $0, $1;", constraints = "=f,f",
      arch = "sm_80,sm_90", accuracy = "reference_exact", determinism = "deterministic"}
      : (f32) -> f32
  return %y : f32
}

// -----
// kernel_call's launch configuration (cuda_kernel) and C signature (c_abi).

func.func @cuda_kernel_grid_without_block(%a: memref<4xf32>) {
  // expected-error @+1 {{binding=cuda_kernel takes `grid` and `block` together (the launch configuration, e.g. grid = array<i64: 128>, block = array<i64: 256>) or neither}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", grid = array<i64: 1>} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @cuda_kernel_grid_not_an_array(%a: memref<4xf32>) {
  // expected-error @+1 {{attribute 'grid' failed to satisfy constraint: i64 dense array attribute}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", grid = [1, 2], block = array<i64: 32>}
      : (memref<4xf32>) -> ()
  return
}

// -----

func.func @cuda_kernel_grid_of_four_sizes(%a: memref<4xf32>) {
  // expected-error @+1 {{expected `grid` to hold 1 to 3 sizes (x, y, z), found 4}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", grid = array<i64: 1, 1, 1, 1>, block = array<i64: 32>}
      : (memref<4xf32>) -> ()
  return
}

// -----

func.func @cuda_kernel_empty_block(%a: memref<4xf32>) {
  // expected-error @+1 {{expected `block` to hold 1 to 3 sizes (x, y, z), found 0}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", grid = array<i64: 1>, block = array<i64>}
      : (memref<4xf32>) -> ()
  return
}

// -----

func.func @cuda_kernel_zero_block(%a: memref<4xf32>) {
  // expected-error @+1 {{expected `block` y to be in [1, 1024], found 0}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", grid = array<i64: 1>, block = array<i64: 32, 0>}
      : (memref<4xf32>) -> ()
  return
}

// -----

func.func @cuda_kernel_grid_y_too_large(%a: memref<4xf32>) {
  // expected-error @+1 {{expected `grid` y to be in [1, 65535], found 65536}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", grid = array<i64: 1, 65536>, block = array<i64: 32>}
      : (memref<4xf32>) -> ()
  return
}

// -----

func.func @cuda_kernel_negative_grid(%a: memref<4xf32>) {
  // expected-error @+1 {{expected `grid` x to be in [1, 2147483647], found -1}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", grid = array<i64: -1>, block = array<i64: 32>}
      : (memref<4xf32>) -> ()
  return
}

// -----

func.func @cuda_kernel_block_of_too_many_threads(%a: memref<4xf32>) {
  // expected-error @+1 {{expected `block` to hold at most 1024 threads, found 2048}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", grid = array<i64: 1>, block = array<i64: 64, 32>}
      : (memref<4xf32>) -> ()
  return
}

// -----

func.func @cuda_kernel_with_a_result(%a: memref<4xf32>) -> i32 {
  // expected-error @+1 {{expected no results: a cuda_kernel delegate writes its memref operands and returns nothing}}
  %r = tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", grid = array<i64: 1>, block = array<i64: 32>}
      : (memref<4xf32>) -> i32
  return %r : i32
}

// -----

func.func @cuda_kernel_with_a_signature(%a: memref<4xf32>) {
  // expected-error @+1 {{`signature` declares a c_abi callee's C signature; a cuda_kernel delegate takes its operands as kernel parameters}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", grid = array<i64: 1>, block = array<i64: 32>,
      signature = (memref<4xf32>) -> ()} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @c_abi_with_a_launch_configuration(%a: memref<4xf32>) {
  // expected-error @+1 {{`grid` and `block` launch a cuda_kernel delegate; a c_abi call takes none}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "host", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic", block = array<i64: 32>} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @signature_not_a_function_type(%a: memref<4xf32>) {
  // expected-error @+1 {{attribute 'signature' failed to satisfy constraint: type attribute of function type}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "host", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic", signature = i32} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @signature_arity(%a: memref<4xf32>, %n: i32) {
  // expected-error @+1 {{expected `signature` to declare 2 parameter(s), one per operand, found 1}}
  tessera_nvidia.kernel_call %a, %n {callee = "k", arch = "host", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic", signature = (memref<4xf32>) -> ()}
      : (memref<4xf32>, i32) -> ()
  return
}

// -----

func.func @signature_parameter_type(%a: memref<4xf32>, %n: i32) {
  // expected-error @+1 {{expected `signature` parameter #1 to be 'i32' (the operand's type), found 'i64'}}
  tessera_nvidia.kernel_call %a, %n {callee = "k", arch = "host", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic", signature = (memref<4xf32>, i64) -> ()}
      : (memref<4xf32>, i32) -> ()
  return
}

// -----

func.func @signature_index_parameter(%n: index) {
  // expected-error @+1 {{expected `signature` parameter #0 to be a memref or an integer or float scalar, found 'index'}}
  tessera_nvidia.kernel_call %n {callee = "k", arch = "host", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic", signature = (index) -> ()} : (index) -> ()
  return
}

// -----

func.func @signature_results(%a: memref<4xf32>) -> f32 {
  // expected-error @+1 {{expected `signature` results to be the op's results: at most one integer or float}}
  %r = tessera_nvidia.kernel_call %a {callee = "k", arch = "host", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic", signature = (memref<4xf32>) -> i32}
      : (memref<4xf32>) -> f32
  return %r : f32
}

// -----

func.func @inline_ptx_constraint_with_a_space(%x: f32, %w: f32) -> f32 {
  // expected-error @+1 {{expected `constraints` entry #1 (' f') to be `=` and a register class for a result, a register class for an operand, or the clobber `~{memory}`, without spaces}}
  %y = tessera_nvidia.inline_ptx %x, %w {ptx = "add.f32 $0, $1, $2;", constraints = "=f, f,f",
      arch = "sm_80+", accuracy = "reference_exact", determinism = "deterministic"}
      : (f32, f32) -> f32
  return %y : f32
}

// -----

func.func @inline_ptx_for_the_host(%x: f32) -> f32 {
  // expected-error @+1 {{inline PTX runs on NVIDIA GPUs: `arch` must be a GPU envelope such as `sm_80+`, found 'host'}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "mov.f32 $0, $1;", constraints = "=f,f",
      arch = "host", accuracy = "reference_exact", determinism = "deterministic"}
      : (f32) -> f32
  return %y : f32
}

// -----

func.func @cuda_kernel_for_the_host(%a: memref<4xf32>) {
  // expected-error @+1 {{a cuda_kernel delegate runs on NVIDIA GPUs: `arch` must be a GPU envelope such as `sm_80+`, found 'host'}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "host", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", grid = array<i64: 1>, block = array<i64: 32>}
      : (memref<4xf32>) -> ()
  return
}

// -----
// The original's undeclared kernel_call (callee and arch only) verifies; a contract term
// without the contract does not, nor a partial contract.

func.func @undeclared_call_with_covers(%a: f32) -> f32 {
  // expected-error @+1 {{declares `covers` without the delegation contract (binding, provenance, accuracy, determinism)}}
  %r = tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_120", covers = "root_only"} : (f32) -> f32
  return %r : f32
}

// -----

func.func @partial_contract(%a: memref<4xf32>) {
  // expected-error @+1 {{requires attribute 'accuracy' (binding, provenance, accuracy and determinism are declared together)}}
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_80+", binding = "c_abi",
      provenance = "vendor_library", determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}
