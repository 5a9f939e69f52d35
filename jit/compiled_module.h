// The result of one compile: device images (PTX + cubin) and/or JIT'd host code, plus what the
// compile saw on the way (stage dumps).
#ifndef TESSERA_JIT_COMPILED_MODULE_H_
#define TESSERA_JIT_COMPILED_MODULE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "arbiter/decision_record.h"
#include "jit/compile_options.h"
#include "runtime/host_executable.h"

namespace tessera::jit {

/// One gpu.module compiled for the device: its PTX and the cubin nvJitLink made from it (empty
/// when CompileOptions::link_cubin is off).
struct DeviceImage {
  std::string module_name;
  std::vector<std::string> kernels;  ///< `.entry` names, in definition order
  std::string ptx;
  std::string cubin;
};

/// A scalar or memref element type, as a caller sees it.
struct ElementType {
  /// kFloat8E4M3FN, kFloat8E5M2: memref elements only (tile.matmul operands), never scalars.
  enum class Class { kFloat, kBFloat, kInt, kIndex, kFloat8E4M3FN, kFloat8E5M2 };
  Class type_class = Class::kFloat;
  int bits = 32;  ///< 1 for i1 (stored as one byte in memory)
};

/// One entry-function argument a caller must pass.
struct EntryArgument {
  enum class Kind { kMemRef, kScalar };
  Kind kind = Kind::kScalar;
  std::string name;  ///< the SSA name in the source without `%`, e.g. "x" (empty if unknown)
  std::string type;  ///< the MLIR type as text, e.g. "memref<?x10xf32>" or "f32"
  ElementType element;
  int64_t rank = 0;            ///< memrefs only
  std::vector<int64_t> shape;  ///< memrefs only; -1 for a dynamic size
  bool written = false;        ///< memrefs only: the entry may write it (an output)
  /// memrefs only, one per dimension: the integer scalar argument the shape contract says the
  /// size equals (e.g. the original's launch ABI: `tessera.dims_from`), or -1.
  std::vector<int64_t> size_from;
};

/// Where a size an op reads comes from, in terms of what the caller passes.
struct SizeSource {
  enum class Kind {
    kDimension,  ///< dimension `dim` of tensor argument `argument`
    kScalar,     ///< the value of integer scalar argument `argument`
    kConstant,   ///< the constant `value`
  };
  Kind kind = Kind::kConstant;
  int64_t argument = 0;
  int64_t dim = 0;
  int64_t value = 0;

  friend bool operator==(const SizeSource& a, const SizeSource& b) {
    return a.kind == b.kind && a.argument == b.argument && a.dim == b.dim && a.value == b.value;
  }
};

/// How a constrained size relates to the one it is checked against.
enum class SizeRelation {
  kEqual,       ///< size == other
  kBroadcasts,  ///< size == other, or size == 1 (NumPy broadcasting to `other`)
  kTwice,       ///< size == 2 * other (a feature axis split into pairs)
  kMultipleOf,  ///< size is a multiple of other (0 only of 0): grouped heads
  kAtMost,      ///< size <= other: an index that must fit its integer type
};

/// One rule of an entry's shape contract: `size` must relate to `must_equal` by `relation` at
/// run time, because `reason` (e.g. "tile.map at elementwise.mlir:4:3 needs equal shapes").
/// Derived by the compiler from every Tile op's semantics (jit/admission/shape_contract.h); checked
/// by invoke before anything runs (jit/admission/entry_contract.h).
struct SizeConstraint {
  SizeSource size;
  SizeSource must_equal;
  std::string reason;
  SizeRelation relation = SizeRelation::kEqual;
};

/// A public entry function: name, signature and shape contract.
struct EntryFunction {
  std::string name;
  std::vector<EntryArgument> arguments;
  std::vector<EntryArgument> results;  ///< scalar results (at most one)
  bool deterministic = false;
  std::vector<SizeConstraint> size_constraints;
};

/// A compiled module. Immutable after Compile returns; thread-safe to read and to call into.
struct CompiledModule {
  CompileOptions options;
  std::vector<EntryFunction> entries;
  /// The c_abi callees the host code calls (resolved in CompileOptions::delegates when the code
  /// is JIT-linked) and the identities of every delegate used.
  std::vector<std::string> delegate_symbols;
  std::vector<std::string> delegate_identities;
  /// host: the message of every run-time check in the code, by id (jit/codegen/runtime_checks.h):
  /// `file:line:col: what failed`.
  std::vector<std::string> runtime_checks;
  /// One decision record per Tile op, in program order (CompileOptions::arbitrate).
  std::vector<arbiter::DecisionRecord> decisions;
  /// Each entry's declared `tessera.accuracy` (function name → budget). Compile-time only:
  /// the composed accuracy check reads it; the compile cache does not keep it.
  std::map<std::string, arbiter::AccuracyBudget> declared_accuracy;
  /// How many decisions are left to the background (CompileOptions::background_decisions).
  size_t PendingDecisions() const {
    size_t pending = 0;
    for (const arbiter::DecisionRecord& record : decisions) {
      pending += record.source == arbiter::kPendingSource;
    }
    return pending;
  }
  /// The IR after each stage, when CompileOptions::dump_stages: (stage name, IR text).
  std::vector<std::pair<std::string, std::string>> stages;
  /// How long each step of this compile took, in order (step name, wall milliseconds):
  /// `parse`, `arbitrate`, every pipeline stage, and for nvptx `ptx` (LLVM optimisation and the
  /// NVPTX backend), `cubin` (nvJitLink) and `host-object`. Compile-time only: a module loaded
  /// from the compile cache has none.
  std::vector<std::pair<std::string, double>> stage_ms;

  /// The host code as LLVM IR, before LLVM's optimisations: the entry functions (host), or the
  /// code that loads the device images and launches their kernels (nvptx). For reading
  /// (`--emit llvm`); what runs is host_object.
  std::string host_llvm_ir;

  /// The host code as machine code for this machine's CPU (generated once, at compile time;
  /// the compile cache stores it, so loading a cached module generates no code).
  runtime::HostObject host_object;

  /// nvptx: the device images.
  std::vector<DeviceImage> device_images;

  /// host: the JIT'd entry points.
  std::unique_ptr<runtime::HostExecutable> host;
};

}  // namespace tessera::jit

#endif  // TESSERA_JIT_COMPILED_MODULE_H_
