#include "service/background_decisions.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace tessera::service {

PendingModule::State PendingModule::state() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

absl::Status PendingModule::failure() const {
  absl::MutexLock lock(&mu_);
  return failure_;
}

std::shared_ptr<const jit::CompiledModule> PendingModule::measured() const {
  absl::MutexLock lock(&mu_);
  return measured_;
}

bool PendingModule::Wait(absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto done = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return state_ != State::kPending; };
  return mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
}

void PendingModule::Abandon() {
  absl::MutexLock lock(&mu_);
  abandoned_ = true;
}

bool PendingModule::abandoned() const {
  absl::MutexLock lock(&mu_);
  return abandoned_;
}

void PendingModule::Finish(absl::StatusOr<std::shared_ptr<const jit::CompiledModule>> outcome) {
  absl::MutexLock lock(&mu_);
  if (outcome.ok()) {
    measured_ = *std::move(outcome);
    state_ = State::kDecided;
  } else {
    failure_ = outcome.status();
    state_ = State::kFailed;
  }
}

BackgroundDecisions::~BackgroundDecisions() {
  std::deque<std::shared_ptr<PendingModule>> cancelled;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    cancelled.swap(queue_);
  }
  for (const auto& pending : cancelled) {
    pending->Finish(absl::CancelledError(
        "cancelled: the context was destroyed before the decisions were measured"));
  }
  if (worker_.joinable()) worker_.join();
}

std::shared_ptr<PendingModule> BackgroundDecisions::Submit(std::string source,
                                                           jit::CompileOptions options) {
  options.background_decisions = false;
  auto pending = std::make_shared<PendingModule>(std::move(source), std::move(options));
  absl::MutexLock lock(&mu_);
  queue_.push_back(pending);
  if (!worker_.joinable()) worker_ = std::thread([this] { Work(); });
  return pending;
}

void BackgroundDecisions::Work() {
  for (;;) {
    std::shared_ptr<PendingModule> pending;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // stopping
      pending = std::move(queue_.front());
      queue_.pop_front();
    }
    if (pending->abandoned()) {
      pending->Finish(absl::CancelledError("cancelled: the module was destroyed"));
      continue;
    }
    absl::StatusOr<CompileResult> compiled = service_->Compile(pending->source_, pending->options_);
    if (!compiled.ok()) {
      pending->Finish(compiled.status());
    } else if (compiled->module->PendingDecisions() != 0) {
      pending->Finish(absl::InternalError("the measuring compile left decisions pending"));
    } else {
      pending->Finish(std::move(compiled->module));
    }
  }
}

}  // namespace tessera::service
