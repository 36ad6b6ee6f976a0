#include "model/attribute_value.h"

#include <gtest/gtest.h>

#include "model/base64.h"

namespace fdyno::model {
namespace {

Number N(std::string_view s) { return Number::Parse(s).value(); }

TEST(AttributeValueTest, EqualityIsDynamoEquality) {
  EXPECT_TRUE(AttributeValue::S("a") == AttributeValue::S("a"));
  EXPECT_FALSE(AttributeValue::S("a") == AttributeValue::S("b"));
  EXPECT_FALSE(AttributeValue::S("1") == AttributeValue::N(N("1")));
  EXPECT_TRUE(AttributeValue::N(N("1.0")) == AttributeValue::N(N("1")));
  EXPECT_FALSE(AttributeValue::B("a") == AttributeValue::S("a"));
  EXPECT_TRUE(AttributeValue::MakeNull() == AttributeValue::MakeNull());
  EXPECT_FALSE(AttributeValue::Bool(true) == AttributeValue::Bool(false));
  // Sets compare as sets; lists and maps by content.
  AttributeValue ss1{StringSet{{"a", "b"}}}, ss2{StringSet{{"b", "a"}}}, ss3{StringSet{{"a"}}};
  EXPECT_TRUE(ss1 == ss2);
  EXPECT_FALSE(ss1 == ss3);
  AttributeValue ns1{NumberSet{{N("1"), N("2")}}}, ns2{NumberSet{{N("2.0"), N("1")}}};
  EXPECT_TRUE(ns1 == ns2);
  AttributeValue bs1{BinarySet{{"\x01", "\xff"}}}, bs2{BinarySet{{"\xff", "\x01"}}};
  EXPECT_TRUE(bs1 == bs2);
  AttributeValue bs_ab{BinarySet{{"a", "b"}}};
  EXPECT_FALSE(ss1 == bs_ab);
  AttributeValue l1 = AttributeValue::L({AttributeValue::S("x"), AttributeValue::N(N("1"))});
  AttributeValue l2 = AttributeValue::L({AttributeValue::N(N("1")), AttributeValue::S("x")});
  EXPECT_FALSE(l1 == l2);
  AttributeValue m1 = AttributeValue::M({{"a", ns1}, {"b", l1}});
  AttributeValue m2 = AttributeValue::M({{"b", l1}, {"a", ns2}});
  EXPECT_TRUE(m1 == m2);
  EXPECT_FALSE(m1 == AttributeValue::M({{"a", ns1}}));
}

TEST(AttributeValueTest, TypeNames) {
  const std::pair<Type, const char*> kNames[] = {
      {Type::kS, "S"},       {Type::kN, "N"},  {Type::kB, "B"}, {Type::kBool, "BOOL"},
      {Type::kNull, "NULL"}, {Type::kM, "M"},  {Type::kL, "L"}, {Type::kSS, "SS"},
      {Type::kNS, "NS"},     {Type::kBS, "BS"}};
  for (const auto& [type, name] : kNames) EXPECT_EQ(TypeName(type), name);
  // The variant index is the persisted type tag.
  EXPECT_EQ(AttributeValue::MakeNull().type(), Type::kNull);
  EXPECT_EQ(AttributeValue{StringSet{{"a"}}}.type(), Type::kSS);
  EXPECT_EQ(static_cast<int>(Type::kBS), 9);
}

TEST(Base64Test, Rfc4648Vectors) {
  const std::pair<const char*, const char*> kVectors[] = {{"", ""},
                                                          {"f", "Zg=="},
                                                          {"fo", "Zm8="},
                                                          {"foo", "Zm9v"},
                                                          {"foob", "Zm9vYg=="},
                                                          {"fooba", "Zm9vYmE="},
                                                          {"foobar", "Zm9vYmFy"}};
  for (const auto& [raw, b64] : kVectors) {
    EXPECT_EQ(Base64Encode(raw), b64);
    auto d = Base64Decode(b64);
    ASSERT_TRUE(d.has_value()) << b64;
    EXPECT_EQ(*d, raw);
  }
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  EXPECT_EQ(Base64Decode(Base64Encode(all)).value(), all);
}

TEST(Base64Test, RejectsNonCanonical) {
  for (const char* bad : {"Zg=", "Zh==", "Zm9=", "Zm8",
                          "Z===", "====", "Zg==Zg==", "Zm9v!A==", "Zm 9v", "Zm9v\n", "-_8="}) {
    EXPECT_FALSE(Base64Decode(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace fdyno::model
