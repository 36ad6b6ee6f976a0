// Key handling shared by every operation that addresses items (single-item operations,
// transactions, batches): validation of a Key or an Item's key attributes against the table's
// key schema with DynamoDB's messages, the storage key of an item, and small helpers.
// Pure functions; thread-safe.
#pragma once

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "kv/kv.h"
#include "model/attribute_value.h"
#include "store/catalog.h"
#include "store/items.h"

namespace fdyno::api {

// DynamoDB's key size limits.
inline constexpr uint64_t kMaxHashKeyBytes = 2048;
inline constexpr uint64_t kMaxRangeKeyBytes = 1024;

// A Key parameter (GetItem, UpdateItem, DeleteItem, ...) against the schema: exactly the key
// attributes with their types ("The provided key element does not match the schema"), no
// empty string/binary key values, key size limits.
Status ValidateKey(const store::KeySchema& schema, const model::Item& key);
// An Item parameter (PutItem, Put actions): it carries the key attributes with their types.
Status ValidateItemKey(const store::KeySchema& schema, const model::Item& item);
// A BatchWriteItem PutRequest's Item: as ValidateItemKey, except that a key attribute of another
// type is "The provided key element does not match the schema", as DynamoDB answers there.
Status ValidateBatchPutKey(const store::KeySchema& schema, const model::Item& item);

// The key attributes of an item. REQUIRES: ValidateItemKey passed.
model::Item KeyOf(const store::KeySchema& schema, const model::Item& item);
// The kv key of the item with `key` in `table` (store::ItemKey over the key codec).
// REQUIRES: ValidateKey passed.
std::string StorageKey(const store::TableInfo& table, const model::Item& key);
// The item a stored image holds (nullopt when nothing is stored); InternalServerError for
// corrupt bytes (model::DecodeStoredItem).
Result<std::optional<model::Item>> DecodeIfStored(const std::optional<store::StoredItem>& stored);
// The item collection (partition key) an item belongs to, for ItemCollectionMetrics: only
// tables with local secondary indexes have one.
std::optional<model::Item> CollectionKey(const store::TableInfo& table,
                                         const model::Item& item_or_key);
// One ItemCollectionMetrics object: {"ItemCollectionKey": key, "SizeEstimateRangeGB": [lo, hi]}
// for a collection of `size_bytes` (store::SizeEstimateRangeGB).
void WriteItemCollectionMetrics(rapidjson::Writer<rapidjson::StringBuffer>& w,
                                const model::Item& collection_key, uint64_t size_bytes);
// ItemCollectionSizeLimitExceededException: a write would grow an item collection past the
// limit (store/item_collections.h).
Error ItemCollectionSizeLimitExceeded();

// The table `name` in `scope` for a data-plane operation: ResourceNotFoundException
// "Requested resource not found" when it does not exist, is being deleted or is being created
// (restored).
Result<std::shared_ptr<const store::TableInfo>> FindActiveTable(store::Catalog& catalog,
                                                                kv::Transaction& tx,
                                                                store::TableScope scope,
                                                                std::string_view name);

// An item as DynamoDB JSON text ({"a":{"S":"x"}}).
std::string ItemJson(const model::Item& item);

}  // namespace fdyno::api
