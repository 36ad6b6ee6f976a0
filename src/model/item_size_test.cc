#include "model/item_size.h"

#include <gtest/gtest.h>

#include "model/json.h"

namespace fdyno::model {
namespace {

uint64_t Size(std::string_view json) {
  auto v = AttributeValueFromJson(json);
  EXPECT_TRUE(v.ok()) << json;
  return ValueSize(*v);
}

uint64_t NSize(std::string_view text) { return NumberSize(Number::Parse(text).value()); }

TEST(ItemSizeTest, Numbers) {
  EXPECT_EQ(NSize("0"), 1u);
  EXPECT_EQ(NSize("1"), 2u);
  EXPECT_EQ(NSize("-1"), 3u);
  EXPECT_EQ(NSize("11"), 2u);   // one base-100 digit
  EXPECT_EQ(NSize("1.1"), 3u);  // 01.10: two base-100 digits
  EXPECT_EQ(NSize("111"), 3u);
  EXPECT_EQ(NSize("0.01"), 2u);
  EXPECT_EQ(NSize("0.1"), 2u);
  EXPECT_EQ(NSize("0.11"), 2u);
  EXPECT_EQ(NSize("0.011"), 3u);  // .01 10
  // The limit cases DynamoDB was measured with (dynalite's batchWriteItem tests).
  EXPECT_EQ(NSize(std::string(38, '1') + std::string(88, '0')), 20u);
  EXPECT_EQ(NSize("1" + std::string(125, '0')), 2u);
  EXPECT_EQ(NSize("11" + std::string(124, '0')), 2u);
  EXPECT_EQ(NSize("11111" + std::string(121, '0')), 4u);
  EXPECT_EQ(NSize("111111" + std::string(120, '0')), 4u);
  EXPECT_EQ(NSize("1111111" + std::string(119, '0')), 5u);
}

// Sizes measured byte-exact against DynamoDB (eu-west-2) by bisecting the 400 KB gate, as
// published with nubo-db/dynoxide's number_size; every one agrees with the base-100 rule.
TEST(ItemSizeTest, NumbersMeasuredAgainstDynamoDB) {
  const std::pair<const char*, uint64_t> kCases[] = {{"1", 2},
                                                     {"12", 2},
                                                     {"123", 3},
                                                     {"1234", 3},
                                                     {"12345", 4},
                                                     {"123456", 4},
                                                     {"1234567", 5},
                                                     {"12345678", 5},
                                                     {"123456789", 6},
                                                     {"1234567891", 6},
                                                     {"12345678912", 7},
                                                     {"123456789123", 7},
                                                     {"1234567890123456789", 11},
                                                     {"12345678901234567890123456789012345678", 20},
                                                     {"0042", 2},
                                                     {"100", 2},
                                                     {"1010", 3},
                                                     {"0.0000001", 2},
                                                     {"0", 1},
                                                     {"1E125", 2},
                                                     {"1E-100", 2},
                                                     {"1.5", 3},
                                                     {"1.2", 3},
                                                     {"1.200", 3},
                                                     {"1.234", 4},
                                                     {"3.14159", 5},
                                                     {"100.5", 4},
                                                     {"0.15", 2},
                                                     {"15", 2},
                                                     {"-42", 3},
                                                     {"-12345", 5},
                                                     {"-1E125", 3},
                                                     {"-0.15", 3},
                                                     {"-0", 1}};
  for (const auto& [text, size] : kCases) EXPECT_EQ(NSize(text), size) << text;
}

TEST(ItemSizeTest, Values) {
  EXPECT_EQ(Size(R"({"S":"abc"})"), 3u);
  EXPECT_EQ(Size(R"({"S":"é"})"), 2u);  // UTF-8 bytes
  EXPECT_EQ(Size(R"({"B":"AAEC"})"), 3u);
  EXPECT_EQ(Size(R"({"BOOL":true})"), 1u);
  EXPECT_EQ(Size(R"({"NULL":true})"), 1u);
  EXPECT_EQ(Size(R"({"M":{}})"), 3u);
  EXPECT_EQ(Size(R"({"L":[]})"), 3u);
  EXPECT_EQ(Size(R"({"L":[{"S":"ab"},{"NULL":true}]})"), 3u + (1 + 2) + (1 + 1));
  EXPECT_EQ(Size(R"({"M":{"k":{"S":"ab"}}})"), 3u + 1 + 1 + 2);
  EXPECT_EQ(Size(R"({"SS":["a","bc"]})"), 3u);
  EXPECT_EQ(Size(R"({"NS":["1","-1"]})"), 5u);
  EXPECT_EQ(Size(R"({"BS":["AAE=","AA=="]})"), 3u);
}

TEST(ItemSizeTest, LimitIsInclusive) {
  // pk "k" + "a" attribute with 409,600 - 1 - 1 - 1 bytes = exactly 409,600.
  Item item{{"pk", AttributeValue::S("k")}};
  item["a"] = AttributeValue::S(std::string(kMaxItemSizeBytes - 2 - 1 - 1, 'x'));
  EXPECT_EQ(ItemSize(item), kMaxItemSizeBytes);
  EXPECT_TRUE(CheckItemSize(item).ok());
  std::get<std::string>(item["a"].v).push_back('x');
  auto st = CheckItemSize(item);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().type, ErrorType::kValidation);
  EXPECT_EQ(st.error().message, "Item size has exceeded the maximum allowed size");
  EXPECT_EQ(CheckUpdatedItemSize(item).error().message,
            "Item size to update has exceeded the maximum allowed size");
}

TEST(ItemSizeTest, CapacityUnits) {
  EXPECT_EQ(WriteCapacityUnits(0), 1.0);
  EXPECT_EQ(WriteCapacityUnits(1024), 1.0);
  EXPECT_EQ(WriteCapacityUnits(1025), 2.0);
  EXPECT_EQ(ReadCapacityUnits(0, true), 1.0);
  EXPECT_EQ(ReadCapacityUnits(0, false), 0.5);
  EXPECT_EQ(ReadCapacityUnits(4096, true), 1.0);
  EXPECT_EQ(ReadCapacityUnits(4097, true), 2.0);
  EXPECT_EQ(ReadCapacityUnits(4097, false), 1.0);
  EXPECT_EQ(WriteCapacityUnits(kMaxItemSizeBytes), 400.0);
}

}  // namespace
}  // namespace fdyno::model
