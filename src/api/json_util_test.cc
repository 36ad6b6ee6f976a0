#include "api/json_util.h"

#include <gtest/gtest.h>

namespace fdyno::api {
namespace {

rapidjson::Document Parse(const char* json) {
  rapidjson::Document d;
  d.Parse(json);
  return d;
}

std::string SerializationMessage(const char* json, JsonShape shape, std::string_view type = {}) {
  rapidjson::Document d = Parse(json);
  Status s = CheckShape(d["v"], shape, type);
  if (s.ok()) return "ok";
  EXPECT_EQ(s.error().type, ErrorType::kSerialization);
  return s.error().message;
}

TEST(JsonUtilTest, ShapeErrorsUseDynamoDbWording) {
  EXPECT_EQ(SerializationMessage(R"({"v":"x"})", JsonShape::kString), "ok");
  EXPECT_EQ(SerializationMessage(R"({"v":null})", JsonShape::kString), "ok");
  EXPECT_EQ(SerializationMessage(R"({"v":true})", JsonShape::kString),
            "TRUE_VALUE cannot be converted to String");
  EXPECT_EQ(SerializationMessage(R"({"v":12})", JsonShape::kString),
            "NUMBER_VALUE cannot be converted to String");
  EXPECT_EQ(SerializationMessage(R"({"v":1.5})", JsonShape::kString),
            "DECIMAL_VALUE cannot be converted to String");
  EXPECT_EQ(SerializationMessage(R"({"v":[]})", JsonShape::kString),
            "Unrecognized collection type class java.lang.String");
  EXPECT_EQ(SerializationMessage(R"({"v":{}})", JsonShape::kString),
            "Start of structure or map found where not expected");
  EXPECT_EQ(SerializationMessage(R"({"v":"5"})", JsonShape::kLong),
            "STRING_VALUE cannot be converted to Long");
  EXPECT_EQ(SerializationMessage(R"({"v":false})", JsonShape::kInteger),
            "FALSE_VALUE cannot be converted to Integer");
  EXPECT_EQ(SerializationMessage(R"({"v":"abc"})", JsonShape::kList), "Unexpected field type");
  EXPECT_EQ(SerializationMessage(R"({"v":{}})", JsonShape::kList),
            "Start of structure or map found where not expected");
  EXPECT_EQ(SerializationMessage(R"({"v":3})", JsonShape::kStruct, "ProvisionedThroughput"),
            "Unexpected field type");
  EXPECT_EQ(SerializationMessage(R"({"v":[]})", JsonShape::kStruct, "ProvisionedThroughput"),
            "Unrecognized collection type class "
            "com.amazonaws.dynamodb.v20120810.ProvisionedThroughput");
  EXPECT_EQ(SerializationMessage(R"({"v":"x"})", JsonShape::kValueStruct, "KeySchemaElement"),
            "Unexpected value type in payload");
  EXPECT_EQ(SerializationMessage(R"({"v":[]})", JsonShape::kMap, "AttributeValue"),
            "Unrecognized collection type java.util.Map<java.lang.String, "
            "com.amazonaws.dynamodb.v20120810.AttributeValue>");
  EXPECT_EQ(SerializationMessage(R"({"v":"maybe"})", JsonShape::kBoolean),
            "Unexpected token received from parser");
}

TEST(JsonUtilTest, GettersTreatNullAsAbsentAndCoerce) {
  rapidjson::Document d = Parse(R"({"a":null,"b":"yes","c":7.9,"s":"x"})");
  auto a = GetString(d, "a");
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->has_value());
  auto b = GetBool(d, "b");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(**b, true);
  auto c = GetLong(d, "c");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(**c, 7);
  auto missing = GetList(d, "zzz");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(*missing, nullptr);
  auto wrong = GetList(d, "s");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().message, "Unexpected field type");
}

TEST(JsonUtilTest, ConstraintErrorsRenderLikeDynamoDb) {
  ConstraintErrors e;
  EXPECT_TRUE(e.ToStatus().ok());
  e.Enum("keySchema.1.member.keyType", "INVALID", {"HASH", "RANGE"});
  EXPECT_EQ(e.ToError().message,
            "1 validation error detected: Value 'INVALID' at 'keySchema.1.member.keyType' failed "
            "to satisfy constraint: Member must satisfy enum value set: [HASH, RANGE]");
  e.NotNull("keySchema", false);
  e.MinValue("limit", 0, 1);
  EXPECT_EQ(e.ToError().message,
            "3 validation errors detected: Value 'INVALID' at 'keySchema.1.member.keyType' failed "
            "to satisfy constraint: Member must satisfy enum value set: [HASH, RANGE]; Value null "
            "at 'keySchema' failed to satisfy constraint: Member must not be null; Value '0' at "
            "'limit' failed to satisfy constraint: Member must have value greater than or equal "
            "to 1");
}

TEST(JsonUtilTest, ConstraintErrorsListAtMostTen) {
  ConstraintErrors e;
  for (int i = 0; i < 12; ++i) e.NotNull("x" + std::to_string(i), false);
  std::string msg = e.ToError().message;
  EXPECT_EQ(msg.rfind("12 validation errors detected: ", 0), 0u);
  EXPECT_NE(msg.find("'x9'"), std::string::npos);
  EXPECT_EQ(msg.find("'x10'"), std::string::npos);
}

TEST(JsonUtilTest, ControlPlaneTableName) {
  EXPECT_EQ(ValidateControlPlaneTableName(std::nullopt).error().message,
            "The parameter 'TableName' is required but was not present in the request");
  EXPECT_EQ(ValidateControlPlaneTableName("ab").error().message,
            "1 validation error detected: Value 'ab' at 'tableName' failed to satisfy "
            "constraint: Member must have length greater than or equal to 3");
  EXPECT_EQ(ValidateControlPlaneTableName("bad name").error().message,
            "1 validation error detected: Value 'bad name' at 'tableName' failed to satisfy "
            "constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
  EXPECT_EQ(ValidateControlPlaneTableName(std::string(256, 'a')).error().message,
            "1 validation error detected: Value '" + std::string(256, 'a') +
                "' at 'tableName' failed to satisfy constraint: Member must have length less "
                "than or equal to 255");
  EXPECT_TRUE(ValidateControlPlaneTableName("A_b.c-9").ok());
}

TEST(JsonUtilTest, DataPlaneTableName) {
  auto check = [](const char* json) {
    rapidjson::Document d = Parse(json);
    ConstraintErrors e;
    CheckDataPlaneTableName(e, Member(d, "TableName"));
    return e.empty() ? std::string("ok") : e.ToError().message;
  };
  EXPECT_EQ(check(R"({})"),
            "1 validation error detected: Value null at 'tableName' failed to satisfy "
            "constraint: Member must not be null");
  EXPECT_EQ(check(R"({"TableName":""})"),
            "1 validation error detected: Value '' at 'tableName' failed to satisfy constraint: "
            "Member must have length greater than or equal to 1");
  EXPECT_EQ(check(R"({"TableName":"bad table!@#"})"),
            "1 validation error detected: Value 'bad table!@#' at 'tableName' failed to satisfy "
            "constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
  EXPECT_EQ(check(R"({"TableName":"good"})"), "ok");
}

const char kTooLarge[] =
    "1 validation error detected: Attribute name is too large, must be less than 65536 bytes";

std::string NamesResult(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str(), json.size());
  auto names = DecodeExpressionAttributeNames(d);
  if (!names.ok()) return names.error().message;
  std::string out;
  for (const auto& [k, v] : *names) out += k + "=" + std::to_string(v.size()) + ";";
  return out;
}

TEST(JsonUtilTest, ExpressionAttributeNamesAreNamesOfOneToMaxBytes) {
  EXPECT_EQ(NamesResult(R"({"#a":"x","#b":"yy"})"), "#a=1;#b=2;");
  EXPECT_EQ(NamesResult(R"({})"), "ExpressionAttributeNames must not be empty");
  EXPECT_EQ(NamesResult(R"({"#a":"x","#b":""})"),
            "ExpressionAttributeNames contains invalid value: Empty attribute name for key #b");
  EXPECT_EQ(NamesResult(R"({"#a":")" + std::string(65'535, 'n') + R"("})"), "#a=65535;");
  EXPECT_EQ(NamesResult(R"({"#a":")" + std::string(65'536, 'n') + R"("})"), kTooLarge);
}

std::string NameCheck(const std::string& json, bool list) {
  rapidjson::Document d;
  d.Parse(json.c_str(), json.size());
  Status s = list ? CheckAttributeNameList(d) : CheckAttributeNameKeys(d);
  return s.ok() ? "ok" : s.error().message;
}

TEST(JsonUtilTest, LegacyMapKeysAndNameListsAreAttributeNames) {
  const std::string long_name(65'536, 'n');
  EXPECT_EQ(NameCheck(R"({"a":{},"b":null})", false), "ok");
  EXPECT_EQ(NameCheck(R"({"a":{},"":{}})", false), "Empty attribute name");
  EXPECT_EQ(NameCheck(R"({")" + long_name + R"(":{}})", false), kTooLarge);
  EXPECT_EQ(NameCheck(R"(["a","b"])", true), "ok");
  EXPECT_EQ(NameCheck(R"(["a",""])", true), "Empty attribute name");
  EXPECT_EQ(NameCheck(R"([")" + long_name + R"("])", true), kTooLarge);
}

}  // namespace
}  // namespace fdyno::api
