#include "api/batch_request.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <string_view>
#include <utility>

#include "api/json_util.h"
#include "api/parameter_mix.h"
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

// Phase 1 of BatchGetItem: every member's JSON type.
Status CheckBatchGetShapes(const rapidjson::Value* items) {
  if (items == nullptr) return Status::Ok();
  for (const auto& e : items->GetObject()) {
    if (e.value.IsNull()) continue;
    FDYNO_RETURN_IF_ERROR(CheckShape(e.value, JsonShape::kValueStruct, "KeysAndAttributes"));
    FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* keys, GetList(e.value, "Keys"));
    if (keys) {
      for (const auto& k : keys->GetArray()) {
        FDYNO_RETURN_IF_ERROR(CheckShape(k, JsonShape::kMap, "AttributeValue"));
        FDYNO_RETURN_IF_ERROR(model::CheckItemShape(k));
      }
    }
    FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* atg, GetList(e.value, "AttributesToGet"));
    if (atg) {
      for (const auto& v : atg->GetArray())
        FDYNO_RETURN_IF_ERROR(CheckShape(v, JsonShape::kString));
    }
    FDYNO_ASSIGN_OR_RETURN(auto cr, GetBool(e.value, "ConsistentRead"));
    (void)cr;
    FDYNO_ASSIGN_OR_RETURN(auto pe, GetString(e.value, "ProjectionExpression"));
    (void)pe;
    FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* names, GetExpressionNames(e.value));
    (void)names;
  }
  return Status::Ok();
}

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
  if (rcc) errors.Enum("returnConsumedCapacity", *rcc, {"INDEXES", "TOTAL", "NONE"});
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
  FDYNO_RETURN_IF_ERROR(RequireObjectBody(body));
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* items,
                         GetMap(body, "RequestItems", "KeysAndAttributes"));
  FDYNO_RETURN_IF_ERROR(CheckBatchGetShapes(items));
  FDYNO_ASSIGN_OR_RETURN(auto rcc, GetString(body, "ReturnConsumedCapacity"));
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

// Phase 1 of BatchWriteItem: every member's JSON type.
Status CheckBatchWriteShapes(const rapidjson::Value* items) {
  if (items == nullptr) return Status::Ok();
  for (const auto& e : items->GetObject()) {
    if (e.value.IsNull()) continue;
    FDYNO_RETURN_IF_ERROR(CheckShape(e.value, JsonShape::kList));
    for (const auto& wr : e.value.GetArray()) {
      FDYNO_RETURN_IF_ERROR(CheckShape(wr, JsonShape::kValueStruct, "WriteRequest"));
      FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* put,
                             GetStruct(wr, "PutRequest", "PutRequest"));
      if (put) {
        FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* item,
                               GetMap(*put, "Item", "AttributeValue"));
        if (item) FDYNO_RETURN_IF_ERROR(model::CheckItemShape(*item));
      }
      FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* del,
                             GetStruct(wr, "DeleteRequest", "DeleteRequest"));
      if (del) {
        FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* key, GetMap(*del, "Key", "AttributeValue"));
        if (key) FDYNO_RETURN_IF_ERROR(model::CheckItemShape(*key));
      }
    }
  }
  return Status::Ok();
}

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
  if (rcc) errors.Enum("returnConsumedCapacity", *rcc, {"INDEXES", "TOTAL", "NONE"});
  if (icm) errors.Enum("returnItemCollectionMetrics", *icm, {"SIZE", "NONE"});
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
  FDYNO_RETURN_IF_ERROR(RequireObjectBody(body));
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* items, GetMap(body, "RequestItems", "List"));
  FDYNO_RETURN_IF_ERROR(CheckBatchWriteShapes(items));
  FDYNO_ASSIGN_OR_RETURN(auto rcc, GetString(body, "ReturnConsumedCapacity"));
  FDYNO_ASSIGN_OR_RETURN(auto icm, GetString(body, "ReturnItemCollectionMetrics"));
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
