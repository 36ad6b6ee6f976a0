#include "store/streams.h"

#include <algorithm>
#include <cstdio>

#include "base/bytes.h"
#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/key_codec.h"
#include "store/items.h"
#include "store/layout.h"

namespace fdyno::store {
namespace {

// Persisted (docs/format/streams.md): never renumber.
// Stream record versions: 2 adds the owner's account (a version 1 record is the shared
// account's), 3 its table's region (empty in older records until the catalog's format 3
// migration sets it). Persisted.
constexpr uint8_t kStreamInfoVersion1 = 1;
constexpr uint8_t kStreamInfoVersion2 = 2;
constexpr uint8_t kStreamInfoVersion = 3;
constexpr uint8_t kRecordVersion = 1;
constexpr int64_t kInfoPart = 1;
constexpr int64_t kRecordPart = 2;
constexpr int64_t kBoundaryPart = 3;
constexpr int64_t kTrimPart = 4;
constexpr int64_t kCounterPart = 5;
constexpr int64_t kTablePart = 6;
constexpr uint8_t kHasOld = 1;
constexpr uint8_t kHasNew = 2;
constexpr size_t kPositionBytes = 12;
// A record value's first byte: the whole record, the head of a split one, or a further part.
constexpr uint8_t kFrameWhole = 1;
constexpr uint8_t kFrameHead = 2;
constexpr uint8_t kFramePart = 3;
// Record bytes per value: a record with two 400 KB images is split in parts.
constexpr size_t kRecordPartBytes = 90'000;

Error Corrupt(std::string_view what) {
  return Error::Internal("malformed stream data (" + std::string(what) + ")");
}

void PutU8(std::string& out, uint8_t v) { out.push_back(static_cast<char>(v)); }

void PutAttribute(std::string& out, const model::KeyAttribute& a) {
  PutLengthPrefixed(out, a.name);
  PutU8(out, static_cast<uint8_t>(a.type));
}

bool ReadAttribute(ByteReader& in, model::KeyAttribute& a) {
  std::string_view name;
  uint8_t type = 0;
  if (!in.LengthPrefixed(name) || !in.U8(type) || type > 2) return false;
  a.name = std::string(name);
  a.type = static_cast<model::ScalarType>(type);
  return true;
}

kv::Versionstamp AsVersionstamp(const Position& position) {
  uint16_t user = static_cast<uint16_t>((static_cast<uint8_t>(position[10]) << 8) |
                                        static_cast<uint8_t>(position[11]));
  return kv::Versionstamp::Complete(std::string_view(position).substr(0, 10), user);
}

model::Item KeysOf(const KeySchema& schema, const model::Item& item) {
  model::Item keys;
  keys.emplace(schema.hash.name, item.at(schema.hash.name));
  if (schema.range) keys.emplace(schema.range->name, item.at(schema.range->name));
  return keys;
}

}  // namespace

// ---- stream records and change records -----------------------------------------------------

std::string EncodeStreamInfo(const StreamInfo& info) {
  std::string out;
  PutU8(out, kStreamInfoVersion);
  PutU64(out, static_cast<uint64_t>(info.id));
  PutLengthPrefixed(out, info.table_name);
  PutU64(out, static_cast<uint64_t>(info.table_id));
  PutLengthPrefixed(out, info.label);
  PutU8(out, static_cast<uint8_t>(info.view_type));
  PutAttribute(out, info.key_schema.hash);
  PutU8(out, info.key_schema.range ? 1 : 0);
  if (info.key_schema.range) PutAttribute(out, *info.key_schema.range);
  PutU64(out, static_cast<uint64_t>(info.created_ms));
  PutU32(out, static_cast<uint32_t>(info.slots));
  PutU64(out, static_cast<uint64_t>(info.disabled_ms));
  PutLengthPrefixed(out, info.account);
  PutLengthPrefixed(out, info.region);
  return out;
}

Result<StreamInfo> DecodeStreamInfo(std::string_view bytes) {
  ByteReader in(bytes);
  uint8_t version = 0, view = 0, has_range = 0;
  uint64_t id = 0, table_id = 0, created = 0, disabled = 0;
  uint32_t slots = 0;
  std::string_view table_name, label;
  StreamInfo info;
  if (!in.U8(version) || version < kStreamInfoVersion1 || version > kStreamInfoVersion) {
    return Corrupt("stream record version");
  }
  if (!in.U64(id) || !in.LengthPrefixed(table_name) || !in.U64(table_id) ||
      !in.LengthPrefixed(label) || !in.U8(view) || view > 3 ||
      !ReadAttribute(in, info.key_schema.hash) || !in.U8(has_range) || has_range > 1) {
    return Corrupt("stream record");
  }
  if (has_range) {
    info.key_schema.range.emplace();
    if (!ReadAttribute(in, *info.key_schema.range)) return Corrupt("stream record range key");
  }
  std::string_view account = kSharedAccount, region;
  if (!in.U64(created) || !in.U32(slots) || slots < 1 || slots > kMaxStreamSlots ||
      !in.U64(disabled) || (version >= kStreamInfoVersion2 && !in.LengthPrefixed(account)) ||
      (version >= kStreamInfoVersion && !in.LengthPrefixed(region)) || !in.done()) {
    return Corrupt("stream record tail");
  }
  info.account = std::string(account);
  info.region = std::string(region);
  info.id = static_cast<int64_t>(id);
  info.table_name = std::string(table_name);
  info.table_id = static_cast<int64_t>(table_id);
  info.label = std::string(label);
  info.view_type = static_cast<StreamViewType>(view);
  info.created_ms = static_cast<int64_t>(created);
  info.slots = static_cast<int>(slots);
  info.disabled_ms = static_cast<int64_t>(disabled);
  return info;
}

std::string EncodeChangeRecord(const ChangeRecord& r) {
  std::string out;
  PutU8(out, kRecordVersion);
  PutU8(out, static_cast<uint8_t>(r.event));
  PutU8(out, static_cast<uint8_t>(r.source));
  PutU64(out, static_cast<uint64_t>(r.created_ms));
  PutU64(out, r.size_bytes);
  PutLengthPrefixed(out, model::EncodeStoredItem(r.keys));
  PutU8(out, static_cast<uint8_t>((r.old_image ? kHasOld : 0) | (r.new_image ? kHasNew : 0)));
  if (r.old_image) PutLengthPrefixed(out, model::EncodeStoredItem(*r.old_image));
  if (r.new_image) PutLengthPrefixed(out, model::EncodeStoredItem(*r.new_image));
  return out;
}

Result<ChangeRecord> DecodeChangeRecord(std::string_view bytes) {
  ByteReader in(bytes);
  uint8_t version = 0, event = 0, source = 0, flags = 0;
  uint64_t created = 0, size = 0;
  std::string_view keys;
  if (!in.U8(version) || version != kRecordVersion) return Corrupt("change record version");
  if (!in.U8(event) || event < 1 || event > 3 || !in.U8(source) || source > 1 || !in.U64(created) ||
      !in.U64(size) || !in.LengthPrefixed(keys) || !in.U8(flags) || flags > (kHasOld | kHasNew)) {
    return Corrupt("change record");
  }
  ChangeRecord r;
  r.event = static_cast<StreamEvent>(event);
  r.source = static_cast<ChangeSource>(source);
  r.created_ms = static_cast<int64_t>(created);
  r.size_bytes = size;
  FDYNO_ASSIGN_OR_RETURN(r.keys, model::DecodeStoredItem(keys));
  for (uint8_t bit : {kHasOld, kHasNew}) {
    if (!(flags & bit)) continue;
    std::string_view image;
    if (!in.LengthPrefixed(image)) return Corrupt("change record image");
    FDYNO_ASSIGN_OR_RETURN(model::Item item, model::DecodeStoredItem(image));
    (bit == kHasOld ? r.old_image : r.new_image) = std::move(item);
  }
  if (!in.done()) return Corrupt("change record trailing bytes");
  return r;
}

bool StateChanged(const model::Item* old_item, const model::Item* new_item) {
  if (old_item == nullptr || new_item == nullptr) return old_item != new_item;
  return !(*old_item == *new_item);
}

ChangeRecord MakeChangeRecord(StreamViewType view_type, const KeySchema& key_schema,
                              const model::Item* old_item, const model::Item* new_item,
                              ChangeSource source, int64_t now_ms) {
  ChangeRecord r;
  r.event = old_item == nullptr   ? StreamEvent::kInsert
            : new_item == nullptr ? StreamEvent::kRemove
                                  : StreamEvent::kModify;
  r.source = source;
  r.created_ms = now_ms;
  r.keys = KeysOf(key_schema, new_item != nullptr ? *new_item : *old_item);
  const bool keep_old =
      view_type == StreamViewType::kOldImage || view_type == StreamViewType::kNewAndOldImages;
  const bool keep_new =
      view_type == StreamViewType::kNewImage || view_type == StreamViewType::kNewAndOldImages;
  if (keep_old && old_item != nullptr) r.old_image = *old_item;
  if (keep_new && new_item != nullptr) r.new_image = *new_item;
  r.size_bytes = model::ItemSize(r.keys) + (r.old_image ? model::ItemSize(*r.old_image) : 0) +
                 (r.new_image ? model::ItemSize(*r.new_image) : 0);
  return r;
}

// ---- keys ----------------------------------------------------------------------------------

std::string StreamInfoKey(int64_t stream_id) {
  return layout::Streams().Pack(kv::Tuple{kInfoPart, stream_id});
}
std::string StreamCounterKey() { return layout::Streams().Pack(kv::Tuple{kCounterPart}); }
std::string TableStreamKey(std::string_view table_name, int64_t stream_id) {
  return layout::Streams().Pack(kv::Tuple{kTablePart, std::string(table_name), stream_id});
}
std::pair<std::string, std::string> TableStreamsRange(std::string_view table_name) {
  return layout::Streams().Range(kv::Tuple{kTablePart, std::string(table_name)});
}
std::pair<std::string, std::string> StreamInfosRange() {
  return layout::Streams().Range(kv::Tuple{kInfoPart});
}
std::string BoundaryKey(int64_t stream_id, int64_t generation) {
  return layout::Streams().Pack(kv::Tuple{kBoundaryPart, stream_id, generation});
}
std::pair<std::string, std::string> BoundariesRange(int64_t stream_id) {
  return layout::Streams().Range(kv::Tuple{kBoundaryPart, stream_id});
}
std::string TrimKey(int64_t stream_id, int slot) {
  return layout::Streams().Pack(kv::Tuple{kTrimPart, stream_id, slot});
}
std::vector<std::pair<std::string, std::string>> StreamDataRanges(int64_t stream_id) {
  std::vector<std::pair<std::string, std::string>> out;
  for (int64_t part : {kRecordPart, kBoundaryPart, kTrimPart}) {
    out.push_back(layout::Streams().Range(kv::Tuple{part, stream_id}));
  }
  return out;
}

int SlotOf(const KeySchema& schema, const model::Item& key, int slots) {
  if (slots <= 1) return 0;
  const uint32_t hash = PartitionHash(model::EncodeKeyValue(key.at(schema.hash.name)));
  return static_cast<int>(hash % static_cast<uint32_t>(slots));
}

std::string RecordKey(int64_t stream_id, int slot, const Position& position) {
  return layout::Streams().Pack(
      kv::Tuple{kRecordPart, stream_id, slot, kv::TupleElement(AsVersionstamp(position))});
}

Result<Position> RecordPosition(int64_t stream_id, int slot, std::string_view key) {
  Result<kv::Tuple> t = layout::Streams().Unpack(key);
  if (!t.ok() || t->size() != 4 || !t->GetInt(1).ok() || *t->GetInt(1) != stream_id ||
      !t->GetInt(2).ok() || *t->GetInt(2) != slot) {
    return Corrupt("record key");
  }
  Result<kv::Versionstamp> vs = t->GetVersionstamp(3);
  if (!vs.ok()) return Corrupt("record key versionstamp");
  return vs->Bytes12();
}

std::pair<std::string, std::string> SlotRange(int64_t stream_id, int slot) {
  return layout::Streams().Range(kv::Tuple{kRecordPart, stream_id, slot});
}

std::string SequenceNumber(const Position& position) {
  unsigned __int128 v = 0;
  for (char c : position) v = (v << 8) | static_cast<uint8_t>(c);
  std::string digits;
  while (v > 0) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  while (digits.size() < 21) digits.push_back('0');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

std::optional<Position> ParseSequenceNumber(std::string_view text) {
  if (text.empty() || text.size() > 40) return std::nullopt;
  unsigned __int128 v = 0;
  const unsigned __int128 limit = static_cast<unsigned __int128>(1) << 96;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
    if (v >= limit) return std::nullopt;
  }
  Position p(kPositionBytes, '\0');
  for (int i = static_cast<int>(kPositionBytes) - 1; i >= 0; --i) {
    p[static_cast<size_t>(i)] = static_cast<char>(static_cast<uint8_t>(v & 0xFF));
    v >>= 8;
  }
  return p;
}

// ---- writing -------------------------------------------------------------------------------

Status WriteChangeRecord(kv::Transaction& tx, const TableInfo& table, const ChangeRecord& record,
                         uint16_t user_order) {
  const int slot = SlotOf(table.key_schema, record.keys, table.stream.slots);
  const std::string bytes = EncodeChangeRecord(record);
  auto key = [&](std::optional<int64_t> part) {
    kv::Tuple t{kRecordPart, table.stream.stream_id, slot,
                kv::Versionstamp::Incomplete(user_order)};
    if (part) t.AddInt(*part);
    return layout::Streams().PackWithVersionstamp(t);
  };
  if (bytes.size() <= kRecordPartBytes) {
    FDYNO_ASSIGN_OR_RETURN(std::string k, key(std::nullopt));
    tx.AtomicOp(kv::MutationType::kSetVersionstampedKey, k, std::string(1, kFrameWhole) + bytes);
    return Status::Ok();
  }
  const size_t parts = (bytes.size() + kRecordPartBytes - 1) / kRecordPartBytes;
  std::string head(1, kFrameHead);
  PutU32(head, static_cast<uint32_t>(parts));
  PutU32(head, static_cast<uint32_t>(bytes.size()));
  head.append(bytes, 0, kRecordPartBytes);
  FDYNO_ASSIGN_OR_RETURN(std::string k, key(std::nullopt));
  tx.AtomicOp(kv::MutationType::kSetVersionstampedKey, k, head);
  for (size_t i = 1; i < parts; ++i) {
    FDYNO_ASSIGN_OR_RETURN(std::string pk, key(static_cast<int64_t>(i)));
    tx.AtomicOp(kv::MutationType::kSetVersionstampedKey, pk,
                std::string(1, kFramePart) + bytes.substr(i * kRecordPartBytes, kRecordPartBytes));
  }
  return Status::Ok();
}

Result<std::optional<RecordAssembler::Assembled>> RecordAssembler::Add(int64_t stream_id, int slot,
                                                                       const kv::KeyValue& kv) {
  if (kv.value.empty()) return Corrupt("empty record value");
  const uint8_t frame = static_cast<uint8_t>(kv.value[0]);
  if (frame == kFramePart) {
    if (remaining_ == 0) return Corrupt("record part without its head");
    bytes_.append(kv.value, 1);
    if (--remaining_ > 0) return std::optional<Assembled>();
    if (bytes_.size() != length_) return Corrupt("record length");
    return std::optional<Assembled>(Assembled{std::move(position_), std::move(bytes_)});
  }
  if (remaining_ != 0) return Corrupt("record parts missing");
  FDYNO_ASSIGN_OR_RETURN(position_, RecordPosition(stream_id, slot, kv.key));
  if (frame == kFrameWhole) {
    return std::optional<Assembled>(Assembled{std::move(position_), kv.value.substr(1)});
  }
  ByteReader in(std::string_view(kv.value).substr(1));
  uint32_t parts = 0;
  if (frame != kFrameHead || !in.U32(parts) || parts < 2 || parts > 64 || !in.U32(length_)) {
    return Corrupt("record head");
  }
  bytes_ = std::string(in.rest());
  remaining_ = parts - 1;
  return std::optional<Assembled>();
}

namespace {

// The value of a boundary: the placeholder of its transaction's versionstamp (10 bytes), user
// order 0 (2 bytes), then the wall time in ms (8 bytes); as a versionstamped value parameter.
std::string BoundaryParam(int64_t now_ms) {
  std::string v(12, '\0');
  PutU64(v, static_cast<uint64_t>(now_ms));
  v.append(4, '\0');  // little-endian offset 0 of the placeholder
  return v;
}

Result<std::vector<kv::KeyValue>> ReadBoundaries(kv::Transaction& tx, int64_t stream_id,
                                                 bool snapshot) {
  auto [begin, end] = BoundariesRange(stream_id);
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult r, tx.GetRange(begin, end, {.snapshot = snapshot}));
  return std::move(r.kvs);
}

Result<Generation> DecodeBoundary(int64_t stream_id, const kv::KeyValue& kv) {
  Result<kv::Tuple> t = layout::Streams().Unpack(kv.key);
  ByteReader in(kv.value);
  std::string_view position;
  uint64_t ms = 0;
  if (!t.ok() || t->size() != 3 || !t->GetInt(1).ok() || *t->GetInt(1) != stream_id ||
      !t->GetInt(2).ok() || !in.Bytes(kPositionBytes, position) || !in.U64(ms) || !in.done()) {
    return Corrupt("shard boundary");
  }
  return Generation{*t->GetInt(2), std::string(position), static_cast<int64_t>(ms)};
}

}  // namespace

Result<int64_t> CreateStream(kv::Transaction& tx, StreamInfo info) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> counter, tx.Get(StreamCounterKey()));
  int64_t last = 0;
  if (counter) {
    std::optional<int64_t> v = kv::DecodeCounter(*counter);
    if (!v) return Corrupt("stream id counter");
    last = *v;
  }
  info.id = last + 1;
  tx.Set(StreamCounterKey(), kv::EncodeCounter(info.id));
  tx.Set(StreamInfoKey(info.id), EncodeStreamInfo(info));
  tx.Set(TableStreamKey(info.table_name, info.id), "");
  tx.AtomicOp(kv::MutationType::kSetVersionstampedValue, BoundaryKey(info.id, 0),
              BoundaryParam(info.created_ms));
  return info.id;
}

Status DisableStream(kv::Transaction& tx, int64_t stream_id, int64_t now_ms) {
  if (stream_id == 0) return Status::Ok();
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> bytes, tx.Get(StreamInfoKey(stream_id)));
  if (!bytes) return Status::Ok();
  FDYNO_ASSIGN_OR_RETURN(StreamInfo info, DecodeStreamInfo(*bytes));
  if (info.disabled_ms != 0) return Status::Ok();
  FDYNO_ASSIGN_OR_RETURN(std::vector<kv::KeyValue> boundaries,
                         ReadBoundaries(tx, stream_id, /*snapshot=*/false));
  int64_t next = 0;
  if (!boundaries.empty()) {
    FDYNO_ASSIGN_OR_RETURN(Generation last, DecodeBoundary(stream_id, boundaries.back()));
    next = last.number + 1;
  }
  info.disabled_ms = now_ms;
  tx.Set(StreamInfoKey(stream_id), EncodeStreamInfo(info));
  tx.AtomicOp(kv::MutationType::kSetVersionstampedValue, BoundaryKey(stream_id, next),
              BoundaryParam(now_ms));
  return Status::Ok();
}

Status SyncStream(kv::Transaction& tx, const TableInfo* before, TableInfo* after, int slots,
                  int64_t now_ms) {
  const bool was = before != nullptr && before->stream.enabled;
  const bool is = after != nullptr && after->stream.enabled;
  if (was && (!is || after->stream.label != before->stream.label)) {
    FDYNO_RETURN_IF_ERROR(DisableStream(tx, before->stream.stream_id, now_ms));
  }
  if (is && (!was || after->stream.label != before->stream.label)) {
    StreamInfo info;
    info.account = after->account;
    info.region = after->region;
    info.table_name = after->name;
    info.table_id = after->id;
    info.label = after->stream.label;
    info.view_type = after->stream.view_type;
    info.key_schema = after->key_schema;
    info.created_ms = now_ms;
    info.slots = std::clamp(slots, 1, kMaxStreamSlots);
    FDYNO_ASSIGN_OR_RETURN(after->stream.stream_id, CreateStream(tx, info));
    after->stream.slots = info.slots;
  }
  return Status::Ok();
}

namespace {

// The creation time of the record whose first value this is; nullopt for a part of a split
// record.
Result<std::optional<int64_t>> RecordCreatedMs(std::string_view value) {
  if (value.empty()) return Corrupt("empty record value");
  const uint8_t frame = static_cast<uint8_t>(value[0]);
  if (frame == kFramePart) return std::optional<int64_t>();
  ByteReader in(value.substr(1));
  uint32_t parts = 0, length = 0;
  if (frame == kFrameHead && (!in.U32(parts) || !in.U32(length))) return Corrupt("record head");
  if (frame != kFrameWhole && frame != kFrameHead) return Corrupt("record frame");
  uint8_t version = 0, event = 0, source = 0;
  uint64_t created = 0;
  if (!in.U8(version) || version != kRecordVersion || !in.U8(event) || !in.U8(source) ||
      !in.U64(created)) {
    return Corrupt("change record header");
  }
  return std::optional<int64_t>(static_cast<int64_t>(created));
}

}  // namespace

Result<bool> RotateStream(kv::Transaction& tx, int64_t stream_id, int64_t now_ms,
                          int64_t rotation_ms) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<StreamView> view,
                         ReadStream(tx, stream_id, /*snapshot=*/false));
  if (!view || view->info.disabled_ms != 0 || view->generations.empty()) return false;
  const Generation& last = view->generations.back();
  if (now_ms - last.start_ms < rotation_ms) return false;
  tx.AtomicOp(kv::MutationType::kSetVersionstampedValue, BoundaryKey(stream_id, last.number + 1),
              BoundaryParam(now_ms));
  return true;
}

Result<int> TrimSlot(kv::Transaction& tx, int64_t stream_id, int slot, int64_t cutoff_ms,
                     int limit) {
  auto [begin, end] = SlotRange(stream_id, slot);
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult r,
                         tx.GetRange(begin, end, {.limit = limit, .snapshot = true}));
  int removed = 0;
  std::optional<Position> last;
  std::string stop;  // first key kept
  for (const kv::KeyValue& kv : r.kvs) {
    FDYNO_ASSIGN_OR_RETURN(std::optional<int64_t> created, RecordCreatedMs(kv.value));
    if (!created) continue;  // a part: removed with its head
    if (*created >= cutoff_ms) {
      stop = kv.key;
      break;
    }
    FDYNO_ASSIGN_OR_RETURN(last, RecordPosition(stream_id, slot, kv.key));
    ++removed;
  }
  if (!last) return 0;
  if (stop.empty()) {
    // Everything read was old: up to the end of the last record read (its parts included; a
    // record whose parts lie past this page is removed whole, as the range ends past them).
    stop = kv::PrefixEnd(RecordKey(stream_id, slot, *last));
  }
  tx.ClearRange(begin, stop);
  tx.Set(TrimKey(stream_id, slot), *last);
  return removed;
}

Result<int> ForgetEmptyGenerations(kv::Transaction& tx, const StreamView& view, int64_t cutoff_ms) {
  int forgotten = 0;
  for (size_t g = 0; g + 1 < view.generations.size(); ++g) {
    const Generation& next = view.generations[g + 1];
    if (next.start_ms >= cutoff_ms) break;
    for (int slot = 0; slot < view.info.slots; ++slot) {
      FDYNO_ASSIGN_OR_RETURN(
          kv::RangeResult r,
          tx.GetRange(RecordKey(view.info.id, slot, view.generations[g].start),
                      RecordKey(view.info.id, slot, next.start), {.limit = 1, .snapshot = true}));
      if (!r.kvs.empty()) return forgotten;
    }
    tx.Clear(BoundaryKey(view.info.id, view.generations[g].number));
    ++forgotten;
  }
  return forgotten;
}

void DeleteStream(kv::Transaction& tx, const StreamInfo& info) {
  for (const auto& [begin, end] : StreamDataRanges(info.id)) tx.ClearRange(begin, end);
  tx.Clear(StreamInfoKey(info.id));
  tx.Clear(TableStreamKey(info.table_name, info.id));
}

// ---- reading -------------------------------------------------------------------------------

Result<std::optional<StreamView>> ReadStream(kv::Transaction& tx, int64_t stream_id,
                                             bool snapshot) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> bytes,
                         tx.Get(StreamInfoKey(stream_id), snapshot));
  if (!bytes) return std::optional<StreamView>();
  StreamView view;
  FDYNO_ASSIGN_OR_RETURN(view.info, DecodeStreamInfo(*bytes));
  FDYNO_ASSIGN_OR_RETURN(std::vector<kv::KeyValue> boundaries,
                         ReadBoundaries(tx, stream_id, snapshot));
  for (const kv::KeyValue& kv : boundaries) {
    FDYNO_ASSIGN_OR_RETURN(Generation g, DecodeBoundary(stream_id, kv));
    view.generations.push_back(std::move(g));
  }
  if (view.info.disabled_ms != 0 && !view.generations.empty()) {
    view.closed_at = view.generations.back().start;
    view.generations.pop_back();
  }
  return std::optional<StreamView>(std::move(view));
}

std::optional<Position> ShardEnd(const StreamView& view, int64_t generation) {
  for (size_t i = 0; i < view.generations.size(); ++i) {
    if (view.generations[i].number != generation) continue;
    if (i + 1 < view.generations.size()) return view.generations[i + 1].start;
    return view.closed_at;
  }
  return view.closed_at;
}

Result<std::optional<Position>> ReadTrimPoint(kv::Transaction& tx, int64_t stream_id, int slot) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> v, tx.Get(TrimKey(stream_id, slot), true));
  if (v && v->size() != kPositionBytes) return Corrupt("trim point");
  return v;
}

std::string ShardId(const Generation& generation, int slot) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "shardId-%020lld-%08x",
                static_cast<long long>(generation.start_ms),
                static_cast<unsigned>((static_cast<uint64_t>(generation.number) << 8) |
                                      static_cast<unsigned>(slot)));
  return buf;
}

std::optional<ShardRef> ParseShardId(std::string_view text) {
  constexpr std::string_view kPrefix = "shardId-";
  if (text.size() != kPrefix.size() + 20 + 1 + 8 || !text.starts_with(kPrefix) ||
      text[kPrefix.size() + 20] != '-') {
    return std::nullopt;
  }
  for (char c : text.substr(kPrefix.size(), 20)) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  uint32_t v = 0;
  for (char c : text.substr(kPrefix.size() + 21)) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    v = (v << 4) | static_cast<uint32_t>(d);
  }
  return ShardRef{static_cast<int64_t>(v >> 8), static_cast<int>(v & 0xFF)};
}

}  // namespace fdyno::store
