#include "base/scaled_clock.h"

namespace fdyno {

ScaledClock::ScaledClock(double rate, int64_t start_wall_ms)
    : rate_(rate), start_wall_ms_(start_wall_ms), origin_(std::chrono::steady_clock::now()) {}

std::chrono::steady_clock::time_point ScaledClock::Now() const {
  return std::chrono::steady_clock::now();
}

int64_t ScaledClock::WallMillis() const {
  const auto elapsed = std::chrono::duration<double, std::milli>(Now() - origin_).count();
  return start_wall_ms_ + static_cast<int64_t>(elapsed * rate_);
}

}  // namespace fdyno
