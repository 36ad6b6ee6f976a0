// Item counts of tables and secondary indexes (DescribeTable's ItemCount), kept exact in the
// transaction of every write, and the accounting of an index while it is backfilled. Format:
// docs/format/item_counts.md.
//
// DynamoDB refreshes ItemCount about every six hours; fdyno reports the exact count instead
// (an allowed value of an approximate figure), for the table and for every ACTIVE index, so
// the numbers never drift and need no refresher.
//
// Storage: one counter per table and per index inside the table's subspace,
//   layout::ItemCounts(table) + (int id) -> 8-byte little-endian int64
// with id kTableCountId (0) for the table and the index id for an index, changed only with
// the kv atomic Add, so writers of different items never conflict on it.
//
// Maintenance: RecordItemCountChange runs in the transaction that replaces a base item (from
// store::UpdateIndexes, which every item write calls). The table counter moves by one when the
// item appears or disappears; the counter of every maintained index (secondary or vector,
// store/vector_index.h) moves by the change in whether the item has an entry in it.
//
// Backfill. While an index is CREATING with backfilling, a write cannot know without a read
// whether the item it changes already has its entry (the backfill may not have reached it).
// It adds the same delta as for an ACTIVE index - as if the entry of the old image existed -
// and also adds that delta to a journal key of the item. Each backfill page, which reads every
// base item of its key range with conflicting reads and writes their entries, adds the number
// of items of the range that have an entry and subtracts (and clears) the journal of the range
// (TakeBackfillJournal): the deltas of writes that reached an item before the backfill did are
// replaced by what the page counted. Writes that reach an item after its page stay counted, and
// are exact since its entry exists. A write concurrent with the page that covers its item
// either commits first (the page conflicts, retries and counts it) or after (it is exact). So
// when the last page marks the index ACTIVE its counter equals its number of entries. During
// the backfill the counter shows the entries written so far plus the journaled deltas, so it
// can lag or even dip; ReadItemCounts clamps it at 0.
//
//   journal: layout::ItemCountJournal(table, index id) + (item key tuple after layout::Items)
//            -> 8-byte little-endian int64 delta
//
// Thread-safety: free functions over a Transaction used by one thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/result.h"
#include "kv/kv.h"
#include "model/attribute_value.h"
#include "store/catalog.h"

namespace fdyno::store {

// The counter id of the table itself (index ids start at 1). Persisted: never change.
inline constexpr int64_t kTableCountId = 0;

// The kv key of the counter `id` (kTableCountId or an index id) of table `table_id`.
std::string ItemCountKey(int64_t table_id, int64_t id);

// The journal key of the base item stored at `item_key` (store::ItemKey) for index `index_id`.
std::string ItemCountJournalKey(int64_t table_id, int64_t index_id, std::string_view item_key);

// Whether `item` has an entry in `index` (store::IndexKeyIsStorable).
bool HasIndexEntry(const SecondaryIndex& index, const model::Item& item);

// Buffers the count changes of replacing `old_item` (null: absent) by `new_item` (null:
// deleted) in `table` (header comment). REQUIRES: both are images of the same base key.
void RecordItemCountChange(kv::Transaction& tx, const TableInfo& table, const model::Item* old_item,
                           const model::Item* new_item);

// Adds `delta` to counter `id` of table `table_id` (no-op for 0).
void AddItemCount(kv::Transaction& tx, int64_t table_id, int64_t id, int64_t delta);

// A backfill page over the base item keys [item_begin, item_end) of table `table_id`: reads
// (with conflicts) and clears the journal of index `index_id` for that range and returns the
// sum of its deltas. Malformed journal values are InternalServerError (fail closed).
Result<int64_t> TakeBackfillJournal(kv::Transaction& tx, int64_t table_id, int64_t index_id,
                                    std::string_view item_begin, std::string_view item_end);

// Buffers the removal of the whole journal of index `index_id` (the last backfill page: what
// is left belongs to items written after their page and is already counted).
void ClearBackfillJournal(kv::Transaction& tx, int64_t table_id, int64_t index_id);

// Buffers the removal of the counter and the journal of index `index_id` (index deletion).
void ClearIndexCounts(kv::Transaction& tx, int64_t table_id, int64_t index_id);

struct ItemCounts {
  int64_t table = 0;
  std::map<int64_t, int64_t> indexes;  // by index id; absent: 0
  int64_t Index(int64_t index_id) const {
    auto it = indexes.find(index_id);
    return it == indexes.end() ? 0 : it->second;
  }
};

// The counters of `table` and of its indexes, read without conflicts (snapshot reads), each
// clamped at 0. A counter value that is not 8 bytes is InternalServerError (fail closed).
Result<ItemCounts> ReadItemCounts(kv::Transaction& tx, const TableInfo& table);

}  // namespace fdyno::store
