// Rate-limits a log line that a fault can repeat without bound (accept failing while out of
// file descriptors, a refused connection), so the log neither floods the disk nor costs CPU:
// at most one line per period, and the next allowed line says how many were left out.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

#include "base/clock.h"

namespace fdyno {

class LogLimiter {
 public:
  // `clock`: null for Clock::Real(); must outlive the limiter.
  explicit LogLimiter(std::chrono::milliseconds period, Clock* clock = nullptr);

  // nullopt: leave this line out. Otherwise log it; the value is how many lines were left out
  // since the last one logged.
  std::optional<int64_t> Allow();

 private:
  const std::chrono::milliseconds period_;
  Clock* const clock_;
  std::mutex mu_;
  std::optional<std::chrono::steady_clock::time_point> last_;
  int64_t suppressed_ = 0;
};

}  // namespace fdyno
