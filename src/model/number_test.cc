#include "model/number.h"

#include <gtest/gtest.h>

namespace fdyno::model {
namespace {

std::string Canon(std::string_view s) {
  auto r = Number::Parse(s);
  if (!r.ok()) return "error: " + r.error().message;
  return r->ToString();
}

TEST(NumberTest, ParsesAndCanonicalizes) {
  EXPECT_EQ(Canon("1E+2"), "100");
  EXPECT_EQ(Canon("00042"), "42");
  EXPECT_EQ(Canon("3.1400"), "3.14");
  EXPECT_EQ(Canon("-0"), "0");
  EXPECT_EQ(Canon("1.5E2"), "150");
  EXPECT_EQ(Canon(".5"), "0.5");
  EXPECT_EQ(Canon("-0.001"), "-0.001");
}

TEST(NumberTest, AddSubtract) {
  auto n = [](std::string_view s) { return Number::Parse(s).value(); };
  EXPECT_EQ(Number::Add(n("1"), n("2")).value().ToString(), "3");
  EXPECT_EQ(Number::Add(n("0.1"), n("0.2")).value().ToString(), "0.3");
  EXPECT_EQ(Number::Subtract(n("1"), n("1")).value().ToString(), "0");
  EXPECT_EQ(Number::Subtract(n("1"), n("3.5")).value().ToString(), "-2.5");
  EXPECT_EQ(Number::Add(n("-99"), n("-1")).value().ToString(), "-100");
}

TEST(NumberTest, Compare) {
  auto n = [](std::string_view s) { return Number::Parse(s).value(); };
  EXPECT_LT(n("-2").Compare(n("-1")), 0);
  EXPECT_LT(n("0.12").Compare(n("0.123")), 0);
  EXPECT_EQ(n("100").Compare(n("1e2")), 0);
  EXPECT_GT(n("0").Compare(n("-1E-130")), 0);
}

}  // namespace
}  // namespace fdyno::model
