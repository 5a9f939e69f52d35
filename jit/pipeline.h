// The lowering pipelines, as named stages so a compile can dump the IR after each one and
// tessera-opt can run them (--tessera-lower-to-host, --tessera-lower-to-nvvm).
#ifndef TESSERA_JIT_PIPELINE_H_
#define TESSERA_JIT_PIPELINE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mlir/Pass/PassManager.h"

namespace tessera::jit {

/// What the pipelines need to know (a subset of CompileOptions, free of abseil types so that
/// tessera-opt can build them from pass-pipeline options).
struct PipelineOptions {
  std::string arch = "sm_90";
  int opt_level = 2;
  bool deterministic = false;
  std::string cuda_toolkit = "/usr/local/cuda";
  /// Host: the widest vector register of the CPU code is generated for (runtime::HostTarget); 0 for
  /// this machine's.
  int64_t host_vector_bits = 0;
  /// nvptx: convert-gpu-to-nvvm and gpu-to-llvm with their pattern sets built once per pass
  /// manager (jit/codegen/gpu_conversions.cc); false runs MLIR's passes, which build them on
  /// every run (the reference tests/jit/gpu_conversions_test compares against).
  bool frozen_gpu_conversions = true;
};

/// One named step of a pipeline.
struct PipelineStage {
  std::string name;
  std::function<void(mlir::OpPassManager&)> build;
};

/// The contract checks every compile starts with, before any lowering (today: the
/// determinism check, so a nondeterministic delegate is refused before anything else).
PipelineStage ContractStage(const PipelineOptions& options);

/// Host lowering: tile-to-loops → llvm (LLVM dialect, ready for translation and ORC).
std::vector<PipelineStage> HostStages(const PipelineOptions& options);

/// nvptx lowering: tile-to-gpu (kernels outlined into gpu.modules) → nvvm (device code in the
/// NVVM/LLVM dialects) → host-llvm (launching code) → ptx (gpu.binary objects holding PTX,
/// the libdevice functions the kernels call linked in; see jit/codegen/ptx_codegen.cc).
std::vector<PipelineStage> NvptxStages(const PipelineOptions& options);

/// How many times this process has built a frozen GPU conversion's pattern set
/// (jit/codegen/gpu_conversions.cc): once per pass manager, plus once per run that could not use
/// it (a gpu.module with another index width, or dialects loaded since). Thread-safe.
uint64_t FrozenGpuConversionBuilds();

/// Registers --tessera-lower-to-host, --tessera-lower-to-nvvm and the passes only the
/// pipelines use (--tessera-gpu-module-to-ptx) with the pass registry.
void RegisterPipelines();

}  // namespace tessera::jit

#endif  // TESSERA_JIT_PIPELINE_H_
