#include "service/background_decisions.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tessera::service {

PendingModule::State PendingModule::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

absl::Status PendingModule::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

std::shared_ptr<const jit::CompiledModule> PendingModule::measured() const {
  std::lock_guard<std::mutex> lock(mu_);
  return measured_;
}

bool PendingModule::Wait(absl::Duration timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  auto done = [this] { return state_ != State::kPending; };
  // (A century is no limit either; wait_for would overflow the clock with it.)
  if (timeout >= absl::Hours(24 * 365 * 100)) {
    done_.wait(lock, done);
    return true;
  }
  return done_.wait_for(lock, absl::ToChronoNanoseconds(std::max(timeout, absl::ZeroDuration())),
                        done);
}

void PendingModule::Abandon() {
  std::lock_guard<std::mutex> lock(mu_);
  abandoned_ = true;
}

bool PendingModule::abandoned() const {
  std::lock_guard<std::mutex> lock(mu_);
  return abandoned_;
}

void PendingModule::Finish(absl::StatusOr<std::shared_ptr<const jit::CompiledModule>> outcome) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (outcome.ok()) {
      measured_ = *std::move(outcome);
      state_ = State::kDecided;
    } else {
      failure_ = outcome.status();
      state_ = State::kFailed;
    }
  }
  done_.notify_all();
}

BackgroundDecisions::~BackgroundDecisions() {
  std::deque<std::shared_ptr<PendingModule>> cancelled;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cancelled.swap(queue_);
  }
  wake_.notify_all();
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(pending);
    if (!worker_.joinable()) worker_ = std::thread([this] { Work(); });
  }
  wake_.notify_one();
  return pending;
}

void BackgroundDecisions::Work() {
  for (;;) {
    std::shared_ptr<PendingModule> pending;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
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
