// Secondary index entries: what a base item contributes to each local and global secondary
// index, and their maintenance in the transaction that writes the base item.
//
// Layout (store/layout.h, one subspace per index):
//   layout::Index(table, index) + (PartitionHash(ipk), bytes ipk, [bytes isk], bytes pk,
//                                  [bytes sk])  -> projected image (items.h chunk format)
// where ipk/isk are the key-codec encodings of the index key values and pk/sk those of the
// base item's key. A multi-attribute key has one bytes element per attribute (ipk1..ipkN,
// isk1..iskM) and hashes the packed tuple of its partition key encodings, so entries of one index
// partition are ordered by index sort key, then by base key (DynamoDB's order), and Scan over an
// index visits partitions in hash order like a table scan. The value is the item codec image of the
// projection (ALL: the whole item; KEYS_ONLY: table and index keys; INCLUDE: those plus the listed
// attributes), stored with the items.h chunk format so a large ALL projection splits like a base
// item.
//
// Sparse indexes: an item lacking an index key attribute has no entry. An item whose index
// key attribute has the wrong type or is an empty string/binary is rejected before any write
// (ValidateIndexKeys, DynamoDB's messages), except that a mistyped attribute of a
// multi-attribute key only keeps the item out of that index.
//
// Thread-safety: pure functions and functions over a Transaction used by one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// DynamoDB's size limits of one index key value (model::ValueSize), as for a table's key:
// a partition key attribute at most 2,048 bytes, a sort key attribute at most 1,024.
inline constexpr uint64_t kMaxIndexPartitionKeyBytes = 2048;
inline constexpr uint64_t kMaxIndexSortKeyBytes = 1024;

// Whether `item` has an entry in `index`: every index key attribute present with its type, not
// an empty string/binary, within the size limits. Writes refuse the last three
// (ValidateIndexKeys); a backfill leaves such items out of the index, as DynamoDB does.
bool IndexKeyIsStorable(const SecondaryIndex& index, const model::Item& item);

// The entry `item` has in `index`, or nullopt when it has none (IndexKeyIsStorable).
std::optional<IndexEntry> ComputeIndexEntry(const TableInfo& table, const SecondaryIndex& index,
                                            const model::Item& item);

// Whether `index` holds attribute `name` of its items (a key attribute of the table or the
// index, or a projected one).
bool ProjectsAttribute(const TableInfo& table, const SecondaryIndex& index,
                       const std::string& name);

// The projection of `item` for `index`.
model::Item ProjectForIndex(const TableInfo& table, const SecondaryIndex& index,
                            const model::Item& item);

// ValidationException when a maintained index key attribute of `item` has the wrong type
// ("One or more parameter values were invalid: Type mismatch for Index Key <attr> Expected:
// <T> Actual: <T> IndexName: <index>", cause kIndexKeyMismatch), is an empty string/binary
// (cause kIndexKeyEmpty) or exceeds its size limit ("One or more parameter values were
// invalid: Size limit exceeded for Index Key <attr> Actual Size: <n> bytes Max Size: <max>
// bytes IndexName: <index>", cause kIndexKeyTooLong), naming the alphabetically first such
// index. With `before` (the item
// an update started from) only the key attributes the update changed are checked, and an
// empty one gets DynamoDB's update-expression wording.
Status ValidateIndexKeys(const TableInfo& table, const model::Item& item,
                         const model::Item* before = nullptr);

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

// The kv key range of the entries of the index partition whose partition key values (in key
// order, one for a one-attribute key) are `hash_values` (Query): [first, second).
std::pair<std::string, std::string> IndexPartitionRange(
    int64_t table_id, int64_t index_id, const std::vector<model::AttributeValue>& hash_values);
// The key prefix of the entries of partition `hash_values` whose leading sort key attributes
// have the values `range_values` (bounds for sort key conditions): entries with those sort key
// values follow it.
std::string IndexSortPrefix(int64_t table_id, int64_t index_id,
                            const std::vector<model::AttributeValue>& hash_values,
                            const std::vector<model::AttributeValue>& range_values);

// The entry key of an index entry given the index key and the base key values (pagination).
std::string IndexEntryKey(int64_t table_id, const SecondaryIndex& index,
                          const KeySchema& table_schema, const model::Item& keys);

}  // namespace fdyno::store
