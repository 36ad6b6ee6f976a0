#include "base/utf8.h"

#include <gtest/gtest.h>

namespace fdyno {
namespace {

TEST(Utf8Test, Utf16LengthCountsCharactersNotBytes) {
  EXPECT_EQ(Utf16Length(""), 0u);
  EXPECT_EQ(Utf16Length("abc"), 3u);
  EXPECT_EQ(Utf16Length("\xC3\xA9"), 1u);          // é: two bytes, one character
  EXPECT_EQ(Utf16Length("\xE2\x82\xAC"), 1u);      // €: three bytes
  EXPECT_EQ(Utf16Length("\xF0\x9F\x98\x80"), 2u);  // 😀: a surrogate pair
  EXPECT_EQ(Utf16Length("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"), 5u);
}

TEST(Utf8Test, ValidTextIsValid) {
  for (const char* text :
       {"", "abc", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xEF\xBF\xBD", "\xED\x9F\xBF",
        "\xEE\x80\x80", "\xF4\x8F\xBF\xBF", "\x7F"}) {
    EXPECT_TRUE(IsValidUtf8(text)) << text;
  }
}

TEST(Utf8Test, EveryKindOfInvalidSequenceIsInvalid) {
  for (const char* text : {
           "a\xFF"
           "b",                 // a byte that never appears in UTF-8
           "\x80",              // a lone continuation byte
           "\xC3",              // truncated
           "\xE2\x82",          // truncated
           "\xC0\xAF",          // overlong '/'
           "\xC1\xBF",          // overlong
           "\xE0\x9F\xBF",      // overlong three bytes
           "\xF0\x8F\xBF\xBF",  // overlong four bytes
           "\xED\xA0\x80",      // a surrogate (U+D800)
           "\xED\xBF\xBF",      // a surrogate (U+DFFF)
           "\xF4\x90\x80\x80",  // above U+10FFFF
           "\xF5\x80\x80\x80",  // above U+10FFFF
           "\xC3\x28",          // a bad continuation
       }) {
    EXPECT_FALSE(IsValidUtf8(text)) << testing::PrintToString(std::string(text));
  }
}

// Long ASCII runs take the eight-bytes-at-a-time path; what follows them is still checked.
TEST(Utf8Test, LongAsciiRunsThenAnyByte) {
  EXPECT_TRUE(IsValidUtf8("abcdefghijklmnop\xC3\xA9qrstuvwx"));
  EXPECT_FALSE(IsValidUtf8("abcdefgh\xFF"));
  EXPECT_FALSE(IsValidUtf8("abcdefghijklmnopqrstuvw\xED\xA0\x80"));
  EXPECT_FALSE(IsValidUtf8("abcdefg\xC3"));
}

TEST(Utf8Test, ToValidUtf8ReplacesEachBadByte) {
  EXPECT_EQ(ToValidUtf8("abc\xC3\xA9"), "abc\xC3\xA9");
  EXPECT_EQ(ToValidUtf8("a\xFF"
                        "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(ToValidUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_TRUE(IsValidUtf8(ToValidUtf8("\xC3")));
}

}  // namespace
}  // namespace fdyno
