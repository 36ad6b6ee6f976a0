// Secondary index entries: what a base item contributes to each local and global secondary
// index, and their maintenance in the transaction that writes the base item.
//
// Layout (store/layout.h, one subspace per index):
//   layout::Index(table, index) + (PartitionHash(ipk), bytes ipk, [bytes isk], bytes pk,
//                                  [bytes sk])  -> projected image (items.h chunk format)
// where ipk/isk are the key-codec encodings of the index key values and pk/sk those of the
// base item's key, so entries of one index partition are ordered by index sort key, then by
// base key (DynamoDB's order), and Scan over an index visits partitions in hash order like a
// table scan. The value is the item codec image of the projection (ALL: the whole item;
// KEYS_ONLY: table and index keys; INCLUDE: those plus the listed attributes), stored with the
// items.h chunk format so a large ALL projection splits like a base item.
//
// Sparse indexes: an item lacking an index key attribute has no entry. An item whose index
// key attribute has the wrong type or is an empty string/binary is rejected before any write
// (ValidateIndexKeys, DynamoDB's messages).
//
// Thread-safety: pure functions and functions over a Transaction used by one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"
#include "kv/kv.h"
#include "model/attribute_value.h"
#include "store/catalog.h"

namespace fdyno::store {

// One index entry of one item.
struct IndexEntry {
  std::string key;    // kv key (layout above)
  model::Item image;  // the projected attributes
};

// Whether `index` receives writes (every state but DELETING: a CREATING index is kept exact
// while it is backfilled).
bool IndexIsMaintained(const SecondaryIndex& index);

// The entry `item` has in `index`, or nullopt when the item lacks an index key attribute (or
// it has another type: callers validate first).
std::optional<IndexEntry> ComputeIndexEntry(const TableInfo& table, const SecondaryIndex& index,
                                            const model::Item& item);

// The projection of `item` for `index`.
model::Item ProjectForIndex(const TableInfo& table, const SecondaryIndex& index,
                            const model::Item& item);

// ValidationException when a maintained index key attribute of `item` has the wrong type
// ("One or more parameter values were invalid: Type mismatch for Index Key <attr> Expected:
// <T> Actual: <T> IndexName: <index>") or is an empty string/binary.
Status ValidateIndexKeys(const TableInfo& table, const model::Item& item);

// Buffers the index changes of replacing `old_item` (null: absent) by `new_item` (null:
// deleted) in every maintained index: entries derived only from the old image are removed,
// changed or new entries written. Unchanged entries are not rewritten. Also buffers the
// table's and the indexes' item count changes (store/item_counts.h): every base item write
// calls this, for tables without indexes too.
// REQUIRES: ValidateIndexKeys(table, *new_item) passed.
void UpdateIndexes(kv::Transaction& tx, const TableInfo& table, const model::Item* old_item,
                   const model::Item* new_item);
// The same for one index (the backfill worker).
void UpdateIndex(kv::Transaction& tx, const TableInfo& table, const SecondaryIndex& index,
                 const model::Item* old_item, const model::Item* new_item);

// The kv key range of the entries of index partition `hash_value` (Query): [first, second).
std::pair<std::string, std::string> IndexPartitionRange(int64_t table_id, int64_t index_id,
                                                        const model::AttributeValue& hash_value);
// The key prefix of the entries with index partition `hash_value` and index sort key `range`
// (bounds for sort key conditions): entries with that sort key follow it.
std::string IndexSortPrefix(int64_t table_id, int64_t index_id,
                            const model::AttributeValue& hash_value,
                            const model::AttributeValue& range_value);

// The entry key of an index entry given the index key and the base key values (pagination).
std::string IndexEntryKey(int64_t table_id, const SecondaryIndex& index,
                          const KeySchema& table_schema, const model::Item& keys);

}  // namespace fdyno::store
