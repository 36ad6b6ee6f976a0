// DynamoDB Streams: the stream of a table, its shards and its change records. Format and the
// shard model: docs/format/streams.md.
//
// A stream is created each time a table's stream is enabled (a new id and label) and is kept
// under layout::Streams(), outside the table, so that it stays readable for 24 hours after it
// is disabled or its table is deleted:
//   (8, 1, stream_id)                   -> stream record (version byte + JSON): StreamInfo
//   (8, 2, stream_id, slot, vs)         -> change record of one item change (ChangeRecord)
//   (8, 3, stream_id, generation)       -> versionstamped value: where the generation begins
//   (8, 4, stream_id, slot)             -> the versionstamp of the last trimmed record
//   (8, 5)                              -> last stream id allocated (8-byte counter)
//   (8, 6, table_name, stream_id)       -> "" (the streams of a table, for ListStreams)
//
// Shards. A stream has a fixed number of slots (StreamInfo::slots); an item's records all go
// to the slot of its partition key's hash, in the versionstamp order of the commits that wrote
// them, so one slot holds every change of an item in order and consumers read the slots in
// parallel. Time is cut into generations: generation g of slot s is shard (g, s), holding the
// records of slot s whose versionstamps lie in [start of g, start of g + 1). A generation starts
// with the versionstamp of the transaction that wrote its boundary: a rotation (every few
// hours), or the stream's creation for generation 0. When the stream is disabled a last boundary
// closes the last generation. A shard's parent is the shard of the same slot one generation
// earlier, so a consumer that finishes a parent before its child reads each item's changes in
// commit order. Writers never read the boundaries: the order of versionstamps alone decides
// which shard a record is in, so rotations never conflict with writes.
//
// Thread-safety: values, pure functions, and functions over a Transaction used by one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kv/kv.h"
#include "kv/tuple.h"
#include "model/attribute_value.h"
#include "store/catalog.h"

namespace fdyno::store {

// How long records are kept, and a disabled stream stays readable.
inline constexpr int64_t kStreamRetentionMs = int64_t{24} * 3600 * 1000;
// Slots (shards open at once) of a new stream.
inline constexpr int kDefaultStreamSlots = 1;
inline constexpr int kMaxStreamSlots = 64;

// DynamoDB's eventName. Persisted in change records: never renumber.
enum class StreamEvent : uint8_t { kInsert = 1, kModify = 2, kRemove = 3 };

// Who made a change (the record's userIdentity). Persisted: never renumber.
enum class ChangeSource : uint8_t { kUser = 0, kTimeToLive = 1 };

// A stream as stored.
struct StreamInfo {
  int64_t id = 0;
  std::string account = std::string(kSharedAccount);  // its table's
  std::string region;                                 // its table's
  std::string table_name;
  int64_t table_id = 0;
  std::string label;  // ISO 8601 creation time (LatestStreamLabel)
  StreamViewType view_type = StreamViewType::kNewAndOldImages;
  KeySchema key_schema;
  int64_t created_ms = 0;
  int slots = kDefaultStreamSlots;
  int64_t disabled_ms = 0;  // 0 while enabled; then when it was disabled (or its table deleted)
  TableScope scope() const { return {account, region}; }
  bool operator==(const StreamInfo&) const = default;
};

std::string EncodeStreamInfo(const StreamInfo& info);
Result<StreamInfo> DecodeStreamInfo(std::string_view bytes);

// One change as a record (what the view type keeps of it).
struct ChangeRecord {
  StreamEvent event = StreamEvent::kInsert;
  ChangeSource source = ChangeSource::kUser;
  int64_t created_ms = 0;
  model::Item keys;
  std::optional<model::Item> old_image;
  std::optional<model::Item> new_image;
  uint64_t size_bytes = 0;  // DynamoDB's SizeBytes: keys and the images kept
};

std::string EncodeChangeRecord(const ChangeRecord& record);
Result<ChangeRecord> DecodeChangeRecord(std::string_view bytes);

// The record of replacing `old_item` by `new_item` (either null, not both) for a stream with
// `view_type`. REQUIRES: the change is a state change (see StateChanged).
ChangeRecord MakeChangeRecord(StreamViewType view_type, const KeySchema& key_schema,
                              const model::Item* old_item, const model::Item* new_item,
                              ChangeSource source, int64_t now_ms);

// Whether replacing `old_item` by `new_item` changes the item: a put of an identical item or a
// delete of an absent one is no change and writes no record.
bool StateChanged(const model::Item* old_item, const model::Item* new_item);

// ---- keys --------------------------------------------------------------------------------

std::string StreamInfoKey(int64_t stream_id);
std::string StreamCounterKey();
std::string TableStreamKey(std::string_view table_name, int64_t stream_id);
// [first, second): the (8, 6, table_name, *) keys of a table's streams.
std::pair<std::string, std::string> TableStreamsRange(std::string_view table_name);
// [first, second): every stream record (8, 1, *).
std::pair<std::string, std::string> StreamInfosRange();
std::string BoundaryKey(int64_t stream_id, int64_t generation);
std::pair<std::string, std::string> BoundariesRange(int64_t stream_id);
std::string TrimKey(int64_t stream_id, int slot);
// [first, second): everything a stream owns under (8, 2..4, stream_id).
std::vector<std::pair<std::string, std::string>> StreamDataRanges(int64_t stream_id);

// The slot of an item with key `key` (the partition key's hash modulo `slots`).
int SlotOf(const KeySchema& schema, const model::Item& key, int slots);

// A record position: the 12-byte versionstamp (commit version, batch order, user order).
using Position = std::string;
// The key of the record at `position` in `slot`.
std::string RecordKey(int64_t stream_id, int slot, const Position& position);
// The record's position from its key; InternalServerError when malformed.
Result<Position> RecordPosition(int64_t stream_id, int slot, std::string_view key);
// [first, second) of the records of `slot`.
std::pair<std::string, std::string> SlotRange(int64_t stream_id, int slot);

// Reassembles records from a forward range read over a slot's keys: a record larger than one
// value is split into a head and parts at the keys after it. Feed key-values in key order.
class RecordAssembler {
 public:
  struct Assembled {
    Position position;
    std::string bytes;  // EncodeChangeRecord's
  };
  // The complete record this value completes, if any; values out of sequence are
  // InternalServerError.
  Result<std::optional<Assembled>> Add(int64_t stream_id, int slot, const kv::KeyValue& kv);
  // Whether a record is half read (resume the next read at its position).
  bool pending() const { return remaining_ > 0; }
  const Position& pending_position() const { return position_; }

 private:
  Position position_;
  std::string bytes_;
  uint32_t remaining_ = 0;
  uint32_t length_ = 0;
};

// DynamoDB's SequenceNumber of a position: the 96-bit number it spells, in decimal, at least
// 21 digits. ParseSequenceNumber is its inverse (nullopt for anything else).
std::string SequenceNumber(const Position& position);
std::optional<Position> ParseSequenceNumber(std::string_view text);

// ---- writing -----------------------------------------------------------------------------

// Buffers the record of one change of an item of `table` (its stream enabled, with a stream
// id) in tx, at a versionstamped key; `user_order` orders the records of one transaction
// (0 for single-item writes; the action's index in a transaction or batch).
Status WriteChangeRecord(kv::Transaction& tx, const TableInfo& table, const ChangeRecord& record,
                         uint16_t user_order);

// Creates the stream of a table whose stream is being enabled, in the transaction that enables
// it: allocates the id, writes the stream record, its table index key and generation 0's
// boundary. Returns the new id.
Result<int64_t> CreateStream(kv::Transaction& tx, StreamInfo info);
// Marks a stream disabled at now_ms and closes its last generation, in the transaction that
// disables it (or drops its table). No-op for id 0 or a stream already disabled.
Status DisableStream(kv::Transaction& tx, int64_t stream_id, int64_t now_ms);

// The stream side of a table change, in the transaction that makes it: a stream being enabled
// (`after` enabled, `before` null or not enabled) gets a new stream, whose id and slots are set
// in `after`; a stream being disabled (`before` enabled, `after` null for a dropped table or
// not enabled) is disabled. `slots` is the slot count of a new stream.
Status SyncStream(kv::Transaction& tx, const TableInfo* before, TableInfo* after, int slots,
                  int64_t now_ms);

// ---- reading -----------------------------------------------------------------------------

struct Generation {
  int64_t number = 0;
  Position start;        // the boundary's versionstamp (user order 0)
  int64_t start_ms = 0;  // when the boundary was written
};

// A stream with its generations, as its readers see it.
struct StreamView {
  StreamInfo info;
  std::vector<Generation> generations;  // ascending; the last one is open unless `closed_at`
  std::optional<Position> closed_at;    // the last generation's end (a disabled stream)
};

// The stream `stream_id` (nullopt when it does not exist), with its generations. `snapshot`
// reads add no conflicts.
Result<std::optional<StreamView>> ReadStream(kv::Transaction& tx, int64_t stream_id,
                                             bool snapshot = true);
// Where shard (generation, slot) ends: the next generation's start, or the close of a disabled
// stream; nullopt while it is open.
std::optional<Position> ShardEnd(const StreamView& view, int64_t generation);
// The last trimmed position of a slot (records at or before it are gone), or nullopt.
Result<std::optional<Position>> ReadTrimPoint(kv::Transaction& tx, int64_t stream_id, int slot);

// DynamoDB's ShardId of shard (generation, slot): "shardId-" + 20 digits (the generation's
// start time) + "-" + 8 hex digits (generation and slot). ParseShardId's inverse keeps
// generation and slot.
std::string ShardId(const Generation& generation, int slot);
struct ShardRef {
  int64_t generation = 0;
  int slot = 0;
};
std::optional<ShardRef> ParseShardId(std::string_view text);

// ---- maintenance (workers/streams.h) ------------------------------------------------------

// Starts a new generation of an enabled stream at this transaction's versionstamp when the
// last one started at least `rotation_ms` before now_ms. Conflicts with a concurrent rotation
// or disable. Returns whether it rotated.
Result<bool> RotateStream(kv::Transaction& tx, int64_t stream_id, int64_t now_ms,
                          int64_t rotation_ms);
// Removes up to `limit` of the oldest records of `slot` created before `cutoff_ms` and moves the
// slot's trim point past them. Returns how many it removed.
Result<int> TrimSlot(kv::Transaction& tx, int64_t stream_id, int slot, int64_t cutoff_ms,
                     int limit);
// Forgets the generations that ended before `cutoff_ms` and hold no record any more (their
// shards leave DescribeStream). Returns how many.
Result<int> ForgetEmptyGenerations(kv::Transaction& tx, const StreamView& view, int64_t cutoff_ms);
// Removes a stream and everything it owns.
void DeleteStream(kv::Transaction& tx, const StreamInfo& info);

}  // namespace fdyno::store
