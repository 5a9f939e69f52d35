// The `tessera_nvidia` dialect: delegation to code the compiler did not generate (vendor library
// entries such as cuBLAS, hand-written kernels, inline PTX), with the verified delegation
// contract of docs/design.md §4.
#ifndef TESSERA_DIALECT_NVIDIADIALECT_TD
#define TESSERA_DIALECT_NVIDIADIALECT_TD

include "mlir/IR/OpBase.td"

def NVIDIA_Dialect : Dialect {
  let name = "tessera_nvidia";
  let cppNamespace = "::tessera::nvidia";
  let summary = "Tessera delegation ops: kernel_call and inline_ptx";
}

// A closed set of string values. The seed IR spells enum values as strings
// (`binding = "c_abi"`), so the attribute stays a StringAttr and the constraint closes the set;
// an unknown value fails with "attribute 'binding' failed to satisfy constraint: ...".
class NVIDIA_StrEnum<list<string> values> : Attr<
    And<[CPred<"::llvm::isa<::mlir::StringAttr>($_self)">,
         Or<!foreach(value, values,
                     CPred<"::llvm::cast<::mlir::StringAttr>($_self).getValue() == \""
                           # value # "\"">)>]>,
    "string attribute whose value is one of: " # !interleave(values, ", ")> {
  let storageType = "::mlir::StringAttr";
  let returnType = "::llvm::StringRef";
  let valueType = NoneType;
  let convertFromStorage = "$_self.getValue()";
  let constBuilderCall = "$_builder.getStringAttr($0)";
}

def NVIDIA_BindingAttr : NVIDIA_StrEnum<["cuda_kernel", "c_abi"]>;
def NVIDIA_ProvenanceAttr : NVIDIA_StrEnum<["vendor_library", "handwritten_kernel"]>;
def NVIDIA_AccuracyAttr : NVIDIA_StrEnum<["reference_exact", "tolerance_bounded"]>;
def NVIDIA_DeterminismAttr : NVIDIA_StrEnum<["deterministic", "nondeterministic"]>;
def NVIDIA_CoversAttr : NVIDIA_StrEnum<["root_only", "whole_region"]>;

#endif  // TESSERA_DIALECT_NVIDIADIALECT_TD
