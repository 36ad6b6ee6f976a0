#include "api/capacity.h"

#include <gtest/gtest.h>

namespace fdyno::api {
namespace {

TEST(CapacityTest, ReadUnitsRoundUpTo4KBAndHalveForEventualConsistency) {
  EXPECT_EQ(ReadUnits(0, true), 1.0);  // a miss still costs one unit
  EXPECT_EQ(ReadUnits(0, false), 0.5);
  EXPECT_EQ(ReadUnits(1, true), 1.0);
  EXPECT_EQ(ReadUnits(4096, true), 1.0);
  EXPECT_EQ(ReadUnits(4097, true), 2.0);
  EXPECT_EQ(ReadUnits(4097, false), 1.0);
  EXPECT_EQ(ReadUnits(400 * 1024, false), 50.0);
}

TEST(CapacityTest, WriteUnitsUseTheLargerImageRoundedUpTo1KB) {
  EXPECT_EQ(WriteUnits(0, 0), 1.0);
  EXPECT_EQ(WriteUnits(0, 1024), 1.0);
  EXPECT_EQ(WriteUnits(0, 1025), 2.0);
  EXPECT_EQ(WriteUnits(3000, 10), 3.0);  // delete or shrink: the old image counts
  EXPECT_EQ(WriteUnits(10, 3000), 3.0);
}

TEST(CapacityTest, ParseAndRender) {
  std::string v = "INDEXES";
  EXPECT_EQ(*ParseReturnConsumedCapacity(&v), ReturnConsumedCapacity::kIndexes);
  EXPECT_EQ(*ParseReturnConsumedCapacity(nullptr), ReturnConsumedCapacity::kNone);
  v = "ALL";
  auto bad = ParseReturnConsumedCapacity(&v);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "1 validation error detected: Value 'ALL' at 'returnConsumedCapacity' failed to "
            "satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]");

  ConsumedCapacity c;
  c.table_name = "t";
  c.table_units = 2;
  c.global_indexes = {{"g", 1}};
  auto render = [&](ReturnConsumedCapacity mode) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    w.StartObject();
    WriteConsumedCapacity(w, mode, c);
    w.EndObject();
    return std::string(buffer.GetString());
  };
  EXPECT_EQ(render(ReturnConsumedCapacity::kNone), "{}");
  EXPECT_EQ(render(ReturnConsumedCapacity::kTotal),
            R"({"ConsumedCapacity":{"TableName":"t","CapacityUnits":3.0}})");
  EXPECT_EQ(render(ReturnConsumedCapacity::kIndexes),
            R"({"ConsumedCapacity":{"TableName":"t","CapacityUnits":3.0,"Table":)"
            R"({"CapacityUnits":2.0},"GlobalSecondaryIndexes":{"g":{"CapacityUnits":1.0}}}})");
}

}  // namespace
}  // namespace fdyno::api
