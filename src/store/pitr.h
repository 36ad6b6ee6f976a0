// Point-in-time recovery: the history that lets a table be restored as it was at any moment of
// its recovery window, and the jobs of the restores that read it. Format: docs/format/pitr.md.
//
//   (3, table_id, 9, epoch, vs)        -> an undo record, or the head of a split one
//   (3, table_id, 9, epoch, vs, i)     -> part i >= 1 of a split undo record
//   (3, table_id, 10, epoch)           -> trim point: time (ms) of the newest record removed
//   (7, 6, table_id)                   -> job of a table being restored to a point in time
//
// While recovery is enabled (TableInfo::pitr), the mutation path (store/mutation.h) writes, in
// the transaction of every change of an item, an undo record at a versionstamped key: the
// change's time and the item as it was before the change (absent, or its stored image). The
// history is therefore in commit order, and the table at time T is the table now with every
// change after T undone, newest first: for each item, the image before its first change after
// T. No base image is needed, and the history older than the recovery period can be removed
// from its start at any time (TrimHistory), since a restore never reads before its time.
//
// Each enable starts a new history (`epoch`); the histories of earlier enables are removed by
// the worker (workers/pitr.h).
//
// Thread-safety: values, pure functions, and functions over a Transaction used by one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "kv/kv.h"
#include "store/catalog.h"
#include "store/items.h"

namespace fdyno::store {

// How long after a time every change stamped at or before it has committed or failed: a change
// is stamped inside its transaction attempt, after its read version, and a transaction older
// than 5 seconds cannot commit. A restore to time T reads the table no earlier than T + this.
inline constexpr int64_t kPitrSettleMs = 6'000;
inline constexpr int64_t kMsPerDay = 86'400'000;

// One change of an item, as the history keeps it: enough to undo it.
struct UndoRecord {
  int64_t time_ms = 0;                   // when the change was made (the writer's wall clock)
  std::string item_suffix;               // the item's storage key after layout::Items(table_id)
  std::optional<std::string> old_image;  // the stored image before (item codec); nullopt: absent
  bool operator==(const UndoRecord&) const = default;
};

std::string EncodeUndoRecord(const UndoRecord& r);
// Fails closed (InternalServerError) on an unknown version or malformed bytes.
Result<UndoRecord> DecodeUndoRecord(std::string_view bytes);

// ---- keys --------------------------------------------------------------------------------

// Every undo record of history `epoch` of a table.
std::pair<std::string, std::string> HistoryRange(int64_t table_id, int64_t epoch);
// Every history of a table, whatever its epoch.
std::pair<std::string, std::string> AllHistoriesRange(int64_t table_id);
// The epoch of a history key (one under AllHistoriesRange), or InternalServerError.
Result<int64_t> HistoryEpochOf(int64_t table_id, std::string_view key);
std::string HistoryTrimPointKey(int64_t table_id, int64_t epoch);
// The storage key of the item whose key (under any table) ends with `suffix`, in `table_id`.
std::string ItemKeyFromSuffix(int64_t table_id, std::string_view suffix);
// The part of an item's storage key after layout::Items(table_id).
std::string ItemSuffix(int64_t table_id, std::string_view item_key);

// ---- writing -----------------------------------------------------------------------------

// Buffers the undo record of one change of the item at `item_key` of `table`, which was `old`
// before the change, stamped `time_ms`; `user_order` orders the records of one transaction.
// REQUIRES: table.pitr.enabled.
Status WriteUndoRecord(kv::Transaction& tx, const TableInfo& table, std::string_view item_key,
                       const std::optional<StoredItem>& old, int64_t time_ms, uint16_t user_order);

// ---- reading -----------------------------------------------------------------------------

// Reassembles undo records from a REVERSE range read over a history (newest first): a split
// record's parts come before its head. Feed key-values in reverse key order.
class ReverseUndoAssembler {
 public:
  struct Assembled {
    std::string key;  // the record's head key
    UndoRecord record;
  };
  // The record this value completes, if any; values out of sequence are InternalServerError.
  Result<std::optional<Assembled>> Add(const kv::KeyValue& kv);
  // Whether a split record's parts were read without its head.
  bool pending() const { return !parts_.empty(); }

 private:
  std::vector<std::string> parts_;  // newest part first
};

// The time of the record whose head value is `value`; nullopt for a part (not a head).
Result<std::optional<int64_t>> UndoRecordTime(std::string_view value);

// ---- retention ---------------------------------------------------------------------------

// The time (ms) of the newest record TrimHistory removed from history `epoch`; 0: none.
// A conflicting read: a restore that checks its time against it conflicts with a trim.
Result<int64_t> ReadHistoryTrimPoint(kv::Transaction& tx, int64_t table_id, int64_t epoch);

// Removes, from the start of history `epoch`, the records made before `cutoff_ms`, at most
// `limit` keys, and moves the trim point past them. Returns whether it reached a record at or
// after the cutoff (or the end). Snapshot reads: records never change once written.
Result<bool> TrimHistory(kv::Transaction& tx, int64_t table_id, int64_t epoch, int64_t cutoff_ms,
                         int limit);

// Removes at most `limit` keys of the histories of table `table_id` whose epochs are not in
// `keep`, with their trim points. Returns whether none is left.
Result<bool> ClearOtherHistories(kv::Transaction& tx, int64_t table_id,
                                 const std::vector<int64_t>& keep, int limit);

// DescribeContinuousBackups' window of a table with recovery enabled: from the latest of its
// enable time, the start of its recovery period and its trim point, to now.
struct RestorableWindow {
  int64_t earliest_ms = 0;
  int64_t latest_ms = 0;
};
RestorableWindow WindowOf(const PitrSettings& pitr, int64_t trim_point_ms, int64_t now_ms);

// ---- restore jobs ------------------------------------------------------------------------

// A table being restored (status CREATING) to a point in time of another table: where the
// worker resumes. Phase kCopy copies the source's items as they are now (cursor `next_key`);
// phase kUndo undoes the history from its newest record down to the restore time (cursor
// `undo_end`, the exclusive end of the next reverse read; empty: the newest record).
struct PitrRestoreJob {
  enum class Phase : uint8_t { kCopy = 0, kUndo = 1 };  // persisted
  int64_t table_id = 0;
  std::string table_name;
  int64_t source_id = 0;
  std::string source_name;
  int64_t epoch = 0;
  int64_t time_ms = 0;  // RestoreDateTime
  Phase phase = Phase::kCopy;
  std::string next_key;  // source item key the next copy batch starts at; empty: the first
  std::string undo_end;
  int64_t items = 0;                                  // items copied, then records undone, so far
  std::string account = std::string(kSharedAccount);  // of both tables
  std::string region;                                 // of both tables
  bool operator==(const PitrRestoreJob&) const = default;
};

std::string EncodePitrRestoreJob(const PitrRestoreJob& job);
Result<PitrRestoreJob> DecodePitrRestoreJob(std::string_view bytes);
std::string PitrRestoreJobKey(int64_t table_id);
std::pair<std::string, std::string> PitrRestoreJobsRange();
Result<std::optional<PitrRestoreJob>> ReadPitrRestoreJob(kv::Transaction& tx, int64_t table_id);
// Every job (a conflicting read of the whole range).
Result<std::vector<PitrRestoreJob>> ListPitrRestoreJobs(kv::Transaction& tx);

}  // namespace fdyno::store
