// The change journal of a vector index: which entries (store/vector_index.h) changed at which
// commit version, so that an in-memory graph of the index (store/vector_graph.h) built as of
// one version can be brought to any later read version by re-reading only the entries changed
// since, without rescanning the index. Format: docs/format/vector_journal.md.
//
//   (3, table_id, 11, index_id, 0)                     -> trim marker (8-byte LE version)
//   (3, table_id, 11, index_id, 1, vs, bytes suffix)   -> empty
//
// A record is written, in the transaction that sets or clears the entry, at a versionstamped
// key (`vs`: the commit's versionstamp, user order 0), naming the entry by its key after the
// index's prefix; records are therefore in commit order and writers never conflict on them.
// A record says only that the entry changed: a reader at read version R reads the entry itself
// at R. The entries stay the only source of truth.
//
// Trimming removes records from the start; the trim marker is then the newest commit version
// removed. A graph whose position is below the marker may have missed a removed record and must
// be rebuilt from the entries (never patched), so a trim can never lose a change silently.
//
// Thread-safety: functions over a Transaction used by one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kv/kv.h"
#include "store/catalog.h"

namespace fdyno::store {

// Buffers the record that the entry at `entry_key` of `index` changes in `tx`.
// REQUIRES: entry_key lies in the index's entries (store::VectorIndexRange).
void JournalVectorEntryChange(kv::Transaction& tx, const TableInfo& table, const VectorIndex& index,
                              std::string_view entry_key);

// Entries changed after a version, as one read of the journal sees them.
struct VectorJournalPage {
  // The entry keys (full kv keys) named by the records read, in commit order, repeats removed.
  std::vector<std::string> entry_keys;
  // Every entry changed in (after, through] is in entry_keys. Equals the read version when the
  // whole journal after `after` was read; otherwise the version before the last one read (its
  // records may go on past the limit), which may equal `after` (no progress: a single version
  // holds more than `limit` records).
  int64_t through = 0;
  bool complete = false;  // the whole journal after `after` was read
};

// At most `limit` records of the journal of (table_id, index_id) after commit version `after`,
// read at tx's snapshot (no conflicts: records never change once written).
Result<VectorJournalPage> ReadVectorJournal(kv::Transaction& tx, int64_t table_id, int64_t index_id,
                                            int64_t after, int limit);

// The newest commit version removed by a trim (0: none). Snapshot read.
Result<int64_t> ReadVectorJournalTrimMarker(kv::Transaction& tx, int64_t table_id,
                                            int64_t index_id);

// Removes the records of commit version <= `cutoff` (one range clear) and moves the marker to
// the newest version removed. Returns whether there was any to remove (none: nothing written).
Result<bool> TrimVectorJournal(kv::Transaction& tx, int64_t table_id, int64_t index_id,
                               int64_t cutoff);

// The index ids of table `table_id` that have a journal (records or a marker).
Result<std::vector<int64_t>> VectorJournalIndexIds(kv::Transaction& tx, int64_t table_id);

// Removes the journal of an index that no longer exists or is being deleted.
void ClearVectorJournal(kv::Transaction& tx, int64_t table_id, int64_t index_id);

}  // namespace fdyno::store
