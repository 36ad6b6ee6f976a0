#include "base/log_limiter.h"

namespace fdyno {

LogLimiter::LogLimiter(std::chrono::milliseconds period, Clock* clock)
    : period_(period), clock_(clock != nullptr ? clock : Clock::Real()) {}

std::optional<int64_t> LogLimiter::Allow() {
  const auto now = clock_->Now();
  std::lock_guard lock(mu_);
  if (last_ && now - *last_ < period_) {
    ++suppressed_;
    return std::nullopt;
  }
  last_ = now;
  int64_t left_out = suppressed_;
  suppressed_ = 0;
  return left_out;
}

}  // namespace fdyno
