#include "base/json_text.h"

#include <gtest/gtest.h>

namespace fdyno {
namespace {

std::string Json(std::string_view s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

TEST(JsonTextTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(Json("plain"), "\"plain\"");
  EXPECT_EQ(Json("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(Json("l1\nl2\r\t"), "\"l1\\nl2\\r\\t\"");
  EXPECT_EQ(Json(std::string_view("\x01\x1f\x7f\0", 4)), "\"\\u0001\\u001f\\u007f\\u0000\"");
}

TEST(JsonTextTest, KeepsWellFormedUtf8AndReplacesEveryOtherByte) {
  EXPECT_EQ(Json("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"");
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(Json("a\xFF"
                 "b"),
            "\"a" + fffd + "b\"");
  EXPECT_EQ(Json("\xC0\xAF"), "\"" + fffd + fffd + "\"");                        // overlong '/'
  EXPECT_EQ(Json("\xED\xA0\x80"), "\"" + fffd + fffd + fffd + "\"");             // a surrogate
  EXPECT_EQ(Json("\xF4\x90\x80\x80"), "\"" + fffd + fffd + fffd + fffd + "\"");  // > U+10FFFF
  EXPECT_EQ(Json("\xE2\x82"), "\"" + fffd + fffd + "\"");                        // truncated
}

}  // namespace
}  // namespace fdyno
