#include "api/item_keys.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/json.h"
#include "model/key_codec.h"
#include "store/item_collections.h"
#include "store/items.h"
#include "store/mutation.h"

namespace fdyno::api {
namespace {

using model::AttributeValue;
using model::Item;

bool ValueMatches(const AttributeValue& v, store::ScalarType t) {
  switch (t) {
    case store::ScalarType::kS:
      return v.type() == model::Type::kS;
    case store::ScalarType::kN:
      return v.type() == model::Type::kN;
    case store::ScalarType::kB:
      return v.type() == model::Type::kB;
  }
  return false;
}

bool IsEmptyKeyValue(const AttributeValue& v) {
  if (v.type() == model::Type::kS) return std::get<std::string>(v.v).empty();
  if (v.type() == model::Type::kB) return std::get<model::Binary>(v.v).bytes.empty();
  return false;
}

Error EmptyKeyError(const std::string& name, const AttributeValue& v) {
  return Error::Validation(std::string("One or more parameter values are not valid. The "
                                       "AttributeValue for a key attribute cannot contain an "
                                       "empty ") +
                           (v.type() == model::Type::kS ? "string" : "binary") +
                           " value. Key: " + name);
}

Error SchemaMismatch() {
  return Error::Validation("The provided key element does not match the schema")
      .WithCause(ErrorCause::kKeySchemaMismatch);
}

Status CheckKeySizes(const store::KeySchema& schema, const Item& key) {
  const AttributeValue& hash = key.at(schema.hash.name);
  if (model::ValueSize(hash) > kMaxHashKeyBytes) {
    return Error::Validation(
        "One or more parameter values were invalid: Size of hashkey has exceeded the maximum "
        "size limit of2048 bytes");
  }
  if (schema.range && model::ValueSize(key.at(schema.range->name)) > kMaxRangeKeyBytes) {
    return Error::Validation(
        "One or more parameter values were invalid: Aggregated size of all range keys has "
        "exceeded the size limit of 1024 bytes");
  }
  return Status::Ok();
}

}  // namespace

// The Key parameter of GetItem/UpdateItem/DeleteItem against the table's schema.
Status ValidateKey(const store::KeySchema& schema, const Item& key) {
  size_t want = schema.range ? 2 : 1;
  auto hash = key.find(schema.hash.name);
  if (key.size() != want || hash == key.end() || !ValueMatches(hash->second, schema.hash.type)) {
    return SchemaMismatch();
  }
  if (schema.range) {
    auto range = key.find(schema.range->name);
    if (range == key.end() || !ValueMatches(range->second, schema.range->type)) {
      return SchemaMismatch();
    }
  }
  if (IsEmptyKeyValue(hash->second)) return EmptyKeyError(schema.hash.name, hash->second);
  if (schema.range) {
    const AttributeValue& r = key.at(schema.range->name);
    if (IsEmptyKeyValue(r)) return EmptyKeyError(schema.range->name, r);
  }
  return CheckKeySizes(schema, key);
}

// PutItem's Item: it must carry the key attributes with the right types.
Status ValidateItemKey(const store::KeySchema& schema, const Item& item) {
  auto check = [&](const store::AttributeDefinition& def) -> Status {
    auto it = item.find(def.name);
    if (it == item.end()) {
      return Error::Validation("One or more parameter values were invalid: Missing the key " +
                               def.name + " in the item")
          .WithCause(ErrorCause::kKeySchemaMismatch);
    }
    if (!ValueMatches(it->second, def.type)) {
      return Error::Validation("One or more parameter values were invalid: Type mismatch for key " +
                               def.name +
                               " expected: " + std::string(store::ScalarTypeName(def.type)) +
                               " actual: " + std::string(model::TypeName(it->second.type())))
          .WithCause(ErrorCause::kKeySchemaMismatch);
    }
    if (IsEmptyKeyValue(it->second)) return EmptyKeyError(def.name, it->second);
    return Status::Ok();
  };
  FDYNO_RETURN_IF_ERROR(check(schema.hash));
  if (schema.range) FDYNO_RETURN_IF_ERROR(check(*schema.range));
  return CheckKeySizes(schema, item);
}

Status ValidateBatchPutKey(const store::KeySchema& schema, const Item& item) {
  for (const store::AttributeDefinition& def : schema.Attributes()) {
    auto it = item.find(def.name);
    if (it != item.end() && !ValueMatches(it->second, def.type)) return SchemaMismatch();
  }
  return ValidateItemKey(schema, item);
}

Item KeyOf(const store::KeySchema& schema, const Item& item) {
  Item key;
  key.emplace(schema.hash.name, item.at(schema.hash.name));
  if (schema.range) key.emplace(schema.range->name, item.at(schema.range->name));
  return key;
}

std::string StorageKey(const store::TableInfo& table, const Item& key) {
  return store::ItemStorageKey(table, key);
}

Result<std::optional<model::Item>> DecodeIfStored(const std::optional<store::StoredItem>& stored) {
  if (!stored) return std::optional<model::Item>();
  FDYNO_ASSIGN_OR_RETURN(model::Item item, model::DecodeStoredItem(stored->image));
  return std::optional<model::Item>(std::move(item));
}

std::string ItemJson(const Item& item) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  model::WriteItem(w, item);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// ItemCollectionMetrics exist only for tables with local secondary indexes.
std::optional<Item> CollectionKey(const store::TableInfo& table, const Item& item_or_key) {
  if (table.local_indexes.empty()) return std::nullopt;
  Item key;
  key.emplace(table.key_schema.hash.name, item_or_key.at(table.key_schema.hash.name));
  return key;
}

void WriteItemCollectionMetrics(rapidjson::Writer<rapidjson::StringBuffer>& w,
                                const Item& collection_key, uint64_t size_bytes) {
  const auto [lower, upper] = store::SizeEstimateRangeGB(size_bytes);
  w.StartObject();
  w.Key("ItemCollectionKey");
  model::WriteItem(w, collection_key);
  w.Key("SizeEstimateRangeGB");
  w.StartArray();
  w.Double(lower);
  w.Double(upper);
  w.EndArray();
  w.EndObject();
}

// The message is the API model's description of this exception's message.
Error ItemCollectionSizeLimitExceeded() {
  return Error::Make(ErrorType::kItemCollectionSizeLimitExceeded,
                     "The total size of an item collection has exceeded the maximum limit of 10 "
                     "gigabytes.");
}

Result<std::shared_ptr<const store::TableInfo>> FindActiveTable(store::Catalog& catalog,
                                                                kv::Transaction& tx,
                                                                store::TableScope scope,
                                                                std::string_view name) {
  FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> table,
                         catalog.Find(tx, scope, name));
  // A table being restored is CREATING: like DynamoDB, it takes no reads or writes until ACTIVE.
  if (!table || table->status == store::TableStatus::kDeleting ||
      table->status == store::TableStatus::kCreating) {
    return Error::ResourceNotFound("Requested resource not found");
  }
  return table;
}

}  // namespace fdyno::api
