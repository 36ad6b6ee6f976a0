#include "base/log_limiter.h"

#include <gtest/gtest.h>

namespace fdyno {
namespace {

using std::chrono::milliseconds;

TEST(LogLimiterTest, OneLinePerPeriodAndTheCountOfThoseLeftOut) {
  ManualClock clock;
  LogLimiter limiter(milliseconds(10'000), &clock);
  EXPECT_EQ(limiter.Allow(), 0);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(limiter.Allow(), std::nullopt);
  clock.Advance(milliseconds(9'999));
  EXPECT_EQ(limiter.Allow(), std::nullopt);
  clock.Advance(milliseconds(1));
  EXPECT_EQ(limiter.Allow(), 1001);
  EXPECT_EQ(limiter.Allow(), std::nullopt);
  clock.Advance(milliseconds(60'000));
  EXPECT_EQ(limiter.Allow(), 1);
}

}  // namespace
}  // namespace fdyno
