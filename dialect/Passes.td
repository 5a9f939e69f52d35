// Passes over Tessera IR.
#ifndef TESSERA_DIALECT_PASSES_TD
#define TESSERA_DIALECT_PASSES_TD

include "mlir/Pass/PassBase.td"

def VerifyDeterminism : Pass<"tessera-verify-determinism", "::mlir::ModuleOp"> {
  let summary = "reject nondeterministic delegates and raw kernels a deterministic function reaches";
  let description = [{
    Inside a function marked `tessera.deterministic` (or in every function, with
    `all-functions`, which is what a deterministic compile requests), any
    `tessera_nvidia.kernel_call` or `tessera_nvidia.inline_ptx` declaring
    `determinism = "nondeterministic"` is an error — also in the functions it reaches through
    `func.call` (the report names the call chain). A raw `gpu.func` kernel it launches (in a
    deterministic compile: every raw kernel) must declare
    `tessera.determinism = "deterministic"`; a kernel that declares so must not contain a
    nondeterministic delegate. Every offender is reported (function, op location, callee,
    declared determinism, remedy), not only the first, and the pass fails before anything
    could be dispatched.
  }];
  let options = [
    Option<"allFunctions", "all-functions", "bool", /*default=*/"false",
           "treat every function as deterministic (a deterministic compile)">,
  ];
}

def ImportLaunchKernels : Pass<"tessera-import-launch-kernels", "::mlir::ModuleOp"> {
  let summary = "rewrite the original Tessera's launch-level Tile kernels into this project's Tile ops";
  let description = [{
    Each `llvm.func` (with `nvvm.kernel`, `gpu.kernel` or neither) or `func.func` holding one
    `tile.matmul_kernel`, `tile.reduce_kernel`, `tile.softmax_kernel` or `tile.norm_kernel`
    becomes a `func.func` of the same name and argument order whose body is the equivalent
    `tile.matmul`, `tile.reduce`, `tile.softmax` or `tile.norm`: every `!llvm.ptr` argument
    becomes a dense row-major memref of the operand's logical shape and storage type (matmul
    A [M,K] and B [N,K] with `transpose_b`, bias f32 [N], residual f32 [M,N], D [M,N]; reduce
    X [outer, axis, inner] and O f32 [outer, inner]; softmax and norm [rows, columns]), every
    i64 dimension stays an i64 argument, and each memref argument carries
    `tessera.dims_from = array<i64: ...>` (the i64 argument each of its dimensions equals) and
    `tessera.launch_role`. What the original's NVIDIA lowering refuses, and what this project
    cannot compute yet (fp8, int8 and f64 matmuls, the attention kernels), is a located error
    naming the op. The JIT runs this first, before the IR allowlist. docs/original-ir.md.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def LowerTileToLoops : Pass<"tessera-lower-tile-to-loops", "::mlir::ModuleOp"> {
  let summary = "lower Tile ops to scf loops over memref loads and stores (the host target)";
  let description = [{
    Each Tile op becomes a loop nest with the same element semantics as the device lowering
    (dialect/conversion/TileSemantics.h): f32 accumulation, a fixed reduction order (over
    the innermost axis: 32 vector lanes, each folding every 32nd element in order, then a
    pairwise tree; over another axis: each output in index order, streamed row by row),
    max-subtracted softmax, the matmul epilogue and numeric policy. A matmul accumulating in
    f32 packs B into panels of NR columns and each MR-row panel of A, and computes each MR x NR
    register tile over the whole of K (each element still sums its products in ascending K
    order from zero), then applies the epilogue; batched matmuls run it per batch. The register
    tile, and for f32 operands the packing and the row kernel, are calls of the runtime's
    microkernels (`tessera_uk_matmul_f32_*`, runtime/ukernels/matmul_f32.h), compiled once with
    the project rather than with every module. norm,
    attention (an online softmax over blocks of 32 keys, K packed when it pays) and rope work
    row by row; argmax/argmin carry (value, index) lanes. The outer loop of each op
    (rows, column blocks, query rows) is outlined into a private function marked
    `tessera_jit.parallel_body`, which the host pipeline runs on the runtime's threads; every
    output element is computed by one iteration, so the thread count never changes a result.
    The host target is the reference the arbiter trusts.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"256",
           "the widest vector register of the target CPU (128, 256 or 512): sizes the matmul's "
           "register tile, never a result">,
  ];
}

def LowerTileToGpu : Pass<"tessera-lower-tile-to-gpu", "::mlir::func::FuncOp"> {
  let summary = "lower each Tile op to one gpu.launch with an explicit schedule";
  let description = [{
    One kernel launch per Tile op, correct for any shape (dynamic, ragged, size 1, empty —
    an empty problem launches nothing; grids are clamped to CUDA's limits and the blocks loop
    over the rest). map and rope: one thread per element (pair); reduce, softmax, norm: one
    256-thread block per output row with a fixed shared-memory tree (deterministic);
    attention: one block per query row, an online softmax over blocks of 256 keys; matmul:
    16x16 output tiles staged through shared memory, K accumulated in order, batches on the
    grid's z axis. An op carrying `tessera_jit.schedule` (the arbiter's choice of a kernel
    variant: vectorized map, warp-per-row reduce/softmax, online softmax, mma.sync matmul) is
    lowered by that variant. Kernels are named `<function>_<op>_<n>`, each in its own
    gpu.module `tessera_kernels_<kernel>`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"",
           "the GPU the kernels are for (e.g. sm_90): a schedule the arch cannot run (mma.sync "
           "before sm_80) fails the pass; empty: not checked">,
  ];
}

def LowerInlinePtx : Pass<"tessera-lower-inline-ptx"> {
  let summary = "lower tessera_nvidia.inline_ptx to llvm.inline_asm in device code";
  let description = [{
    Each `tessera_nvidia.inline_ptx` becomes an `llvm.inline_asm` carrying its `ptx` and
    `constraints` unchanged (the verifier has checked both); `has_side_effects` makes the asm
    side-effecting, so it is neither reordered across memory operations nor removed. Several
    results come back as an LLVM struct and are extracted. Run on gpu.modules, before
    convert-gpu-to-nvvm.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def AlignWorkgroupBuffers : Pass<"tessera-align-workgroup-buffers"> {
  let summary = "align every kernel's workgroup (shared-memory) buffers to 16 bytes";
  let description = [{
    Sets `llvm.align` on each workgroup attribution of every gpu.func in the module to at
    least 16, the alignment a 16-byte `cp.async`, an `ldmatrix` row or a 128-bit shared
    access needs (without it
    convert-gpu-to-nvvm aligns a buffer to its element, 2 bytes for f16). Run after
    gpu-kernel-outlining, before convert-gpu-to-nvvm.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ReserveMmaRegisters : Pass<"tessera-reserve-mma-registers"> {
  let summary = "let tensor-core kernels keep their accumulators in registers";
  let description = [{
    Sets `nvvm.minctasm = 1` (PTX `.minnctapersm 1`) on every gpu.func that issues
    `nvvm.mma.sync`: one resident block per SM is enough, so ptxas does not cap the registers
    of a kernel holding 32 f32 accumulators per thread for occupancy (it chose 96 and spilled
    on sm_80 without it). Other kernels keep ptxas's own choice. Run after
    gpu-kernel-outlining.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def Expm1Log1pToLibm : Pass<"tessera-expm1-log1p-to-libm", "::mlir::ModuleOp"> {
  let summary = "math.expm1 and math.log1p left by the approximations become libm calls (host)";
  let description = [{
    The host's approximations replace f32 `expm1` and `log1p`; the rest (f64) would reach
    MathToLLVM, which lowers them to `exp(x) - 1` and `log(1 + x)`: every bit is lost near 0
    (`expm1(1e-20)` gave 0, `expm1(-0.0)` gave +0.0). Upstream MathToLibm's patterns turn
    them into calls of libm's `expm1` and `log1p` (vectors element by element); every other
    op is left alone. Run after `tessera-approximate-math`, before `convert-math-to-llvm`.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::vector::VectorDialect"];
}

def ExactFloatOps : Pass<"tessera-exact-float-ops"> {
  let summary = "float ops whose upstream lowering rounds twice or is missing, made exact";
  let description = [{
    Runs before the narrow-float legalization on both targets:
    * `math.fma` on f16/bf16: the product is exact in f64, the sum is rounded to odd there
      (TwoSum), then rounded once to the narrow type (upstream extends to an f32 fma and
      rounds twice: bf16 `fma(9, 29, 2^-30)` gave 260, not 262);
    * `arith.truncf` f64 → f16/bf16 and `arith.sitofp`/`uitofp` to bf16: one rounding, through
      an f32 rounded to odd (LLVM converts an integer to bf16 through f32 and rounds twice:
      `2^30 + 2^22 + 1` gave `2^30`); 64-bit integers are split into two exact halves whose
      f64 sum is rounded to odd;
    * `math.isinf`, `math.isnormal` (no MathToLLVM lowering in MLIR 22) as compares in the
      operand's own type;
    * `math.atan2` of constants folded as libm computes it (MLIR 22's folder gives NaN for
      atan2(±0, ±0));
    * `arith.cmpf false` and `true` as constants (MLIR 22.1's canonicalizer crashes on them
      when the left operand is an integer converted to float and the right a constant).
    A value rounded to odd in a format of at least 2p + 2 bits, then to nearest at p bits, is
    the correctly rounded p-bit result (Boldo & Melquiond, IEEE TC 2008).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def LegalizeNarrowFloats : Pass<"tessera-legalize-narrow-floats"> {
  let summary = "f16/bf16 math in f32 and (host) bf16 arithmetic in f32, rounded after every op";
  let description = [{
    Every math function on f16 or bf16 (scalars or vectors) becomes the same function on f32
    between an `arith.extf` of its operands and an `arith.truncf` of its results; with
    `emulate-bf16-arithmetic` (the host), so does every arith/vector operation on bf16. Each
    result is rounded to its narrow type before it is used — the correctly rounded narrow
    result of each arithmetic operation, as on a GPU with bf16 arithmetic. The patterns are
    upstream `math-extend-to-supported-types`' and `arith-emulate-unsupported-floats`'; their
    `extf` and `truncf` both carry `fastmath<contract>`, which lets `arith.extf`'s folder drop an
    `extf(truncf(x))` pair, so a chain of narrow operations was computed in f32 and rounded once
    (bf16 `1 + 2^-8 + 2^-8` gave 1.0078125, not 1.0; f16 `cos(exp2(21.27))` gave -0.82, not
    `cos(inf)` = NaN). Here the widening `extf` carries no fast-math flag, so no later fold
    removes a rounding.
  }];
  let options = [
    Option<"emulateBf16Arithmetic", "emulate-bf16-arithmetic", "bool", /*default=*/"true",
           "bf16 arithmetic in f32 too (targets without bf16 arithmetic, or whose bf16 "
           "conversions flush subnormals)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::vector::VectorDialect"];
}

def AttachLoopAnnotations : Pass<"tessera-attach-loop-annotations"> {
  let summary = "make the loop annotations scf.for carried the LLVM latch branches' own";
  let description = [{
    A loop annotation set on an `scf.for` (`llvm.loop_annotation`, for example the
    interleaving the host lowering asks of a hot loop) reaches its latch branch as a discardable
    attribute when `convert-scf-to-cf` and the LLVM conversion run, where the translation to
    LLVM IR ignores it. This pass moves it into each `llvm.br`'s and `llvm.cond_br`'s own
    `loop_annotation`, which becomes the loop's `!llvm.loop` metadata.
  }];
}

def ExpandArith : Pass<"tessera-expand-arith"> {
  let summary = "expand the arith ops LLVM has no lowering for, keeping IEEE min/max exact";
  let description = [{
    What upstream `arith-expand{include-bf16}` does for the Tessera targets — bf16 `extf` and
    `truncf` become integer bit operations (round to nearest even, subnormals kept, NaN kept
    quiet) and `ceildivsi`/`ceildivui`/`floordivsi` become plain integer arithmetic — except
    that `maximumf`/`minimumf` are left to the LLVM lowering (`llvm.maximum`/`llvm.minimum`,
    which order -0.0 below +0.0). Upstream expands them into a compare and a select, so
    `maximumf(+0.0, -0.0)` returned -0.0. (The host pipeline runs
    `tessera-legalize-narrow-floats` first, so bf16 arithmetic is f32 arithmetic between
    explicit conversions and no CPU instruction rounds to bf16: AVX512-BF16's conversion
    flushes subnormal results to zero.) Also: `arith.extf` from `f8E4M3FN` or `f8E5M2` (LLVM
    has no fp8 type; a memref of them is a memref of bytes) becomes integer operations that
    assemble the exact f32 (subnormals through an exact integer-to-float conversion, NaN
    quiet, E5M2's infinities kept), then an exact conversion to the wider target type.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def ApproximateMath : Pass<"tessera-approximate-math"> {
  let summary = "replace math functions by vectorizable polynomial approximations (host)";
  let description = [{
    f32 math functions (scalars or vectors) become polynomial approximations: plain
    arithmetic with fma that LLVM's loop vectorizer turns into SIMD code, the same code in a
    vector body and a scalar tail — instead of one libm call per element. Only the functions
    whose error `tests/jit/math_accuracy_test.cc` measures within 4 ulp over a sweep of the
    whole f32 range (every 251st bit pattern), with special values exact, are approximated — exp, expm1, tanh, erf (own), log, log2, log1p
    (MLIR's) — docs/compiler.md lists the measured errors; the others keep calling libm.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

#endif  // TESSERA_DIALECT_PASSES_TD
