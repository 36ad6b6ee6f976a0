#include "api/transact_request.h"

#include <array>
#include <cctype>
#include <cstdio>
#include <span>

#include "api/json_util.h"
#include "api/parameter_mix.h"
#include "api/request_model.h"
#include "expr/parser.h"
#include "expr/resolver.h"
#include "model/canonical.h"
#include "model/item_size.h"
#include "model/json.h"
#include "store/tokens.h"

namespace fdyno::api {

std::string_view TransactActionName(TransactActionKind kind) {
  switch (kind) {
    case TransactActionKind::kConditionCheck:
      return "ConditionCheck";
    case TransactActionKind::kPut:
      return "Put";
    case TransactActionKind::kDelete:
      return "Delete";
    case TransactActionKind::kUpdate:
      return "Update";
  }
  return "";
}

namespace {

using model::Item;

// "transactItems.3.member.put" style paths (1-based index, lower-camel member names).
std::string MemberPath(size_t index, std::string_view action) {
  std::string a(action);
  a[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(a[0])));
  return "transactItems." + std::to_string(index + 1) + ".member." + a;
}

// Java's toString of a list of model objects, as DynamoDB echoes an over-long list.
std::string ListDump(size_t n, std::string_view type) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) s += ", ";
    char hash[16];
    std::snprintf(hash, sizeof(hash), "%08x", static_cast<unsigned>((i + 1) * 2654435761u));
    s += "com.amazonaws.dynamodb.v20120810.";
    s += type;
    s += "@";
    s += hash;
  }
  return s + "]";
}

using request::Check;
using request::Read;
using Value = rapidjson::Value;

// The members of one Put/Update/Delete/ConditionCheck/Get.
struct ActionMembers {
  const Value* table_name = nullptr;
  const Value* item = nullptr;  // Item or Key
  const Value* condition_expression = nullptr;
  const Value* update_expression = nullptr;
  const Value* projection_expression = nullptr;
  const Value* return_values_on_ccf = nullptr;
  const Value* names = nullptr;
  const Value* values = nullptr;
};
using M = ActionMembers;

// Phase 1: each action's members in the order DynamoDB's deserializer meets them. An action
// is a closed schema: these are all the members it may have.
constexpr Read<M> kKey{"Key", &M::item, JsonShape::kMap, "AttributeValue",
                       request::AttributeValues};
constexpr Read<M> kTableName{"TableName", &M::table_name, JsonShape::kString};
constexpr Read<M> kNames{"ExpressionAttributeNames", &M::names, JsonShape::kMap, "String",
                         request::StringValues};
constexpr std::array<Read<M>, 4> kWriteTail = {{
    {"ConditionExpression", &M::condition_expression, JsonShape::kString},
    kNames,
    {"ExpressionAttributeValues", &M::values, JsonShape::kMap, "AttributeValue",
     request::AttributeValues},
    {"ReturnValuesOnConditionCheckFailure", &M::return_values_on_ccf, JsonShape::kString},
}};
constexpr auto kPutReads = request::Join(
    std::array<Read<M>, 2>{
        {{"Item", &M::item, JsonShape::kMap, "AttributeValue", request::AttributeValues},
         kTableName}},
    kWriteTail);
constexpr auto kUpdateReads = request::Join(
    std::array<Read<M>, 3>{
        {kKey, {"UpdateExpression", &M::update_expression, JsonShape::kString}, kTableName}},
    kWriteTail);
constexpr auto kKeyedReads = request::Join(std::array{kKey, kTableName}, kWriteTail);
constexpr Read<M> kGetReads[] = {
    kKey,
    kTableName,
    {"ProjectionExpression", &M::projection_expression, JsonShape::kString},
    kNames};

// Phase 2, under "transactItems.<n>.member.<action>".
constexpr Check<M> kReturnOnFailure =
    request::Enum(&M::return_values_on_ccf, "returnValuesOnConditionCheckFailure",
                  request::kReturnValuesOnConditionCheckFailure);
constexpr Check<M> kPutChecks[] = {request::DataPlaneTableName(&M::table_name),
                                   request::NotNull(&M::item, "item"), kReturnOnFailure};
constexpr Check<M> kDeleteChecks[] = {request::DataPlaneTableName(&M::table_name),
                                      request::NotNull(&M::item, "key"), kReturnOnFailure};
constexpr Check<M> kConditionCheckChecks[] = {
    request::DataPlaneTableName(&M::table_name), request::NotNull(&M::item, "key"),
    request::NotNull(&M::condition_expression, "conditionExpression"), kReturnOnFailure};
constexpr Check<M> kUpdateChecks[] = {
    request::DataPlaneTableName(&M::table_name), request::NotNull(&M::item, "key"),
    request::NotNull(&M::update_expression, "updateExpression"), kReturnOnFailure};
constexpr Check<M> kGetChecks[] = {request::DataPlaneTableName(&M::table_name),
                                   request::NotNull(&M::item, "key")};

std::span<const Read<M>> ReadsOf(TransactActionKind kind) {
  switch (kind) {
    case TransactActionKind::kPut:
      return kPutReads;
    case TransactActionKind::kUpdate:
      return kUpdateReads;
    case TransactActionKind::kDelete:
    case TransactActionKind::kConditionCheck:
      return kKeyedReads;
  }
  return {};
}

std::span<const Check<M>> ChecksOf(TransactActionKind kind) {
  switch (kind) {
    case TransactActionKind::kPut:
      return kPutChecks;
    case TransactActionKind::kUpdate:
      return kUpdateChecks;
    case TransactActionKind::kDelete:
      return kDeleteChecks;
    case TransactActionKind::kConditionCheck:
      return kConditionCheckChecks;
  }
  return {};
}

// One action's members: the closed schema, then phase 1.
Result<ActionMembers> ReadActionMembers(const Value& action, std::string_view where,
                                        std::span<const Read<M>> rows) {
  FDYNO_RETURN_IF_ERROR(request::CheckKnownMembers<M>(action, where, rows));
  ActionMembers m;
  FDYNO_RETURN_IF_ERROR(request::ReadRows<M>(action, rows, m));
  return m;
}

Result<model::Map> DecodeValues(const rapidjson::Value& values) {
  if (values.ObjectEmpty()) return Error::Validation("ExpressionAttributeValues must not be empty");
  return DecodeExpressionAttributeValues(values);
}

// Step 4 for one write action.
Status ResolveWriteExpressions(TransactWriteAction& a) {
  std::optional<expr::parsed::Update> update;
  std::optional<expr::parsed::Condition> condition;
  if (a.update_expression) {
    FDYNO_ASSIGN_OR_RETURN(update, expr::ParseUpdate(*a.update_expression));
  }
  if (a.condition_expression) {
    FDYNO_ASSIGN_OR_RETURN(
        condition, expr::ParseCondition(*a.condition_expression, expr::ExpressionKind::kCondition));
  }
  FDYNO_ASSIGN_OR_RETURN(
      expr::ResolveContext ctx,
      expr::ResolveContext::ForRequest(
          a.has_expression_attribute_names ? &a.expression_attribute_names : nullptr,
          a.has_expression_attribute_values ? &a.expression_attribute_values : nullptr));
  if (update) {
    FDYNO_ASSIGN_OR_RETURN(a.update, ctx.ResolveUpdate(*update));
  }
  if (condition) {
    FDYNO_ASSIGN_OR_RETURN(a.condition,
                           ctx.ResolveCondition(*condition, expr::ExpressionKind::kCondition));
  }
  return ctx.CheckUnused();
}

Result<std::optional<std::string>> ReadEnum(const rapidjson::Value& body, std::string_view name) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> v, GetString(body, name));
  if (!v) return std::optional<std::string>();
  return std::optional<std::string>(std::string(*v));
}

Status CheckListLength(ConstraintErrors& errors, const rapidjson::Value* list,
                       std::string_view type) {
  if (list == nullptr) {
    errors.NotNull("transactItems", false);
  } else if (list->GetArray().Empty()) {
    errors.Add("transactItems", "[]", "Member must have length greater than or equal to 1");
  } else if (list->GetArray().Size() > kMaxTransactActions) {
    errors.Add("transactItems", ListDump(list->GetArray().Size(), type),
               "Member must have length less than or equal to 100");
  }
  return Status::Ok();
}

// One element of TransactItems: the actions it names (one, if it is valid) and their members.
struct WriteElement {
  std::vector<std::pair<TransactActionKind, const rapidjson::Value*>> actions;
  ActionMembers members;
};

// Phase 1 of TransactWriteItems: the elements' member types.
Result<std::vector<WriteElement>> ReadWriteElements(const rapidjson::Value* list) {
  std::vector<WriteElement> elements;
  if (list == nullptr) return elements;
  for (const auto& v : list->GetArray()) {
    FDYNO_RETURN_IF_ERROR(CheckShape(v, JsonShape::kValueStruct, "TransactWriteItem"));
    WriteElement e;
    if (!v.IsNull()) {
      FDYNO_RETURN_IF_ERROR(request::CheckKnownNames(
          v, "TransactWriteItem", {"ConditionCheck", "Put", "Delete", "Update"}));
      for (TransactActionKind kind : {TransactActionKind::kConditionCheck, TransactActionKind::kPut,
                                      TransactActionKind::kDelete, TransactActionKind::kUpdate}) {
        std::string_view name = TransactActionName(kind);
        FDYNO_ASSIGN_OR_RETURN(const Value* a, GetStruct(v, name, name));
        if (a == nullptr) continue;
        FDYNO_ASSIGN_OR_RETURN(e.members, ReadActionMembers(*a, name, ReadsOf(kind)));
        e.actions.emplace_back(kind, a);
      }
    }
    elements.push_back(std::move(e));
  }
  return elements;
}

// Phase 3 for one element: its one action, with its values decoded.
Result<TransactWriteAction> DecodeWriteAction(const WriteElement& e) {
  if (e.actions.size() != 1) {
    return Error::Validation("TransactItems can only contain one of Check, Put, Update or Delete");
  }
  const ActionMembers& m = e.members;
  TransactWriteAction a;
  a.kind = e.actions[0].first;
  a.table_name = std::string(AsStringView(*m.table_name));
  if (m.condition_expression) {
    a.condition_expression = std::string(AsStringView(*m.condition_expression));
  }
  if (m.update_expression) a.update_expression = std::string(AsStringView(*m.update_expression));
  a.return_old_on_condition_failure = request::Text(m.return_values_on_ccf) == "ALL_OLD";
  // An Update always has its UpdateExpression (a required member), so only a missing
  // ConditionExpression is ever named.
  ParameterMix mix;
  if (a.kind == TransactActionKind::kUpdate) mix.Expression("UpdateExpression", true);
  mix.Expression("ConditionExpression", a.condition_expression.has_value());
  FDYNO_RETURN_IF_ERROR(mix.CheckAttributeMaps(m.names != nullptr, m.values != nullptr));
  FDYNO_ASSIGN_OR_RETURN(a.item, model::DecodeItem(*m.item));
  if (a.kind == TransactActionKind::kPut) FDYNO_RETURN_IF_ERROR(model::CheckItemSize(a.item));
  if (m.names) {
    FDYNO_ASSIGN_OR_RETURN(a.expression_attribute_names, DecodeExpressionAttributeNames(*m.names));
    a.has_expression_attribute_names = true;
  }
  if (m.values) {
    FDYNO_ASSIGN_OR_RETURN(a.expression_attribute_values, DecodeValues(*m.values));
    a.has_expression_attribute_values = true;
  }
  return a;
}

}  // namespace

Result<TransactWriteRequest> DecodeTransactWriteItems(const rapidjson::Value& body) {
  FDYNO_RETURN_IF_ERROR(RequireObjectBody(body));
  FDYNO_RETURN_IF_ERROR(
      request::CheckKnownNames(body, "TransactWriteItems",
                               {"TransactItems", "ReturnConsumedCapacity",
                                "ReturnItemCollectionMetrics", "ClientRequestToken"}));
  // Phase 1: member types.
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* list, GetList(body, "TransactItems"));
  FDYNO_ASSIGN_OR_RETURN(std::vector<WriteElement> elements, ReadWriteElements(list));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> rcc, ReadEnum(body, "ReturnConsumedCapacity"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> ricm,
                         ReadEnum(body, "ReturnItemCollectionMetrics"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> token, ReadEnum(body, "ClientRequestToken"));

  // Phase 2: constraints.
  ConstraintErrors errors;
  FDYNO_RETURN_IF_ERROR(CheckListLength(errors, list, "TransactWriteItem"));
  if (list && list->GetArray().Size() <= kMaxTransactActions) {
    for (size_t i = 0; i < elements.size(); ++i) {
      if (elements[i].actions.size() != 1) continue;
      TransactActionKind kind = elements[i].actions[0].first;
      request::CheckMembers<M>(errors, ChecksOf(kind), elements[i].members,
                               MemberPath(i, TransactActionName(kind)));
    }
  }
  if (rcc) errors.Enum("returnConsumedCapacity", *rcc, request::kReturnConsumedCapacity);
  if (ricm)
    errors.Enum("returnItemCollectionMetrics", *ricm, request::kReturnItemCollectionMetrics);
  if (token) {
    errors.MinLength("clientRequestToken", *token, 1);
    errors.MaxLength("clientRequestToken", *token, kMaxClientRequestTokenLength);
  }
  FDYNO_RETURN_IF_ERROR(errors.ToStatus());

  // Phase 3: one action per element, values, sizes.
  TransactWriteRequest r;
  FDYNO_ASSIGN_OR_RETURN(r.return_consumed_capacity, ParseReturnConsumedCapacity(rcc));
  r.return_item_collection_metrics = ricm && *ricm == "SIZE";
  r.client_request_token = token;
  uint64_t payload = 0;
  for (const WriteElement& e : elements) {
    FDYNO_ASSIGN_OR_RETURN(TransactWriteAction a, DecodeWriteAction(e));
    payload += model::ItemSize(a.item) + model::ItemSize(a.expression_attribute_values);
    r.actions.push_back(std::move(a));
  }
  if (payload > kMaxTransactPayloadBytes) {
    return Error::Validation("Transaction request size cannot exceed 4 MB");
  }
  // Phase 4: expressions.
  for (TransactWriteAction& a : r.actions) FDYNO_RETURN_IF_ERROR(ResolveWriteExpressions(a));
  return r;
}

Result<TransactGetRequest> DecodeTransactGetItems(const rapidjson::Value& body) {
  FDYNO_RETURN_IF_ERROR(RequireObjectBody(body));
  FDYNO_RETURN_IF_ERROR(request::CheckKnownNames(body, "TransactGetItems",
                                                 {"TransactItems", "ReturnConsumedCapacity"}));
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* list, GetList(body, "TransactItems"));
  std::vector<std::optional<ActionMembers>> elements;
  if (list) {
    for (const auto& v : list->GetArray()) {
      FDYNO_RETURN_IF_ERROR(CheckShape(v, JsonShape::kValueStruct, "TransactGetItem"));
      std::optional<ActionMembers> m;
      if (!v.IsNull()) {
        FDYNO_RETURN_IF_ERROR(request::CheckKnownNames(v, "TransactGetItem", {"Get"}));
        FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* get, GetStruct(v, "Get", "Get"));
        if (get) {
          FDYNO_ASSIGN_OR_RETURN(ActionMembers members, ReadActionMembers(*get, "Get", kGetReads));
          m = members;
        }
      }
      elements.push_back(m);
    }
  }
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> rcc, ReadEnum(body, "ReturnConsumedCapacity"));

  ConstraintErrors errors;
  FDYNO_RETURN_IF_ERROR(CheckListLength(errors, list, "TransactGetItem"));
  if (list && list->GetArray().Size() <= kMaxTransactActions) {
    for (size_t i = 0; i < elements.size(); ++i) {
      if (!elements[i]) {
        errors.NotNull(MemberPath(i, "Get"), false);
        continue;
      }
      request::CheckMembers<M>(errors, kGetChecks, *elements[i], MemberPath(i, "Get"));
    }
  }
  if (rcc) errors.Enum("returnConsumedCapacity", *rcc, request::kReturnConsumedCapacity);
  FDYNO_RETURN_IF_ERROR(errors.ToStatus());

  TransactGetRequest r;
  FDYNO_ASSIGN_OR_RETURN(r.return_consumed_capacity, ParseReturnConsumedCapacity(rcc));
  for (const auto& e : elements) {
    const ActionMembers& m = *e;
    TransactGetAction a;
    a.table_name = std::string(AsStringView(*m.table_name));
    FDYNO_RETURN_IF_ERROR(
        ParameterMix()
            .Expression("ProjectionExpression", m.projection_expression != nullptr)
            .CheckAttributeMaps(m.names != nullptr, false));
    FDYNO_ASSIGN_OR_RETURN(a.key, model::DecodeItem(*m.item));
    std::map<std::string, std::string> names;
    if (m.names) {
      FDYNO_ASSIGN_OR_RETURN(names, DecodeExpressionAttributeNames(*m.names));
    }
    if (m.projection_expression) {
      FDYNO_ASSIGN_OR_RETURN(expr::parsed::Projection parsed,
                             expr::ParseProjection(AsStringView(*m.projection_expression)));
      FDYNO_ASSIGN_OR_RETURN(expr::ResolveContext ctx,
                             expr::ResolveContext::ForRequest(m.names ? &names : nullptr, nullptr));
      FDYNO_ASSIGN_OR_RETURN(a.projection, ctx.ResolveProjection(parsed));
      FDYNO_RETURN_IF_ERROR(ctx.CheckUnused());
    }
    r.actions.push_back(std::move(a));
  }
  return r;
}

Result<std::string> TransactWriteFingerprint(const TransactWriteRequest& r, uint32_t algorithm) {
  if (algorithm != store::kFingerprintSha256CanonicalV1) {
    return Error::Internal(
        "The idempotency record of this ClientRequestToken names fingerprint algorithm " +
        std::to_string(algorithm) +
        ", which this server does not retain; the request was not executed");
  }
  std::string c;
  model::AppendCanonicalStringV1("TransactWriteItems", &c);
  model::AppendCanonicalIntV1(store::kTokenContractTransactWriteItemsV1, &c);
  model::AppendCanonicalStringV1("ReturnConsumedCapacity", &c);
  model::AppendCanonicalStringV1(
      r.return_consumed_capacity == ReturnConsumedCapacity::kTotal     ? "TOTAL"
      : r.return_consumed_capacity == ReturnConsumedCapacity::kIndexes ? "INDEXES"
                                                                       : "NONE",
      &c);
  model::AppendCanonicalStringV1("ReturnItemCollectionMetrics", &c);
  model::AppendCanonicalStringV1(r.return_item_collection_metrics ? "SIZE" : "NONE", &c);
  model::AppendCanonicalStringV1("TransactItems", &c);
  model::AppendCanonicalIntV1(static_cast<int64_t>(r.actions.size()), &c);
  auto optional_string = [&](const char* field, const std::optional<std::string>& v) {
    model::AppendCanonicalStringV1(field, &c);
    if (v) {
      model::AppendCanonicalStringV1(*v, &c);
    } else {
      model::AppendCanonicalNullV1(&c);
    }
  };
  for (const TransactWriteAction& a : r.actions) {
    model::AppendCanonicalStringV1(TransactActionName(a.kind), &c);
    model::AppendCanonicalStringV1("TableName", &c);
    model::AppendCanonicalStringV1(a.table_name, &c);
    model::AppendCanonicalStringV1(a.kind == TransactActionKind::kPut ? "Item" : "Key", &c);
    model::AppendCanonicalItemV1(a.item, &c);
    optional_string("ConditionExpression", a.condition_expression);
    optional_string("UpdateExpression", a.update_expression);
    model::AppendCanonicalStringV1("ExpressionAttributeNames", &c);
    if (a.has_expression_attribute_names) {
      model::AppendCanonicalIntV1(static_cast<int64_t>(a.expression_attribute_names.size()), &c);
      for (const auto& [k, v] : a.expression_attribute_names) {  // std::map: sorted keys
        model::AppendCanonicalStringV1(k, &c);
        model::AppendCanonicalStringV1(v, &c);
      }
    } else {
      model::AppendCanonicalNullV1(&c);
    }
    model::AppendCanonicalStringV1("ExpressionAttributeValues", &c);
    if (a.has_expression_attribute_values) {
      model::AppendCanonicalItemV1(a.expression_attribute_values, &c);
    } else {
      model::AppendCanonicalNullV1(&c);
    }
    model::AppendCanonicalStringV1("ReturnValuesOnConditionCheckFailure", &c);
    model::AppendCanonicalStringV1(a.return_old_on_condition_failure ? "ALL_OLD" : "NONE", &c);
  }
  return store::Sha256(c);
}

}  // namespace fdyno::api
