#include "api/item_request.h"

#include <array>
#include <span>

#include "api/json_util.h"
#include "api/parameter_mix.h"
#include "api/request_model.h"
#include "model/json.h"

namespace fdyno::api {

std::string_view ItemOpName(ItemOp op) {
  switch (op) {
    case ItemOp::kPutItem:
      return "PutItem";
    case ItemOp::kGetItem:
      return "GetItem";
    case ItemOp::kUpdateItem:
      return "UpdateItem";
    case ItemOp::kDeleteItem:
      return "DeleteItem";
  }
  return "";
}

namespace {

using request::Check;
using request::Read;
using request::Rule;
using Value = rapidjson::Value;

// Every member of the four operations; each reads only its own.
struct Members {
  const Value* table_name = nullptr;
  const Value* item = nullptr;  // Item or Key
  const Value* return_values = nullptr;
  const Value* return_consumed_capacity = nullptr;
  const Value* return_item_collection_metrics = nullptr;
  const Value* return_values_on_ccf = nullptr;
  const Value* conditional_operator = nullptr;
  const Value* condition_expression = nullptr;
  const Value* update_expression = nullptr;
  const Value* projection_expression = nullptr;
  const Value* consistent_read = nullptr;
  const Value* names = nullptr;
  const Value* values = nullptr;
  const Value* expected = nullptr;
  const Value* attribute_updates = nullptr;
  const Value* attributes_to_get = nullptr;
};
using M = Members;

// Phase 1: each operation's members in the order DynamoDB's deserializer meets them.
constexpr Read<M> kTableName{"TableName", &M::table_name, JsonShape::kString};
constexpr Read<M> kExpected{"Expected", &M::expected, JsonShape::kMap, "ExpectedAttributeValue",
                            request::ExpectedEntries};
constexpr Read<M> kConditionalOperator{"ConditionalOperator", &M::conditional_operator,
                                       JsonShape::kString};
constexpr Read<M> kReturnValues{"ReturnValues", &M::return_values, JsonShape::kString};
constexpr Read<M> kReturnMetrics{"ReturnItemCollectionMetrics", &M::return_item_collection_metrics,
                                 JsonShape::kString};
constexpr Read<M> kConditionExpression{"ConditionExpression", &M::condition_expression,
                                       JsonShape::kString};
constexpr Read<M> kReturnOnFailure{"ReturnValuesOnConditionCheckFailure", &M::return_values_on_ccf,
                                   JsonShape::kString};
constexpr Read<M> kReturnCapacity{"ReturnConsumedCapacity", &M::return_consumed_capacity,
                                  JsonShape::kString};
constexpr Read<M> kNames{"ExpressionAttributeNames", &M::names, JsonShape::kMap, "String",
                         request::StringValues};
constexpr Read<M> kValues{"ExpressionAttributeValues", &M::values, JsonShape::kMap,
                          "AttributeValue", request::AttributeValues};
constexpr Read<M> kKey{"Key", &M::item, JsonShape::kMap, "AttributeValue",
                       request::AttributeValues};

// What PutItem, UpdateItem and DeleteItem read between their first members and their last.
constexpr std::array<Read<M>, 7> kWriteReads = {
    kExpected,        kConditionalOperator, kReturnValues, kReturnMetrics, kConditionExpression,
    kReturnOnFailure, kReturnCapacity};
constexpr std::array<Read<M>, 2> kExpressionMaps = {kNames, kValues};

constexpr auto kPutItemReads = request::Join(
    std::array<Read<M>, 2>{
        {kTableName,
         {"Item", &M::item, JsonShape::kMap, "AttributeValue", request::AttributeValues}}},
    kWriteReads, kExpressionMaps);
constexpr Read<M> kGetItemReads[] = {
    kTableName,
    kKey,
    {"AttributesToGet", &M::attributes_to_get, JsonShape::kList, {}, request::StringElements},
    {"ConsistentRead", &M::consistent_read, JsonShape::kBoolean},
    kReturnCapacity,
    {"ProjectionExpression", &M::projection_expression, JsonShape::kString},
    kNames};
constexpr auto kUpdateItemReads = request::Join(
    std::array<Read<M>, 3>{{kTableName,
                            kKey,
                            {"AttributeUpdates", &M::attribute_updates, JsonShape::kMap,
                             "AttributeValueUpdate", request::AttributeUpdateEntries}}},
    kWriteReads,
    std::array<Read<M>, 1>{{{"UpdateExpression", &M::update_expression, JsonShape::kString}}},
    kExpressionMaps);
constexpr auto kDeleteItemReads =
    request::Join(std::array{kTableName, kKey}, kWriteReads, kExpressionMaps);

std::span<const Read<M>> ReadsOf(ItemOp op) {
  switch (op) {
    case ItemOp::kPutItem:
      return kPutItemReads;
    case ItemOp::kGetItem:
      return kGetItemReads;
    case ItemOp::kUpdateItem:
      return kUpdateItemReads;
    case ItemOp::kDeleteItem:
      return kDeleteItemReads;
  }
  return {};
}

// Phase 2: the API model's constraints, in the order DynamoDB lists them.
void AttributeUpdateActions(ConstraintErrors& errors, std::string_view path, const Value* map) {
  static constexpr std::string_view kActions[] = {"ADD", "PUT", "DELETE"};
  request::EntryEnums(errors, path, map, "Action", kActions, /*required=*/false);
}

// What PutItem, UpdateItem and DeleteItem check after the table name and the item or key.
constexpr std::array<Check<M>, 7> kWriteChecks = {
    request::Enum(&M::return_values, "returnValues", request::kReturnValues),
    request::Enum(&M::return_consumed_capacity, "returnConsumedCapacity",
                  request::kReturnConsumedCapacity),
    request::Enum(&M::return_item_collection_metrics, "returnItemCollectionMetrics",
                  request::kReturnItemCollectionMetrics),
    request::Enum(&M::conditional_operator, "conditionalOperator", request::kConditionalOperator),
    request::Enum(&M::return_values_on_ccf, "returnValuesOnConditionCheckFailure",
                  request::kReturnValuesOnConditionCheckFailure),
    request::Custom(&M::expected, "expected", request::OptionalOperators),
    request::Custom(&M::attribute_updates, "attributeUpdates", AttributeUpdateActions)};
constexpr auto kPutItemChecks = request::Join(
    std::array{request::DataPlaneTableName(&M::table_name), request::NotNull(&M::item, "item")},
    kWriteChecks);
constexpr auto kKeyedChecks = request::Join(
    std::array{request::DataPlaneTableName(&M::table_name), request::NotNull(&M::item, "key")},
    kWriteChecks);
constexpr Check<M> kGetItemChecks[] = {
    request::DataPlaneTableName(&M::table_name), request::NotNull(&M::item, "key"),
    request::NotEmptyList(&M::attributes_to_get, "attributesToGet"),
    request::Enum(&M::return_consumed_capacity, "returnConsumedCapacity",
                  request::kReturnConsumedCapacity)};

std::span<const Check<M>> ChecksOf(ItemOp op) {
  switch (op) {
    case ItemOp::kPutItem:
      return kPutItemChecks;
    case ItemOp::kGetItem:
      return kGetItemChecks;
    case ItemOp::kUpdateItem:
    case ItemOp::kDeleteItem:
      return kKeyedChecks;
  }
  return {};
}

// The simple members, copied.
ItemRequest CopyMembers(ItemOp op, const Members& m) {
  using request::Text;
  ItemRequest r;
  r.op = op;
  r.table_name = std::string(AsStringView(*m.table_name));
  if (auto v = Text(m.return_values)) {
    r.return_values = v == "ALL_OLD"       ? ReturnValues::kAllOld
                      : v == "UPDATED_OLD" ? ReturnValues::kUpdatedOld
                      : v == "ALL_NEW"     ? ReturnValues::kAllNew
                      : v == "UPDATED_NEW" ? ReturnValues::kUpdatedNew
                                           : ReturnValues::kNone;
  }
  r.return_item_collection_metrics = Text(m.return_item_collection_metrics) == "SIZE";
  r.return_old_on_condition_failure = Text(m.return_values_on_ccf) == "ALL_OLD";
  r.consistent_read = request::Flag(m.consistent_read).value_or(false);
  auto copy = [](const Value* member, std::optional<std::string>& out) {
    if (member) out = std::string(AsStringView(*member));
  };
  copy(m.condition_expression, r.condition_expression);
  copy(m.update_expression, r.update_expression);
  copy(m.projection_expression, r.projection_expression);
  copy(m.conditional_operator, r.conditional_operator);
  return r;
}

// Phase 4a: legacy and expression parameters never mix; ExpressionAttribute* need an
// expression.
Status CheckParameterMix(ItemOp op, const Members& m) {
  ParameterMix mix;
  switch (op) {
    case ItemOp::kGetItem:
      mix.Legacy("AttributesToGet", m.attributes_to_get != nullptr)
          .Expression("ProjectionExpression", m.projection_expression != nullptr);
      break;
    case ItemOp::kUpdateItem:
      mix.Legacy("AttributeUpdates", m.attribute_updates != nullptr)
          .Legacy("Expected", m.expected != nullptr)
          .Legacy("ConditionalOperator", m.conditional_operator != nullptr)
          .Expression("UpdateExpression", m.update_expression != nullptr)
          .Expression("ConditionExpression", m.condition_expression != nullptr);
      break;
    case ItemOp::kPutItem:
    case ItemOp::kDeleteItem:
      mix.Legacy("Expected", m.expected != nullptr)
          .Legacy("ConditionalOperator", m.conditional_operator != nullptr)
          .Expression("ConditionExpression", m.condition_expression != nullptr);
      break;
  }
  if (mix.mixed()) return mix.MixedError();
  if (m.conditional_operator && op != ItemOp::kGetItem && m.expected == nullptr) {
    return Error::Validation(
        "ConditionalOperator can only be used when Filter or Expected has two or more elements");
  }
  return mix.CheckAttributeMaps(m.names != nullptr, m.values != nullptr);
}

Result<expr::legacy::ExpectedCondition> DecodeExpected(const rapidjson::Value& e) {
  expr::legacy::ExpectedCondition c;
  if (e.IsNull()) return c;
  if (const rapidjson::Value* v = Member(e, "Value")) {
    FDYNO_ASSIGN_OR_RETURN(c.value, model::DecodeAttributeValue(*v));
  }
  FDYNO_ASSIGN_OR_RETURN(c.exists, GetBool(e, "Exists"));
  if (const rapidjson::Value* op = Member(e, "ComparisonOperator")) {
    c.op = expr::legacy::ParseComparisonOperator(AsStringView(*op));
  }
  if (const rapidjson::Value* list = Member(e, "AttributeValueList")) {
    std::vector<model::AttributeValue> values;
    for (const auto& v : list->GetArray()) {
      FDYNO_ASSIGN_OR_RETURN(model::AttributeValue av, model::DecodeAttributeValue(v));
      values.push_back(std::move(av));
    }
    c.value_list = std::move(values);
  }
  return c;
}

Result<expr::legacy::AttributeUpdate> DecodeAttributeUpdate(const rapidjson::Value& e) {
  expr::legacy::AttributeUpdate u;
  if (e.IsNull()) return u;
  if (const rapidjson::Value* v = Member(e, "Value")) {
    FDYNO_ASSIGN_OR_RETURN(u.value, model::DecodeAttributeValue(*v));
  }
  if (const rapidjson::Value* a = Member(e, "Action")) {
    std::string_view action = AsStringView(*a);
    u.action = action == "ADD"      ? expr::legacy::AttributeUpdate::Action::kAdd
               : action == "DELETE" ? expr::legacy::AttributeUpdate::Action::kDelete
                                    : expr::legacy::AttributeUpdate::Action::kPut;
  }
  return u;
}

// Phase 3: the legacy parameters' values.
Status DecodeLegacy(const Members& m, ItemRequest& r) {
  if (m.expected) {
    FDYNO_RETURN_IF_ERROR(CheckAttributeNameKeys(*m.expected));
    r.has_expected = true;
    for (const auto& e : m.expected->GetObject()) {
      FDYNO_ASSIGN_OR_RETURN(auto c, DecodeExpected(e.value));
      r.expected.emplace(std::string(AsStringView(e.name)), std::move(c));
    }
  }
  if (m.attribute_updates) {
    FDYNO_RETURN_IF_ERROR(CheckAttributeNameKeys(*m.attribute_updates));
    r.has_attribute_updates = true;
    for (const auto& e : m.attribute_updates->GetObject()) {
      FDYNO_ASSIGN_OR_RETURN(auto u, DecodeAttributeUpdate(e.value));
      r.attribute_updates.emplace(std::string(AsStringView(e.name)), std::move(u));
    }
  }
  if (m.attributes_to_get) {
    FDYNO_RETURN_IF_ERROR(CheckAttributeNameList(*m.attributes_to_get));
    r.has_attributes_to_get = true;
    for (const auto& v : m.attributes_to_get->GetArray()) {
      r.attributes_to_get.emplace_back(AsStringView(v));
    }
  }
  return Status::Ok();
}

// Phases 2 to 4 over the members phase 1 read.
Result<ItemRequest> DecodeMembers(ItemOp op, const Members& m) {
  FDYNO_RETURN_IF_ERROR(request::CheckMembers<M>(ChecksOf(op), m));
  ItemRequest r = CopyMembers(op, m);
  FDYNO_ASSIGN_OR_RETURN(r.return_consumed_capacity,
                         ParseReturnConsumedCapacity(request::Text(m.return_consumed_capacity)));
  FDYNO_RETURN_IF_ERROR(CheckParameterMix(op, m));
  FDYNO_ASSIGN_OR_RETURN(r.item, model::DecodeItem(*m.item));
  if (m.names) {
    r.has_expression_attribute_names = true;
    FDYNO_ASSIGN_OR_RETURN(r.expression_attribute_names, DecodeExpressionAttributeNames(*m.names));
  }
  if (m.values) {
    if (m.values->ObjectEmpty()) {
      return Error::Validation("ExpressionAttributeValues must not be empty");
    }
    r.has_expression_attribute_values = true;
    FDYNO_ASSIGN_OR_RETURN(r.expression_attribute_values,
                           DecodeExpressionAttributeValues(*m.values));
  }
  FDYNO_RETURN_IF_ERROR(DecodeLegacy(m, r));
  // Phase 4b: ReturnValues must suit the operation.
  if ((op == ItemOp::kPutItem || op == ItemOp::kDeleteItem) &&
      r.return_values != ReturnValues::kNone && r.return_values != ReturnValues::kAllOld) {
    return Error::Validation("ReturnValues can only be ALL_OLD or NONE");
  }
  return r;
}

}  // namespace

Result<ItemRequest> DecodeItemRequest(ItemOp op, const rapidjson::Value& body) {
  Members m;
  FDYNO_RETURN_IF_ERROR(request::ReadMembers<M>(body, ReadsOf(op), m));
  Result<ItemRequest> r = DecodeMembers(op, m);
  if (!r.ok() && op != ItemOp::kGetItem) return Error::InEnvelope(std::move(r).error());
  return r;
}

}  // namespace fdyno::api
