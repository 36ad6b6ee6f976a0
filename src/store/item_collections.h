// Item collections of tables with local secondary indexes: the tracked size of every partition
// key value's collection, kept exact in the transaction of every write that changes a base
// item, and the 10 GB item collection limit. Format: docs/format/item_collections.md.
//
// What a collection counts (DynamoDB's rule for tables with LSIs): the size of every base item
// with the partition key value (model::ItemSize) plus, for every local secondary index that
// holds an entry for the item, the size of that entry - the table's key, the index key and the
// projected attributes (ProjectForIndex) - plus 100 bytes of overhead per entry. Global
// secondary indexes do not count. Tables without local secondary indexes have no collections.
//
// Storage: one key per collection inside the table's subspace,
//   layout::ItemCollections(table) + (bytes encoded_hash) -> 8-byte little-endian int64,
// changed only with the kv atomic Add, so writers of different items of one partition do not
// conflict on it. A collection that becomes empty has its key cleared. DeleteTable removes the
// keys with the rest of the table's range.
//
// Limit check under concurrency: a write reads the size at its read version without a read
// conflict and fails when its growth would take the collection past the limit. A growing write
// whose result lands within ItemCollectionExactMargin(limit) of the limit (or a write that
// empties a collection) adds a read conflict on the size key, so it commits only if no other
// write changed that collection since its read version: near the limit the check is exact.
// Farther away, concurrent writes can together overshoot only if the growth committed by
// others into that one collection between a write's read version and its commit (at most the
// engine's 5 s transaction window) exceeds the margin: 5 GiB for the 10 GB limit, i.e. more
// than 1 GiB/s into one partition key. Limits up to 64 MiB (tests) are always exact.
//
// Thread-safety: free functions are pure or use a Transaction from one thread;
// ItemCollectionChanges is a value used by one thread.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "kv/kv.h"
#include "model/attribute_value.h"
#include "store/catalog.h"

namespace fdyno::store {

// DynamoDB's item collection size limit: 10 GB (binary units).
inline constexpr uint64_t kItemCollectionSizeLimitBytes = uint64_t{10} << 30;
// Overhead DynamoDB counts for each local secondary index entry.
inline constexpr uint64_t kLocalIndexEntryOverheadBytes = 100;

// Within this many bytes of the limit, growing writes take a read conflict (header comment):
// half the limit, and the whole limit when it is at most 64 MiB.
inline constexpr uint64_t ItemCollectionExactMargin(uint64_t limit_bytes) {
  constexpr uint64_t kSmallLimitBytes = uint64_t{64} << 20;
  return limit_bytes <= kSmallLimitBytes ? limit_bytes : limit_bytes / 2;
}

// Whether `table` has item collections (at least one local secondary index).
bool HasItemCollections(const TableInfo& table);

// The bytes `item` counts for in its collection. 0 for tables without local indexes.
uint64_t ItemCollectionBytes(const TableInfo& table, const model::Item& item);

// The kv key holding the size of the collection with partition key encoding `encoded_hash`
// (model::EncodeKeyValue) in table `table_id`.
std::string ItemCollectionSizeKey(int64_t table_id, std::string_view encoded_hash);

// The stored size of a collection (0 when absent), read without a read conflict. A value that
// is not 8 bytes is InternalServerError (fail closed); a negative one reads as 0.
Result<uint64_t> ReadItemCollectionSize(kv::Transaction& tx, int64_t table_id,
                                        std::string_view encoded_hash);

// DynamoDB's SizeEstimateRangeGB for a collection of `bytes`: the whole gigabytes below and
// above it, [floor(GB), floor(GB) + 1] (an empty or small collection is [0, 1]).
std::pair<double, double> SizeEstimateRangeGB(uint64_t bytes);

// One collection: table id and encoded partition key value.
struct ItemCollectionRef {
  int64_t table_id = 0;
  std::string encoded_hash;
  auto operator<=>(const ItemCollectionRef&) const = default;
};

// The collection of an item (or key) of `table`. REQUIRES: it has the partition key attribute.
ItemCollectionRef CollectionOf(const TableInfo& table, const model::Item& item_or_key);

// The size changes of one transaction, per collection: record every base item change, then
// Apply once before commit.
class ItemCollectionChanges {
 public:
  // Records that an item of `table` changed from `old_item` (null: absent) to `new_item`
  // (null: deleted). No-op for tables without local secondary indexes. REQUIRES: at least one
  // is non-null; both have the table's key.
  void Record(const TableInfo& table, const model::Item* old_item, const model::Item* new_item);

  // Reads the size of every changed collection once and checks the growing ones against
  // `limit_bytes`. Returns the collections the transaction would take past the limit (sorted);
  // when there are none, buffers the size changes in `tx`. Writes that do not grow a
  // collection are always allowed, even above the limit.
  Result<std::vector<ItemCollectionRef>> Apply(kv::Transaction& tx, uint64_t limit_bytes);

  // The size of `ref` after this transaction (its size at the read version plus the recorded
  // change), or its stored size when this transaction did not change it.
  // REQUIRES: Apply succeeded; for an untouched ref, ReadSize reads it.
  Result<uint64_t> SizeAfter(kv::Transaction& tx, const ItemCollectionRef& ref) const;

  // The net change recorded for `ref` (0 when none).
  int64_t Delta(const ItemCollectionRef& ref) const;
  bool empty() const { return entries_.empty(); }

 private:
  struct Entry {
    int64_t delta = 0;
    uint64_t before = 0;  // filled by Apply
  };
  std::map<ItemCollectionRef, Entry> entries_;
};

}  // namespace fdyno::store
