// Single flight: the first caller for a key does the work; callers that ask for the same key
// meanwhile wait for its result instead of doing the work again (as Go's singleflight).
#ifndef TESSERA_CACHE_SINGLE_FLIGHT_H_
#define TESSERA_CACHE_SINGLE_FLIGHT_H_

#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace tessera::cache {

/// Thread-safe.
template <typename Result>
class SingleFlight {
 public:
  /// `work()`'s result for `key`: computed by this call (`*leader` true) or by the call already
  /// in flight for the same key (`*leader` false). If `work` throws, the flight ends: the
  /// leader and every waiter get the exception, and the next call for the key starts afresh.
  template <typename Work>
  Result Do(const std::string& key, Work&& work, bool* leader) {
    return Do(key, std::forward<Work>(work), leader, [] {});
  }

  /// The same; a waiter calls `before_wait()` first (to give up what only the work needs).
  template <typename Work, typename BeforeWait>
  Result Do(const std::string& key, Work&& work, bool* leader, BeforeWait&& before_wait) {
    std::shared_ptr<Flight> flight;
    {
      absl::MutexLock lock(&mu_);
      std::shared_ptr<Flight>& slot = in_flight_[key];
      *leader = slot == nullptr;
      if (*leader) slot = std::make_shared<Flight>();
      flight = slot;
    }
    if (!*leader) {
      before_wait();
      flight->done.WaitForNotification();
      if (flight->error != nullptr) std::rethrow_exception(flight->error);
      return *flight->result;
    }
    try {
      flight->result = std::make_unique<Result>(work());
    } catch (...) {
      flight->error = std::current_exception();
    }
    {
      absl::MutexLock lock(&mu_);
      in_flight_.erase(key);
    }
    flight->done.Notify();
    if (flight->error != nullptr) std::rethrow_exception(flight->error);
    return *flight->result;
  }

 private:
  struct Flight {
    absl::Notification done;
    std::unique_ptr<Result> result;
    std::exception_ptr error;
  };
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Flight>> in_flight_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tessera::cache

#endif  // TESSERA_CACHE_SINGLE_FLIGHT_H_
