#include "base/time_text.h"

#include <gtest/gtest.h>

#include "base/hex.h"
#include "base/md5.h"

namespace fdyno {
namespace {

TEST(TimeTextTest, Iso8601WithMillisecondsAndHttpDates) {
  EXPECT_EQ(Iso8601Millis(0), "1970-01-01T00:00:00.000Z");
  // date -u -d @1796603678: Mon Dec  7 00:34:38 UTC 2026
  EXPECT_EQ(Iso8601Millis(1796603678123), "2026-12-07T00:34:38.123Z");
  EXPECT_EQ(HttpDateText(1796603678), "Mon, 07 Dec 2026 00:34:38 GMT");
}

// DynamoDB's text, as recorded: "Friday, October 9, 2026 at 12:21:34 AM Coordinated Universal
// Time" (date -u -d @1791505294).
TEST(TimeTextTest, LongDateTimeAsJavaWritesIt) {
  EXPECT_EQ(LongDateTimeText(1791505294000),
            "Friday, October 9, 2026 at 12:21:34 AM Coordinated Universal Time");
  EXPECT_EQ(LongDateTimeText(1791548294999),
            "Friday, October 9, 2026 at 12:18:14 PM Coordinated Universal Time");
}

TEST(Md5Test, KnownDigestsWholeAndInPieces) {
  EXPECT_EQ(HexLower(Md5Of("")), "d41d8cd98f00b204e9800998ecf8427e");
  Md5 md5;
  md5.Add("hel");
  md5.Add("lo");
  EXPECT_EQ(HexLower(md5.Raw()), "5d41402abc4b2a76b9719d911017c592");
}

}  // namespace
}  // namespace fdyno
