#include "model/json.h"

#include <gtest/gtest.h>

namespace fdyno::model {
namespace {

// "ok: <re-encoded json>" or "<ErrorType>: message".
std::string Decode(std::string_view json) {
  auto r = AttributeValueFromJson(json);
  if (!r.ok()) return std::string(WireType(r.error().type)) + ": " + r.error().message;
  return "ok: " + AttributeValueToJson(*r);
}

TEST(JsonTest, RoundTripsEveryType) {
  EXPECT_EQ(Decode(R"({"S":"x"})"), R"(ok: {"S":"x"})");
  EXPECT_EQ(Decode(R"({"S":""})"), R"(ok: {"S":""})");
  EXPECT_EQ(Decode(R"({"N":"1E+2"})"), R"(ok: {"N":"100"})");
  EXPECT_EQ(Decode(R"({"B":"AAEC/w=="})"), R"(ok: {"B":"AAEC/w=="})");
  EXPECT_EQ(Decode(R"({"B":""})"), R"(ok: {"B":""})");
  EXPECT_EQ(Decode(R"({"BOOL":false})"), R"(ok: {"BOOL":false})");
  EXPECT_EQ(Decode(R"({"NULL":true})"), R"(ok: {"NULL":true})");
  EXPECT_EQ(Decode(R"({"M":{"b":{"N":"2"},"a":{"S":"1"}}})"),
            R"(ok: {"M":{"a":{"S":"1"},"b":{"N":"2"}}})");
  EXPECT_EQ(Decode(R"({"M":{}})"), R"(ok: {"M":{}})");
  EXPECT_EQ(Decode(R"({"L":[{"S":"a"},{"N":"-0.50"}]})"), R"(ok: {"L":[{"S":"a"},{"N":"-0.5"}]})");
  EXPECT_EQ(Decode(R"({"L":[]})"), R"(ok: {"L":[]})");
  EXPECT_EQ(Decode(R"({"SS":["b","a"]})"), R"(ok: {"SS":["b","a"]})");
  EXPECT_EQ(Decode(R"({"NS":["10","1.50"]})"), R"(ok: {"NS":["10","1.5"]})");
  EXPECT_EQ(Decode(R"({"BS":["YQ==","Yg=="]})"), R"(ok: {"BS":["YQ==","Yg=="]})");
}

// Every control character is escaped wherever it stands in a string, also in long strings
// (RapidJSON 1.1.0's SSE2 writer left 0x1A-0x1F raw in strings of 16 bytes or more).
TEST(JsonTest, ControlCharactersAreEscapedInLongStrings) {
  for (int c = 0; c < 0x20; ++c) {
    for (size_t pos : {0, 7, 15, 16, 31}) {
      std::string s(40, 'x');
      s[pos] = static_cast<char>(c);
      const std::string json = AttributeValueToJson(AttributeValue::S(s));
      for (char ch : json) ASSERT_GE(static_cast<unsigned char>(ch), 0x20) << c << " at " << pos;
      auto back = AttributeValueFromJson(json);
      ASSERT_TRUE(back.ok()) << c;
      EXPECT_EQ(std::get<std::string>(back->v), s);
    }
  }
}

// A raw (unescaped) control character in a request string is malformed JSON, wherever it is.
TEST(JsonTest, RawControlCharactersAreRejectedInLongStrings) {
  for (int c : {0x01, 0x19, 0x1A, 0x1F}) {
    for (size_t pos : {0, 20}) {
      std::string s(40, 'x');
      s[pos] = static_cast<char>(c);
      auto r = AttributeValueFromJson(R"({"S":")" + s + R"("})");
      ASSERT_FALSE(r.ok()) << c << " at " << pos;
      EXPECT_EQ(r.error().type, ErrorType::kSerialization);
    }
  }
}

TEST(JsonTest, NullMembersAreAbsentAndUnknownMembersIgnored) {
  EXPECT_EQ(Decode(R"({"S":"a","N":null})"), R"(ok: {"S":"a"})");
  EXPECT_EQ(Decode(R"({"S":"a","Foo":3})"), R"(ok: {"S":"a"})");
  EXPECT_EQ(Decode(R"({"BOOL":"yes"})"), R"(ok: {"BOOL":true})");
}

// Attribute names are at most 65,535 bytes, at the top level and inside maps.
TEST(JsonTest, AttributeNameLength) {
  const std::string ok(65'535, 'n');
  const std::string too_long(65'536, 'n');
  const std::string message =
      "1 validation error detected: Attribute name is too large, must be less than 65536 bytes";
  EXPECT_TRUE(ItemFromJson(R"({")" + ok + R"(":{"S":"x"}})").ok());
  auto top = ItemFromJson(R"({")" + too_long + R"(":{"S":"x"}})");
  ASSERT_FALSE(top.ok());
  EXPECT_EQ(top.error().message, message);
  auto nested = ItemFromJson(R"({"m":{"L":[{"M":{")" + too_long + R"(":{"N":"1"}}}]}})");
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.error().message, message);
}

// A top-level attribute name is not empty; a key of a map inside a value may be.
TEST(JsonTest, EmptyAttributeName) {
  auto top = ItemFromJson(R"({"":{"S":"x"}})");
  ASSERT_FALSE(top.ok());
  EXPECT_EQ(top.error().message, "Empty attribute name");
  EXPECT_TRUE(ItemFromJson(R"({"m":{"M":{"":{"S":"x"}}}})").ok());
  EXPECT_EQ(CheckAttributeName("").error().message, "Empty attribute name");
  EXPECT_EQ(CheckAttributeName(std::string(65'536, 'n')).error().message,
            "1 validation error detected: Attribute name is too large, must be less than 65536 "
            "bytes");
  EXPECT_TRUE(CheckAttributeName(std::string(65'535, 'n')).ok());
  EXPECT_TRUE(CheckAttributeName("a").ok());
}

TEST(JsonTest, ValidationErrors) {
  const std::string v = "ValidationException: ";
  EXPECT_EQ(Decode(R"({})"),
            v + "Supplied AttributeValue is empty, must contain exactly one of the supported "
                "datatypes");
  EXPECT_EQ(Decode(R"({"S":"a","BOOL":true})"),
            v + "Supplied AttributeValue has more than one datatypes set, must contain exactly "
                "one of the supported datatypes");
  // The number is validated before the type count, as DynamoDB does.
  EXPECT_EQ(Decode(R"({"S":"a","N":"b"})"),
            v + "The parameter cannot be converted to a numeric value: b");
  EXPECT_EQ(Decode(R"({"S":"","N":""})"),
            v + "The parameter cannot be converted to a numeric value");
  EXPECT_EQ(Decode(R"({"NULL":false})"),
            v + "One or more parameter values were invalid: Null attribute value types must have "
                "the value of true");
  EXPECT_EQ(Decode(R"({"SS":[]})"),
            v + "One or more parameter values were invalid: An string set  may not be empty");
  EXPECT_EQ(Decode(R"({"NS":[]})"),
            v + "One or more parameter values were invalid: An number set  may not be empty");
  EXPECT_EQ(Decode(R"({"BS":[]})"),
            v + "One or more parameter values were invalid: Binary sets should not be empty");
  EXPECT_EQ(Decode(R"({"SS":["a","a"]})"),
            v + "One or more parameter values were invalid: Input collection [a, a] contains "
                "duplicates.");
  EXPECT_EQ(Decode(R"({"NS":["1","1.0"]})"), v + "Input collection contains duplicates");
  EXPECT_EQ(Decode(R"({"NS":["1",""]})"),
            v + "The parameter cannot be converted to a numeric value");
  EXPECT_EQ(Decode(R"({"BS":["YQ==","YQ=="]})"),
            v + "One or more parameter values were invalid: Input collection [YQ==, YQ==]of type "
                "BS contains duplicates.");
  EXPECT_EQ(Decode(R"({"M":{"a":{}}})"),
            v + "Supplied AttributeValue is empty, must contain exactly one of the supported "
                "datatypes");
  EXPECT_EQ(Decode(R"({"L":[{"SS":[]}]})"),
            v + "One or more parameter values were invalid: An string set  may not be empty");
  EXPECT_EQ(Decode(R"({"N":"1e126"})"),
            v + "Number overflow. Attempting to store a number with magnitude larger than "
                "supported range");
}

TEST(JsonTest, SerializationErrors) {
  const std::string s = "SerializationException: ";
  EXPECT_EQ(Decode(R"({"S":5})"), s + "NUMBER_VALUE cannot be converted to String");
  EXPECT_EQ(Decode(R"({"S":5.5})"), s + "DECIMAL_VALUE cannot be converted to String");
  EXPECT_EQ(Decode(R"({"S":true})"), s + "TRUE_VALUE cannot be converted to String");
  EXPECT_EQ(Decode(R"({"S":{}})"), s + "Start of structure or map found where not expected");
  EXPECT_EQ(Decode(R"({"S":[]})"), s + "Unrecognized collection type class java.lang.String");
  EXPECT_EQ(Decode(R"({"BOOL":5})"), s + "NUMBER_VALUE cannot be converted to Boolean");
  EXPECT_EQ(Decode(R"({"BOOL":"maybe"})"), s + "Unexpected token received from parser");
  EXPECT_EQ(Decode(R"({"B":5})"), s + "only base-64-encoded strings are convertible to bytes");
  EXPECT_EQ(Decode(R"({"B":"abc"})"),
            s + "Base64 encoded length is expected a multiple of 4 bytes but found: 3");
  EXPECT_EQ(Decode(R"({"B":"YR=="})"), s + "Invalid last non-pad Base64 character dectected");
  EXPECT_EQ(Decode(R"({"B":"!!!!"})"), s + "Invalid last non-pad Base64 character dectected");
  // DynamoDB's own cases (as recorded by dynalite's tests).
  EXPECT_EQ(Decode(R"({"B":"23456"})"),
            s + "Base64 encoded length is expected a multiple of 4 bytes but found: 5");
  EXPECT_EQ(Decode(R"({"B":"=+/="})"), s + "Invalid last non-pad Base64 character dectected");
  EXPECT_EQ(Decode(R"({"B":"+/+="})"), s + "Invalid last non-pad Base64 character dectected");
  EXPECT_EQ(Decode(R"({"BS":[true]})"),
            s + "only base-64-encoded strings are convertible to bytes");
  EXPECT_EQ(Decode(R"({"NULL":"23"})"), s + "Unexpected token received from parser");
  EXPECT_EQ(Decode(R"({"NULL":34.56})"), s + "DECIMAL_VALUE cannot be converted to Boolean");
  EXPECT_EQ(Decode(R"({"BOOL":[]})"), s + "Unrecognized collection type class java.lang.Boolean");
  EXPECT_EQ(Decode(R"({"NS":[false]})"), s + "FALSE_VALUE cannot be converted to String");
  EXPECT_EQ(Decode(R"({"L":[23]})"), s + "Unexpected value type in payload");
  EXPECT_EQ(
      Decode(R"({"M":{"a":[]}})"),
      s + "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.AttributeValue");
  EXPECT_EQ(Decode(R"({"M":"23"})"), s + "Unexpected field type");
  EXPECT_EQ(Decode(R"({"SS":"a"})"), s + "Unexpected field type");
  EXPECT_EQ(Decode(R"({"L":{}})"), s + "Start of structure or map found where not expected");
  EXPECT_EQ(Decode(R"({"M":[]})"),
            s + "Unrecognized collection type java.util.Map<java.lang.String, "
                "com.amazonaws.dynamodb.v20120810.AttributeValue>");
  EXPECT_EQ(Decode(R"("x")"), s + "Unexpected value type in payload");
  EXPECT_EQ(
      Decode(R"([])"),
      s + "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.AttributeValue");
  // Serialization errors win over validation errors elsewhere in the value.
  EXPECT_EQ(Decode(R"({"L":[{"SS":[]},{"S":1}]})"),
            s + "NUMBER_VALUE cannot be converted to String");
}

std::string Nested(int wraps, std::string_view open, std::string_view close,
                   std::string_view inner) {
  std::string out;
  for (int i = 0; i < wraps; ++i) out += open;
  out += inner;
  for (int i = 0; i < wraps; ++i) out += close;
  return out;
}

TEST(JsonTest, NestingLimit) {
  // 31 wrappers above a scalar is 32 levels: accepted. 32 wrappers: rejected.
  EXPECT_EQ(Decode(Nested(31, R"({"M":{"a":)", "}}", R"({"S":"x"})")).substr(0, 3), "ok:");
  EXPECT_EQ(Decode(Nested(32, R"({"M":{"a":)", "}}", R"({"S":"x"})")),
            "ValidationException: Nesting Levels have exceeded supported limits: Attributes in "
            "the item have nested levels beyond supported limit");
  EXPECT_EQ(Decode(Nested(31, R"({"L":[)", "]}", R"({"N":"1"})")).substr(0, 3), "ok:");
  EXPECT_EQ(Decode(Nested(32, R"({"L":[)", "]}", R"({"N":"1"})")).substr(0, 20),
            "ValidationException:");
  // Very deep input is rejected, not a stack overflow.
  EXPECT_EQ(Decode(Nested(5000, R"({"L":[)", "]}", R"({"N":"1"})")).substr(0, 20),
            "ValidationException:");
}

TEST(JsonTest, Items) {
  auto item = ItemFromJson(R"({"pk":{"S":"a"},"n":{"N":"007"},"x":{"NULL":true}})");
  ASSERT_TRUE(item.ok()) << item.error().message;
  EXPECT_EQ(item->size(), 3u);
  EXPECT_EQ(ItemToJson(*item), R"({"n":{"N":"7"},"pk":{"S":"a"},"x":{"NULL":true}})");
  auto bad = ItemFromJson(R"({"a":{"SS":[]},"b":{"S":1}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().type, ErrorType::kSerialization);
  auto null_attr = ItemFromJson(R"({"a":null})");
  ASSERT_FALSE(null_attr.ok());
  EXPECT_EQ(null_attr.error().type, ErrorType::kValidation);
  auto malformed = ItemFromJson(R"({"a":)");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.error().type, ErrorType::kSerialization);
}

TEST(JsonTest, SetEqualityIgnoresOrder) {
  auto a = AttributeValueFromJson(R"({"NS":["1","2.0"]})");
  auto b = AttributeValueFromJson(R"({"NS":["2","1"]})");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(*a == *b);
  auto c = AttributeValueFromJson(R"({"SS":["x","y"]})");
  auto d = AttributeValueFromJson(R"({"SS":["y","x"]})");
  EXPECT_TRUE(*c == *d);
  EXPECT_FALSE(*a == *c);
}

}  // namespace
}  // namespace fdyno::model
