// On-demand backups and the restores that read them, stored under the backups root subspace
// (layout::Backups()). Format: docs/format/backups.md.
//
//   (7, 1, backup_id)                 -> backup record (version byte + JSON): BackupInfo
//   (7, 2, backup_id)                 -> the source table's record as CreateBackup read it
//                                        (the catalog's format, docs/format/catalog.md)
//   (7, 3, backup_id, chunk, part)    -> one part of one chunk of item images
//   (7, 4, table_id)                  -> restore job of a table being restored: RestoreJob
//   (7, 5, backup_id)                 -> pending purge of a deleted backup's chunks
//
// A backup id is "<creation time in ms, 14 digits>-<8 hex digits>", the last part of its ARN
// (arn:...:table/<table>/backup/<id>), so backups list in creation order.
//
// A backup is written by the backup worker (workers/backups.h): CreateBackup stores the record
// as CREATING with the table's record; the worker reads the table's items at one consistent
// snapshot and writes them as chunks, each chunk in its own bounded transaction together with
// the progress in the record; the last transaction marks the record AVAILABLE with its totals.
// Nothing reads a CREATING backup's chunks. Tokens and receipts are not part of a table backup.
//
// A chunk is a sequence of item images (the item codec) split into parts of at most 90,000
// bytes, so that any chunk fits engine values whatever its items' sizes.
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

namespace fdyno::store {

// DynamoDB's BackupStatus (DELETED is never stored: a deleted backup's record is removed).
enum class BackupStatus : uint8_t { kCreating, kAvailable };
// DynamoDB's BackupType.
enum class BackupType : uint8_t { kUser, kSystem };

// How far a CREATING backup got, or an AVAILABLE one's totals.
struct BackupProgress {
  // The process writing it (workers/backups.h) and when it last wrote a chunk; a process that
  // finds another owner takes the backup over (and starts it again) as that owner's lease ends.
  std::string owner;
  int64_t heartbeat_ms = 0;
  std::string next_key;  // the item key the next chunk starts at; empty: the first
  int64_t chunks = 0;
  int64_t items = 0;
  int64_t bytes = 0;  // DynamoDB size of the items (BackupSizeBytes)
  bool operator==(const BackupProgress&) const = default;
};

struct BackupInfo {
  std::string account = std::string(kSharedAccount);  // the backed-up table's, who owns it
  std::string region;                                 // the backed-up table's
  std::string id;
  std::string name;
  BackupType type = BackupType::kUser;
  BackupStatus status = BackupStatus::kCreating;
  int64_t created_ms = 0;
  std::string table_name;
  int64_t table_id = 0;
  std::string table_uuid;
  int64_t table_created_ms = 0;
  int64_t table_item_count = 0;  // the table's ItemCount when the backup was requested
  BackupProgress progress;
  TableScope scope() const { return {account, region}; }
  bool operator==(const BackupInfo&) const = default;
};

std::string EncodeBackupInfo(const BackupInfo& info);
// Fails closed (InternalServerError) on an unknown version or a malformed record.
Result<BackupInfo> DecodeBackupInfo(std::string_view bytes);

// A new backup id for a backup created at `now_ms`, with 32 random bits.
std::string NewBackupId(int64_t now_ms);
// The id DynamoDB gives the backup it makes of a deleted table: "<ms>-00000000".
std::string SystemBackupId(int64_t now_ms);

// DynamoDB's backup of a table with point-in-time recovery that is deleted: a SYSTEM backup
// named "<table>$DeletedTableBackup", kept 35 days (BackupExpiryDateTime), then removed.
inline constexpr int64_t kSystemBackupRetentionMs = int64_t{35} * 86'400'000;
std::string DeletedTableBackupName(std::string_view table);

// The record of a new backup `id` of table `t` (CREATING), made at `now_ms` when the table held
// `item_count` items.
BackupInfo NewBackupRecord(const TableInfo& t, std::string id, std::string name, BackupType type,
                           int64_t now_ms, int64_t item_count);
// Stores `b` with its table's record `t`, for the backup worker to fill.
void StartBackup(kv::Transaction& tx, const BackupInfo& b, const TableInfo& t);
// Whether `id` has a backup id's shape.
bool IsBackupId(std::string_view id);

// ---- keys --------------------------------------------------------------------------------

std::string BackupKey(std::string_view id);
std::pair<std::string, std::string> BackupsRange();
std::string BackupTableKey(std::string_view id);
std::string ChunkPartKey(std::string_view id, int64_t chunk, int64_t part);
std::pair<std::string, std::string> ChunkRange(std::string_view id, int64_t chunk);
// Every chunk of a backup.
std::pair<std::string, std::string> ChunksRange(std::string_view id);
std::string BackupPurgeKey(std::string_view id);
std::pair<std::string, std::string> BackupPurgesRange();

// ---- records -------------------------------------------------------------------------------

Result<std::optional<BackupInfo>> ReadBackup(kv::Transaction& tx, std::string_view id,
                                             bool snapshot = false);
void WriteBackup(kv::Transaction& tx, const BackupInfo& info);
// Every backup, in id (creation) order, from `after` (exclusive; empty: the first), at most
// `limit` (0: all).
Result<std::vector<BackupInfo>> ListBackupRecords(kv::Transaction& tx, std::string_view after,
                                                  int limit);
// The source table's record stored with backup `id`.
Result<TableInfo> ReadBackupTable(kv::Transaction& tx, std::string_view id);
// Removes a backup's record and table record and marks its chunks for purging
// (PurgeBackupChunks).
void DeleteBackupRecord(kv::Transaction& tx, std::string_view id);
// Removes up to `limit` keys of the chunks of one backup pending purge; returns whether none
// is left (and forgets the purge). Snapshot reads: nothing writes a purged backup's chunks.
Result<bool> PurgeBackupChunks(kv::Transaction& tx, std::string_view id, int limit);
// The ids of the backups pending purge.
Result<std::vector<std::string>> PendingBackupPurges(kv::Transaction& tx);

// ---- chunks --------------------------------------------------------------------------------

// Part size of a chunk: well under an engine value.
inline constexpr size_t kChunkPartBytes = 90'000;

// Collects item images into one chunk's bytes.
class ChunkBuilder {
 public:
  void Add(std::string_view image);
  size_t items() const { return items_; }
  size_t bytes() const { return body_.size(); }
  // The parts of the chunk (at least one).
  std::vector<std::string> Parts() const;
  void Clear();

 private:
  std::string body_;
  size_t items_ = 0;
};

// Buffers chunk `chunk` of backup `id` in tx.
void WriteChunk(kv::Transaction& tx, std::string_view id, int64_t chunk,
                const ChunkBuilder& builder);
// The item images of chunk `chunk` of backup `id` (snapshot read: chunks never change once the
// backup is AVAILABLE); nullopt when the chunk does not exist. Malformed chunks are
// InternalServerError.
Result<std::optional<std::vector<std::string>>> ReadChunk(kv::Transaction& tx, std::string_view id,
                                                          int64_t chunk);

// ---- restores ------------------------------------------------------------------------------

// A table being restored (status CREATING) from a backup: where the restore worker resumes.
struct RestoreJob {
  int64_t table_id = 0;
  std::string table_name;
  std::string backup_id;
  int64_t chunks = 0;      // chunks of the backup
  int64_t next_chunk = 0;  // the cursor: the first item not yet written
  int64_t next_item = 0;
  int64_t items = 0;                                  // items written so far
  std::string account = std::string(kSharedAccount);  // the restored table's
  std::string region;                                 // the restored table's
  bool operator==(const RestoreJob&) const = default;
};

std::string EncodeRestoreJob(const RestoreJob& job);
Result<RestoreJob> DecodeRestoreJob(std::string_view bytes);
std::string RestoreJobKey(int64_t table_id);
std::pair<std::string, std::string> RestoreJobsRange();
Result<std::optional<RestoreJob>> ReadRestoreJob(kv::Transaction& tx, int64_t table_id);
Result<std::vector<RestoreJob>> ListRestoreJobs(kv::Transaction& tx);

}  // namespace fdyno::store
