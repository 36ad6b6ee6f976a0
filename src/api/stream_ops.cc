#include "api/stream_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/json_util.h"
#include "api/request_model.h"
#include "api/table_arn.h"
#include "api/table_render.h"
#include "base/bytes.h"
#include "kv/run.h"
#include "model/base64.h"
#include "model/json.h"
#include "store/streams.h"
#include "store/tokens.h"

namespace fdyno::api {
namespace {

using rapidjson::Value;
using request::Rule;
using store::Position;
using store::StreamView;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr int64_t kIteratorLifetimeMs = 15 * 60 * 1000;
constexpr size_t kMaxRecordsBytes = 1 << 20;  // GetRecords returns at most 1 MB
constexpr uint8_t kIteratorVersion = 1;       // persisted in clients' hands: never renumber

kv::RunOptions ReadOptions(const RequestContext& ctx, const Services& s) {
  kv::RunOptions options;
  if (ctx.deadline != std::chrono::steady_clock::time_point{}) options.deadline = ctx.deadline;
  options.clock = s.clock;
  options.read_only = true;
  return options;
}

// ---- ARNs ----------------------------------------------------------------------------------

std::string StreamArn(const RequestContext& ctx, const store::StreamInfo& info) {
  return TableArn(ctx, info.table_name) + "/stream/" + info.label;
}

Error StreamNotFound(std::string_view arn) {
  return Error::ResourceNotFound("Requested resource not found: Stream: " + std::string(arn) +
                                 " not found");
}

// Whether `arn` has a DynamoDB stream ARN's shape, of any partition, region and account:
// arn:<aws...>:dynamodb:<region>:<digits>:table/<name>/stream/<label>.
bool IsStreamArn(std::string_view arn) {
  std::string_view part[6];
  for (int i = 0; i < 5; ++i) {
    const size_t colon = arn.find(':');
    if (colon == std::string_view::npos) return false;
    part[i] = arn.substr(0, colon);
    arn.remove_prefix(colon + 1);
  }
  part[5] = arn;
  const bool digits =
      !part[4].empty() && part[4].find_first_not_of("0123456789") == std::string_view::npos;
  if (part[0] != "arn" || !part[1].starts_with("aws") || part[2] != "dynamodb" || part[3].empty() ||
      !digits || !part[5].starts_with("table/")) {
    return false;
  }
  const size_t stream = part[5].find("/stream/");
  return stream != std::string_view::npos && stream > 6 && stream + 8 < part[5].size();
}

// The table name and label an ARN of the caller's region and account names.
std::optional<std::pair<std::string, std::string>> ParseStreamArn(const RequestContext& ctx,
                                                                  std::string_view arn) {
  const std::string prefix = TableArn(ctx, "");
  if (!arn.starts_with(prefix)) return std::nullopt;
  std::string_view rest = arn.substr(prefix.size());
  const size_t slash = rest.find("/stream/");
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  std::string_view label = rest.substr(slash + 8);
  if (label.empty()) return std::nullopt;
  return std::make_pair(std::string(rest.substr(0, slash)), std::string(label));
}

// Every stream of the table `table_name` in `scope`, oldest first (streams of another account's
// or region's table of the same name share the index key and are left out).
Result<std::vector<StreamView>> StreamsOf(kv::Transaction& tx, store::TableScope scope,
                                          std::string_view table_name) {
  auto [begin, end] = store::TableStreamsRange(table_name);
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult ids, tx.GetRange(begin, end, {.snapshot = true}));
  std::vector<StreamView> out;
  for (const kv::KeyValue& kv : ids.kvs) {
    Result<kv::Tuple> t = kv::Tuple::Unpack(kv.key);
    if (!t.ok() || t->size() != 4 || !t->GetInt(3).ok()) {
      return Error::Internal("malformed stream index key");
    }
    FDYNO_ASSIGN_OR_RETURN(std::optional<StreamView> view, store::ReadStream(tx, *t->GetInt(3)));
    if (view && view->info.scope() == scope) out.push_back(std::move(*view));
  }
  return out;
}

Result<StreamView> FindStream(const Services& s, const RequestContext& ctx, kv::Transaction& tx,
                              std::string_view arn) {
  if (!IsStreamArn(arn)) return Error::Validation("Invalid StreamArn");
  std::optional<std::pair<std::string, std::string>> parsed = ParseStreamArn(ctx, arn);
  if (!parsed) return StreamNotFound(arn);  // another region's or account's
  (void)s;
  FDYNO_ASSIGN_OR_RETURN(std::vector<StreamView> streams,
                         StreamsOf(tx, CallerScope(ctx), parsed->first));
  for (StreamView& v : streams) {
    if (v.info.label == parsed->second) return std::move(v);
  }
  return StreamNotFound(arn);
}

// ---- shards --------------------------------------------------------------------------------

struct ShardInfo {
  const store::Generation* generation = nullptr;
  int slot = 0;
  std::string id;
  std::optional<std::string> parent;
  std::optional<Position> end;  // closed shards
};

std::vector<ShardInfo> ShardsOf(const StreamView& view) {
  std::vector<ShardInfo> out;
  for (size_t g = 0; g < view.generations.size(); ++g) {
    for (int slot = 0; slot < view.info.slots; ++slot) {
      ShardInfo shard;
      shard.generation = &view.generations[g];
      shard.slot = slot;
      shard.id = store::ShardId(*shard.generation, slot);
      if (g > 0) shard.parent = store::ShardId(view.generations[g - 1], slot);
      shard.end = store::ShardEnd(view, shard.generation->number);
      out.push_back(std::move(shard));
    }
  }
  return out;
}

Error ShardNotFound() {
  return Error::ResourceNotFound("Requested resource not found: Shard does not exist");
}

std::optional<ShardInfo> FindShard(const StreamView& view, std::string_view shard_id) {
  for (ShardInfo& shard : ShardsOf(view)) {
    if (shard.id == shard_id) return std::move(shard);
  }
  return std::nullopt;
}

// The key range of a shard's records, from `from` (inclusive) or after `after`.
std::pair<std::string, std::string> ShardRange(const StreamView& view, const ShardInfo& shard,
                                               const Position& at, bool inclusive) {
  const int64_t id = view.info.id;
  std::string begin = store::RecordKey(id, shard.slot, at);
  if (!inclusive) begin = kv::PrefixEnd(begin);  // past the record and its parts
  std::string end = shard.end ? store::RecordKey(id, shard.slot, *shard.end)
                              : store::SlotRange(id, shard.slot).second;
  return {std::move(begin), std::move(end)};
}

// The last record position of a shard, if it has records.
Result<std::optional<Position>> LastPosition(kv::Transaction& tx, const StreamView& view,
                                             const ShardInfo& shard) {
  auto [begin, end] = ShardRange(view, shard, shard.generation->start, true);
  for (;;) {
    FDYNO_ASSIGN_OR_RETURN(
        kv::RangeResult r,
        tx.GetRange(begin, end, {.limit = 16, .reverse = true, .snapshot = true}));
    for (const kv::KeyValue& kv : r.kvs) {
      // Parts of a split record sit after its head: only a head decodes as a record key.
      Result<Position> p = store::RecordPosition(view.info.id, shard.slot, kv.key);
      if (p.ok()) return std::optional<Position>(std::move(p).value());
    }
    if (!r.more || r.kvs.empty()) return std::optional<Position>();
    end = r.kvs.back().key;
  }
}

// ---- iterators -----------------------------------------------------------------------------
//
// "<stream ARN>|1|<base64 of: version, account, stream id, generation, slot, position (12 bytes),
// inclusive flag, issued ms>", the shape of DynamoDB's iterators. Clients treat it as opaque.
// The stream ARN names the region.

struct Iterator {
  std::string account;
  std::string region;
  int64_t stream_id = 0;
  int64_t generation = 0;
  int slot = 0;
  Position position;
  bool inclusive = true;
  int64_t issued_ms = 0;
};

std::string EncodeIterator(const RequestContext& ctx, const StreamView& view, const Iterator& it) {
  std::string bytes(1, static_cast<char>(kIteratorVersion));
  PutLengthPrefixed(bytes, it.account);
  PutU64(bytes, static_cast<uint64_t>(it.stream_id));
  PutU64(bytes, static_cast<uint64_t>(it.generation));
  PutU32(bytes, static_cast<uint32_t>(it.slot));
  bytes += it.position;
  bytes.push_back(it.inclusive ? 1 : 0);
  PutU64(bytes, static_cast<uint64_t>(it.issued_ms));
  return StreamArn(ctx, view.info) + "|1|" + model::Base64Encode(bytes);
}

Error InvalidIterator() { return Error::Validation("Invalid ShardIterator"); }

Result<Iterator> DecodeIterator(std::string_view text) {
  const size_t bar = text.rfind('|');
  if (bar == std::string_view::npos) return InvalidIterator();
  std::optional<std::string> bytes = model::Base64Decode(text.substr(bar + 1));
  if (!bytes) return InvalidIterator();
  ByteReader in(*bytes);
  Iterator it;
  uint8_t version = 0, inclusive = 0;
  uint64_t stream_id = 0, generation = 0, issued = 0;
  uint32_t slot = 0;
  std::string_view account, position;
  if (!in.U8(version) || version != kIteratorVersion || !in.LengthPrefixed(account) ||
      !in.U64(stream_id) || !in.U64(generation) || !in.U32(slot) || !in.Bytes(12, position) ||
      !in.U8(inclusive) || inclusive > 1 || !in.U64(issued) || !in.done()) {
    return InvalidIterator();
  }
  const std::optional<std::array<std::string, 6>> arn = SplitArn(text.substr(0, text.find('|')));
  if (!arn) return InvalidIterator();
  it.account = std::string(account);
  it.region = (*arn)[3];
  it.stream_id = static_cast<int64_t>(stream_id);
  it.generation = static_cast<int64_t>(generation);
  it.slot = static_cast<int>(slot);
  it.position = std::string(position);
  it.inclusive = inclusive == 1;
  it.issued_ms = static_cast<int64_t>(issued);
  return it;
}

Error Trimmed() {
  return Error::Make(ErrorType::kTrimmedDataAccess,
                     "The operation attempted to read past the oldest stream record in a shard.");
}

// ---- rendering -----------------------------------------------------------------------------

std::string_view EventName(store::StreamEvent e) {
  switch (e) {
    case store::StreamEvent::kInsert:
      return "INSERT";
    case store::StreamEvent::kModify:
      return "MODIFY";
    case store::StreamEvent::kRemove:
      return "REMOVE";
  }
  return "MODIFY";
}

// 32 hex digits, unique per record of the database.
std::string EventId(int64_t stream_id, const Position& position) {
  std::string seed;
  PutU64(seed, static_cast<uint64_t>(stream_id));
  seed += position;
  const std::string digest = store::Sha256(seed);
  std::string hex;
  char buf[3];
  for (size_t i = 0; i < 16; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", static_cast<uint8_t>(digest[i]));
    hex += buf;
  }
  return hex;
}

void WriteRecord(Writer& w, const RequestContext& ctx, const StreamView& view,
                 const Position& position, const store::ChangeRecord& r) {
  w.StartObject();
  w.Key("eventID");
  Str(w, EventId(view.info.id, position));
  w.Key("eventName");
  Str(w, EventName(r.event));
  w.Key("eventVersion");
  w.String("1.1");
  w.Key("eventSource");
  w.String("aws:dynamodb");
  w.Key("awsRegion");
  Str(w, ctx.region);
  w.Key("dynamodb");
  w.StartObject();
  w.Key("ApproximateCreationDateTime");
  w.Int64(r.created_ms / 1000);
  w.Key("Keys");
  model::WriteItem(w, r.keys);
  if (r.new_image) {
    w.Key("NewImage");
    model::WriteItem(w, *r.new_image);
  }
  if (r.old_image) {
    w.Key("OldImage");
    model::WriteItem(w, *r.old_image);
  }
  w.Key("SequenceNumber");
  Str(w, store::SequenceNumber(position));
  w.Key("SizeBytes");
  w.Uint64(r.size_bytes);
  w.Key("StreamViewType");
  Str(w, StreamViewTypeText(view.info.view_type));
  w.EndObject();
  if (r.source == store::ChangeSource::kTimeToLive) {
    w.Key("userIdentity");
    w.StartObject();
    w.Key("PrincipalId");
    w.String("dynamodb.amazonaws.com");
    w.Key("Type");
    w.String("Service");
    w.EndObject();
  }
  w.EndObject();
}

// The members of the streams operations; each reads only its own.
struct StreamMembers {
  const Value* table = nullptr;
  const Value* limit = nullptr;
  const Value* arn = nullptr;
  const Value* start_arn = nullptr;
  const Value* start_shard = nullptr;
  const Value* filter = nullptr;
  const Value* filter_type = nullptr;   // ShardFilter.Type
  const Value* filter_shard = nullptr;  // ShardFilter.ShardId
  const Value* shard = nullptr;
  const Value* type = nullptr;
  const Value* sequence = nullptr;
  const Value* iterator = nullptr;
};
using SM = StreamMembers;

constexpr request::Read<SM> kStreamArnRead{"StreamArn", &SM::arn, JsonShape::kString};
constexpr request::Read<SM> kLimitRead{"Limit", &SM::limit, JsonShape::kInteger};
constexpr std::array<request::Check<SM>, 3> kStreamArnChecks = {
    request::NotNull(&SM::arn, "streamArn"),
    request::Bound(&SM::arn, "streamArn", Rule::kMinLength, 37),
    request::Bound(&SM::arn, "streamArn", Rule::kMaxLength, 1024)};
// Limit, from 1 to `max`.
template <int64_t max>
constexpr std::array<request::Check<SM>, 2> kLimitChecks = {
    request::Bound(&SM::limit, "limit", Rule::kMinValue, 1),
    request::Bound(&SM::limit, "limit", Rule::kMaxValue, max)};

// ---- ListStreams ---------------------------------------------------------------------------

struct ListStreamsRequest {
  std::optional<std::string_view> table;
  size_t max = 100;  // 1 to 100
  std::optional<std::string_view> start;
};

constexpr request::Read<SM> kListStreamsReads[] = {
    {"TableName", &SM::table, JsonShape::kString},
    kLimitRead,
    {"ExclusiveStartStreamArn", &SM::start_arn, JsonShape::kString},
};
constexpr auto kListStreamsChecks = request::Join(
    std::array{request::Bound(&SM::table, "tableName", Rule::kMinLength, 3),
               request::Bound(&SM::table, "tableName", Rule::kMaxLength, 255),
               request::NamePattern(&SM::table, "tableName")},
    kLimitChecks<100>,
    std::array{request::Bound(&SM::start_arn, "exclusiveStartStreamArn", Rule::kMinLength, 37),
               request::Bound(&SM::start_arn, "exclusiveStartStreamArn", Rule::kMaxLength, 1024)});

Result<ListStreamsRequest> ParseListStreams(const Value& body) {
  StreamMembers m;
  FDYNO_RETURN_IF_ERROR(request::ReadMembers<SM>(body, kListStreamsReads, m));
  FDYNO_RETURN_IF_ERROR(request::CheckMembers<SM>(kListStreamsChecks, m));
  ListStreamsRequest r;
  r.table = request::Text(m.table);
  r.start = request::Text(m.start_arn);
  r.max = static_cast<size_t>(request::Number(m.limit).value_or(100));
  return r;
}

Result<std::string> ListStreams(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(ListStreamsRequest request, ParseListStreams(body));
  const std::optional<std::string_view>& table = request.table;
  const std::optional<std::string_view>& start = request.start;
  const size_t max = request.max;
  struct Listed {
    std::vector<store::StreamInfo> streams;
    bool more = false;
  };
  FDYNO_ASSIGN_OR_RETURN(
      Listed listed, kv::Run(*s.db, ReadOptions(ctx, s),
                             [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Listed> {
                               std::vector<store::StreamInfo> all;
                               if (table) {
                                 FDYNO_ASSIGN_OR_RETURN(std::vector<StreamView> views,
                                                        StreamsOf(tx, CallerScope(ctx), *table));
                                 for (StreamView& v : views) all.push_back(std::move(v.info));
                               } else {
                                 auto [begin, end] = store::StreamInfosRange();
                                 FDYNO_ASSIGN_OR_RETURN(
                                     kv::RangeResult r,
                                     tx.GetRange(begin, end, {.snapshot = true}));
                                 for (const kv::KeyValue& kv : r.kvs) {
                                   FDYNO_ASSIGN_OR_RETURN(store::StreamInfo info,
                                                          store::DecodeStreamInfo(kv.value));
                                   if (info.scope() == CallerScope(ctx))
                                     all.push_back(std::move(info));
                                 }
                               }
                               Listed out;
                               bool started = !start;
                               for (store::StreamInfo& info : all) {
                                 if (!started) {
                                   started = StreamArn(ctx, info) == *start;
                                   continue;
                                 }
                                 if (out.streams.size() == max) {
                                   out.more = true;
                                   break;
                                 }
                                 out.streams.push_back(std::move(info));
                               }
                               return out;
                             }));
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("Streams");
  w.StartArray();
  for (const store::StreamInfo& info : listed.streams) {
    w.StartObject();
    w.Key("StreamArn");
    Str(w, StreamArn(ctx, info));
    w.Key("TableName");
    Str(w, info.table_name);
    w.Key("StreamLabel");
    Str(w, info.label);
    w.EndObject();
  }
  w.EndArray();
  if (listed.more) {
    w.Key("LastEvaluatedStreamArn");
    Str(w, StreamArn(ctx, listed.streams.back()));
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

// ---- DescribeStream ------------------------------------------------------------------------

struct DescribeRequest {
  std::string arn;
  size_t limit = 100;
  std::optional<std::string> exclusive_start;
  std::optional<std::string> child_of;  // ShardFilter CHILD_SHARDS
};

constexpr request::Read<SM> kShardFilterReads[] = {
    {"Type", &SM::filter_type, JsonShape::kString},
    {"ShardId", &SM::filter_shard, JsonShape::kString},
};
constexpr request::Read<SM> kDescribeStreamReads[] = {
    kStreamArnRead,
    kLimitRead,
    {"ExclusiveStartShardId", &SM::start_shard, JsonShape::kString},
    request::Nested("ShardFilter", &SM::filter, "ShardFilter", kShardFilterReads),
};
constexpr std::string_view kShardFilterTypes[] = {"CHILD_SHARDS"};
constexpr auto kDescribeStreamChecks = request::Join(
    kStreamArnChecks, kLimitChecks<100>,
    std::array{request::Bound(&SM::start_shard, "exclusiveStartShardId", Rule::kMinLength, 28),
               request::Bound(&SM::start_shard, "exclusiveStartShardId", Rule::kMaxLength, 65),
               request::Enum(&SM::filter_type, "shardFilter.type", kShardFilterTypes),
               request::Bound(&SM::filter_shard, "shardFilter.shardId", Rule::kMinLength, 28),
               request::Bound(&SM::filter_shard, "shardFilter.shardId", Rule::kMaxLength, 65)});

Result<DescribeRequest> ParseDescribeStream(const Value& body) {
  StreamMembers m;
  FDYNO_RETURN_IF_ERROR(request::ReadMembers<SM>(body, kDescribeStreamReads, m));
  FDYNO_RETURN_IF_ERROR(request::CheckMembers<SM>(kDescribeStreamChecks, m));
  DescribeRequest r;
  r.arn = std::string(AsStringView(*m.arn));
  r.limit = static_cast<size_t>(request::Number(m.limit).value_or(100));
  if (m.start_shard) r.exclusive_start = std::string(AsStringView(*m.start_shard));
  if (m.filter_type && m.filter_shard) r.child_of = std::string(AsStringView(*m.filter_shard));
  return r;
}

Result<std::string> DescribeStream(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(DescribeRequest r, ParseDescribeStream(body));
  struct Described {
    StreamView view;
    std::vector<ShardInfo> shards;
    std::vector<std::optional<Position>> last;  // per shard: its last record (closed shards)
    bool more = false;
  };
  FDYNO_ASSIGN_OR_RETURN(
      Described d, kv::Run(*s.db, ReadOptions(ctx, s),
                           [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Described> {
                             Described out;
                             FDYNO_ASSIGN_OR_RETURN(out.view, FindStream(s, ctx, tx, r.arn));
                             bool started = !r.exclusive_start;
                             for (ShardInfo& shard : ShardsOf(out.view)) {
                               if (!started) {
                                 started = shard.id == *r.exclusive_start;
                                 continue;
                               }
                               if (r.child_of && shard.parent != r.child_of) continue;
                               if (out.shards.size() == r.limit) {
                                 out.more = true;
                                 break;
                               }
                               std::optional<Position> last;
                               if (shard.end) {
                                 FDYNO_ASSIGN_OR_RETURN(last, LastPosition(tx, out.view, shard));
                               }
                               out.shards.push_back(std::move(shard));
                               out.last.push_back(std::move(last));
                             }
                             return out;
                           }));
  // The shards' generation pointers point into d.view's vector, which moving kept in place.
  const store::StreamInfo& info = d.view.info;
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("StreamDescription");
  w.StartObject();
  w.Key("StreamArn");
  Str(w, StreamArn(ctx, info));
  w.Key("StreamLabel");
  Str(w, info.label);
  w.Key("StreamStatus");
  w.String(info.disabled_ms == 0 ? "ENABLED" : "DISABLED");
  w.Key("StreamViewType");
  Str(w, StreamViewTypeText(info.view_type));
  w.Key("CreationRequestDateTime");
  WriteSeconds(w, info.created_ms);
  w.Key("TableName");
  Str(w, info.table_name);
  w.Key("KeySchema");
  WriteKeySchema(w, info.key_schema);
  w.Key("Shards");
  w.StartArray();
  for (size_t i = 0; i < d.shards.size(); ++i) {
    const ShardInfo& shard = d.shards[i];
    const store::Generation& g = *shard.generation;
    w.StartObject();
    w.Key("ShardId");
    Str(w, shard.id);
    w.Key("SequenceNumberRange");
    w.StartObject();
    w.Key("StartingSequenceNumber");
    Str(w, store::SequenceNumber(g.start));
    if (shard.end) {
      w.Key("EndingSequenceNumber");
      Str(w, store::SequenceNumber(d.last[i] ? *d.last[i] : *shard.end));
    }
    w.EndObject();
    if (shard.parent) {
      w.Key("ParentShardId");
      Str(w, *shard.parent);
    }
    w.EndObject();
  }
  w.EndArray();
  if (d.more && !d.shards.empty()) {
    w.Key("LastEvaluatedShardId");
    Str(w, d.shards.back().id);
  }
  w.EndObject();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

// ---- GetShardIterator ----------------------------------------------------------------------

struct IteratorRequest {
  std::string arn;
  std::string shard_id;
  std::string type;
  std::optional<Position> sequence;
};

constexpr request::Read<SM> kGetShardIteratorReads[] = {
    kStreamArnRead,
    {"ShardId", &SM::shard, JsonShape::kString},
    {"ShardIteratorType", &SM::type, JsonShape::kString},
    {"SequenceNumber", &SM::sequence, JsonShape::kString},
};
constexpr std::string_view kIteratorTypes[] = {"TRIM_HORIZON", "LATEST", "AT_SEQUENCE_NUMBER",
                                               "AFTER_SEQUENCE_NUMBER"};
constexpr auto kGetShardIteratorChecks = request::Join(
    kStreamArnChecks,
    std::array{request::NotNull(&SM::shard, "shardId"),
               request::Bound(&SM::shard, "shardId", Rule::kMinLength, 28),
               request::Bound(&SM::shard, "shardId", Rule::kMaxLength, 65),
               request::NotNull(&SM::type, "shardIteratorType"),
               request::Enum(&SM::type, "shardIteratorType", kIteratorTypes),
               request::Bound(&SM::sequence, "sequenceNumber", Rule::kMinLength, 21),
               request::Bound(&SM::sequence, "sequenceNumber", Rule::kMaxLength, 40)});

Result<IteratorRequest> ParseGetShardIterator(const Value& body) {
  StreamMembers m;
  FDYNO_RETURN_IF_ERROR(request::ReadMembers<SM>(body, kGetShardIteratorReads, m));
  FDYNO_RETURN_IF_ERROR(request::CheckMembers<SM>(kGetShardIteratorChecks, m));
  const std::optional<std::string_view> seq = request::Text(m.sequence);
  IteratorRequest r;
  r.arn = std::string(AsStringView(*m.arn));
  r.shard_id = std::string(AsStringView(*m.shard));
  r.type = std::string(AsStringView(*m.type));
  const bool needs_sequence = r.type == "AT_SEQUENCE_NUMBER" || r.type == "AFTER_SEQUENCE_NUMBER";
  if (needs_sequence && !seq) {
    return Error::Validation("Must specify a sequence number for iterator type " + r.type);
  }
  if (needs_sequence) {
    r.sequence = store::ParseSequenceNumber(*seq);
    if (!r.sequence) return Error::Validation("Invalid SequenceNumber: " + std::string(*seq));
  }
  return r;
}

Result<std::string> GetShardIterator(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(IteratorRequest r, ParseGetShardIterator(body));
  const int64_t now_ms = s.clock->WallMillis();
  return kv::Run(
      *s.db, ReadOptions(ctx, s),
      [&](kv::Transaction& tx, const kv::Attempt&) -> Result<std::string> {
        FDYNO_ASSIGN_OR_RETURN(StreamView view, FindStream(s, ctx, tx, r.arn));
        std::optional<ShardInfo> shard = FindShard(view, r.shard_id);
        if (!shard) return ShardNotFound();
        FDYNO_ASSIGN_OR_RETURN(std::optional<Position> trim,
                               store::ReadTrimPoint(tx, view.info.id, shard->slot));
        Iterator it{.account = ctx.account_id,
                    .region = ctx.region,
                    .stream_id = view.info.id,
                    .generation = shard->generation->number,
                    .slot = shard->slot,
                    .position = shard->generation->start,
                    .inclusive = true,
                    .issued_ms = now_ms};
        if (r.type == "TRIM_HORIZON") {
          if (trim && *trim >= it.position) {
            it.position = *trim;
            it.inclusive = false;
          }
        } else if (r.type == "LATEST") {
          if (shard->end) {
            it.position = *shard->end;  // nothing more will come: at the end
          } else {
            FDYNO_ASSIGN_OR_RETURN(std::optional<Position> last, LastPosition(tx, view, *shard));
            if (last) {
              it.position = *last;
              it.inclusive = false;
            }
          }
        } else {
          const Position& p = *r.sequence;
          if (p < shard->generation->start || (shard->end && p >= *shard->end)) {
            return Error::Validation("Invalid SequenceNumber " + store::SequenceNumber(p) +
                                     " for shard " + shard->id);
          }
          if (trim && p <= *trim) return Trimmed();
          it.position = p;
          it.inclusive = r.type == "AT_SEQUENCE_NUMBER";
        }
        rapidjson::StringBuffer buffer;
        Writer w(buffer);
        w.StartObject();
        w.Key("ShardIterator");
        Str(w, EncodeIterator(ctx, view, it));
        w.EndObject();
        return std::string(buffer.GetString(), buffer.GetSize());
      });
}

// ---- GetRecords ----------------------------------------------------------------------------

struct RecordsPage {
  StreamView view;
  std::vector<std::pair<Position, store::ChangeRecord>> records;
  std::optional<Iterator> next;
};

Result<RecordsPage> ReadRecords(kv::Transaction& tx, const Iterator& it, size_t limit,
                                int64_t now_ms) {
  RecordsPage page;
  FDYNO_ASSIGN_OR_RETURN(std::optional<StreamView> view, store::ReadStream(tx, it.stream_id));
  if (!view || view->info.id != it.stream_id) {
    return Error::ResourceNotFound("Requested resource not found: Stream does not exist");
  }
  page.view = std::move(*view);
  std::optional<ShardInfo> shard;
  for (ShardInfo& s : ShardsOf(page.view)) {
    if (s.generation->number == it.generation && s.slot == it.slot) shard = std::move(s);
  }
  if (!shard) return Trimmed();  // the shard's records were trimmed and the shard forgotten
  FDYNO_ASSIGN_OR_RETURN(std::optional<Position> trim,
                         store::ReadTrimPoint(tx, page.view.info.id, shard->slot));
  if (trim && (it.inclusive ? it.position <= *trim : it.position < *trim)) return Trimmed();
  auto [begin, end] = ShardRange(page.view, *shard, it.position, it.inclusive);
  store::RecordAssembler assembler;
  size_t bytes = 0;
  bool reached_end = false;  // everything up to the shard's end (or the newest record) was read
  bool full = false;
  while (!full) {
    const int want = static_cast<int>(limit - page.records.size()) + 8;  // parts are extra keys
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult r,
                           tx.GetRange(begin, end, {.limit = want, .snapshot = true}));
    for (const kv::KeyValue& kv : r.kvs) {
      FDYNO_ASSIGN_OR_RETURN(auto complete, assembler.Add(page.view.info.id, shard->slot, kv));
      if (!complete) continue;
      // At most 1 MB a page, but always at least one record.
      if (!page.records.empty() && bytes + complete->bytes.size() > kMaxRecordsBytes) {
        full = true;
        break;
      }
      bytes += complete->bytes.size();
      FDYNO_ASSIGN_OR_RETURN(store::ChangeRecord rec, store::DecodeChangeRecord(complete->bytes));
      page.records.emplace_back(std::move(complete->position), std::move(rec));
      if (page.records.size() == limit) {
        full = true;
        break;
      }
    }
    if (full) break;
    if (!r.more || r.kvs.empty()) {
      if (assembler.pending()) return Error::Internal("malformed stream data (record parts)");
      reached_end = true;
      break;
    }
    begin = kv::PrefixEnd(r.kvs.back().key);
    if (assembler.pending()) {
      // Resume at the half-read record: read it again from its head.
      begin = store::RecordKey(page.view.info.id, shard->slot, assembler.pending_position());
      assembler = store::RecordAssembler();
    }
  }
  // A closed shard read to its end has no next iterator.
  if (!(shard->end && reached_end)) {
    Iterator next = it;
    next.issued_ms = now_ms;
    if (!page.records.empty()) {
      next.position = page.records.back().first;
      next.inclusive = false;
    }
    page.next = next;
  }
  return page;
}

constexpr request::Read<SM> kGetRecordsReads[] = {
    {"ShardIterator", &SM::iterator, JsonShape::kString},
    kLimitRead,
};
constexpr auto kGetRecordsChecks = request::Join(
    std::array{request::NotNull(&SM::iterator, "shardIterator"),
               request::Bound(&SM::iterator, "shardIterator", Rule::kMinLength, 1),
               request::Bound(&SM::iterator, "shardIterator", Rule::kMaxLength, 2048)},
    kLimitChecks<1000>);

Result<std::string> GetRecords(Services& s, const RequestContext& ctx, const Value& body) {
  StreamMembers m;
  FDYNO_RETURN_IF_ERROR(request::ReadMembers<SM>(body, kGetRecordsReads, m));
  FDYNO_RETURN_IF_ERROR(request::CheckMembers<SM>(kGetRecordsChecks, m));
  const std::optional<int64_t> limit = request::Number(m.limit);
  FDYNO_ASSIGN_OR_RETURN(Iterator it, DecodeIterator(AsStringView(*m.iterator)));
  if (it.account != ctx.account_id || it.region != ctx.region) return InvalidIterator();
  const int64_t now_ms = s.clock->WallMillis();
  // it.issued_ms is whatever the client sent: no subtraction of it, which could overflow.
  if (it.issued_ms < now_ms - kIteratorLifetimeMs) {
    return Error::Make(ErrorType::kExpiredIterator,
                       "Iterator expired. The iterator was created at time " +
                           std::to_string(it.issued_ms) + " while right now it is " +
                           std::to_string(now_ms) +
                           " which is further in the future than the tolerated delay of " +
                           std::to_string(kIteratorLifetimeMs) + " milliseconds.");
  }
  FDYNO_ASSIGN_OR_RETURN(
      RecordsPage page,
      kv::Run(*s.db, ReadOptions(ctx, s), [&](kv::Transaction& tx, const kv::Attempt&) {
        return ReadRecords(tx, it, static_cast<size_t>(limit.value_or(1000)), now_ms);
      }));
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("Records");
  w.StartArray();
  for (const auto& [position, record] : page.records) {
    WriteRecord(w, ctx, page.view, position, record);
  }
  w.EndArray();
  if (page.next) {
    w.Key("NextShardIterator");
    Str(w, EncodeIterator(ctx, page.view, *page.next));
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace

void RegisterStreamOperations(OperationRegistry& registry, const Services& services) {
  auto s = std::make_shared<Services>(services);
  registry.Register(Service::kStreams, "ListStreams", Bind(s, &ListStreams));
  registry.Register(Service::kStreams, "DescribeStream", Bind(s, &DescribeStream));
  registry.Register(Service::kStreams, "GetShardIterator", Bind(s, &GetShardIterator));
  registry.Register(Service::kStreams, "GetRecords", Bind(s, &GetRecords));
}

}  // namespace fdyno::api
