#include "model/canonical.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "base/test_seed.h"
#include "model/json.h"
#include "model/random_value.h"

namespace fdyno::model {
namespace {

using test::Seed;

std::string Hex(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

std::string CanonItem(std::string_view json) {
  auto item = ItemFromJson(json);
  EXPECT_TRUE(item.ok()) << json;
  return CanonicalItemV1(*item);
}

std::string CanonJson(std::string_view json) {
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  EXPECT_FALSE(d.HasParseError()) << json;
  std::string out;
  AppendCanonicalJsonV1(d, &out);
  return out;
}

TEST(CanonicalTest, SameMeaningSameBytes) {
  EXPECT_EQ(CanonItem(R"({"b":{"N":"1.50E1"},"a":{"SS":["y","x"]}})"),
            CanonItem(R"({"a":{"SS":["x","y"]},"b":{"N":"15"}})"));
  EXPECT_EQ(CanonItem(R"({"n":{"NS":["2","1.0","-3"]}})"),
            CanonItem(R"({"n":{"NS":["-3","1","2.00"]}})"));
  EXPECT_EQ(CanonItem(R"({"m":{"M":{"z":{"BS":["Yg==","YQ=="]},"a":{"NULL":true}}}})"),
            CanonItem(R"({"m":{"M":{"a":{"NULL":true},"z":{"BS":["YQ==","Yg=="]}}}})"));
  EXPECT_EQ(CanonJson(R"({"b":1,"a":[1.0,"x",true,null]})"),
            CanonJson(R"({"a":[1,"x",true,null],"b":1.0})"));
}

TEST(CanonicalTest, DifferentMeaningDifferentBytes) {
  EXPECT_NE(CanonItem(R"({"l":{"L":[{"S":"a"},{"S":"b"}]}})"),
            CanonItem(R"({"l":{"L":[{"S":"b"},{"S":"a"}]}})"));
  EXPECT_NE(CanonItem(R"({"a":{"S":"1"}})"), CanonItem(R"({"a":{"N":"1"}})"));
  EXPECT_NE(CanonItem(R"({"a":{"SS":["1"]}})"), CanonItem(R"({"a":{"NS":["1"]}})"));
  EXPECT_NE(CanonItem(R"({"a":{"S":"b"}})"), CanonItem(R"({"ab":{"S":""}})"));
  EXPECT_NE(CanonItem(R"({"a":{"SS":["ab"]}})"), CanonItem(R"({"a":{"SS":["a","b"]}})"));
  EXPECT_NE(CanonJson(R"({"a":"1"})"), CanonJson(R"({"a":1})"));
  EXPECT_NE(CanonJson(R"([1,2])"), CanonJson(R"([2,1])"));
  EXPECT_NE(CanonJson(R"({"a":{}})"), CanonJson(R"({"a":[]})"));
}

TEST(CanonicalTest, EqualIffDynamoEqualForRandomValues) {
  const uint64_t seed = Seed();
  SCOPED_TRACE("replay with FDYNO_SEED=" + std::to_string(seed));
  RandomValues gen(seed);
  std::vector<AttributeValue> values;
  for (int i = 0; i < 400; ++i) values.push_back(gen.Value());
  // Shuffled copies of sets are equal values.
  for (int i = 0; i < 400; ++i) {
    AttributeValue v = values[static_cast<size_t>(i)];
    if (auto* ss = std::get_if<StringSet>(&v.v))
      std::reverse(ss->members.begin(), ss->members.end());
    if (auto* ns = std::get_if<NumberSet>(&v.v))
      std::reverse(ns->members.begin(), ns->members.end());
    values.push_back(std::move(v));
  }
  std::vector<std::string> canon;
  for (const auto& v : values) canon.push_back(CanonicalV1(v));
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t j = 0; j < values.size(); ++j) {
      ASSERT_EQ(canon[i] == canon[j], values[i] == values[j]) << i << " " << j;
    }
  }
}

// The V1 bytes are an input to stored digests: this pins them. If this test fails, the change
// must become a new algorithm version instead.
TEST(CanonicalTest, V1BytesAreFrozen) {
  EXPECT_EQ(Hex(CanonItem(R"({"k":{"S":"v"},"n":{"NS":["10","-1.5"]},"b":{"BOOL":true},
                             "l":{"L":[{"NULL":true},{"B":"AQ=="}]}})")),
            "0000000000000004"
            "000000000000000162"
            "0401"
            "00000000000000016b"
            "01"
            "000000000000000176"
            "00000000000000016c"
            "07"
            "0000000000000002"
            "05"
            "03"
            "000000000000000101"
            "00000000000000016e"
            "09"
            "0000000000000002"
            "0000000000000004"
            "2d312e35"
            "0000000000000002"
            "3130");
  EXPECT_EQ(Hex(CanonJson(R"({"x":[1.5,"s",false,null],"a":7})")),
            "26"
            "0000000000000002"
            "000000000000000161"
            "23"
            "000000000000000137"
            "000000000000000178"
            "25"
            "0000000000000004"
            "23"
            "0000000000000003"
            "312e35"
            "24"
            "000000000000000173"
            "21"
            "20");
}

}  // namespace
}  // namespace fdyno::model
