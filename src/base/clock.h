// Clocks, injectable so tests need no sleeps. Clock::Real() is the process clock.
// Thread-safe: every Clock may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

namespace fdyno {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time, for deadlines and durations.
  virtual std::chrono::steady_clock::time_point Now() const = 0;
  // Wall-clock time in milliseconds since the Unix epoch, for persisted timestamps.
  virtual int64_t WallMillis() const = 0;

  // The process clock. Never null; lives for the whole process.
  static Clock* Real();
};

// A clock that moves only when told. For tests.
class ManualClock : public Clock {
 public:
  explicit ManualClock(int64_t wall_ms = 1'700'000'000'000) : wall_ms_(wall_ms) {}
  std::chrono::steady_clock::time_point Now() const override {
    return std::chrono::steady_clock::time_point(std::chrono::milliseconds(wall_ms_.load()));
  }
  int64_t WallMillis() const override { return wall_ms_.load(); }
  void Advance(std::chrono::milliseconds d) { wall_ms_ += d.count(); }

 private:
  std::atomic<int64_t> wall_ms_;
};

}  // namespace fdyno
