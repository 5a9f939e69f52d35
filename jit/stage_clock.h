// Wall time of one compile step, recorded into CompiledModule::stage_ms.
#ifndef TESSERA_JIT_STAGE_CLOCK_H_
#define TESSERA_JIT_STAGE_CLOCK_H_

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace tessera::jit {

using StageTimes = std::vector<std::pair<std::string, double>>;

/// Appends (name, milliseconds since construction) to `into` when it goes out of scope, so a
/// step that fails is timed too.
class StageClock {
 public:
  StageClock(StageTimes& into, std::string name)
      : into_(into), name_(std::move(name)), start_(std::chrono::steady_clock::now()) {}
  ~StageClock() {
    into_.emplace_back(std::move(name_), std::chrono::duration<double, std::milli>(
                                             std::chrono::steady_clock::now() - start_)
                                             .count());
  }
  StageClock(const StageClock&) = delete;
  StageClock& operator=(const StageClock&) = delete;

 private:
  StageTimes& into_;
  std::string name_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tessera::jit

#endif  // TESSERA_JIT_STAGE_CLOCK_H_
