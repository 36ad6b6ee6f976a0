#include "api/item_request.h"

#include <cctype>

#include "api/json_util.h"
#include "api/parameter_mix.h"
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

struct Members {
  const rapidjson::Value* table_name = nullptr;
  const rapidjson::Value* item = nullptr;  // Item or Key
  std::optional<std::string_view> return_values;
  std::optional<std::string_view> return_consumed_capacity;
  std::optional<std::string_view> return_item_collection_metrics;
  std::optional<std::string_view> return_values_on_ccf;
  std::optional<std::string_view> conditional_operator;
  std::optional<std::string_view> condition_expression;
  std::optional<std::string_view> update_expression;
  std::optional<std::string_view> projection_expression;
  std::optional<bool> consistent_read;
  const rapidjson::Value* names = nullptr;
  const rapidjson::Value* values = nullptr;
  const rapidjson::Value* expected = nullptr;
  const rapidjson::Value* attribute_updates = nullptr;
  const rapidjson::Value* attributes_to_get = nullptr;
};

// Phase 1: every member's JSON type, in the order of the API model's members.
Result<Members> ReadMembers(ItemOp op, const rapidjson::Value& body) {
  Members m;
  FDYNO_RETURN_IF_ERROR(RequireObjectBody(body));
  const bool writes = op != ItemOp::kGetItem;
  m.table_name = Member(body, "TableName");
  if (m.table_name) FDYNO_RETURN_IF_ERROR(CheckShape(*m.table_name, JsonShape::kString));
  const char* item_name = op == ItemOp::kPutItem ? "Item" : "Key";
  FDYNO_ASSIGN_OR_RETURN(m.item, GetMap(body, item_name, "AttributeValue"));
  if (m.item) FDYNO_RETURN_IF_ERROR(model::CheckItemShape(*m.item));
  if (op == ItemOp::kGetItem) {
    FDYNO_ASSIGN_OR_RETURN(m.attributes_to_get, GetList(body, "AttributesToGet"));
    if (m.attributes_to_get) {
      for (const auto& v : m.attributes_to_get->GetArray()) {
        FDYNO_RETURN_IF_ERROR(CheckShape(v, JsonShape::kString));
      }
    }
    FDYNO_ASSIGN_OR_RETURN(m.consistent_read, GetBool(body, "ConsistentRead"));
  }
  if (op == ItemOp::kUpdateItem) {
    FDYNO_ASSIGN_OR_RETURN(m.attribute_updates,
                           GetMap(body, "AttributeUpdates", "AttributeValueUpdate"));
    if (m.attribute_updates) {
      for (const auto& e : m.attribute_updates->GetObject()) {
        if (e.value.IsNull()) continue;
        FDYNO_RETURN_IF_ERROR(CheckShape(e.value, JsonShape::kValueStruct, "AttributeValueUpdate"));
        if (const rapidjson::Value* v = Member(e.value, "Value")) {
          FDYNO_RETURN_IF_ERROR(model::CheckAttributeValueShape(*v));
        }
        if (const rapidjson::Value* a = Member(e.value, "Action")) {
          FDYNO_RETURN_IF_ERROR(CheckShape(*a, JsonShape::kString));
        }
      }
    }
  }
  if (writes) {
    FDYNO_ASSIGN_OR_RETURN(m.expected, GetMap(body, "Expected", "ExpectedAttributeValue"));
    if (m.expected) {
      for (const auto& e : m.expected->GetObject()) {
        if (e.value.IsNull()) continue;
        FDYNO_RETURN_IF_ERROR(
            CheckShape(e.value, JsonShape::kValueStruct, "ExpectedAttributeValue"));
        if (const rapidjson::Value* v = Member(e.value, "Value")) {
          FDYNO_RETURN_IF_ERROR(model::CheckAttributeValueShape(*v));
        }
        FDYNO_ASSIGN_OR_RETURN(auto exists, GetBool(e.value, "Exists"));
        (void)exists;
        FDYNO_ASSIGN_OR_RETURN(auto cmp, GetString(e.value, "ComparisonOperator"));
        (void)cmp;
        FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* list,
                               GetList(e.value, "AttributeValueList"));
        if (list) {
          for (const auto& v : list->GetArray()) {
            FDYNO_RETURN_IF_ERROR(model::CheckAttributeValueShape(v));
          }
        }
      }
    }
    FDYNO_ASSIGN_OR_RETURN(m.conditional_operator, GetString(body, "ConditionalOperator"));
    FDYNO_ASSIGN_OR_RETURN(m.return_values, GetString(body, "ReturnValues"));
    FDYNO_ASSIGN_OR_RETURN(m.return_item_collection_metrics,
                           GetString(body, "ReturnItemCollectionMetrics"));
    FDYNO_ASSIGN_OR_RETURN(m.condition_expression, GetString(body, "ConditionExpression"));
    FDYNO_ASSIGN_OR_RETURN(m.return_values_on_ccf,
                           GetString(body, "ReturnValuesOnConditionCheckFailure"));
  }
  FDYNO_ASSIGN_OR_RETURN(m.return_consumed_capacity, GetString(body, "ReturnConsumedCapacity"));
  if (op == ItemOp::kUpdateItem) {
    FDYNO_ASSIGN_OR_RETURN(m.update_expression, GetString(body, "UpdateExpression"));
  }
  if (op == ItemOp::kGetItem) {
    FDYNO_ASSIGN_OR_RETURN(m.projection_expression, GetString(body, "ProjectionExpression"));
  }
  FDYNO_ASSIGN_OR_RETURN(m.names, GetExpressionNames(body));
  if (writes) {
    FDYNO_ASSIGN_OR_RETURN(m.values, GetExpressionValues(body));
  }
  return m;
}

// Phase 2: the API model's constraints, all reported together.
Status CheckConstraints(ItemOp op, const Members& m) {
  ConstraintErrors errors;
  CheckDataPlaneTableName(errors, m.table_name);
  errors.NotNull(op == ItemOp::kPutItem ? "item" : "key", m.item != nullptr);
  if (m.attributes_to_get && m.attributes_to_get->GetArray().Empty()) {
    errors.AddWithoutValue("attributesToGet", "Member must have length greater than or equal to 1");
  }
  if (m.return_values) {
    errors.Enum("returnValues", *m.return_values,
                {"ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW"});
  }
  if (m.return_consumed_capacity) {
    errors.Enum("returnConsumedCapacity", *m.return_consumed_capacity,
                {"INDEXES", "TOTAL", "NONE"});
  }
  if (m.return_item_collection_metrics) {
    errors.Enum("returnItemCollectionMetrics", *m.return_item_collection_metrics, {"SIZE", "NONE"});
  }
  if (m.conditional_operator) {
    errors.Enum("conditionalOperator", *m.conditional_operator, {"AND", "OR"});
  }
  if (m.return_values_on_ccf) {
    errors.Enum("returnValuesOnConditionCheckFailure", *m.return_values_on_ccf,
                {"ALL_OLD", "NONE"});
  }
  auto each_entry = [&](const rapidjson::Value* map, const char* member, const char* field,
                        std::initializer_list<std::string_view> allowed) {
    if (map == nullptr) return;
    for (const auto& e : map->GetObject()) {
      if (e.value.IsNull()) continue;
      if (const rapidjson::Value* v = Member(e.value, field)) {
        errors.Enum(std::string(member) + "." + std::string(AsStringView(e.name)) + ".member." +
                        static_cast<char>(std::tolower(field[0])) + (field + 1),
                    AsStringView(*v), allowed);
      }
    }
  };
  each_entry(m.expected, "expected", "ComparisonOperator",
             {"EQ", "NE", "IN", "LE", "LT", "GE", "GT", "BETWEEN", "NOT_NULL", "NULL", "CONTAINS",
              "NOT_CONTAINS", "BEGINS_WITH"});
  each_entry(m.attribute_updates, "attributeUpdates", "Action", {"ADD", "PUT", "DELETE"});
  return errors.ToStatus();
}

// The simple members, copied.
ItemRequest CopyMembers(ItemOp op, const Members& m) {
  ItemRequest r;
  r.op = op;
  r.table_name = std::string(AsStringView(*m.table_name));
  if (m.return_values) {
    std::string_view v = *m.return_values;
    r.return_values = v == "ALL_OLD"       ? ReturnValues::kAllOld
                      : v == "UPDATED_OLD" ? ReturnValues::kUpdatedOld
                      : v == "ALL_NEW"     ? ReturnValues::kAllNew
                      : v == "UPDATED_NEW" ? ReturnValues::kUpdatedNew
                                           : ReturnValues::kNone;
  }
  r.return_item_collection_metrics =
      m.return_item_collection_metrics && *m.return_item_collection_metrics == "SIZE";
  r.return_old_on_condition_failure =
      m.return_values_on_ccf && *m.return_values_on_ccf == "ALL_OLD";
  r.consistent_read = m.consistent_read.value_or(false);
  if (m.condition_expression) r.condition_expression = std::string(*m.condition_expression);
  if (m.update_expression) r.update_expression = std::string(*m.update_expression);
  if (m.projection_expression) r.projection_expression = std::string(*m.projection_expression);
  if (m.conditional_operator) r.conditional_operator = std::string(*m.conditional_operator);
  return r;
}

// Phase 4a: legacy and expression parameters never mix; ExpressionAttribute* need an
// expression.
Status CheckParameterMix(ItemOp op, const Members& m) {
  ParameterMix mix;
  switch (op) {
    case ItemOp::kGetItem:
      mix.Legacy("AttributesToGet", m.attributes_to_get != nullptr)
          .Expression("ProjectionExpression", m.projection_expression.has_value());
      break;
    case ItemOp::kUpdateItem:
      mix.Legacy("AttributeUpdates", m.attribute_updates != nullptr)
          .Legacy("Expected", m.expected != nullptr)
          .Legacy("ConditionalOperator", m.conditional_operator.has_value())
          .Expression("UpdateExpression", m.update_expression.has_value())
          .Expression("ConditionExpression", m.condition_expression.has_value());
      break;
    case ItemOp::kPutItem:
    case ItemOp::kDeleteItem:
      mix.Legacy("Expected", m.expected != nullptr)
          .Legacy("ConditionalOperator", m.conditional_operator.has_value())
          .Expression("ConditionExpression", m.condition_expression.has_value());
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
  FDYNO_RETURN_IF_ERROR(CheckConstraints(op, m));
  ItemRequest r = CopyMembers(op, m);
  FDYNO_ASSIGN_OR_RETURN(r.return_consumed_capacity,
                         ParseReturnConsumedCapacity(m.return_consumed_capacity));
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
  FDYNO_ASSIGN_OR_RETURN(Members m, ReadMembers(op, body));
  Result<ItemRequest> r = DecodeMembers(op, m);
  if (!r.ok() && op != ItemOp::kGetItem) return Error::InEnvelope(std::move(r).error());
  return r;
}

}  // namespace fdyno::api
