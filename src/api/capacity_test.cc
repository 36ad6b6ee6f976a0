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
  EXPECT_EQ(*ParseReturnConsumedCapacity("INDEXES"), ReturnConsumedCapacity::kIndexes);
  EXPECT_EQ(*ParseReturnConsumedCapacity(std::nullopt), ReturnConsumedCapacity::kNone);
  auto bad = ParseReturnConsumedCapacity("ALL");
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

// Index write units by DynamoDB's rules on the projected entries.
TEST(CapacityTest, IndexWriteUnits) {
  store::TableInfo t;
  t.key_schema.hash = {"pk", store::ScalarType::kS};
  store::SecondaryIndex all;
  all.name = "all";
  all.id = 1;
  all.key_schema.hash = {"g", store::ScalarType::kS};
  t.global_indexes.push_back(all);
  store::SecondaryIndex keys;
  keys.name = "keys";
  keys.id = 2;
  keys.key_schema.hash = {"g", store::ScalarType::kS};
  keys.projection.type = store::ProjectionType::kKeysOnly;
  t.global_indexes.push_back(keys);
  auto S = [](std::string s) { return model::AttributeValue::S(std::move(s)); };
  auto units = [&](const model::Item* old_item, const model::Item* new_item) {
    ConsumedCapacity c;
    AddIndexWriteUnits(t, old_item, new_item, c, true);
    return c.global_indexes;
  };
  using Units = std::vector<std::pair<std::string, double>>;
  const model::Item plain{{"pk", S("a")}};
  const model::Item in{{"pk", S("a")}, {"g", S("x")}};
  const model::Item big{{"pk", S("a")}, {"g", S("x")}, {"d", S(std::string(2000, 'd'))}};
  const model::Item moved{{"pk", S("a")}, {"g", S("y")}};
  EXPECT_EQ(units(nullptr, &plain), Units{});                        // no entry
  EXPECT_EQ(units(nullptr, &in), (Units{{"all", 1}, {"keys", 1}}));  // new entry
  EXPECT_EQ(units(&in, nullptr), (Units{{"all", 1}, {"keys", 1}}));  // removed
  EXPECT_EQ(units(&in, &in), Units{});                               // unchanged
  EXPECT_EQ(units(&in, &big), (Units{{"all", 2}}));                  // in place, larger
  EXPECT_EQ(units(&big, &moved), (Units{{"all", 3}, {"keys", 2}}));  // moved: both
  ConsumedCapacity total;
  total.table_units = 1;
  AddIndexWriteUnits(t, &big, &moved, total, true);
  AddIndexWriteUnits(t, nullptr, &in, total, true);
  EXPECT_EQ(total.global_indexes, (Units{{"all", 4}, {"keys", 3}}));
  EXPECT_EQ(total.total(), 8);
}

}  // namespace
}  // namespace fdyno::api
