#include "store/backups.h"

#include <cstdio>
#include <random>

#include "base/bytes.h"
#include "kv/tuple.h"
#include "store/layout.h"
#include "store/record_codec.h"

namespace fdyno::store {
namespace {

// Persisted (docs/format/backups.md): never renumber.
constexpr uint8_t kBackupRecordVersion = 1;
constexpr uint8_t kRestoreJobVersion = 1;
constexpr uint8_t kChunkVersion = 1;
constexpr uint8_t kPurgeMarkerVersion = 1;
constexpr int64_t kRecordPart = 1;
constexpr int64_t kTablePart = 2;
constexpr int64_t kChunkPart = 3;
constexpr int64_t kRestorePart = 4;
constexpr int64_t kPurgePart = 5;

Error Corrupt(std::string_view what) {
  return Error::Internal("malformed backup data (" + std::string(what) + ")");
}

// Persisted names (docs/format/backups.md), in enum order.
constexpr std::string_view kTypeNames[] = {"USER", "SYSTEM"};
constexpr std::string_view kStatusNames[] = {"CREATING", "AVAILABLE"};

// The persisted fields of each record, in the order they are written (record_codec.h); `R` is
// const for the encoder. "account" and "region" are absent from records written before them
// (the catalog's format 3 migration gives every record its region).
template <typename Fields, typename R>
void BackupFields(Fields& f, R& info) {
  f.OptStr("account", info.account);
  f.OptStr("region", info.region);
  f.Str("id", info.id);
  f.Str("name", info.name);
  f.Enum("type", kTypeNames, info.type);
  f.Enum("status", kStatusNames, info.status);
  f.Int("created_ms", info.created_ms);
  f.Str("table_name", info.table_name);
  f.Int("table_id", info.table_id);
  f.Str("table_uuid", info.table_uuid);
  f.Int("table_created_ms", info.table_created_ms);
  f.Int("table_item_count", info.table_item_count);
  f.Str("owner", info.progress.owner);
  f.Int("heartbeat_ms", info.progress.heartbeat_ms);
  f.Hex("next_key", info.progress.next_key);
  f.Int("chunks", info.progress.chunks);
  f.Int("items", info.progress.items);
  f.Int("bytes", info.progress.bytes);
}

template <typename Fields, typename R>
void RestoreJobFields(Fields& f, R& job) {
  f.Int("table_id", job.table_id);
  f.OptStr("account", job.account);
  f.OptStr("region", job.region);
  f.Str("table_name", job.table_name);
  f.Str("backup_id", job.backup_id);
  f.Int("chunks", job.chunks);
  f.Int("next_chunk", job.next_chunk);
  f.Int("next_item", job.next_item);
  f.Int("items", job.items);
}

kv::Subspace Backups() { return layout::Backups(); }

}  // namespace

// ---- records -------------------------------------------------------------------------------

std::string EncodeBackupInfo(const BackupInfo& info) {
  RecordWriter w;
  BackupFields(w, info);
  return w.Finish(kBackupRecordVersion);
}

Result<BackupInfo> DecodeBackupInfo(std::string_view bytes) {
  RecordReader r(bytes, kBackupRecordVersion);
  BackupInfo info;
  BackupFields(r, info);
  if (!r.ok() || !IsBackupId(info.id)) return CorruptRecord("backup");
  return info;
}

namespace {

// "<now_ms, 14 digits>-<suffix, 8 hex digits>".
std::string BackupIdOf(int64_t now_ms, uint32_t suffix) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%014lld-%08x", static_cast<long long>(now_ms),
                static_cast<unsigned>(suffix));
  return buf;
}

}  // namespace

std::string NewBackupId(int64_t now_ms) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return BackupIdOf(now_ms, static_cast<uint32_t>(rng() & 0xFFFFFFFFu));
}

std::string SystemBackupId(int64_t now_ms) { return BackupIdOf(now_ms, 0); }

std::string DeletedTableBackupName(std::string_view table) {
  return std::string(table) + "$DeletedTableBackup";
}

BackupInfo NewBackupRecord(const TableInfo& t, std::string id, std::string name, BackupType type,
                           int64_t now_ms, int64_t item_count) {
  BackupInfo b;
  b.account = t.account;
  b.region = t.region;
  b.id = std::move(id);
  b.name = std::move(name);
  b.type = type;
  b.created_ms = now_ms;
  b.table_name = t.name;
  b.table_id = t.id;
  b.table_uuid = t.uuid;
  b.table_created_ms = t.creation_ms;
  b.table_item_count = item_count;
  return b;
}

void StartBackup(kv::Transaction& tx, const BackupInfo& b, const TableInfo& t) {
  WriteBackup(tx, b);
  tx.Set(BackupTableKey(b.id), EncodeTableInfo(t));
}

bool IsBackupId(std::string_view id) {
  if (id.size() != 14 + 1 + 8 || id[14] != '-') return false;
  for (size_t i = 0; i < id.size(); ++i) {
    if (i == 14) continue;
    const char c = id[i];
    const bool digit = c >= '0' && c <= '9';
    if (i < 14 ? !digit : !(digit || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// ---- keys ----------------------------------------------------------------------------------

std::string BackupKey(std::string_view id) {
  return Backups().Pack(kv::Tuple{kRecordPart, std::string(id)});
}
std::pair<std::string, std::string> BackupsRange() {
  return Backups().Range(kv::Tuple{kRecordPart});
}
std::string BackupTableKey(std::string_view id) {
  return Backups().Pack(kv::Tuple{kTablePart, std::string(id)});
}
std::string ChunkPartKey(std::string_view id, int64_t chunk, int64_t part) {
  return Backups().Pack(kv::Tuple{kChunkPart, std::string(id), chunk, part});
}
std::pair<std::string, std::string> ChunkRange(std::string_view id, int64_t chunk) {
  return Backups().Range(kv::Tuple{kChunkPart, std::string(id), chunk});
}
std::pair<std::string, std::string> ChunksRange(std::string_view id) {
  return Backups().Range(kv::Tuple{kChunkPart, std::string(id)});
}
std::string BackupPurgeKey(std::string_view id) {
  return Backups().Pack(kv::Tuple{kPurgePart, std::string(id)});
}
std::pair<std::string, std::string> BackupPurgesRange() {
  return Backups().Range(kv::Tuple{kPurgePart});
}

// ---- record access -------------------------------------------------------------------------

Result<std::optional<BackupInfo>> ReadBackup(kv::Transaction& tx, std::string_view id,
                                             bool snapshot) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> bytes, tx.Get(BackupKey(id), snapshot));
  if (!bytes) return std::optional<BackupInfo>();
  FDYNO_ASSIGN_OR_RETURN(BackupInfo info, DecodeBackupInfo(*bytes));
  return std::optional<BackupInfo>(std::move(info));
}

void WriteBackup(kv::Transaction& tx, const BackupInfo& info) {
  tx.Set(BackupKey(info.id), EncodeBackupInfo(info));
}

Result<std::vector<BackupInfo>> ListBackupRecords(kv::Transaction& tx, std::string_view after,
                                                  int limit) {
  auto [begin, end] = BackupsRange();
  if (!after.empty()) begin = kv::PrefixEnd(BackupKey(after));
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult r, tx.GetRange(begin, end, {.limit = limit}));
  std::vector<BackupInfo> out;
  for (const kv::KeyValue& kv : r.kvs) {
    FDYNO_ASSIGN_OR_RETURN(BackupInfo info, DecodeBackupInfo(kv.value));
    out.push_back(std::move(info));
  }
  return out;
}

Result<TableInfo> ReadBackupTable(kv::Transaction& tx, std::string_view id) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> bytes, tx.Get(BackupTableKey(id)));
  if (!bytes) return Corrupt("backup without its table record");
  return DecodeTableInfo(*bytes);
}

void DeleteBackupRecord(kv::Transaction& tx, std::string_view id) {
  tx.Clear(BackupKey(id));
  tx.Clear(BackupTableKey(id));
  tx.Set(BackupPurgeKey(id), std::string(1, static_cast<char>(kPurgeMarkerVersion)));
}

Result<bool> PurgeBackupChunks(kv::Transaction& tx, std::string_view id, int limit) {
  auto [begin, end] = ChunksRange(id);
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult r,
                         tx.GetRange(begin, end, {.limit = limit, .snapshot = true}));
  if (r.kvs.empty()) {
    tx.Clear(BackupPurgeKey(id));
    return true;
  }
  tx.ClearRange(begin, r.more ? kv::PrefixEnd(r.kvs.back().key) : end);
  return false;
}

Result<std::vector<std::string>> PendingBackupPurges(kv::Transaction& tx) {
  auto [begin, end] = BackupPurgesRange();
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult r, tx.GetRange(begin, end, {.snapshot = true}));
  std::vector<std::string> out;
  for (const kv::KeyValue& kv : r.kvs) {
    FDYNO_ASSIGN_OR_RETURN(kv::Tuple t, Backups().Unpack(kv.key));
    FDYNO_ASSIGN_OR_RETURN(std::string id, t.GetString(1));
    out.push_back(std::move(id));
  }
  return out;
}

// ---- chunks --------------------------------------------------------------------------------

void ChunkBuilder::Add(std::string_view image) {
  PutLengthPrefixed(body_, image);
  ++items_;
}

std::vector<std::string> ChunkBuilder::Parts() const {
  std::string whole(1, static_cast<char>(kChunkVersion));
  PutU32(whole, static_cast<uint32_t>(items_));
  whole += body_;
  std::vector<std::string> parts;
  for (size_t at = 0; at < whole.size(); at += kChunkPartBytes) {
    parts.push_back(whole.substr(at, kChunkPartBytes));
  }
  return parts;
}

void ChunkBuilder::Clear() {
  body_.clear();
  items_ = 0;
}

void WriteChunk(kv::Transaction& tx, std::string_view id, int64_t chunk,
                const ChunkBuilder& builder) {
  std::vector<std::string> parts = builder.Parts();
  for (size_t i = 0; i < parts.size(); ++i) {
    tx.Set(ChunkPartKey(id, chunk, static_cast<int64_t>(i)), parts[i]);
  }
}

Result<std::optional<std::vector<std::string>>> ReadChunk(kv::Transaction& tx, std::string_view id,
                                                          int64_t chunk) {
  using Images = std::vector<std::string>;
  auto [begin, end] = ChunkRange(id, chunk);
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult r, tx.GetRange(begin, end, {.snapshot = true}));
  if (r.kvs.empty()) return std::optional<Images>();
  std::string whole;
  for (size_t i = 0; i < r.kvs.size(); ++i) {
    if (r.kvs[i].key != ChunkPartKey(id, chunk, static_cast<int64_t>(i))) {
      return Corrupt("chunk part out of sequence");
    }
    whole += r.kvs[i].value;
  }
  ByteReader in(whole);
  uint8_t version = 0;
  uint32_t count = 0;
  if (!in.U8(version) || version != kChunkVersion || !in.U32(count)) return Corrupt("chunk header");
  Images images;
  images.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    std::string_view image;
    if (!in.LengthPrefixed(image)) return Corrupt("chunk item");
    images.emplace_back(image);
  }
  if (!in.done()) return Corrupt("chunk trailing bytes");
  return std::optional<Images>(std::move(images));
}

// ---- restores ------------------------------------------------------------------------------

std::string EncodeRestoreJob(const RestoreJob& job) {
  RecordWriter w;
  RestoreJobFields(w, job);
  return w.Finish(kRestoreJobVersion);
}

Result<RestoreJob> DecodeRestoreJob(std::string_view bytes) {
  RecordReader r(bytes, kRestoreJobVersion);
  RestoreJob job;
  RestoreJobFields(r, job);
  if (!r.ok() || job.next_chunk < 0 || job.next_item < 0) return CorruptRecord("restore job");
  return job;
}

std::string RestoreJobKey(int64_t table_id) {
  return Backups().Pack(kv::Tuple{kRestorePart, table_id});
}
std::pair<std::string, std::string> RestoreJobsRange() {
  return Backups().Range(kv::Tuple{kRestorePart});
}

Result<std::optional<RestoreJob>> ReadRestoreJob(kv::Transaction& tx, int64_t table_id) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> bytes, tx.Get(RestoreJobKey(table_id)));
  if (!bytes) return std::optional<RestoreJob>();
  FDYNO_ASSIGN_OR_RETURN(RestoreJob job, DecodeRestoreJob(*bytes));
  return std::optional<RestoreJob>(std::move(job));
}

Result<std::vector<RestoreJob>> ListRestoreJobs(kv::Transaction& tx) {
  auto [begin, end] = RestoreJobsRange();
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult r, tx.GetRange(begin, end));
  std::vector<RestoreJob> out;
  for (const kv::KeyValue& kv : r.kvs) {
    FDYNO_ASSIGN_OR_RETURN(RestoreJob job, DecodeRestoreJob(kv.value));
    out.push_back(std::move(job));
  }
  return out;
}

}  // namespace fdyno::store
