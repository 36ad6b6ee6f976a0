#include "store/pitr.h"

#include <gtest/gtest.h>

#include "kv/testing/memory_engine.h"
#include "model/item_codec.h"
#include "store/mutation.h"

namespace fdyno::store {
namespace {

using model::AttributeValue;
using model::Item;

Item KeyOf(const std::string& pk) { return {{"pk", AttributeValue::S(pk)}}; }
Item ItemOf(const std::string& pk, const std::string& v) {
  return {{"pk", AttributeValue::S(pk)}, {"v", AttributeValue::S(v)}};
}

class PitrTest : public ::testing::Test {
 protected:
  PitrTest() : db_(kv::OpenMemoryEngine()) {
    table_.name = "t";
    table_.id = 5;
    table_.key_schema.hash = {"pk", ScalarType::kS};
    table_.pitr = {true, 1, 35, 0};
  }

  // One transaction stamped `time_ms` putting (or, with nullopt, deleting) items.
  void Apply(int64_t time_ms,
             const std::vector<std::pair<std::string, std::optional<std::string>>>& changes) {
    auto tx = db_->CreateTransaction();
    Mutation m({.now_ms = time_ms});
    for (const auto& [pk, v] : changes) {
      Result<CurrentItem> c = ReadCurrent(*tx, table_, ItemStorageKey(table_, KeyOf(pk)), false);
      ASSERT_TRUE(c.ok());
      std::optional<Item> next;
      if (v) next = ItemOf(pk, *v);
      m.Stage(table_, std::move(c).value(), next);
    }
    ASSERT_TRUE(m.Write(*tx).ok());
    ASSERT_TRUE(tx->Commit().ok());
  }

  // The history of epoch 1, newest first.
  std::vector<UndoRecord> History() {
    auto tx = db_->CreateTransaction();
    auto [begin, end] = HistoryRange(table_.id, 1);
    Result<kv::RangeResult> range = tx->GetRange(begin, end, {.reverse = true});
    EXPECT_TRUE(range.ok());
    ReverseUndoAssembler a;
    std::vector<UndoRecord> out;
    for (const kv::KeyValue& kv : range->kvs) {
      auto r = a.Add(kv);
      EXPECT_TRUE(r.ok()) << r.error().message;
      if (r.ok() && *r) out.push_back((*r)->record);
    }
    EXPECT_FALSE(a.pending());
    return out;
  }

  // The image an undo record holds, decoded: the "v" attribute, or "-" when absent.
  static std::string OldV(const UndoRecord& r) {
    if (!r.old_image) return "-";
    Result<Item> item = model::DecodeStoredItem(*r.old_image);
    EXPECT_TRUE(item.ok());
    return std::get<std::string>(item->at("v").v);
  }

  std::unique_ptr<kv::Database> db_;
  TableInfo table_;
};

TEST_F(PitrTest, RecordsAndJobsRoundTripAndFailClosed) {
  UndoRecord r{1234, std::string("\x01\x02\x00", 3), std::string("image")};
  Result<UndoRecord> back = DecodeUndoRecord(EncodeUndoRecord(r));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, r);
  r.old_image.reset();
  EXPECT_EQ(*DecodeUndoRecord(EncodeUndoRecord(r)), r);
  std::string bad = EncodeUndoRecord(r);
  bad[0] = 2;
  EXPECT_EQ(DecodeUndoRecord(bad).error().type, ErrorType::kInternalServerError);
  EXPECT_FALSE(DecodeUndoRecord(EncodeUndoRecord(r) + "x").ok());

  PitrRestoreJob job{
      9,  "copy",         5,          "t", 2, 777, PitrRestoreJob::Phase::kUndo, "k", "e",
      12, "111111111111", "eu-west-1"};
  Result<PitrRestoreJob> job_back = DecodePitrRestoreJob(EncodePitrRestoreJob(job));
  ASSERT_TRUE(job_back.ok());
  EXPECT_EQ(*job_back, job);
  std::string bad_job = EncodePitrRestoreJob(job);
  EXPECT_FALSE(DecodePitrRestoreJob(bad_job.substr(0, bad_job.size() - 1)).ok());

  // The job keeps its tables' account and region; a version 2 job (before regions) ends before
  // the region and has none, a version 1 job (before accounts) ends before the account and is
  // the shared account's.
  job.account = "222222222222";
  const std::string bytes = EncodePitrRestoreJob(job);
  EXPECT_EQ(bytes[0], '\x03');
  EXPECT_EQ(*DecodePitrRestoreJob(bytes), job);
  std::string v2 = bytes.substr(0, bytes.size() - 4 - job.region.size());
  v2[0] = '\x02';
  Result<PitrRestoreJob> before_regions = DecodePitrRestoreJob(v2);
  ASSERT_TRUE(before_regions.ok()) << before_regions.error().message;
  EXPECT_EQ(before_regions->account, "222222222222");
  EXPECT_EQ(before_regions->region, "");
  std::string v1 = v2.substr(0, v2.size() - 4 - job.account.size());
  v1[0] = '\x01';
  Result<PitrRestoreJob> older = DecodePitrRestoreJob(v1);
  ASSERT_TRUE(older.ok()) << older.error().message;
  EXPECT_EQ(older->account, kSharedAccount);
  EXPECT_EQ(older->items, 12);
}

TEST_F(PitrTest, EveryChangeKeepsWhatUndoesItInCommitOrder) {
  Apply(100, {{"a", "1"}});
  Apply(200, {{"a", "2"}, {"b", "1"}});
  Apply(300, {{"a", std::nullopt}, {"c", std::nullopt}});  // c stays absent: no change
  std::vector<UndoRecord> h = History();
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[0].time_ms, 300);
  EXPECT_EQ(OldV(h[0]), "2");  // the delete of a undoes to a=2
  EXPECT_EQ(OldV(h[1]), "-");  // b was absent before its put
  EXPECT_EQ(OldV(h[2]), "1");  // a=2 undoes to a=1
  EXPECT_EQ(OldV(h[3]), "-");
  EXPECT_EQ(h[3].time_ms, 100);
  EXPECT_EQ(ItemKeyFromSuffix(table_.id, h[3].item_suffix), ItemStorageKey(table_, KeyOf("a")));

  table_.pitr.enabled = false;  // disabled: nothing more is kept
  Apply(400, {{"a", "3"}});
  EXPECT_EQ(History().size(), 4u);
}

TEST_F(PitrTest, ARecordLargerThanOneValueIsSplitAndReassembled) {
  const std::string big(300'000, 'x');
  Apply(100, {{"a", big}});
  Apply(200, {{"a", "small"}});
  std::vector<UndoRecord> h = History();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(OldV(h[0]), big);
  EXPECT_EQ(OldV(h[1]), "-");
}

TEST_F(PitrTest, TrimRemovesOnlyRecordsBeforeTheCutoffAndMovesTheTrimPoint) {
  const std::string big(300'000, 'x');
  for (int t = 1; t <= 10; ++t) Apply(t * 100, {{"a", t == 4 ? big : std::to_string(t)}});
  auto trim = [&](int64_t cutoff, int limit) {
    auto tx = db_->CreateTransaction();
    Result<bool> done = TrimHistory(*tx, table_.id, 1, cutoff, limit);
    EXPECT_TRUE(done.ok());
    EXPECT_TRUE(tx->Commit().ok());
    return *done;
  };
  auto trim_point = [&] {
    auto tx = db_->CreateTransaction();
    return *ReadHistoryTrimPoint(*tx, table_.id, 1);
  };
  EXPECT_EQ(trim_point(), 0);
  EXPECT_TRUE(trim(550, 1000));  // removes 100..500
  std::vector<UndoRecord> h = History();
  ASSERT_EQ(h.size(), 5u);
  EXPECT_EQ(h.back().time_ms, 600);
  EXPECT_EQ(trim_point(), 500);
  EXPECT_TRUE(trim(550, 1000));  // nothing more
  EXPECT_EQ(History().size(), 5u);
  EXPECT_TRUE(trim(100'000, 1000));
  EXPECT_TRUE(History().empty());
  EXPECT_EQ(trim_point(), 1000);
  Apply(1100, {{"a", "11"}});  // the history goes on after a full trim
  EXPECT_EQ(History().size(), 1u);
}

TEST_F(PitrTest, OtherHistoriesAreClearedInBoundedSteps) {
  for (int t = 1; t <= 5; ++t) Apply(t, {{"a", std::to_string(t)}});
  table_.pitr.epoch = 2;
  for (int t = 6; t <= 8; ++t) Apply(t, {{"a", std::to_string(t)}});
  auto clear = [&](std::vector<int64_t> keep) {
    auto tx = db_->CreateTransaction();
    Result<bool> done = ClearOtherHistories(*tx, table_.id, keep, 2);
    EXPECT_TRUE(done.ok());
    EXPECT_TRUE(tx->Commit().ok());
    return *done;
  };
  int steps = 0;
  while (!clear({2}) && steps < 10) ++steps;
  EXPECT_GE(steps, 2);             // 5 keys, 2 at a time
  EXPECT_TRUE(History().empty());  // epoch 1
  auto [begin, end] = HistoryRange(table_.id, 2);
  EXPECT_EQ(db_->CreateTransaction()->GetRange(begin, end)->kvs.size(), 3u);
  steps = 0;
  while (!clear({}) && steps < 10) ++steps;
  EXPECT_TRUE(db_->CreateTransaction()->GetRange(begin, end)->kvs.empty());
}

TEST_F(PitrTest, TheWindowStartsAtTheLatestOfEnableTimePeriodAndTrimPoint) {
  PitrSettings p{true, 1, 1, 1000};
  EXPECT_EQ(WindowOf(p, 0, 5000).earliest_ms, 1000);
  EXPECT_EQ(WindowOf(p, 0, 5000).latest_ms, 5000);
  EXPECT_EQ(WindowOf(p, 3000, 5000).earliest_ms, 3000);
  EXPECT_EQ(WindowOf(p, 0, 2 * kMsPerDay).earliest_ms, kMsPerDay);
}

}  // namespace
}  // namespace fdyno::store
