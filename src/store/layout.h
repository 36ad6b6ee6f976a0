// The key layout of the whole store: every key fdyno writes is a packed tuple whose first
// element names one of the root subspaces below. Described in docs/format/catalog.md
// ("Key layout"); every number here is persisted and must never be renumbered or reused.
//
//   (1, ...)                     catalog (store/catalog.h owns its inner layout)
//   (2)                          metadata version: 8-byte little-endian counter, bumped with
//                                an atomic Add by every catalog change
//   (3, table_id, 1, hash, pk, [sk])  ITEMS of one table -> item value; the parts of a split
//                                item follow at (..., i), i >= 1 (store/items.h)
//   (3, table_id, 2, index_id, ...)  INDEX entries of one secondary index (store/indexes.h)
//   (3, table_id, 3, ...)        reserved, never written (stream records live under root 8, so
//                                that a stream outlives its table by 24 hours as DynamoDB's does)
//   (3, table_id, 4, expiry_s, item_key)  TTL expiry index of one table (store/ttl.h)
//   (3, table_id, 5, pk)         ITEM COLLECTION size of one partition key value (tables with
//                                local secondary indexes; store/item_collections.h)
//   (3, table_id, 6, id)         ITEM COUNT of the table (id 0) or of index `id`
//                                (store/item_counts.h)
//   (3, table_id, 7, index_id, ...)  ITEM COUNT JOURNAL of an index being backfilled, keyed
//                                like the base items (store/item_counts.h)
//   (3, table_id, 8, index_id, ...)  VECTOR INDEX entries of one vector index
//                                (store/vector_index.h)
//   (3, table_id, 9, epoch, ...) point-in-time recovery HISTORY: the undo records of every
//                                change while recovery is enabled (store/pitr.h)
//   (3, table_id, 10, epoch)     point-in-time recovery TRIM POINT of one history (store/pitr.h)
//   (3, table_id, 11, index_id, ...)  VECTOR JOURNAL of one vector index: which entries changed
//                                at which commit version, and its trim marker
//                                (store/vector_journal.h)
//   (3, table_id, 12, key...)    REPLICA CLOCK of a global table's item: the stamp of its last
//                                write, kept after a delete as a tombstone (store/replication.h)
//   (3, table_id, 13, region, ts, key...)  REPLICATION OUTBOX: the table's changes waiting to
//                                reach its replica in `region` (store/replication.h)
//   (4, bucket, nonce, ...)      operation receipts (store/receipts.h)
//   (5, account, operation, token, ...)  ClientRequestToken records of TransactWriteItems and
//                                ExecuteTransaction (store/tokens.h)
//   (6, ...)                     background work: leases, (6, "lease", unit...)
//                                (store/leases.h), and the cursors of resumable work (index and
//                                TTL backfills, token GC: workers/backfill.h, workers/ttl.h,
//                                workers/token_gc.h)
//   (7, part, ...)               backups and restores (parts 1-5, store/backups.h), restores
//                                to a point in time (part 6, store/pitr.h), exports and imports
//                                (parts 7-10, store/exports.h)
//   (8, ...)                     DynamoDB Streams: streams, their shards' boundaries and
//                                change records (store/streams.h)
//
// Everything a table owns lives under (3, table_id), so dropping a table is clearing one key
// range (in bounded transactions, Catalog::PurgeOne), and a table id is never reused (a
// recreated table gets a new id and never sees old keys). Its stream (root 8) and its backups
// (root 7) outlive it by design. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "kv/tuple.h"

namespace fdyno::store::layout {

// First tuple element of every key. Persisted: never renumber.
enum class Root : int64_t {
  kCatalog = 1,
  kMetadataVersion = 2,
  kTables = 3,
  kReceipts = 4,
  kTokens = 5,
  kLeases = 6,   // leases and the cursors of resumable work
  kBackups = 7,  // backups, and the jobs of restores, exports and imports
  kStreams = 8,
};

// Second element under (kTables, table_id). Persisted: never renumber.
enum class TablePart : int64_t {
  kItems = 1,
  kIndex = 2,
  kStream = 3,  // reserved, never used: streams are under Root::kStreams
  kTtl = 4,
  kItemCollections = 5,
  kItemCounts = 6,
  kItemCountJournal = 7,
  kVectorIndex = 8,
  kPitrHistory = 9,
  kPitrTrim = 10,
  kVectorJournal = 11,
  kReplicaClock = 12,
  kReplicationOutbox = 13,
};

inline kv::Subspace RootSubspace(Root root) {
  return kv::Subspace(kv::Tuple{static_cast<int64_t>(root)});
}

inline kv::Subspace Catalog() { return RootSubspace(Root::kCatalog); }
// The single key whose value changes (atomic Add of 1) with every catalog change.
inline std::string MetadataVersionKey() {
  return kv::Tuple{static_cast<int64_t>(Root::kMetadataVersion)}.Pack();
}
inline kv::Subspace Receipts() { return RootSubspace(Root::kReceipts); }
inline kv::Subspace Tokens() { return RootSubspace(Root::kTokens); }
inline kv::Subspace Leases() { return RootSubspace(Root::kLeases); }
inline kv::Subspace Backups() { return RootSubspace(Root::kBackups); }
inline kv::Subspace Streams() { return RootSubspace(Root::kStreams); }

// Everything table `table_id` owns.
inline kv::Subspace Table(int64_t table_id) {
  return kv::Subspace(kv::Tuple{static_cast<int64_t>(Root::kTables), table_id});
}
// The packed (Root::kTables, table_id, part): one part's key prefix, built without a Tuple
// (item keys build it on every request: store::ItemKey).
inline std::string TablePartPrefix(int64_t table_id, TablePart part) {
  std::string prefix;
  kv::AppendPackedInt(&prefix, static_cast<int64_t>(Root::kTables));
  kv::AppendPackedInt(&prefix, table_id);
  kv::AppendPackedInt(&prefix, static_cast<int64_t>(part));
  return prefix;
}
inline kv::Subspace TablePartSubspace(int64_t table_id, TablePart part) {
  return kv::Subspace::FromRawPrefix(TablePartPrefix(table_id, part));
}
inline kv::Subspace Items(int64_t table_id) {
  return TablePartSubspace(table_id, TablePart::kItems);
}
// Entries of one secondary index; index ids are allocated per table (TableInfo).
inline kv::Subspace Index(int64_t table_id, int64_t index_id) {
  return kv::Subspace(kv::Tuple{static_cast<int64_t>(Root::kTables), table_id,
                                static_cast<int64_t>(TablePart::kIndex), index_id});
}
inline kv::Subspace Ttl(int64_t table_id) { return TablePartSubspace(table_id, TablePart::kTtl); }
// Item collection sizes of a table with local secondary indexes, one key per partition key.
inline kv::Subspace ItemCollections(int64_t table_id) {
  return TablePartSubspace(table_id, TablePart::kItemCollections);
}

// Item counts of a table and of its indexes (store/item_counts.h).
inline kv::Subspace ItemCounts(int64_t table_id) {
  return TablePartSubspace(table_id, TablePart::kItemCounts);
}
// The item count journal of one index being backfilled (store/item_counts.h).
inline kv::Subspace ItemCountJournal(int64_t table_id, int64_t index_id) {
  return kv::Subspace(kv::Tuple{static_cast<int64_t>(Root::kTables), table_id,
                                static_cast<int64_t>(TablePart::kItemCountJournal), index_id});
}

// The entries of one vector index (store/vector_index.h).
inline kv::Subspace VectorIndex(int64_t table_id, int64_t index_id) {
  return kv::Subspace(kv::Tuple{static_cast<int64_t>(Root::kTables), table_id,
                                static_cast<int64_t>(TablePart::kVectorIndex), index_id});
}

// The change journal of one vector index (store/vector_journal.h).
inline kv::Subspace VectorJournal(int64_t table_id, int64_t index_id) {
  return kv::Subspace(kv::Tuple{static_cast<int64_t>(Root::kTables), table_id,
                                static_cast<int64_t>(TablePart::kVectorJournal), index_id});
}

}  // namespace fdyno::store::layout
