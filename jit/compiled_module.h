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
#include "runtime/entry_signature.h"
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

/// The entry signature types live in the runtime (invoke checks against them); the compiler
/// names them here.
using runtime::ElementType;
using runtime::EntryArgument;
using runtime::EntryFunction;
using runtime::SizeConstraint;
using runtime::SizeRelation;
using runtime::SizeSource;

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
  /// `parse`, `arbitrate`, every pipeline stage; for nvptx `ptx` (LLVM optimisation and the
  /// NVPTX backend), `cubin` (nvJitLink) and `host-object` (the launch code); for the host
  /// `host-translate` (to LLVM IR), `host-optimize`, `host-codegen` and `host-load`.
  /// Compile-time only: a module loaded from the compile cache has none.
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
