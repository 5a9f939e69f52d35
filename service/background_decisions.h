// Background decisions: a compile with CompileOptions::background_decisions returns at once
// with incumbents for the Tile ops it could not decide from the cache; a worker then compiles
// the same source again with measurement on (through the compile service, so the decisions
// and the measured module are cached) and hands the measured module to whoever holds the
// PendingModule. The module swaps it in at its next run (service/loaded_module.h).
#ifndef TESSERA_SERVICE_BACKGROUND_DECISIONS_H_
#define TESSERA_SERVICE_BACKGROUND_DECISIONS_H_

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "jit/compile_options.h"
#include "jit/compiled_module.h"
#include "service/compile_service.h"

namespace tessera::service {

/// One module's background work and its outcome. Thread-safe.
class PendingModule {
 public:
  enum class State { kPending, kDecided, kFailed };

  PendingModule(std::string source, jit::CompileOptions options)
      : source_(std::move(source)), options_(std::move(options)) {}

  State state() const;
  /// Why it failed (kFailed); OK otherwise.
  absl::Status failure() const;
  /// The measured module (kDecided); null before.
  std::shared_ptr<const jit::CompiledModule> measured() const;
  /// Waits until the work is done (decided or failed) or `timeout` passes (InfiniteDuration:
  /// no limit). True when it is done.
  bool Wait(absl::Duration timeout) const;
  /// The module that asked is gone: work not yet started is skipped.
  void Abandon();

 private:
  friend class BackgroundDecisions;
  void Finish(absl::StatusOr<std::shared_ptr<const jit::CompiledModule>> outcome);
  bool abandoned() const;

  const std::string source_;
  const jit::CompileOptions options_;  ///< with background_decisions off
  // (std::mutex and std::condition_variable, not absl's: waiting on an absl::Condition is
  // invisible to the TSan build, whose system abseil is not instrumented.)
  mutable std::mutex mu_;
  mutable std::condition_variable done_;
  State state_ = State::kPending;  // guarded by mu_, as are the three below
  absl::Status failure_;
  std::shared_ptr<const jit::CompiledModule> measured_;
  bool abandoned_ = false;
};

/// One worker thread (started on the first submission) that measures pending modules in
/// order. Measurements of one process never overlap anyway (arbiter/arbiter.h), so one worker
/// loses nothing. Thread-safe.
class BackgroundDecisions {
 public:
  /// `service` must outlive this object.
  explicit BackgroundDecisions(CompileService* service) : service_(service) {}
  /// Work not yet started fails ("cancelled"); the running one is waited for.
  ~BackgroundDecisions();

  /// Queues the measurement of `source` under `options` (background_decisions is turned off
  /// for it) and returns its handle.
  std::shared_ptr<PendingModule> Submit(std::string source, jit::CompileOptions options);

 private:
  void Work();

  CompileService* const service_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<PendingModule>> queue_;  // guarded by mu_, as is stopping_
  bool stopping_ = false;
  std::thread worker_;  ///< started under mu_ by the first Submit
};

}  // namespace tessera::service

#endif  // TESSERA_SERVICE_BACKGROUND_DECISIONS_H_
