// Compile sessions: a pooled MLIRContext with every dialect and translation the pipelines use,
// plus the pass managers already built on it, and parsing Tessera IR into one.
#ifndef TESSERA_JIT_COMPILE_SESSION_H_
#define TESSERA_JIT_COMPILE_SESSION_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "jit/diagnostics.h"
#include "jit/pipeline.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"

namespace tessera::jit {

/// An MLIRContext plus the pass managers of every pipeline stage already built on it. Building
/// a pass manager freezes the pattern sets of its conversion and canonicalization passes,
/// which costs more than running them on a small module, so sessions are pooled and reused.
/// Thread-compatible: one compile uses a session at a time.
class CompileSession {
 public:
  CompileSession();

  mlir::MLIRContext& context() { return context_; }

  /// The pass manager for `stage` under `key` (everything that changes what the stage adds),
  /// built on first use.
  mlir::PassManager& StageManager(const std::string& key, const PipelineStage& stage);

  /// Counts a compile; true when the session has served its share and should be dropped.
  bool Retire();

 private:
  mlir::MLIRContext context_;
  std::map<std::string, std::unique_ptr<mlir::PassManager>> managers_;
  int compiles_ = 0;
};

/// Idle sessions, shared by all compiles. Thread-safe.
class SessionPool {
 public:
  std::unique_ptr<CompileSession> Acquire();
  void Release(std::unique_ptr<CompileSession> session);

 private:
  absl::Mutex mu_;
  std::vector<std::unique_ptr<CompileSession>> idle_ ABSL_GUARDED_BY(mu_);
};

/// The process's pool.
SessionPool& Sessions();

/// How many sources ParseSource has parsed in this process (also declared in jit/compiler.h,
/// for the service's tests).
uint64_t ParseCount();

/// Parses `source` in `context` through the guards every entry point shares
/// (jit/admission/guarded_parse.h); a parse or verification failure carries every diagnostic that
/// `diagnostics` collected.
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> ParseSource(
    mlir::MLIRContext& context, const DiagnosticCollector& diagnostics, absl::string_view source,
    const std::string& source_name);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_COMPILE_SESSION_H_
