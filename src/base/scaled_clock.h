// A clock for soak tests of what expires with wall time (operation receipts, idempotency
// tokens): the real monotonic clock, so deadlines and timeouts keep real time, with a wall clock
// that runs `rate` times as fast, starting at `start_wall_ms` when constructed. `fdyno serve`
// uses it only when FDYNO_TEST_CLOCK_RATE is set (main/main.cc), and says so in its log.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>

#include "base/clock.h"

namespace fdyno {

class ScaledClock : public Clock {
 public:
  ScaledClock(double rate, int64_t start_wall_ms);
  std::chrono::steady_clock::time_point Now() const override;
  int64_t WallMillis() const override;

 private:
  double rate_;
  int64_t start_wall_ms_;
  std::chrono::steady_clock::time_point origin_;
};

}  // namespace fdyno
