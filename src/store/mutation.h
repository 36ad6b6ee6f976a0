// The one path by which item writes change the store. PutItem, UpdateItem, DeleteItem,
// TransactWriteItems, BatchWriteItem, PartiQL writes and TTL deletes all read items with
// ReadCurrent, decide and check their new images themselves (the api layer's write executor,
// api/write_executor.h: requests, conditions, updates, ValidateNewImage), and hand every change
// of one kv transaction to a Mutation, which writes what follows from the changes:
//   * the base image and its chunks (store/items.h), or the item's removal;
//   * the entries of every maintained secondary index and vector index, and the item counts of
//     the table and its indexes (store/indexes.h, store/vector_index.h, store/item_counts.h);
//   * the item collection sizes of tables with local secondary indexes, checked against the
//     limit over all the changes together (store/item_collections.h);
//   * the expiry index entries of tables with TTL (store/ttl.h);
//   * a change record in the table's stream when the stream is enabled and the item changed
//     (store/streams.h), in the commit's versionstamp order;
//   * an undo record in the table's history when point-in-time recovery is enabled
//     (store/pitr.h), in the same order.
// All of it is buffered in the caller's transaction, so it commits or fails as one.
//
// Outcomes are typed: ValidateNewImage's failures carry an ErrorCause (base/error.h); a write that
// would take an item collection past its limit reports which changes grew such a collection
// (Written::collection_limit_exceeded) and buffers nothing.
//
// Thread-safety: a Mutation is a value used by one thread, for one transaction attempt (build
// a new one when the kv retry runner re-runs the body).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "kv/kv.h"
#include "model/attribute_value.h"
#include "store/catalog.h"
#include "store/item_collections.h"
#include "store/items.h"
#include "store/replication.h"
#include "store/streams.h"

namespace fdyno::store {

// One item in a transaction, as a write reads it.
struct CurrentItem {
  std::string key;                   // the item's storage key (store::ItemKey)
  std::optional<StoredItem> stored;  // nullopt: absent
  std::optional<model::Item> image;  // decoded: when asked for, or the write path needs it
  uint64_t size = 0;                 // DynamoDB size of the stored item (0 when absent)

  bool exists() const { return stored.has_value(); }
  // The decoded image, or null when absent. REQUIRES: decoded when it exists.
  const model::Item* item() const { return image ? &*image : nullptr; }
};

// Whether writes to `table` need an item's old image decoded: secondary or vector indexes, item
// collections, an enabled stream or TTL.
bool NeedsOldImage(const TableInfo& table);

// The storage key of the item whose key attributes are in `key` (the table's key schema).
// REQUIRES: the key attributes are present with the schema's types.
std::string ItemStorageKey(const TableInfo& table, const model::Item& key);

// Reads the item at storage key `key` in tx (a conflicting read), decoding its image when
// `decode` or NeedsOldImage(table). Corrupt stored data is InternalServerError.
Result<CurrentItem> ReadCurrent(kv::Transaction& tx, const TableInfo& table, std::string key,
                                bool decode);

// Checks that `next` may be an item of `table`: every maintained index key attribute it has is
// of the index's type and not empty (ValidationException with cause kIndexKeyMismatch for a
// type mismatch, kIndexKeyEmpty for an empty value), and every vector attribute of a maintained
// vector index is a valid vector (store/vector_index.h ValidateVectorAttributes; secondary index
// errors first). With `before` (an update's starting item), only the attributes the update
// changed (store/indexes.h ValidateIndexKeys).
Status ValidateNewImage(const TableInfo& table, const model::Item& next,
                        const model::Item* before = nullptr);

struct MutationOptions {
  int64_t now_ms = 0;  // wall time: the change records' creation time
  ChangeSource source = ChangeSource::kUser;
  uint64_t item_collection_limit_bytes = kItemCollectionSizeLimitBytes;
  // Set: the changes are another replica's, with this stamp (store/replication.h).
  std::optional<ReplicaStamp> replicated = std::nullopt;
};

// What Write did.
struct Written {
  // The staged changes (indexes into the Stage order) that grow an item collection past the
  // limit. Non-empty: nothing was buffered.
  std::vector<size_t> collection_limit_exceeded;
  bool ok() const { return collection_limit_exceeded.empty(); }
};

class Mutation {
 public:
  explicit Mutation(MutationOptions options) : options_(options) {}

  // Stages replacing `current` by `next` (nullopt: the item is deleted, or stays absent) in
  // `table`, which must outlive the Mutation. Returns the change's index. Stage does not check
  // `next`: the caller has (ValidateNewImage, once: the api layer's write executor, an import's
  // reader), or `next` is an item a table already held, written as it is by a restore (what the
  // source accepted the copy keeps, and an index leaves out what does not fit it, as the
  // source's index did). REQUIRES: `current` was read with ReadCurrent for this table, and its
  // image is decoded when it exists and NeedsOldImage(table); each item staged once.
  size_t Stage(const TableInfo& table, CurrentItem current, std::optional<model::Item> next);

  // Checks the item collection limit over all staged changes, then buffers every write in tx.
  Result<Written> Write(kv::Transaction& tx);

  // The size of item collection `ref` after this transaction (ItemCollectionMetrics).
  // REQUIRES: Write succeeded.
  Result<uint64_t> CollectionSizeAfter(kv::Transaction& tx, const ItemCollectionRef& ref) const;

  const CurrentItem& current(size_t i) const { return changes_[i].current; }
  const std::optional<model::Item>& next(size_t i) const { return changes_[i].next; }
  size_t size() const { return changes_.size(); }

 private:
  struct Change {
    const TableInfo* table = nullptr;
    CurrentItem current;
    std::optional<model::Item> next;
  };
  Status WriteOne(kv::Transaction& tx, const Change& c, uint16_t order);

  MutationOptions options_;
  std::vector<Change> changes_;
  ItemCollectionChanges collections_;
};

}  // namespace fdyno::store
