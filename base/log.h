// The library's own log lines (warnings about the cache, notices about the target): one
// place, governed by the level the caller chose (the C API's log_level).
#ifndef TESSERA_BASE_LOG_H_
#define TESSERA_BASE_LOG_H_

#include <cstdio>
#include <string>

namespace tessera {

/// The C API's TESSERA_JIT_LOG_* values.
enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

/// Writes "tessera-jit: <level>: <message>" to stderr when `level` is at most the threshold.
/// Copyable; thread-safe (one fprintf per line).
class Logger {
 public:
  Logger() = default;
  explicit Logger(LogLevel threshold) : threshold_(threshold) {}

  void Log(LogLevel level, const std::string& message) const {
    if (static_cast<int>(level) > static_cast<int>(threshold_)) return;
    const char* name = level == LogLevel::kError     ? "error"
                       : level == LogLevel::kWarning ? "warning"
                       : level == LogLevel::kInfo    ? "info"
                                                     : "debug";
    std::fprintf(stderr, "tessera-jit: %s: %s\n", name, message.c_str());
  }
  void Warning(const std::string& message) const { Log(LogLevel::kWarning, message); }
  void Info(const std::string& message) const { Log(LogLevel::kInfo, message); }
  void Debug(const std::string& message) const { Log(LogLevel::kDebug, message); }

  LogLevel threshold() const { return threshold_; }

 private:
  LogLevel threshold_ = LogLevel::kWarning;
};

}  // namespace tessera

#endif  // TESSERA_BASE_LOG_H_
