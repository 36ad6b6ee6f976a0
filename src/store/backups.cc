#include "store/backups.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdio>
#include <random>

#include "base/bytes.h"
#include "kv/tuple.h"
#include "store/layout.h"

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

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

Error Corrupt(std::string_view what) {
  return Error::Internal("malformed backup data (" + std::string(what) + ")");
}

void Str(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

std::string Finish(uint8_t version, const rapidjson::StringBuffer& buf) {
  std::string out(1, static_cast<char>(version));
  out.append(buf.GetString(), buf.GetSize());
  return out;
}

// The JSON object after `version`, or an error.
Result<rapidjson::Document> Parse(std::string_view bytes, uint8_t version, std::string_view what) {
  if (bytes.empty() || static_cast<uint8_t>(bytes[0]) != version) {
    return Corrupt(std::string(what) + " version");
  }
  rapidjson::Document d;
  d.Parse(bytes.data() + 1, bytes.size() - 1);
  if (d.HasParseError() || !d.IsObject()) return Corrupt(what);
  return d;
}

bool GetStr(const rapidjson::Value& o, const char* name, std::string& out) {
  auto it = o.FindMember(name);
  if (it == o.MemberEnd() || !it->value.IsString()) return false;
  out.assign(it->value.GetString(), it->value.GetStringLength());
  return true;
}

// An optional string member: absent leaves `out` as it is (its default).
bool OptStr(const rapidjson::Value& o, const char* name, std::string& out) {
  return !o.HasMember(name) || GetStr(o, name, out);
}

bool GetInt(const rapidjson::Value& o, const char* name, int64_t& out) {
  auto it = o.FindMember(name);
  if (it == o.MemberEnd() || !it->value.IsInt64()) return false;
  out = it->value.GetInt64();
  return true;
}

kv::Subspace Backups() { return layout::Backups(); }

// Key bytes as lowercase hex, for JSON strings.
std::string Base16(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    out.push_back(kDigits[static_cast<uint8_t>(c) >> 4]);
    out.push_back(kDigits[static_cast<uint8_t>(c) & 0xF]);
  }
  return out;
}

std::optional<std::string> FromBase16(std::string_view text) {
  auto digit = [](char c) -> int {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  if (text.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < text.size(); i += 2) {
    const int hi = digit(text[i]), lo = digit(text[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>((hi << 4) | lo));
  }
  return out;
}

}  // namespace

// ---- records -------------------------------------------------------------------------------

std::string EncodeBackupInfo(const BackupInfo& info) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("account");
  Str(w, info.account);
  w.Key("id");
  Str(w, info.id);
  w.Key("name");
  Str(w, info.name);
  w.Key("type");
  w.String(info.type == BackupType::kUser ? "USER" : "SYSTEM");
  w.Key("status");
  w.String(info.status == BackupStatus::kCreating ? "CREATING" : "AVAILABLE");
  w.Key("created_ms");
  w.Int64(info.created_ms);
  w.Key("table_name");
  Str(w, info.table_name);
  w.Key("table_id");
  w.Int64(info.table_id);
  w.Key("table_uuid");
  Str(w, info.table_uuid);
  w.Key("table_created_ms");
  w.Int64(info.table_created_ms);
  w.Key("table_item_count");
  w.Int64(info.table_item_count);
  const BackupProgress& p = info.progress;
  w.Key("owner");
  Str(w, p.owner);
  w.Key("heartbeat_ms");
  w.Int64(p.heartbeat_ms);
  w.Key("next_key");
  Str(w, Base16(p.next_key));
  w.Key("chunks");
  w.Int64(p.chunks);
  w.Key("items");
  w.Int64(p.items);
  w.Key("bytes");
  w.Int64(p.bytes);
  w.EndObject();
  return Finish(kBackupRecordVersion, buf);
}

Result<BackupInfo> DecodeBackupInfo(std::string_view bytes) {
  FDYNO_ASSIGN_OR_RETURN(rapidjson::Document d,
                         Parse(bytes, kBackupRecordVersion, "backup record"));
  BackupInfo info;
  std::string type, status, next_key;
  BackupProgress& p = info.progress;
  if (!GetStr(d, "id", info.id) || !GetStr(d, "name", info.name) || !GetStr(d, "type", type) ||
      !GetStr(d, "status", status) || !GetInt(d, "created_ms", info.created_ms) ||
      !GetStr(d, "table_name", info.table_name) || !GetInt(d, "table_id", info.table_id) ||
      !GetStr(d, "table_uuid", info.table_uuid) ||
      !GetInt(d, "table_created_ms", info.table_created_ms) ||
      !GetInt(d, "table_item_count", info.table_item_count) || !GetStr(d, "owner", p.owner) ||
      !GetInt(d, "heartbeat_ms", p.heartbeat_ms) || !GetStr(d, "next_key", next_key) ||
      !GetInt(d, "chunks", p.chunks) || !GetInt(d, "items", p.items) ||
      !GetInt(d, "bytes", p.bytes)) {
    return Corrupt("backup record member");
  }
  if (!OptStr(d, "account", info.account)) return Corrupt("backup record member");
  if (type == "USER") {
    info.type = BackupType::kUser;
  } else if (type == "SYSTEM") {
    info.type = BackupType::kSystem;
  } else {
    return Corrupt("backup type");
  }
  if (status == "CREATING") {
    info.status = BackupStatus::kCreating;
  } else if (status == "AVAILABLE") {
    info.status = BackupStatus::kAvailable;
  } else {
    return Corrupt("backup status");
  }
  std::optional<std::string> key = FromBase16(next_key);
  if (!key || !IsBackupId(info.id)) return Corrupt("backup record");
  p.next_key = std::move(*key);
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
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("table_id");
  w.Int64(job.table_id);
  w.Key("account");
  Str(w, job.account);
  w.Key("table_name");
  Str(w, job.table_name);
  w.Key("backup_id");
  Str(w, job.backup_id);
  w.Key("chunks");
  w.Int64(job.chunks);
  w.Key("next_chunk");
  w.Int64(job.next_chunk);
  w.Key("next_item");
  w.Int64(job.next_item);
  w.Key("items");
  w.Int64(job.items);
  w.EndObject();
  return Finish(kRestoreJobVersion, buf);
}

Result<RestoreJob> DecodeRestoreJob(std::string_view bytes) {
  FDYNO_ASSIGN_OR_RETURN(rapidjson::Document d, Parse(bytes, kRestoreJobVersion, "restore job"));
  RestoreJob job;
  if (!GetInt(d, "table_id", job.table_id) || !GetStr(d, "table_name", job.table_name) ||
      !GetStr(d, "backup_id", job.backup_id) || !GetInt(d, "chunks", job.chunks) ||
      !GetInt(d, "next_chunk", job.next_chunk) || !GetInt(d, "next_item", job.next_item) ||
      !GetInt(d, "items", job.items) || job.next_chunk < 0 || job.next_item < 0) {
    return Corrupt("restore job member");
  }
  if (!OptStr(d, "account", job.account)) return Corrupt("restore job member");
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
