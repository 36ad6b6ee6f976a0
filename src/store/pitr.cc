#include "store/pitr.h"

#include <algorithm>

#include "base/bytes.h"
#include "kv/tuple.h"
#include "store/layout.h"

namespace fdyno::store {
namespace {

// Persisted (docs/format/pitr.md): never renumber.
constexpr uint8_t kUndoRecordVersion = 1;
// Restore job versions: 2 adds the account of the source and target tables (a version 1 job's
// are the shared account's), 3 their region (empty in older jobs until the catalog's format 3
// migration sets it). Persisted.
constexpr uint8_t kJobVersion1 = 1;
constexpr uint8_t kJobVersion2 = 2;
constexpr uint8_t kJobVersion = 3;
constexpr int64_t kPitrJobPart = 6;  // under the backups root (docs/format/backups.md)
constexpr uint8_t kFrameWhole = 1;
constexpr uint8_t kFrameHead = 2;
constexpr uint8_t kFramePart = 3;
// Bytes of a record per value: well under an engine value.
constexpr size_t kUndoPartBytes = 90'000;
constexpr uint32_t kMaxUndoParts = 64;

Error Corrupt(std::string_view what) {
  return Error::Internal("malformed point-in-time recovery data (" + std::string(what) + ")");
}

kv::Subspace History(int64_t table_id, int64_t epoch) {
  return kv::Subspace(kv::Tuple{static_cast<int64_t>(layout::Root::kTables), table_id,
                                static_cast<int64_t>(layout::TablePart::kPitrHistory), epoch});
}

// Where the record bytes start in a head value (whole or split), or nullopt for a part.
Result<std::optional<std::string_view>> HeadBody(std::string_view value) {
  if (value.empty()) return Corrupt("empty history value");
  const uint8_t frame = static_cast<uint8_t>(value[0]);
  if (frame == kFramePart) return std::optional<std::string_view>();
  if (frame == kFrameWhole) return std::optional<std::string_view>(value.substr(1));
  ByteReader in(value.substr(1));
  uint32_t parts = 0, length = 0;
  if (frame != kFrameHead || !in.U32(parts) || !in.U32(length) || parts < 2 ||
      parts > kMaxUndoParts) {
    return Corrupt("history frame");
  }
  return std::optional<std::string_view>(in.rest());
}

}  // namespace

// ---- records -------------------------------------------------------------------------------

std::string EncodeUndoRecord(const UndoRecord& r) {
  std::string out(1, static_cast<char>(kUndoRecordVersion));
  PutU64(out, static_cast<uint64_t>(r.time_ms));
  PutLengthPrefixed(out, r.item_suffix);
  out.push_back(r.old_image ? 1 : 0);
  if (r.old_image) out += *r.old_image;
  return out;
}

Result<UndoRecord> DecodeUndoRecord(std::string_view bytes) {
  ByteReader in(bytes);
  uint8_t version = 0, has_old = 0;
  uint64_t time = 0;
  std::string_view suffix;
  if (!in.U8(version) || version != kUndoRecordVersion) return Corrupt("undo record version");
  if (!in.U64(time) || !in.LengthPrefixed(suffix) || !in.U8(has_old) || has_old > 1 ||
      (has_old == 0 && !in.done())) {
    return Corrupt("undo record");
  }
  UndoRecord r;
  r.time_ms = static_cast<int64_t>(time);
  r.item_suffix = std::string(suffix);
  if (has_old) r.old_image = std::string(in.rest());
  return r;
}

// ---- keys --------------------------------------------------------------------------------

std::pair<std::string, std::string> HistoryRange(int64_t table_id, int64_t epoch) {
  return History(table_id, epoch).Range();
}

std::pair<std::string, std::string> AllHistoriesRange(int64_t table_id) {
  return layout::TablePartSubspace(table_id, layout::TablePart::kPitrHistory).Range();
}

Result<int64_t> HistoryEpochOf(int64_t table_id, std::string_view key) {
  FDYNO_ASSIGN_OR_RETURN(
      kv::Tuple t,
      layout::TablePartSubspace(table_id, layout::TablePart::kPitrHistory).Unpack(key));
  if (t.size() < 1) return Corrupt("history key");
  Result<int64_t> epoch = t.GetInt(0);
  if (!epoch.ok()) return Corrupt("history key epoch");
  return epoch;
}

std::string HistoryTrimPointKey(int64_t table_id, int64_t epoch) {
  return layout::TablePartSubspace(table_id, layout::TablePart::kPitrTrim).Pack(kv::Tuple{epoch});
}

std::string ItemKeyFromSuffix(int64_t table_id, std::string_view suffix) {
  return layout::Items(table_id).Pack() + std::string(suffix);
}

std::string ItemSuffix(int64_t table_id, std::string_view item_key) {
  const std::string prefix = layout::Items(table_id).Pack();
  return std::string(item_key.substr(std::min(prefix.size(), item_key.size())));
}

// ---- writing -----------------------------------------------------------------------------

Status WriteUndoRecord(kv::Transaction& tx, const TableInfo& table, std::string_view item_key,
                       const std::optional<StoredItem>& old, int64_t time_ms, uint16_t user_order) {
  UndoRecord r;
  r.time_ms = time_ms;
  r.item_suffix = ItemSuffix(table.id, item_key);
  if (old) r.old_image = old->image;
  const std::string bytes = EncodeUndoRecord(r);
  const kv::Subspace history = History(table.id, table.pitr.epoch);
  auto key = [&](std::optional<int64_t> part) {
    kv::Tuple t{kv::Versionstamp::Incomplete(user_order)};
    if (part) t.AddInt(*part);
    return history.PackWithVersionstamp(t);
  };
  FDYNO_ASSIGN_OR_RETURN(std::string head_key, key(std::nullopt));
  if (bytes.size() <= kUndoPartBytes) {
    tx.AtomicOp(kv::MutationType::kSetVersionstampedKey, head_key,
                std::string(1, kFrameWhole) + bytes);
    return Status::Ok();
  }
  const size_t parts = (bytes.size() + kUndoPartBytes - 1) / kUndoPartBytes;
  std::string head(1, kFrameHead);
  PutU32(head, static_cast<uint32_t>(parts));
  PutU32(head, static_cast<uint32_t>(bytes.size()));
  head.append(bytes, 0, kUndoPartBytes);
  tx.AtomicOp(kv::MutationType::kSetVersionstampedKey, head_key, head);
  for (size_t i = 1; i < parts; ++i) {
    FDYNO_ASSIGN_OR_RETURN(std::string part_key, key(static_cast<int64_t>(i)));
    tx.AtomicOp(kv::MutationType::kSetVersionstampedKey, part_key,
                std::string(1, kFramePart) + bytes.substr(i * kUndoPartBytes, kUndoPartBytes));
  }
  return Status::Ok();
}

// ---- reading -----------------------------------------------------------------------------

Result<std::optional<ReverseUndoAssembler::Assembled>> ReverseUndoAssembler::Add(
    const kv::KeyValue& kv) {
  using Out = std::optional<Assembled>;
  if (kv.value.empty()) return Corrupt("empty history value");
  const uint8_t frame = static_cast<uint8_t>(kv.value[0]);
  if (frame == kFramePart) {
    if (parts_.size() >= kMaxUndoParts) return Corrupt("history parts");
    parts_.push_back(kv.value.substr(1));
    return Out();
  }
  std::string bytes;
  if (frame == kFrameWhole) {
    if (!parts_.empty()) return Corrupt("history part without its head");
    bytes = kv.value.substr(1);
  } else {
    ByteReader in(std::string_view(kv.value).substr(1));
    uint32_t parts = 0, length = 0;
    if (frame != kFrameHead || !in.U32(parts) || !in.U32(length) || parts != parts_.size() + 1) {
      return Corrupt("history head");
    }
    bytes = std::string(in.rest());
    for (auto it = parts_.rbegin(); it != parts_.rend(); ++it) bytes += *it;
    parts_.clear();
    if (bytes.size() != length) return Corrupt("history record length");
  }
  FDYNO_ASSIGN_OR_RETURN(UndoRecord record, DecodeUndoRecord(bytes));
  return Out(Assembled{kv.key, std::move(record)});
}

Result<std::optional<int64_t>> UndoRecordTime(std::string_view value) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> body, HeadBody(value));
  if (!body) return std::optional<int64_t>();
  ByteReader in(*body);
  uint8_t version = 0;
  uint64_t time = 0;
  if (!in.U8(version) || version != kUndoRecordVersion || !in.U64(time)) {
    return Corrupt("undo record head");
  }
  return std::optional<int64_t>(static_cast<int64_t>(time));
}

// ---- retention ---------------------------------------------------------------------------

Result<int64_t> ReadHistoryTrimPoint(kv::Transaction& tx, int64_t table_id, int64_t epoch) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> v,
                         tx.Get(HistoryTrimPointKey(table_id, epoch)));
  if (!v) return int64_t{0};
  ByteReader in(*v);
  uint64_t ms = 0;
  if (!in.U64(ms) || !in.done()) return Corrupt("trim point");
  return static_cast<int64_t>(ms);
}

Result<bool> TrimHistory(kv::Transaction& tx, int64_t table_id, int64_t epoch, int64_t cutoff_ms,
                         int limit) {
  auto [begin, end] = HistoryRange(table_id, epoch);
  // Two of the largest records: a page always holds a whole record and the next one's head.
  limit = std::max(limit, static_cast<int>(2 * kMaxUndoParts + 2));
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult page,
                         tx.GetRange(begin, end, {.limit = limit, .snapshot = true}));
  struct Head {
    std::string_view key;
    int64_t time_ms;
  };
  std::vector<Head> heads;
  for (const kv::KeyValue& kv : page.kvs) {
    FDYNO_ASSIGN_OR_RETURN(std::optional<int64_t> time, UndoRecordTime(kv.value));
    if (time) heads.push_back({kv.key, *time});
  }
  if (heads.empty()) return !page.more;
  auto kept = std::find_if(heads.begin(), heads.end(),
                           [&](const Head& h) { return h.time_ms >= cutoff_ms; });
  const bool reached = kept != heads.end() || !page.more;
  std::string clear_end;
  if (kept != heads.end()) {
    clear_end = kept->key;
  } else if (!page.more) {
    // Every record up to the last key read; never a later one (written after this read).
    if (!page.kvs.empty()) clear_end = page.kvs.back().key + std::string(1, '\0');
  } else {
    kept = heads.end() - 1;  // the page may end inside the last record: it stays for next time
    clear_end = kept->key;
  }
  int64_t newest_removed = 0;
  for (auto h = heads.begin(); h != kept; ++h)
    newest_removed = std::max(newest_removed, h->time_ms);
  if (clear_end.empty() || heads.begin() == kept) return reached;
  tx.ClearRange(begin, clear_end);
  FDYNO_ASSIGN_OR_RETURN(int64_t before, ReadHistoryTrimPoint(tx, table_id, epoch));
  if (newest_removed > before) {
    std::string v;
    PutU64(v, static_cast<uint64_t>(newest_removed));
    tx.Set(HistoryTrimPointKey(table_id, epoch), v);
  }
  return reached;
}

Result<bool> ClearOtherHistories(kv::Transaction& tx, int64_t table_id,
                                 const std::vector<int64_t>& keep, int limit) {
  auto [begin, end] = AllHistoriesRange(table_id);
  for (std::string from = begin;;) {
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult page,
                           tx.GetRange(from, end, {.limit = 1, .snapshot = true}));
    if (page.kvs.empty()) return true;
    FDYNO_ASSIGN_OR_RETURN(int64_t epoch, HistoryEpochOf(table_id, page.kvs[0].key));
    auto [h_begin, h_end] = HistoryRange(table_id, epoch);
    if (std::find(keep.begin(), keep.end(), epoch) != keep.end()) {
      from = h_end;
      continue;
    }
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult keys,
                           tx.GetRange(h_begin, h_end, {.limit = limit, .snapshot = true}));
    if (keys.more) {
      tx.ClearRange(h_begin, keys.kvs.back().key + std::string(1, '\0'));
      return false;
    }
    tx.ClearRange(h_begin, h_end);
    tx.Clear(HistoryTrimPointKey(table_id, epoch));
    return false;  // one history per call: the next call looks again
  }
}

RestorableWindow WindowOf(const PitrSettings& pitr, int64_t trim_point_ms, int64_t now_ms) {
  RestorableWindow w;
  w.earliest_ms = std::max({pitr.since_ms, now_ms - pitr.recovery_days * kMsPerDay, trim_point_ms});
  w.latest_ms = std::max(now_ms, w.earliest_ms);
  return w;
}

// ---- restore jobs ------------------------------------------------------------------------

std::string EncodePitrRestoreJob(const PitrRestoreJob& job) {
  std::string out(1, static_cast<char>(kJobVersion));
  PutU64(out, static_cast<uint64_t>(job.table_id));
  PutLengthPrefixed(out, job.table_name);
  PutU64(out, static_cast<uint64_t>(job.source_id));
  PutLengthPrefixed(out, job.source_name);
  PutU64(out, static_cast<uint64_t>(job.epoch));
  PutU64(out, static_cast<uint64_t>(job.time_ms));
  out.push_back(static_cast<char>(job.phase));
  PutLengthPrefixed(out, job.next_key);
  PutLengthPrefixed(out, job.undo_end);
  PutU64(out, static_cast<uint64_t>(job.items));
  PutLengthPrefixed(out, job.account);
  PutLengthPrefixed(out, job.region);
  return out;
}

Result<PitrRestoreJob> DecodePitrRestoreJob(std::string_view bytes) {
  ByteReader in(bytes);
  uint8_t version = 0, phase = 0;
  uint64_t table_id = 0, source_id = 0, epoch = 0, time = 0, items = 0;
  std::string_view name, source, next_key, undo_end;
  std::string_view account = kSharedAccount, region;
  if (!in.U8(version) || version < kJobVersion1 || version > kJobVersion) {
    return Corrupt("restore job version");
  }
  if (!in.U64(table_id) || !in.LengthPrefixed(name) || !in.U64(source_id) ||
      !in.LengthPrefixed(source) || !in.U64(epoch) || !in.U64(time) || !in.U8(phase) || phase > 1 ||
      !in.LengthPrefixed(next_key) || !in.LengthPrefixed(undo_end) || !in.U64(items) ||
      (version >= kJobVersion2 && !in.LengthPrefixed(account)) ||
      (version >= kJobVersion && !in.LengthPrefixed(region)) || !in.done()) {
    return Corrupt("restore job");
  }
  PitrRestoreJob job;
  job.account = std::string(account);
  job.region = std::string(region);
  job.table_id = static_cast<int64_t>(table_id);
  job.table_name = std::string(name);
  job.source_id = static_cast<int64_t>(source_id);
  job.source_name = std::string(source);
  job.epoch = static_cast<int64_t>(epoch);
  job.time_ms = static_cast<int64_t>(time);
  job.phase = static_cast<PitrRestoreJob::Phase>(phase);
  job.next_key = std::string(next_key);
  job.undo_end = std::string(undo_end);
  job.items = static_cast<int64_t>(items);
  return job;
}

std::string PitrRestoreJobKey(int64_t table_id) {
  return layout::Backups().Pack(kv::Tuple{kPitrJobPart, table_id});
}

std::pair<std::string, std::string> PitrRestoreJobsRange() {
  return layout::Backups().Range(kv::Tuple{kPitrJobPart});
}

Result<std::optional<PitrRestoreJob>> ReadPitrRestoreJob(kv::Transaction& tx, int64_t table_id) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> v, tx.Get(PitrRestoreJobKey(table_id)));
  if (!v) return std::optional<PitrRestoreJob>();
  FDYNO_ASSIGN_OR_RETURN(PitrRestoreJob job, DecodePitrRestoreJob(*v));
  return std::optional<PitrRestoreJob>(std::move(job));
}

Result<std::vector<PitrRestoreJob>> ListPitrRestoreJobs(kv::Transaction& tx) {
  auto [begin, end] = PitrRestoreJobsRange();
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult page, tx.GetRange(begin, end));
  std::vector<PitrRestoreJob> out;
  for (const kv::KeyValue& kv : page.kvs) {
    FDYNO_ASSIGN_OR_RETURN(PitrRestoreJob job, DecodePitrRestoreJob(kv.value));
    out.push_back(std::move(job));
  }
  return out;
}

}  // namespace fdyno::store
