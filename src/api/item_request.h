// Request decoding and static validation for the single-item operations (PutItem, GetItem,
// UpdateItem, DeleteItem), in DynamoDB's order of checks:
//   1. deserialization of every member (SerializationException, first found);
//   2. constraints from the API model, collected into one ValidationException;
//   3. attribute values of Item/Key and ExpressionAttributeValues (DynamoDB's messages);
//   4. legacy/expression mixing, ExpressionAttribute* without expressions, ReturnValues
//      validity for the operation.
// Expression parsing and resolution, and every check that needs the table, come after (in
// item_ops.cc). Pure; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/capacity.h"
#include "base/result.h"
#include "expr/legacy.h"
#include "model/attribute_value.h"

namespace fdyno::api {

enum class ItemOp { kPutItem, kGetItem, kUpdateItem, kDeleteItem };
std::string_view ItemOpName(ItemOp op);

enum class ReturnValues { kNone, kAllOld, kUpdatedOld, kAllNew, kUpdatedNew };

// A decoded single-item request. Pointers refer into the request body, which outlives it.
struct ItemRequest {
  ItemOp op = ItemOp::kGetItem;
  std::string table_name;
  model::Item item;  // PutItem: the item; the others: the key
  ReturnValues return_values = ReturnValues::kNone;
  ReturnConsumedCapacity return_consumed_capacity = ReturnConsumedCapacity::kNone;
  bool return_item_collection_metrics = false;   // SIZE
  bool return_old_on_condition_failure = false;  // ReturnValuesOnConditionCheckFailure ALL_OLD
  bool consistent_read = false;

  std::optional<std::string> condition_expression;
  std::optional<std::string> update_expression;
  std::optional<std::string> projection_expression;
  std::map<std::string, std::string> expression_attribute_names;
  bool has_expression_attribute_names = false;
  model::Map expression_attribute_values;
  bool has_expression_attribute_values = false;

  // Legacy parameters, decoded (converted to trees by expr/legacy.h).
  bool has_expected = false;
  std::map<std::string, expr::legacy::ExpectedCondition> expected;
  std::optional<std::string> conditional_operator;  // "AND" / "OR"
  bool has_attribute_updates = false;
  std::map<std::string, expr::legacy::AttributeUpdate> attribute_updates;
  std::vector<std::string> attributes_to_get;
  bool has_attributes_to_get = false;
};

// Steps 1-4 above.
Result<ItemRequest> DecodeItemRequest(ItemOp op, const rapidjson::Value& body);

}  // namespace fdyno::api
