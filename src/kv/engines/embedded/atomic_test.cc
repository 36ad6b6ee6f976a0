#include "kv/engines/embedded/atomic.h"

#include <gtest/gtest.h>

namespace fdyno::kv::embedded {
namespace {

std::string Le(uint64_t v, size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

TEST(AtomicTest, AddFollowsFoundationDb) {
  EXPECT_EQ(ApplyAdd(std::nullopt, Le(5, 8)), Le(5, 8));
  EXPECT_EQ(ApplyAdd(Le(250, 8), Le(10, 8)), Le(260, 8));
  EXPECT_EQ(ApplyAdd(Le(0xffffffffffffffffull, 8), Le(1, 8)), Le(0, 8));  // wraps
  EXPECT_EQ(ApplyAdd(Le(1, 2), Le(1, 4)), Le(2, 4));                      // zero-extends
  EXPECT_EQ(ApplyAdd(Le(0x10001, 4), Le(1, 2)), Le(2, 2));                // truncates
  EXPECT_EQ(ApplyAdd(Le(7, 8), Le(static_cast<uint64_t>(-3), 8)), Le(4, 8));
}

TEST(AtomicTest, VersionstampIsBigEndianVersionThenOrder) {
  std::string s = MakeVersionstamp(0x0102030405060708, 0x090a);
  EXPECT_EQ(s, std::string("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a", 10));
  EXPECT_LT(MakeVersionstamp(1, 65535), MakeVersionstamp(2, 0));
  EXPECT_LT(MakeVersionstamp(255, 0), MakeVersionstamp(256, 0));
}

TEST(AtomicTest, VersionstampOffsetParsing) {
  std::string p = "ab" + std::string(10, '\0') + "z" + Le(2, 4);
  ASSERT_EQ(VersionstampOffset(p), 2u);
  EXPECT_EQ(SubstituteVersionstamp(p, "0123456789"), "ab0123456789z");
  EXPECT_FALSE(VersionstampOffset("abc"));
  EXPECT_FALSE(VersionstampOffset(std::string(9, '\0') + Le(0, 4)));
  EXPECT_FALSE(VersionstampOffset(std::string(12, '\0') + Le(3, 4)));
  EXPECT_EQ(VersionstampOffset(std::string(12, '\0') + Le(2, 4)), 2u);
}

}  // namespace
}  // namespace fdyno::kv::embedded
