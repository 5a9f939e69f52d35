// Per-thread invocation scopes.
#include "runtime/invocation.h"

#include <utility>

namespace tessera::runtime {
namespace {

thread_local InvocationScope* current_scope = nullptr;

}  // namespace

int CurrentInvocationOrdinal() { return current_scope != nullptr ? current_scope->ordinal() : 0; }

CUstream CurrentInvocationStream() {
  return current_scope != nullptr ? current_scope->stream() : nullptr;
}

DelegateRuntime* CurrentInvocationDelegates() {
  return current_scope != nullptr ? current_scope->delegates() : nullptr;
}

bool InvocationFailed() { return current_scope != nullptr && !current_scope->status().ok(); }

void RecordFailure(absl::Status status) {
  // Outside any scope a failure has nowhere to go, and is also harmless (an unload at teardown).
  if (current_scope != nullptr) current_scope->Record(std::move(status));
}

InvocationScope::InvocationScope(int ordinal, CUstream stream, DelegateRuntime* delegates)
    : ordinal_(ordinal), stream_(stream), delegates_(delegates), previous_(current_scope) {
  current_scope = this;
}

InvocationScope::~InvocationScope() { current_scope = previous_; }

void InvocationScope::Record(absl::Status status) {
  if (status_.ok() && !status.ok()) status_ = std::move(status);
}

}  // namespace tessera::runtime
