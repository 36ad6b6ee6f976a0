// DecodeItemRequest: DynamoDB's order of checks (deserialization, collected constraints,
// semantic rules) on requests that need no table.
#include "api/item_request.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace fdyno::api {
namespace {

Result<ItemRequest> Decode(ItemOp op, const char* json) {
  rapidjson::Document doc;
  doc.Parse(json);
  EXPECT_FALSE(doc.HasParseError()) << json;
  return DecodeItemRequest(op, doc);
}

std::string Message(ItemOp op, const char* json) {
  auto r = Decode(op, json);
  return r.ok() ? "ok" : std::string(WireType(r.error().type)) + ": " + r.error().message;
}

TEST(ItemRequestTest, SerializationErrorsComeFirst) {
  EXPECT_EQ(Message(ItemOp::kPutItem, R"({"TableName":5,"Item":{"pk":{"S":"a"}}})"),
            "SerializationException: NUMBER_VALUE cannot be converted to String");
  // A wrong member type wins over constraint violations elsewhere.
  EXPECT_EQ(
      Message(ItemOp::kGetItem, R"({"TableName":"","Key":{},"ConsistentRead":[]})").substr(0, 22),
      "SerializationException");
}

TEST(ItemRequestTest, ConstraintsAreCollected) {
  EXPECT_EQ(Message(ItemOp::kGetItem, R"({})"),
            "ValidationException: 2 validation errors detected: Value null at 'tableName' "
            "failed to satisfy constraint: Member must not be null; Value null at 'key' failed "
            "to satisfy constraint: Member must not be null");
  std::string m = Message(ItemOp::kUpdateItem,
                          R"({"TableName":"tbl","Key":{"pk":{"S":"a"}},"ReturnValues":"X",)"
                          R"("ReturnConsumedCapacity":"Y","ConditionalOperator":"Z"})");
  EXPECT_EQ(m.rfind("ValidationException: 3 validation errors detected: ", 0), 0u) << m;
  EXPECT_NE(m.find("Value 'X' at 'returnValues' failed to satisfy constraint: Member must "
                   "satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]"),
            std::string::npos);
  EXPECT_NE(m.find("at 'conditionalOperator'"), std::string::npos);
}

TEST(ItemRequestTest, LegacyAndExpressionParametersNeverMix) {
  EXPECT_EQ(Message(ItemOp::kUpdateItem,
                    R"({"TableName":"tbl","Key":{"pk":{"S":"a"}},)"
                    R"("AttributeUpdates":{"a":{"Action":"DELETE"}},"Expected":{},)"
                    R"("UpdateExpression":"REMOVE a","ConditionExpression":"a = a"})"),
            "ValidationException: 1 validation error detected: Can not use both expression and "
            "non-expression parameters in the same request: Non-expression parameters: "
            "{AttributeUpdates, Expected} "
            "Expression parameters: {UpdateExpression, ConditionExpression}");
  EXPECT_EQ(Message(ItemOp::kUpdateItem, R"({"TableName":"tbl","Key":{"pk":{"S":"a"}},)"
                                         R"("ExpressionAttributeNames":{"#a":"a"}})"),
            "ValidationException: 1 validation error detected: ExpressionAttributeNames can only "
            "be specified when using expressions: UpdateExpression and ConditionExpression are "
            "null");
  EXPECT_EQ(Message(ItemOp::kGetItem, R"({"TableName":"tbl","Key":{"pk":{"S":"a"}},)"
                                      R"("ExpressionAttributeNames":{"#a":"a"}})"),
            "ValidationException: ExpressionAttributeNames can only be specified when using "
            "expressions: ProjectionExpression is null");
}

// Writes answer their request's own errors in the envelope, once; GetItem answers them bare; an
// attribute value with no type or several is bare everywhere.
TEST(ItemRequestTest, WritesEnvelopeTheirRequestErrors) {
  EXPECT_EQ(Message(ItemOp::kPutItem,
                    R"({"TableName":"tbl","Item":{"pk":{"S":"a"},"n":{"NULL":false}}})"),
            "ValidationException: 1 validation error detected: One or more parameter values "
            "were invalid: Null attribute value types must have the value of true");
  EXPECT_EQ(Message(ItemOp::kGetItem, R"({"TableName":"tbl","Key":{"pk":{"NULL":false}}})"),
            "ValidationException: One or more parameter values were invalid: Null attribute "
            "value types must have the value of true");
  EXPECT_EQ(Message(ItemOp::kPutItem, R"({"TableName":"tbl","Item":{"pk":{"S":"a"},"n":{}}})"),
            "ValidationException: Supplied AttributeValue is empty, must contain exactly one of "
            "the supported datatypes");
  EXPECT_EQ(Message(ItemOp::kDeleteItem, R"({"TableName":"t","Key":{"pk":{"S":"a"}}})"),
            "ValidationException: 1 validation error detected: Value 't' at 'tableName' failed "
            "to satisfy constraint: Member must have length greater than or equal to 3");
}

TEST(ItemRequestTest, AttributeValuesAndReturnValues) {
  EXPECT_EQ(Message(ItemOp::kPutItem,
                    R"({"TableName":"tbl","Item":{"pk":{"S":"a"}},"ConditionExpression":"a = :v",)"
                    R"("ExpressionAttributeValues":{":v":{"SS":[]}}})"),
            "ValidationException: 1 validation error detected: ExpressionAttributeValues contains "
            "invalid value: One or more parameter values were invalid: An string set  may not be "
            "empty for key :v");
  EXPECT_EQ(Message(ItemOp::kDeleteItem,
                    R"({"TableName":"tbl","Key":{"pk":{"S":"a"}},"ReturnValues":"ALL_NEW"})"),
            "ValidationException: 1 validation error detected: ReturnValues can only be ALL_OLD or "
            "NONE");
  auto ok = Decode(ItemOp::kUpdateItem,
                   R"({"TableName":"tbl","Key":{"pk":{"S":"a"}},"ReturnValues":"UPDATED_NEW",)"
                   R"("ReturnConsumedCapacity":"TOTAL","ReturnItemCollectionMetrics":"SIZE",)"
                   R"("ReturnValuesOnConditionCheckFailure":"ALL_OLD"})");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->return_values, ReturnValues::kUpdatedNew);
  EXPECT_EQ(ok->return_consumed_capacity, ReturnConsumedCapacity::kTotal);
  EXPECT_TRUE(ok->return_item_collection_metrics);
  EXPECT_TRUE(ok->return_old_on_condition_failure);
}

}  // namespace
}  // namespace fdyno::api
