// The original Tessera's launch-level verifier rules, one case per branch, with its messages
// (src/compiler/ir/TileOps.cpp and TileDialect.cpp of the original); its negative fixtures
// sm120_softmax_kernel_invalid, sm120_canonical_k_loop_invalid and
// sm120_nvfp4_matmul_kernel_invalid are among them.
// RUN: tessera-opt %s -split-input-file -verify-diagnostics

llvm.func @no_mma(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
  // expected-error @+1 {{requires a #tile.mma_desc mma attribute}}
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @no_epilogue(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
  // expected-error @+1 {{requires a #tile.epilogue epilogue attribute}}
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @residual_without_order(%a: !llvm.ptr, %b: !llvm.ptr, %r: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
  // expected-error @+1 {{residual requires epilogue_order=matmul_bias_activation_residual}}
  tile.matmul_kernel %a, %b, %r, %d, %m, %n, %k {mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">, residual = true} : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @bias_operand_missing(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
  // expected-error @+1 {{expects A, B, optional bias, optional residual, D, M, N, K operands}}
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = true, activation = "relu", output = "f32">} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @dims_not_i64(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i32) attributes {nvvm.kernel} {
  // expected-error @+1 {{M, N, and K must be i64}}
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i32
  llvm.return
}

// -----

llvm.func @buffer_not_pointer(%a: !llvm.ptr, %b: !llvm.ptr, %d: i64, %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
  // expected-error @+1 {{matrix, scale, optional bias, and D operands must be !llvm.ptr}}
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">} : !llvm.ptr, !llvm.ptr, i64, i64, i64, i64
  llvm.return
}

// -----

llvm.func @bad_warps(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
  // expected-error @+1 {{warps must be 1 or 4}}
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">, warps = 2 : i64} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @bad_staging(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
  // expected-error @+1 {{staging must be global or shared}}
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">, staging = "texture"} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @shared_one_warp(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
  // expected-error @+1 {{shared staging currently requires four warps}}
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">, warps = 1 : i64, staging = "shared"} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @k_loop_tiles_missing(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
  // expected-error @+1 {{canonical K-loop requires tessera.tile_m, tessera.tile_n, and tessera.tile_k}}
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">, tessera.canonical_k_loop = true} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @k_loop_tiles_nonpositive(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
  // expected-error @+1 {{canonical K-loop tile sizes must be positive}}
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">, tessera.canonical_k_loop = true, tessera.tile_m = 0 : i64, tessera.tile_n = 8 : i64, tessera.tile_k = 16 : i64} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @canonical_k_tile_must_match_mma(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
  // expected-error @+1 {{canonical K-loop tile sizes must match the physical MMA descriptor}}
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">, warps = 1 : i64, staging = "global", tessera.canonical_k_loop = true, tessera.tile_m = 16 : i64, tessera.tile_n = 8 : i64, tessera.tile_k = 8 : i64} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @k_loop_macro_alone(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
  // expected-error @+1 {{canonical K-loop macro_tile_m and macro_tile_n must appear together}}
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">, tessera.canonical_k_loop = true, tessera.tile_m = 16 : i64, tessera.tile_n = 8 : i64, tessera.tile_k = 16 : i64, tessera.macro_tile_m = 32 : i64} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @k_loop_macro_not_multiple(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
  // expected-error @+1 {{canonical K-loop macro tile must be a positive multiple of the physical MMA tile}}
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">, tessera.canonical_k_loop = true, tessera.tile_m = 16 : i64, tessera.tile_n = 8 : i64, tessera.tile_k = 16 : i64, tessera.macro_tile_m = 24 : i64, tessera.macro_tile_n = 8 : i64} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @k_loop_f16_acc(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
  // expected-error @+1 {{canonical K-loop requires FP32, INT32, or FP64 accumulation}}
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f16", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">, tessera.canonical_k_loop = true, tessera.tile_m = 16 : i64, tessera.tile_n = 8 : i64, tessera.tile_k = 16 : i64} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @block_scaled_bias(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
  // expected-error @+1 {{block-scaled launch-level matmul does not support fused bias/residual yet}}
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "nvfp4", b = "nvfp4", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = true, activation = "none", output = "f32">} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @bad_family(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) {
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {
    // expected-error @+1 {{TILE_MMA_DESC_BAD_FAMILY: family "dma" is not one of {auto, mma_sync, wgmma, tcgen05, wmma, mfma}}}
    mma = #tile.mma_desc<family = "dma", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @zero_m(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) {
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {
    // expected-error @+1 {{TILE_MMA_DESC_NONPOSITIVE_SHAPE: m/n/k must be > 0}}
    mma = #tile.mma_desc<family = "mma_sync", m = 0, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @zero_k_blocks(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) {
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {
    // expected-error @+1 {{TILE_MMA_DESC_BAD_K_BLOCKS: k_blocks must be >= 1}}
    mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 0>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @empty_dtype(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) {
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {
    // expected-error @+1 {{TILE_MMA_DESC_EMPTY_DTYPE: a/b/acc must be named}}
    mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @bad_layout(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) {
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {
    // expected-error @+1 {{TILE_MMA_DESC_BAD_LAYOUT: a_layout and b_layout must be row_major or col_major}}
    mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "tiled", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @bad_activation(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) {
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {
    // expected-error @+1 {{TILE_EPILOGUE_BAD_ACTIVATION: activation must be none, relu, gelu, or silu}}
    mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "tanh", output = "f32">} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @bad_output(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) {
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {
    // expected-error @+1 {{TILE_EPILOGUE_BAD_OUTPUT: output must be f64, f32, f16, or i32}}
    mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = false, activation = "none", output = "bf16">} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @bias_not_bool(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) {
  tile.matmul_kernel %a, %b, %d, %m, %n, %k {
    // expected-error @+2 {{expected true or false}}
    // expected-error @+1 {{failed to parse Tile_EpilogueAttr parameter 'bias'}}
    mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>, epilogue = #tile.epilogue<bias = 1, activation = "none", output = "f32">} : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @softmax_arity(%x: !llvm.ptr, %o: !llvm.ptr, %r: i64) {
  // expected-error @+1 {{expects source, destination, rows, and columns operands}}
  tile.softmax_kernel %x, %o, %r {storage = "f16", accum = "f32", axis = -1 : i64, exp_mode = "approx_exp2", ftz = false} : !llvm.ptr, !llvm.ptr, i64
  llvm.return
}

// -----

llvm.func @softmax_pointers(%x: !llvm.ptr, %o: i64, %r: i64, %c: i64) {
  // expected-error @+1 {{source and destination operands must be !llvm.ptr}}
  tile.softmax_kernel %x, %o, %r, %c {storage = "f16", accum = "f32", axis = -1 : i64, exp_mode = "approx_exp2", ftz = false} : !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @softmax_dims(%x: !llvm.ptr, %o: !llvm.ptr, %r: i64, %c: i32) {
  // expected-error @+1 {{rows and columns must be i64}}
  tile.softmax_kernel %x, %o, %r, %c {storage = "f16", accum = "f32", axis = -1 : i64, exp_mode = "approx_exp2", ftz = false} : !llvm.ptr, !llvm.ptr, i64, i32
  llvm.return
}

// -----

llvm.func @softmax_f64_storage(%x: !llvm.ptr, %o: !llvm.ptr, %r: i64, %c: i64) {
  // expected-error @+1 {{requires storage="f16", storage="bf16", or storage="f32"}}
  tile.softmax_kernel %x, %o, %r, %c {storage = "f64", accum = "f32", axis = -1 : i64, exp_mode = "approx_exp2", ftz = false} : !llvm.ptr, !llvm.ptr, i64, i64
  llvm.return
}

// -----

llvm.func @softmax_f16_accum(%x: !llvm.ptr, %o: !llvm.ptr, %r: i64, %c: i64) {
  // expected-error @+1 {{requires accum="f32"}}
  tile.softmax_kernel %x, %o, %r, %c {storage = "f16", accum = "f16", axis = -1 : i64, exp_mode = "approx_exp2", ftz = false} : !llvm.ptr, !llvm.ptr, i64, i64
  llvm.return
}

// -----

llvm.func @softmax_axis(%x: !llvm.ptr, %o: !llvm.ptr, %r: i64, %c: i64) {
  // expected-error @+1 {{currently requires axis=-1}}
  tile.softmax_kernel %x, %o, %r, %c {storage = "f16", accum = "f32", axis = 0 : i64, exp_mode = "approx_exp2", ftz = false} : !llvm.ptr, !llvm.ptr, i64, i64
  llvm.return
}

// -----

llvm.func @softmax_no_exp_mode(%x: !llvm.ptr, %o: !llvm.ptr, %r: i64, %c: i64) {
  // expected-error @+1 {{requires an explicit exp_mode}}
  tile.softmax_kernel %x, %o, %r, %c {storage = "f16", accum = "f32", axis = -1 : i64, ftz = false} : !llvm.ptr, !llvm.ptr, i64, i64
  llvm.return
}

// -----

llvm.func @softmax_no_ftz(%x: !llvm.ptr, %o: !llvm.ptr, %r: i64, %c: i64) {
  // expected-error @+1 {{requires an explicit ftz boolean}}
  tile.softmax_kernel %x, %o, %r, %c {storage = "f16", accum = "f32", axis = -1 : i64, exp_mode = "approx_exp2"} : !llvm.ptr, !llvm.ptr, i64, i64
  llvm.return
}

// -----

llvm.func @reduce_arity(%x: !llvm.ptr, %o: !llvm.ptr, %a: i64, %b: i64) {
  // expected-error @+1 {{expects source, destination, outer, axis extent, and inner operands}}
  tile.reduce_kernel %x, %o, %a, %b {storage = "f32", accum = "f32", kind = "sum", axis = 1 : i64, keepdims = true, schedule = "serial", nan_mode = "propagate"} : !llvm.ptr, !llvm.ptr, i64, i64
  llvm.return
}

// -----

llvm.func @reduce_pointers(%x: !llvm.ptr, %o: i64, %a: i64, %b: i64, %c: i64) {
  // expected-error @+1 {{source and destination operands must be !llvm.ptr}}
  tile.reduce_kernel %x, %o, %a, %b, %c {storage = "f32", accum = "f32", kind = "sum", axis = 1 : i64, keepdims = true, schedule = "serial", nan_mode = "propagate"} : !llvm.ptr, i64, i64, i64, i64
  llvm.return
}

// -----

llvm.func @reduce_dims(%x: !llvm.ptr, %o: !llvm.ptr, %a: i64, %b: i64, %c: i32) {
  // expected-error @+1 {{reduction dimensions must be i64}}
  tile.reduce_kernel %x, %o, %a, %b, %c {storage = "f32", accum = "f32", kind = "sum", axis = 1 : i64, keepdims = true, schedule = "serial", nan_mode = "propagate"} : !llvm.ptr, !llvm.ptr, i64, i64, i32
  llvm.return
}

// -----

llvm.func @reduce_storage(%x: !llvm.ptr, %o: !llvm.ptr, %a: i64, %b: i64, %c: i64) {
  // expected-error @+1 {{requires storage="f16", storage="bf16", or storage="f32"}}
  tile.reduce_kernel %x, %o, %a, %b, %c {storage = "i8", accum = "f32", kind = "sum", axis = 1 : i64, keepdims = true, schedule = "serial", nan_mode = "propagate"} : !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @reduce_accum(%x: !llvm.ptr, %o: !llvm.ptr, %a: i64, %b: i64, %c: i64) {
  // expected-error @+1 {{requires accum="f32"}}
  tile.reduce_kernel %x, %o, %a, %b, %c {storage = "f32", accum = "f64", kind = "sum", axis = 1 : i64, keepdims = true, schedule = "serial", nan_mode = "propagate"} : !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @reduce_kind(%x: !llvm.ptr, %o: !llvm.ptr, %a: i64, %b: i64, %c: i64) {
  // expected-error @+1 {{requires kind in {sum, mean, max, min}}}
  tile.reduce_kernel %x, %o, %a, %b, %c {storage = "f32", accum = "f32", kind = "prod", axis = 1 : i64, keepdims = true, schedule = "serial", nan_mode = "propagate"} : !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @reduce_axis(%x: !llvm.ptr, %o: !llvm.ptr, %a: i64, %b: i64, %c: i64) {
  // expected-error @+1 {{requires a normalized nonnegative axis}}
  tile.reduce_kernel %x, %o, %a, %b, %c {storage = "f32", accum = "f32", kind = "sum", axis = -1 : i64, keepdims = true, schedule = "serial", nan_mode = "propagate"} : !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @reduce_keepdims(%x: !llvm.ptr, %o: !llvm.ptr, %a: i64, %b: i64, %c: i64) {
  // expected-error @+1 {{requires an explicit keepdims boolean}}
  tile.reduce_kernel %x, %o, %a, %b, %c {storage = "f32", accum = "f32", kind = "sum", axis = 1 : i64, schedule = "serial", nan_mode = "propagate"} : !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @reduce_schedule(%x: !llvm.ptr, %o: !llvm.ptr, %a: i64, %b: i64, %c: i64) {
  // expected-error @+1 {{requires schedule=serial|cooperative_128}}
  tile.reduce_kernel %x, %o, %a, %b, %c {storage = "f32", accum = "f32", kind = "sum", axis = 1 : i64, keepdims = true, schedule = "warp", nan_mode = "propagate"} : !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @reduce_nan_mode(%x: !llvm.ptr, %o: !llvm.ptr, %a: i64, %b: i64, %c: i64) {
  // expected-error @+1 {{currently requires nan_mode="propagate"}}
  tile.reduce_kernel %x, %o, %a, %b, %c {storage = "f32", accum = "f32", kind = "sum", axis = 1 : i64, keepdims = true, schedule = "serial", nan_mode = "ignore"} : !llvm.ptr, !llvm.ptr, i64, i64, i64
  llvm.return
}

// -----

llvm.func @norm_arity(%x: !llvm.ptr, %o: !llvm.ptr, %r: i64, %c: i64) {
  // expected-error @+1 {{expects source, destination, rows, columns, and epsilon}}
  tile.norm_kernel %x, %o, %r, %c {storage = "f16", accum = "f32", kind = "rmsnorm", axis = -1 : i64, affine = false} : !llvm.ptr, !llvm.ptr, i64, i64
  llvm.return
}

// -----

llvm.func @norm_types(%x: !llvm.ptr, %o: !llvm.ptr, %r: i64, %c: i64, %e: f64) {
  // expected-error @+1 {{requires ptr, ptr, i64, i64, f32 operands}}
  tile.norm_kernel %x, %o, %r, %c, %e {storage = "f16", accum = "f32", kind = "rmsnorm", axis = -1 : i64, affine = false} : !llvm.ptr, !llvm.ptr, i64, i64, f64
  llvm.return
}

// -----

llvm.func @norm_kind(%x: !llvm.ptr, %o: !llvm.ptr, %r: i64, %c: i64, %e: f32) {
  // expected-error @+1 {{requires kind=rmsnorm|layernorm}}
  tile.norm_kernel %x, %o, %r, %c, %e {storage = "f16", accum = "f32", kind = "batchnorm", axis = -1 : i64, affine = false} : !llvm.ptr, !llvm.ptr, i64, i64, f32
  llvm.return
}

// -----

llvm.func @norm_storage(%x: !llvm.ptr, %o: !llvm.ptr, %r: i64, %c: i64, %e: f32) {
  // expected-error @+1 {{requires f16, bf16, or f32 storage and f32 accumulation}}
  tile.norm_kernel %x, %o, %r, %c, %e {storage = "f64", accum = "f32", kind = "rmsnorm", axis = -1 : i64, affine = false} : !llvm.ptr, !llvm.ptr, i64, i64, f32
  llvm.return
}

// -----

llvm.func @norm_affine(%x: !llvm.ptr, %o: !llvm.ptr, %r: i64, %c: i64, %e: f32) {
  // expected-error @+1 {{requires axis=-1 and affine=false}}
  tile.norm_kernel %x, %o, %r, %c, %e {storage = "f16", accum = "f32", kind = "rmsnorm", axis = -1 : i64, affine = true} : !llvm.ptr, !llvm.ptr, i64, i64, f32
  llvm.return
}

// -----

llvm.func @attention_no_bias_flag(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %b: i64, %hq: i64, %hkv: i64, %sq: i64, %sk: i64, %d: i64, %dv: i64) {
  // expected-error @+1 {{requires an explicit bias boolean}}
  tile.attention_kernel %q, %k, %v, %o, %b, %hq, %hkv, %sq, %sk, %d, %dv {storage = "f32", accum = "f32", scale = 0.125 : f32, causal = false, window_left = -1 : i64, window_right = -1 : i64, softcap = 0.0 : f32, dropout_p = 0.0 : f32, dropout_seed = 0 : i64} : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64
  llvm.return
}

// -----

llvm.func @attention_checkpoint(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %b: i64, %hq: i64, %hkv: i64, %sq: i64, %sk: i64, %d: i64, %dv: i64) {
  // expected-error @+1 {{requires lse_checkpoint="recompute" or "saved"}}
  tile.attention_kernel %q, %k, %v, %o, %b, %hq, %hkv, %sq, %sk, %d, %dv {bias = false, storage = "f32", accum = "f32", scale = 0.125 : f32, causal = false, window_left = -1 : i64, window_right = -1 : i64, softcap = 0.0 : f32, dropout_p = 0.0 : f32, dropout_seed = 0 : i64, lse_checkpoint = "maybe"} : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64
  llvm.return
}

// -----

llvm.func @attention_arity(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %b: i64, %hq: i64, %hkv: i64, %sq: i64, %sk: i64, %d: i64, %dv: i64) {
  // expected-error @+1 {{expects Q, K, V, optional bias, O, optional row_lse, B, Hq, Hkv, Sq, Sk, D, and Dv operands}}
  tile.attention_kernel %q, %k, %v, %o, %b, %hq, %hkv, %sq, %sk, %d, %dv {bias = false, storage = "f32", accum = "f32", scale = 0.125 : f32, causal = false, window_left = -1 : i64, window_right = -1 : i64, softcap = 0.0 : f32, dropout_p = 0.0 : f32, dropout_seed = 0 : i64, lse_checkpoint = "saved"} : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64
  llvm.return
}

// -----

llvm.func @attention_scale(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %b: i64, %hq: i64, %hkv: i64, %sq: i64, %sk: i64, %d: i64, %dv: i64) {
  // expected-error @+1 {{requires a finite positive f32 scale}}
  tile.attention_kernel %q, %k, %v, %o, %b, %hq, %hkv, %sq, %sk, %d, %dv {bias = false, storage = "f32", accum = "f32", scale = -1.0 : f32, causal = false, window_left = -1 : i64, window_right = -1 : i64, softcap = 0.0 : f32, dropout_p = 0.0 : f32, dropout_seed = 0 : i64} : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64
  llvm.return
}

// -----

llvm.func @attention_window(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %b: i64, %hq: i64, %hkv: i64, %sq: i64, %sk: i64, %d: i64, %dv: i64) {
  // expected-error @+1 {{requires window_left/window_right >= -1}}
  tile.attention_kernel %q, %k, %v, %o, %b, %hq, %hkv, %sq, %sk, %d, %dv {bias = false, storage = "f32", accum = "f32", scale = 0.125 : f32, causal = false, window_left = -2 : i64, window_right = -1 : i64, softcap = 0.0 : f32, dropout_p = 0.0 : f32, dropout_seed = 0 : i64} : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64
  llvm.return
}

// -----

llvm.func @attention_dropout(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %b: i64, %hq: i64, %hkv: i64, %sq: i64, %sk: i64, %d: i64, %dv: i64) {
  // expected-error @+1 {{requires finite dropout_p in [0, 1)}}
  tile.attention_kernel %q, %k, %v, %o, %b, %hq, %hkv, %sq, %sk, %d, %dv {bias = false, storage = "f32", accum = "f32", scale = 0.125 : f32, causal = false, window_left = -1 : i64, window_right = -1 : i64, softcap = 0.0 : f32, dropout_p = 1.0 : f32, dropout_seed = 0 : i64} : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64
  llvm.return
}

// -----

llvm.func @attention_seed(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %b: i64, %hq: i64, %hkv: i64, %sq: i64, %sk: i64, %d: i64, %dv: i64) {
  // expected-error @+1 {{requires an explicit dropout_seed}}
  tile.attention_kernel %q, %k, %v, %o, %b, %hq, %hkv, %sq, %sk, %d, %dv {bias = false, storage = "f32", accum = "f32", scale = 0.125 : f32, causal = false, window_left = -1 : i64, window_right = -1 : i64, softcap = 0.0 : f32, dropout_p = 0.0 : f32} : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64
  llvm.return
}

// -----

llvm.func @backward_not_deterministic(%do: !llvm.ptr, %q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %dq: !llvm.ptr, %dk: !llvm.ptr, %dv: !llvm.ptr, %b: i64, %hq: i64, %hkv: i64, %sq: i64, %sk: i64, %d: i64, %dvd: i64) {
  // expected-error @+1 {{attention backward requires deterministic=true}}
  tile.attention_backward_kernel %do, %q, %k, %v, %dq, %dk, %dv, %b, %hq, %hkv, %sq, %sk, %d, %dvd {bias = false, storage = "f32", accum = "f32", scale = 0.125 : f32, causal = false, window_left = -1 : i64, window_right = -1 : i64, softcap = 0.0 : f32, dropout_p = 0.0 : f32, dropout_seed = 0 : i64, route = "deterministic_direct", deterministic = false, workspace_bytes = 0 : i64, workspace_owner = "output_element"} : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64
  llvm.return
}

// -----

llvm.func @backward_direct_workspace(%do: !llvm.ptr, %q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %dq: !llvm.ptr, %dk: !llvm.ptr, %dv: !llvm.ptr, %b: i64, %hq: i64, %hkv: i64, %sq: i64, %sk: i64, %d: i64, %dvd: i64) {
  // expected-error @+1 {{deterministic_direct requires workspace_bytes=0}}
  tile.attention_backward_kernel %do, %q, %k, %v, %dq, %dk, %dv, %b, %hq, %hkv, %sq, %sk, %d, %dvd {bias = false, storage = "f32", accum = "f32", scale = 0.125 : f32, causal = false, window_left = -1 : i64, window_right = -1 : i64, softcap = 0.0 : f32, dropout_p = 0.0 : f32, dropout_seed = 0 : i64, route = "deterministic_direct", deterministic = true, workspace_bytes = 64 : i64, workspace_owner = "output_element"} : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64
  llvm.return
}

// -----

llvm.func @backward_route(%do: !llvm.ptr, %q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %dq: !llvm.ptr, %dk: !llvm.ptr, %dv: !llvm.ptr, %b: i64, %hq: i64, %hkv: i64, %sq: i64, %sk: i64, %d: i64, %dvd: i64) {
  // expected-error @+1 {{route must be "deterministic_direct" or "deterministic_split_reduced"}}
  tile.attention_backward_kernel %do, %q, %k, %v, %dq, %dk, %dv, %b, %hq, %hkv, %sq, %sk, %d, %dvd {bias = false, storage = "f32", accum = "f32", scale = 0.125 : f32, causal = false, window_left = -1 : i64, window_right = -1 : i64, softcap = 0.0 : f32, dropout_p = 0.0 : f32, dropout_seed = 0 : i64, route = "atomic", deterministic = true, workspace_bytes = 0 : i64, workspace_owner = "output_element"} : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64
  llvm.return
}

// -----

llvm.func @backward_split_order(%do: !llvm.ptr, %q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %dq: !llvm.ptr, %dk: !llvm.ptr, %dv: !llvm.ptr, %b: i64, %hq: i64, %hkv: i64, %sq: i64, %sk: i64, %d: i64, %dvd: i64) {
  // expected-error @+1 {{split/reduced partials must reduce in ascending split order}}
  tile.attention_backward_kernel %do, %q, %k, %v, %dq, %dk, %dv, %b, %hq, %hkv, %sq, %sk, %d, %dvd {bias = false, storage = "f32", accum = "f32", scale = 0.125 : f32, causal = false, window_left = -1 : i64, window_right = -1 : i64, softcap = 0.0 : f32, dropout_p = 0.0 : f32, dropout_seed = 0 : i64, route = "deterministic_split_reduced", deterministic = true, workspace_bytes = 4096 : i64, workspace_owner = "program_launch", split_count = 2 : i64, reduction_order = array<i64: 1, 0>} : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64
  llvm.return
}
