#include "api/batch_request.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <string_view>
#include <utility>

#include "api/json_util.h"
#include "api/parameter_mix.h"
#include "api/request_model.h"
#include "expr/legacy.h"
#include "expr/parser.h"
#include "expr/resolver.h"
#include "model/item_size.h"
#include "model/json.h"

namespace fdyno::api {
namespace {

using model::Item;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

bool ContainsDuplicate(const std::vector<Item>& keys) {
  for (size_t i = 0; i < keys.size(); ++i) {
    for (size_t j = i + 1; j < keys.size(); ++j) {
      if (keys[i] == keys[j]) return true;
    }
  }
  return false;
}

// The name of a table of RequestItems, checked as DynamoDB checks it (into `errors`).
std::string RequestItemsTable(ConstraintErrors& errors, const rapidjson::Value& name) {
  std::string table(name.GetString(), name.GetStringLength());
  if (table.size() < 3 || table.size() > 255 || !IsValidTableNameChars(table)) {
    CheckDataPlaneTableName(errors, &name, "requestItems");
  }
  return table;
}

using request::Read;
using Value = rapidjson::Value;

// The members of one table of BatchGetItem's RequestItems (KeysAndAttributes).
struct KeysMembers {
  const Value* keys = nullptr;
  const Value* attributes_to_get = nullptr;
  const Value* consistent_read = nullptr;
  const Value* projection_expression = nullptr;
  const Value* names = nullptr;
};

Status KeyMaps(const Value& list) {
  for (const Value& k : list.GetArray()) {
    FDYNO_RETURN_IF_ERROR(CheckShape(k, JsonShape::kMap, "AttributeValue"));
    FDYNO_RETURN_IF_ERROR(model::CheckItemShape(k));
  }
  return Status::Ok();
}

constexpr Read<KeysMembers> kKeysAndAttributesReads[] = {
    {"Keys", &KeysMembers::keys, JsonShape::kList, {}, KeyMaps},
    {"AttributesToGet",
     &KeysMembers::attributes_to_get,
     JsonShape::kList,
     {},
     request::StringElements},
    {"ConsistentRead", &KeysMembers::consistent_read, JsonShape::kBoolean},
    {"ProjectionExpression", &KeysMembers::projection_expression, JsonShape::kString},
    {"ExpressionAttributeNames", &KeysMembers::names, JsonShape::kMap, "String",
     request::StringValues},
};

// Phase 1 of BatchGetItem's RequestItems: every table's members' JSON types.
Status KeysAndAttributesEntries(const Value& items) {
  for (const auto& e : items.GetObject()) {
    if (e.value.IsNull()) continue;
    FDYNO_RETURN_IF_ERROR(CheckShape(e.value, JsonShape::kValueStruct, "KeysAndAttributes"));
    KeysMembers m;
    FDYNO_RETURN_IF_ERROR(request::ReadRows<KeysMembers>(e.value, kKeysAndAttributesReads, m));
  }
  return Status::Ok();
}

struct BatchGetMembers {
  const Value* request_items = nullptr;
  const Value* rcc = nullptr;
};
constexpr Read<BatchGetMembers> kBatchGetReads[] = {
    {"RequestItems", &BatchGetMembers::request_items, JsonShape::kMap, "KeysAndAttributes",
     KeysAndAttributesEntries},
    {"ReturnConsumedCapacity", &BatchGetMembers::rcc, JsonShape::kString},
};

// Phase 2 of BatchGetItem: the API model's constraints, then the 100-key limit of the call.
Result<ReturnConsumedCapacity> CheckBatchGetConstraints(const rapidjson::Value& items,
                                                        std::optional<std::string_view> rcc) {
  ConstraintErrors errors;
  size_t total = 0;
  for (const auto& e : items.GetObject()) {
    const std::string tname = RequestItemsTable(errors, e.name);
    const rapidjson::Value* keys = e.value.IsObject() ? Member(e.value, "Keys") : nullptr;
    std::string path = "RequestItems." + tname + ".member.Keys";  // DynamoDB's casing
    if (keys == nullptr) {
      errors.NotNull(path, false);
      continue;
    }
    size_t n = keys->GetArray().Size();
    total += n;
    if (n < 1) errors.AddWithoutValue(path, "Member must have length greater than or equal to 1");
    if (n > 100) errors.AddWithoutValue(path, "Member must have length less than or equal to 100");
  }
  if (rcc) errors.Enum("returnConsumedCapacity", *rcc, request::kReturnConsumedCapacity);
  FDYNO_RETURN_IF_ERROR(errors.ToStatus());
  if (total > 100) {
    return Error::Validation("Too many items requested for the BatchGetItem call");
  }
  return ParseReturnConsumedCapacity(rcc);
}

// One table of RequestItems: its keys and its projection.
Result<BatchGetTable> DecodeBatchGetTable(const rapidjson::Value& name,
                                          const rapidjson::Value& entry) {
  BatchGetTable t;
  t.name.assign(name.GetString(), name.GetStringLength());
  t.raw = &entry;
  const rapidjson::Value* atg = Member(entry, "AttributesToGet");
  const rapidjson::Value* pe = Member(entry, "ProjectionExpression");
  const rapidjson::Value* names = Member(entry, "ExpressionAttributeNames");
  FDYNO_RETURN_IF_ERROR(ParameterMix()
                            .Expression("ProjectionExpression", pe != nullptr)
                            .CheckAttributeMaps(names != nullptr, false));
  if (const rapidjson::Value* cr = Member(entry, "ConsistentRead")) {
    t.consistent_read = cr->GetBool();
  }
  for (const auto& k : Member(entry, "Keys")->GetArray()) {
    FDYNO_ASSIGN_OR_RETURN(Item key, model::DecodeItem(k));
    t.keys.push_back(std::move(key));
  }
  if (ContainsDuplicate(t.keys)) {
    return Error::Validation("Provided list of item keys contains duplicates");
  }
  if (pe) {
    expr::AttributeNames name_map;
    if (names) {
      // An empty map is refused by ValidateAttributeMaps, with DynamoDB's other checks.
      if (!names->ObjectEmpty()) {
        FDYNO_ASSIGN_OR_RETURN(name_map, DecodeExpressionAttributeNames(*names));
      }
      FDYNO_RETURN_IF_ERROR(expr::ValidateAttributeMaps(&name_map, nullptr));
    }
    FDYNO_ASSIGN_OR_RETURN(expr::parsed::Projection parsed,
                           expr::ParseProjection(AsStringView(*pe)));
    expr::ResolveContext rctx(names ? &name_map : nullptr, nullptr);
    FDYNO_ASSIGN_OR_RETURN(t.projection, rctx.ResolveProjection(parsed));
    FDYNO_RETURN_IF_ERROR(rctx.CheckUnused());
  } else if (atg) {
    FDYNO_RETURN_IF_ERROR(CheckAttributeNameList(*atg));
    std::vector<std::string> list;
    for (const auto& v : atg->GetArray()) list.emplace_back(AsStringView(v));
    FDYNO_ASSIGN_OR_RETURN(t.projection, expr::legacy::ConvertAttributesToGet(list));
  }
  return t;
}

}  // namespace

Result<BatchGetRequest> DecodeBatchGet(const rapidjson::Value& body) {
  BatchGetMembers m;
  FDYNO_RETURN_IF_ERROR(request::ReadMembers<BatchGetMembers>(body, kBatchGetReads, m));
  const Value* items = m.request_items;
  const std::optional<std::string_view> rcc = request::Text(m.rcc);
  // DynamoDB takes an empty RequestItems for an absent one.
  if (items == nullptr || items->ObjectEmpty()) {
    return Error::Validation("The requestItems parameter is required for BatchGetItem");
  }
  BatchGetRequest request;
  FDYNO_ASSIGN_OR_RETURN(request.mode, CheckBatchGetConstraints(*items, rcc));
  // Expression and non-expression projections never mix, not even across tables.
  bool any_atg = false, any_pe = false;
  for (const auto& e : items->GetObject()) {
    if (!e.value.IsObject()) continue;
    any_atg = any_atg || Member(e.value, "AttributesToGet") != nullptr;
    any_pe = any_pe || Member(e.value, "ProjectionExpression") != nullptr;
  }
  ParameterMix across_tables;
  across_tables.Legacy("AttributesToGet", any_atg).Expression("ProjectionExpression", any_pe);
  if (across_tables.mixed()) return across_tables.MixedError();
  for (const auto& e : items->GetObject()) {
    FDYNO_ASSIGN_OR_RETURN(BatchGetTable t, DecodeBatchGetTable(e.name, e.value));
    request.tables.push_back(std::move(t));
  }
  return request;
}

namespace {

// Phase 1 of BatchWriteItem's RequestItems: every write request's members' JSON types.
Status WriteRequestLists(const Value& items) {
  for (const auto& e : items.GetObject()) {
    if (e.value.IsNull()) continue;
    FDYNO_RETURN_IF_ERROR(CheckShape(e.value, JsonShape::kList));
    for (const auto& wr : e.value.GetArray()) {
      FDYNO_RETURN_IF_ERROR(CheckShape(wr, JsonShape::kValueStruct, "WriteRequest"));
      FDYNO_ASSIGN_OR_RETURN(const Value* put, GetStruct(wr, "PutRequest", "PutRequest"));
      if (put) {
        FDYNO_RETURN_IF_ERROR(request::ReadMember(*put, "Item", JsonShape::kMap, "AttributeValue",
                                                  request::AttributeValues));
      }
      FDYNO_ASSIGN_OR_RETURN(const Value* del, GetStruct(wr, "DeleteRequest", "DeleteRequest"));
      if (del) {
        FDYNO_RETURN_IF_ERROR(request::ReadMember(*del, "Key", JsonShape::kMap, "AttributeValue",
                                                  request::AttributeValues));
      }
    }
  }
  return Status::Ok();
}

struct BatchWriteMembers {
  const Value* request_items = nullptr;
  const Value* rcc = nullptr;
  const Value* icm = nullptr;
};
constexpr Read<BatchWriteMembers> kBatchWriteReads[] = {
    {"RequestItems", &BatchWriteMembers::request_items, JsonShape::kMap, "List", WriteRequestLists},
    {"ReturnConsumedCapacity", &BatchWriteMembers::rcc, JsonShape::kString},
    {"ReturnItemCollectionMetrics", &BatchWriteMembers::icm, JsonShape::kString},
};

// Phase 2 of BatchWriteItem: the API model's constraints, then the 25-request limit of the
// call.
Result<ReturnConsumedCapacity> CheckBatchWriteConstraints(const rapidjson::Value& items,
                                                          std::optional<std::string_view> rcc,
                                                          std::optional<std::string_view> icm) {
  ConstraintErrors errors;
  size_t total = 0;
  for (const auto& e : items.GetObject()) {
    const std::string tname = RequestItemsTable(errors, e.name);
    size_t n = e.value.IsArray() ? e.value.GetArray().Size() : 0;
    total += n;
    if (n < 1 || n > 25) {
      // DynamoDB echoes the whole map ({table=[...]}) as the value.
      rapidjson::StringBuffer dump;
      Writer dw(dump);
      e.value.Accept(dw);
      errors.Add("requestItems",
                 "{" + tname + "=" + std::string(dump.GetString(), dump.GetSize()) + "}",
                 "Map value must satisfy constraint: [Member must have length less "
                 "than or equal to 25, Member must have length greater than or "
                 "equal to 1]");
    }
  }
  if (rcc) errors.Enum("returnConsumedCapacity", *rcc, request::kReturnConsumedCapacity);
  if (icm) errors.Enum("returnItemCollectionMetrics", *icm, request::kReturnItemCollectionMetrics);
  FDYNO_RETURN_IF_ERROR(errors.ToStatus());
  if (total > 25) {
    return Error::Validation("Too many items requested for the BatchWriteItem call");
  }
  return ParseReturnConsumedCapacity(rcc);
}

// One write request of table `table` (its index in the request's tables, and its name).
Result<BatchWrite> DecodeWriteRequest(size_t table, const std::string& name,
                                      const rapidjson::Value& wr) {
  const rapidjson::Value* put = Member(wr, "PutRequest");
  const rapidjson::Value* del = Member(wr, "DeleteRequest");
  if ((put == nullptr) == (del == nullptr)) {
    return Error::Validation(
        "Supplied AttributeValue has more than one datatypes set, must contain exactly one "
        "of the supported datatypes");
  }
  BatchWrite w;
  w.table = table;
  w.is_put = put != nullptr;
  w.raw = &wr;
  const rapidjson::Value* value = put ? Member(*put, "Item") : Member(*del, "Key");
  if (value == nullptr) {
    return Error::EnvelopedValidation(
        "Value null at 'requestItems." + name +
        (put ? ".member.putRequest.item" : ".member.deleteRequest.key") +
        "' failed to satisfy constraint: Member must not be null");
  }
  FDYNO_ASSIGN_OR_RETURN(w.item, model::DecodeItem(*value));
  if (w.is_put) FDYNO_RETURN_IF_ERROR(model::CheckItemSize(w.item));
  return w;
}

}  // namespace

Result<BatchWriteRequest> DecodeBatchWrite(const rapidjson::Value& body) {
  BatchWriteMembers m;
  FDYNO_RETURN_IF_ERROR(request::ReadMembers<BatchWriteMembers>(body, kBatchWriteReads, m));
  const Value* items = m.request_items;
  const std::optional<std::string_view> rcc = request::Text(m.rcc);
  const std::optional<std::string_view> icm = request::Text(m.icm);
  if (items == nullptr || items->ObjectEmpty()) {
    return Error::Validation("The requestItems parameter is required for BatchWriteItem");
  }
  BatchWriteRequest request;
  FDYNO_ASSIGN_OR_RETURN(request.mode, CheckBatchWriteConstraints(*items, rcc, icm));
  if (icm) request.item_collection_metrics = *icm;
  for (const auto& e : items->GetObject()) {
    request.tables.emplace_back(e.name.GetString(), e.name.GetStringLength());
    for (const auto& wr : e.value.GetArray()) {
      FDYNO_ASSIGN_OR_RETURN(
          BatchWrite w, DecodeWriteRequest(request.tables.size() - 1, request.tables.back(), wr));
      request.writes.push_back(std::move(w));
    }
  }
  return request;
}

}  // namespace fdyno::api
