#include "store/streams.h"

#include <gtest/gtest.h>

#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "model/test_values.h"

namespace fdyno::store {
namespace {

using test::S;

using model::AttributeValue;
using model::Item;

KeySchema Schema() {
  KeySchema k;
  k.hash = {"pk", ScalarType::kS};
  k.range = model::KeyAttribute{"sk", ScalarType::kS};
  return k;
}

TEST(StreamsTest, SequenceNumbersSpellThePositionAndRoundTrip) {
  Position p(12, '\0');
  p[7] = 1;                                               // commit version 1
  EXPECT_EQ(SequenceNumber(p), "000000000004294967296");  // 1 << 32
  EXPECT_EQ(SequenceNumber(p).size(), 21u);
  EXPECT_EQ(ParseSequenceNumber(SequenceNumber(p)), p);
  Position max(12, '\xff');
  EXPECT_EQ(SequenceNumber(max), "79228162514264337593543950335");
  EXPECT_EQ(ParseSequenceNumber(SequenceNumber(max)), max);
  EXPECT_EQ(ParseSequenceNumber("79228162514264337593543950336"), std::nullopt);  // 2^96
  EXPECT_EQ(ParseSequenceNumber("12a"), std::nullopt);
  EXPECT_EQ(ParseSequenceNumber(""), std::nullopt);
  // Numeric order is position order.
  Position a(12, '\0'), b(12, '\0');
  a[11] = 5;
  b[9] = 1;
  EXPECT_LT(a, b);
  EXPECT_LT(std::stoull(SequenceNumber(a)), std::stoull(SequenceNumber(b)));
}

TEST(StreamsTest, ShardIdsHaveDynamoDBsShapeAndParseBack) {
  Generation g{300, Position(12, '\0'), 1'700'000'000'123};
  std::string id = ShardId(g, 7);
  EXPECT_EQ(id, "shardId-00000001700000000123-00012c07");
  std::optional<ShardRef> ref = ParseShardId(id);
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->generation, 300);
  EXPECT_EQ(ref->slot, 7);
  EXPECT_FALSE(ParseShardId("shardId-0000000170000000012-00012c07"));
  EXPECT_FALSE(ParseShardId("shardId-00000001700000000123-00012c0g"));
  EXPECT_FALSE(ParseShardId("shard-00000001700000000123-00012c07x"));
}

TEST(StreamsTest, RecordsKeepWhatTheViewTypeKeeps) {
  const Item old_item{{"pk", S("a")}, {"sk", S("1")}, {"v", S("old")}};
  const Item new_item{{"pk", S("a")}, {"sk", S("1")}, {"v", S("new")}};
  const Item keys{{"pk", S("a")}, {"sk", S("1")}};
  ChangeRecord r = MakeChangeRecord(StreamViewType::kNewAndOldImages, Schema(), &old_item,
                                    &new_item, ChangeSource::kUser, 5);
  EXPECT_EQ(r.event, StreamEvent::kModify);
  EXPECT_EQ(r.keys, keys);
  EXPECT_EQ(r.old_image, old_item);
  EXPECT_EQ(r.new_image, new_item);
  r = MakeChangeRecord(StreamViewType::kKeysOnly, Schema(), nullptr, &new_item, ChangeSource::kUser,
                       5);
  EXPECT_EQ(r.event, StreamEvent::kInsert);
  EXPECT_FALSE(r.old_image);
  EXPECT_FALSE(r.new_image);
  r = MakeChangeRecord(StreamViewType::kNewImage, Schema(), &old_item, nullptr,
                       ChangeSource::kTimeToLive, 5);
  EXPECT_EQ(r.event, StreamEvent::kRemove);
  EXPECT_FALSE(r.new_image);
  EXPECT_FALSE(r.old_image);
  r = MakeChangeRecord(StreamViewType::kOldImage, Schema(), &old_item, nullptr,
                       ChangeSource::kTimeToLive, 5);
  EXPECT_EQ(r.old_image, old_item);
  Result<ChangeRecord> back = DecodeChangeRecord(EncodeChangeRecord(r));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->source, ChangeSource::kTimeToLive);
  EXPECT_EQ(back->old_image, old_item);
  EXPECT_EQ(back->keys, keys);
  EXPECT_EQ(back->size_bytes, r.size_bytes);
  EXPECT_FALSE(DecodeChangeRecord(EncodeChangeRecord(r).substr(1)).ok());
  EXPECT_FALSE(DecodeChangeRecord(EncodeChangeRecord(r) + "x").ok());
}

TEST(StreamsTest, OnlyStateChangesMakeRecords) {
  const Item a{{"pk", S("a")}, {"v", S("1")}};
  const Item b{{"pk", S("a")}, {"v", S("2")}};
  EXPECT_FALSE(StateChanged(nullptr, nullptr));
  EXPECT_FALSE(StateChanged(&a, &a));
  EXPECT_TRUE(StateChanged(&a, &b));
  EXPECT_TRUE(StateChanged(nullptr, &a));
  EXPECT_TRUE(StateChanged(&a, nullptr));
}

TEST(StreamsTest, StreamInfoRoundTripsAndFailsClosed) {
  StreamInfo info;
  info.id = 9;
  info.table_name = "t";
  info.table_id = 4;
  info.label = "2026-12-01T10:00:00.000";
  info.view_type = StreamViewType::kOldImage;
  info.key_schema = Schema();
  info.created_ms = 77;
  info.slots = 3;
  Result<StreamInfo> back = DecodeStreamInfo(EncodeStreamInfo(info));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, info);
  std::string bad = EncodeStreamInfo(info);
  bad[0] = 4;
  EXPECT_FALSE(DecodeStreamInfo(bad).ok());
  EXPECT_FALSE(DecodeStreamInfo(EncodeStreamInfo(info) + "\x01").ok());
}

// A stream belongs to its table's account and region; a version 2 record (before regions) ends
// before the region and has none (the catalog's migration gives it one), a version 1 record
// (before accounts) ends before the account and is the shared account's.
TEST(StreamsTest, StreamInfoKeepsItsAccountAndRegionAndOlderVersionsRead) {
  StreamInfo info;
  info.id = 9;
  info.account = "222222222222";
  info.region = "eu-west-1";
  info.table_name = "t";
  info.key_schema = Schema();
  const std::string bytes = EncodeStreamInfo(info);
  EXPECT_EQ(bytes[0], '\x03');
  EXPECT_EQ(*DecodeStreamInfo(bytes), info);
  std::string v2 = bytes.substr(0, bytes.size() - 4 - info.region.size());
  v2[0] = '\x02';
  Result<StreamInfo> before_regions = DecodeStreamInfo(v2);
  ASSERT_TRUE(before_regions.ok()) << before_regions.error().message;
  EXPECT_EQ(before_regions->account, "222222222222");
  EXPECT_EQ(before_regions->region, "");
  std::string v1 = v2.substr(0, v2.size() - 4 - info.account.size());
  v1[0] = '\x01';
  Result<StreamInfo> older = DecodeStreamInfo(v1);
  ASSERT_TRUE(older.ok()) << older.error().message;
  EXPECT_EQ(older->account, kSharedAccount);
  EXPECT_EQ(older->table_name, "t");
  EXPECT_FALSE(DecodeStreamInfo(v1 + std::string(1, '\0')).ok());  // bytes left over
}

// Records larger than one engine value are split, and read back whole, in order.
TEST(StreamsTest, LargeRecordsAreSplitAndReassembled) {
  auto db = kv::OpenMemoryEngine();
  TableInfo table;
  table.name = "t";
  table.id = 3;
  table.key_schema = Schema();
  table.stream = {true, StreamViewType::kNewAndOldImages, "l", 0, 1};
  std::vector<ChangeRecord> written;
  {
    auto tx = db->CreateTransaction();
    StreamInfo info;
    info.table_name = "t";
    info.key_schema = Schema();
    Result<int64_t> id = CreateStream(*tx, info);
    ASSERT_TRUE(id.ok());
    table.stream.stream_id = *id;
    for (int i = 0; i < 3; ++i) {
      const Item old_item{
          {"pk", S("k")}, {"sk", S(std::to_string(i))}, {"v", S(std::string(300'000, 'o'))}};
      const Item new_item{{"pk", S("k")},
                          {"sk", S(std::to_string(i))},
                          {"v", S(std::string(i == 1 ? 10 : 300'000, 'n'))}};
      written.push_back(MakeChangeRecord(StreamViewType::kNewAndOldImages, Schema(), &old_item,
                                         &new_item, ChangeSource::kUser, 1));
      ASSERT_TRUE(WriteChangeRecord(*tx, table, written.back(), static_cast<uint16_t>(i)).ok());
    }
    ASSERT_TRUE(tx->Commit().ok());
  }
  auto tx = db->CreateTransaction();
  auto [begin, end] = SlotRange(table.stream.stream_id, 0);
  Result<kv::RangeResult> kvs = tx->GetRange(begin, end);
  ASSERT_TRUE(kvs.ok());
  EXPECT_GT(kvs->kvs.size(), 3u);
  RecordAssembler assembler;
  std::vector<ChangeRecord> read;
  std::vector<Position> positions;
  for (const kv::KeyValue& kv : kvs->kvs) {
    auto r = assembler.Add(table.stream.stream_id, 0, kv);
    ASSERT_TRUE(r.ok()) << r.error().message;
    if (!*r) continue;
    positions.push_back((*r)->position);
    Result<ChangeRecord> rec = DecodeChangeRecord((*r)->bytes);
    ASSERT_TRUE(rec.ok());
    read.push_back(*rec);
  }
  ASSERT_EQ(read.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(read[i].new_image, written[i].new_image);
    EXPECT_EQ(read[i].old_image, written[i].old_image);
    if (i > 0) {
      EXPECT_LT(positions[i - 1], positions[i]);
    }
  }
  EXPECT_FALSE(assembler.pending());
}

TEST(StreamsTest, DisablingClosesTheLastGeneration) {
  auto db = kv::OpenMemoryEngine();
  int64_t id = 0;
  {
    auto tx = db->CreateTransaction();
    StreamInfo info;
    info.table_name = "t";
    info.key_schema = Schema();
    info.created_ms = 10;
    id = *CreateStream(*tx, info);
    ASSERT_TRUE(tx->Commit().ok());
  }
  {
    auto tx = db->CreateTransaction();
    std::optional<StreamView> view = *ReadStream(*tx, id);
    ASSERT_TRUE(view);
    ASSERT_EQ(view->generations.size(), 1u);
    EXPECT_EQ(view->generations[0].start_ms, 10);
    EXPECT_FALSE(view->closed_at);
    EXPECT_FALSE(ShardEnd(*view, 0));
    ASSERT_TRUE(DisableStream(*tx, id, 20).ok());
    ASSERT_TRUE(tx->Commit().ok());
  }
  auto tx = db->CreateTransaction();
  std::optional<StreamView> view = *ReadStream(*tx, id);
  ASSERT_TRUE(view);
  ASSERT_EQ(view->generations.size(), 1u);
  ASSERT_TRUE(view->closed_at);
  EXPECT_GT(*view->closed_at, view->generations[0].start);
  EXPECT_EQ(ShardEnd(*view, 0), view->closed_at);
  EXPECT_EQ(view->info.disabled_ms, 20);
}

}  // namespace
}  // namespace fdyno::store
