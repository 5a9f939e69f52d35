// Operations of the `tessera_nvidia` dialect and the interface they share. Contract: docs/design.md
// §4; user documentation: docs/ir.md.
#ifndef TESSERA_DIALECT_NVIDIAOPS_TD
#define TESSERA_DIALECT_NVIDIAOPS_TD

include "NVIDIADialect.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/Interfaces.td"

def NVIDIA_DelegateOpInterface : OpInterface<"DelegateOpInterface"> {
  let cppNamespace = "::tessera::nvidia";
  let description = [{
    An op that runs code the compiler did not generate. Its contract attributes are the
    arbiter's and the determinism check's inputs.
  }];
  let methods = [
    InterfaceMethod<"The delegate's name in reports: the callee, or `inline_ptx`.",
                    "::llvm::StringRef", "getDelegateName">,
    InterfaceMethod<"The arch envelope, e.g. `sm_80+`.", "::llvm::StringRef", "getArch">,
    InterfaceMethod<"`reference_exact` or `tolerance_bounded`; empty when undeclared.",
                    "::llvm::StringRef", "getDeclaredAccuracy">,
    InterfaceMethod<"`deterministic` or `nondeterministic`; empty when undeclared.",
                    "::llvm::StringRef", "getDeclaredDeterminism">,
    InterfaceMethod<"The absolute bound, if declared.", "::mlir::FloatAttr",
                    "getToleranceAttr">,
    InterfaceMethod<"The relative bound, if declared.", "::mlir::FloatAttr",
                    "getToleranceRelAttr">,
  ];
  let extraSharedClassDeclaration = [{
    /// True when the delegate declares `determinism = "nondeterministic"`.
    bool isNondeterministic() {
      return $_op.getDeclaredDeterminism() == "nondeterministic";
    }
  }];
}

class NVIDIA_Op<string mnemonic, list<Trait> traits = []> :
    Op<NVIDIA_Dialect, mnemonic, traits # [NVIDIA_DelegateOpInterface]>;

def NVIDIA_KernelCallOp : NVIDIA_Op<"kernel_call"> {
  let summary = "call a named CUDA kernel or host C-ABI symbol the compiler did not generate";
  let description = [{
    Seed syntax: operands, the attribute dictionary, `:` and a functional type.

    The contract — `binding`, `provenance`, `accuracy`, `determinism` — is declared whole or
    not at all: the original Tessera's emitter writes calls with only `callee` and `arch`,
    which verify here and are refused by a compile (nothing to arbitrate or lower them by).

    Beyond the contract: a `cuda_kernel` delegate is launched with `grid` and `block` (1 to 3
    sizes each, within CUDA's limits) and returns nothing; a `c_abi` callee outside the ABI
    catalogue declares its C signature with `signature` (one parameter per operand, of the
    operand's type; at most one integer or float result, the op's).

    ```mlir
    tessera_nvidia.kernel_call %a, %b, %c {
        callee = "cublasSgemm_v2", arch = "sm_80+", binding = "c_abi",
        provenance = "vendor_library", accuracy = "tolerance_bounded", tolerance = 1.0e-4,
        determinism = "deterministic", covers = "root_only"}
        : (memref<64x32xf32>, memref<32x16xf32>, memref<64x16xf32>) -> ()
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$args,
                       StrAttr:$callee,
                       StrAttr:$arch,
                       OptionalAttr<NVIDIA_BindingAttr>:$binding,
                       OptionalAttr<NVIDIA_ProvenanceAttr>:$provenance,
                       OptionalAttr<NVIDIA_AccuracyAttr>:$accuracy,
                       OptionalAttr<NVIDIA_DeterminismAttr>:$determinism,
                       OptionalAttr<F64Attr>:$tolerance,
                       OptionalAttr<F64Attr>:$tolerance_rel,
                       OptionalAttr<NVIDIA_CoversAttr>:$covers,
                       OptionalAttr<DenseI64ArrayAttr>:$grid,
                       OptionalAttr<DenseI64ArrayAttr>:$block,
                       OptionalAttr<TypeAttrOf<FunctionType>>:$signature);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = "$args attr-dict `:` functional-type($args, $results)";
  let extraClassDeclaration = [{
    ::llvm::StringRef getDelegateName() { return getCallee(); }
    /// Whether the call declares the contract (binding, provenance, accuracy, determinism).
    bool declaresContract() { return getBinding().has_value(); }
    /// The declared binding, provenance, accuracy, determinism; empty when undeclared.
    ::llvm::StringRef getDeclaredBinding() { return getBinding().value_or(""); }
    ::llvm::StringRef getDeclaredProvenance() { return getProvenance().value_or(""); }
    ::llvm::StringRef getDeclaredAccuracy() { return getAccuracy().value_or(""); }
    ::llvm::StringRef getDeclaredDeterminism() { return getDeterminism().value_or(""); }
    /// What the delegate claims to compute; an absent `covers` reads as `root_only`, the
    /// narrower claim.
    ::llvm::StringRef getCoversOrDefault() { return getCovers().value_or("root_only"); }
  }];
  let hasVerifier = 1;
}

def NVIDIA_InlinePtxOp : NVIDIA_Op<"inline_ptx"> {
  let summary = "PTX text carried in the artifact, with LLVM inline-asm constraints";
  let description = [{
    Lowered only in device code: in a `tile.map` body or a `gpu.func` kernel (the verifier
    accepts it anywhere, as the original's Target IR places it before outlining; a compile
    refuses it outside device code). `constraints` lists one
    entry per result (`=` and a register class), then one per operand (a register class), then
    optional `~{memory}` clobbers; the classes are `h` (i16, f16, bf16), `r` (i32), `l` (i64),
    `f` (f32) and `d` (f64). In `ptx`, `$0`, `$1`, … (or `${0}`) name the results then the
    operands and `$$` is a literal `$`.

    ```mlir
    %y = tessera_nvidia.inline_ptx %x {
        ptx = "ex2.approx.ftz.f32 $0, $1;", constraints = "=f,f", arch = "sm_75+",
        accuracy = "tolerance_bounded", tolerance_rel = 2.0e-7,
        determinism = "deterministic"} : (f32) -> f32
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$args,
                       StrAttr:$ptx,
                       StrAttr:$constraints,
                       StrAttr:$arch,
                       NVIDIA_AccuracyAttr:$accuracy,
                       NVIDIA_DeterminismAttr:$determinism,
                       OptionalAttr<F64Attr>:$tolerance,
                       OptionalAttr<F64Attr>:$tolerance_rel,
                       UnitAttr:$has_side_effects);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = "$args attr-dict `:` functional-type($args, $results)";
  let extraClassDeclaration = [{
    ::llvm::StringRef getDelegateName() { return "inline_ptx"; }
    ::llvm::StringRef getDeclaredAccuracy() { return getAccuracy(); }
    ::llvm::StringRef getDeclaredDeterminism() { return getDeterminism(); }
  }];
  let hasVerifier = 1;
}

// The rest of the original Tessera's emitted `tessera_nvidia` surface, registered so that its
// Target IR parses and verifies (tessera-opt); they carry no computation, and a compile refuses
// them (the IR allowlist).

def NVIDIA_FuncOp : Op<NVIDIA_Dialect, "func", [NoTerminator]> {
  let summary = "the original's Target IR wrapper holding a kernel-contract body (generic form)";
  let arguments = (ins OptionalAttr<StrAttr>:$sym_name);
  let regions = (region AnyRegion:$body);
}

class NVIDIA_MarkerOp<string mnemonic, string summaryText> : Op<NVIDIA_Dialect, mnemonic> {
  let summary = summaryText;
  let arguments = (ins Variadic<AnyType>:$args);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = "$args attr-dict `:` functional-type($args, $results)";
}

def NVIDIA_CudaKernelOp : NVIDIA_MarkerOp<"cuda_kernel",
    "the original's CUDA kernel artifact marker">;
def NVIDIA_ProfilerProbeOp : NVIDIA_MarkerOp<"profiler_probe",
    "the original's profiler probe marker (a device-timer instrumentation point)">;

#endif  // TESSERA_DIALECT_NVIDIAOPS_TD
