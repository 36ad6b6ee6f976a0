#include "kv/engines/fdb/prefix.h"

#include <gtest/gtest.h>

namespace fdyno::kv::fdb {
namespace {

std::string Le32(uint32_t v) {
  std::string s;
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

TEST(FdbPrefixTest, ParsesTextAndEscapes) {
  EXPECT_EQ(*ParsePrefix(""), "");
  EXPECT_EQ(*ParsePrefix("app1/"), "app1/");
  EXPECT_EQ(*ParsePrefix("\\x00\\x15a\\\\"), std::string("\x00\x15"
                                                         "a\\",
                                                         4));
  EXPECT_EQ(*ParsePrefix("\\xFe"), "\xfe");
}

TEST(FdbPrefixTest, RefusesMalformedLongAndSystemPrefixes) {
  for (const char* bad : {"\\", "a\\x", "\\x1", "\\xzz", "\\n", "\\xff", "\\xffapp"}) {
    Result<std::string> r = ParsePrefix(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().type, ErrorType::kValidation);
    EXPECT_NE(r.error().message.find("--fdb-prefix"), std::string::npos);
  }
  EXPECT_TRUE(ParsePrefix(std::string(kMaxPrefixBytes, 'p')).ok());
  EXPECT_FALSE(ParsePrefix(std::string(kMaxPrefixBytes + 1, 'p')).ok());
  EXPECT_TRUE(ParsePrefix("a\\xff").ok());  // only a first byte 0xff is a system key
}

TEST(FdbPrefixTest, PrintableRoundTrips) {
  for (std::string bytes : {std::string(), std::string("app/"), std::string("\x00\xfe\\z", 4),
                            std::string("\x7f\x1f")}) {
    Result<std::string> back = ParsePrefix(PrintablePrefix(bytes));
    ASSERT_TRUE(back.ok()) << PrintablePrefix(bytes);
    EXPECT_EQ(*back, bytes);
  }
  EXPECT_EQ(PrintablePrefix(std::string("a\x00", 2)), "a\\x00");
}

TEST(FdbPrefixTest, KeysKeepTheirOrderUnderThePrefix) {
  EXPECT_EQ(WithPrefix("p/", "k"), "p/k");
  EXPECT_EQ(WithPrefix("", "k"), "k");
  EXPECT_LT(WithPrefix("p/", ""), WithPrefix("p/", std::string(1, '\0')));
  EXPECT_LT(WithPrefix("p/", "a\xff"), WithPrefix("p/", "b"));
}

TEST(FdbPrefixTest, VersionstampedKeyOffsetMovesByThePrefix) {
  const std::string placeholder(10, '\0');
  // "log/" + placeholder + "!" with the placeholder at 4.
  std::string param = "log/" + placeholder + "!" + Le32(4);
  std::optional<std::string> moved = WithPrefixVersionstamped("app1/", param);
  ASSERT_TRUE(moved);
  EXPECT_EQ(*moved, "app1/log/" + placeholder + "!" + Le32(9));
  EXPECT_EQ(*WithPrefixVersionstamped("", param), param);
  // The placeholder at the very end and at the very start.
  EXPECT_TRUE(WithPrefixVersionstamped("p", placeholder + Le32(0)));
  EXPECT_EQ(*WithPrefixVersionstamped("p", "ab" + placeholder + Le32(2)),
            "pab" + placeholder + Le32(3));
}

TEST(FdbPrefixTest, MalformedVersionstampedKeysAreRefused) {
  const std::string placeholder(10, '\0');
  EXPECT_FALSE(WithPrefixVersionstamped("p", ""));
  EXPECT_FALSE(WithPrefixVersionstamped("p", "abc"));                  // no offset
  EXPECT_FALSE(WithPrefixVersionstamped("p", "short" + Le32(3)));      // no room
  EXPECT_FALSE(WithPrefixVersionstamped("p", placeholder + Le32(1)));  // runs past the end
  EXPECT_FALSE(WithPrefixVersionstamped("p", placeholder + Le32(0xffffffff)));
}

}  // namespace
}  // namespace fdyno::kv::fdb
