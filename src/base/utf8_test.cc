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

}  // namespace
}  // namespace fdyno
