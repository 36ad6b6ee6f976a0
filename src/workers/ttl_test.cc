#include "workers/ttl.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "model/item_codec.h"
#include "model/number.h"
#include "model/test_values.h"
#include "store/item_counts.h"
#include "store/layout.h"
#include "store/maintainers.h"
#include "store/mutation.h"
#include "store/streams.h"
#include "workers/backfill.h"
#include "workers/pausing_database_testing.h"

namespace fdyno::workers {
namespace {

const store::TableScope kScope{store::kSharedAccount, "us-east-1"};

using test::N;
using test::S;

using model::AttributeValue;
using model::Item;

constexpr int64_t kNowMs = 1'800'000'000'000;
constexpr int64_t kNowS = kNowMs / 1000;
const store::QualifiedName kTable{std::string(store::kSharedAccount), "us-east-1", "t"};

// What the backfill worker (workers/backfill.h) did on the TTL part of table "t".
struct TtlBackfill {
  int items = 0;           // items visited
  bool enabled = false;    // the part finished: TTL ENABLED
  bool elsewhere = false;  // another owner held the lease
};

// The backfill worker's steps on the TTL part of table "t", pages of 5 items, under
// options.lease, until the part finishes or another owner holds its lease.
Result<TtlBackfill> BackfillTtl(kv::Database& db, store::Catalog& catalog,
                                const TtlOptions& options) {
  BackfillOptions backfill;
  backfill.page_items = 5;
  backfill.lease = options.lease;
  TtlBackfill out;
  for (;;) {
    FDYNO_ASSIGN_OR_RETURN(StepResult step,
                           RunIndexStep(db, catalog, kTable, store::kExpiryIndexPart, backfill));
    out.items += step.items;
    out.elsewhere = step.elsewhere;
    out.enabled = step.finished;
    if (step.elsewhere || step.finished) return out;
  }
}

// A table "t" (pk S) with a NEW_AND_OLD_IMAGES stream, written through the mutation path.
class TtlWorkerTest : public ::testing::Test {
 protected:
  TtlWorkerTest()
      : clock_(kNowMs), db_(kv::OpenMemoryEngine({.clock = &clock_})), catalog_(&clock_) {
    options_.clock = &clock_;
    options_.delete_batch = 7;
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      store::TableInfo t;
      t.region = "us-east-1";
      t.name = "t";
      t.key_schema.hash = {"pk", store::ScalarType::kS};
      t.attribute_definitions = {{"pk", store::ScalarType::kS}};
      t.stream = {true, store::StreamViewType::kNewAndOldImages, "label", 0, 1};
      FDYNO_ASSIGN_OR_RETURN(auto created, catalog_.Create(tx, t, {}));
      store::TableInfo with_stream = *created;
      FDYNO_RETURN_IF_ERROR(store::SyncStream(tx, nullptr, &with_stream, 1, kNowMs));
      return catalog_.Update(tx, with_stream);
    });
    EXPECT_TRUE(st.ok()) << st.error().message;
  }

  std::shared_ptr<const store::TableInfo> Table() {
    return *kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
      return catalog_.Find(tx, kScope, "t");
    });
  }

  void Put(const std::string& pk, std::optional<int64_t> exp) {
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto table, catalog_.Find(tx, kScope, "t"));
      Item item{{"pk", S(pk)}};
      if (exp) item["exp"] = N(*exp);
      FDYNO_ASSIGN_OR_RETURN(
          store::CurrentItem current,
          store::ReadCurrent(tx, *table, store::ItemStorageKey(*table, item), false));
      store::Mutation m({.now_ms = clock_.WallMillis()});
      m.Stage(*table, std::move(current), item);
      FDYNO_ASSIGN_OR_RETURN(store::Written written, m.Write(tx));
      (void)written;
      return Status::Ok();
    });
    ASSERT_TRUE(st.ok()) << st.error().message;
  }

  void EnableTtl() {
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto table, catalog_.Find(tx, kScope, "t"));
      store::TableInfo t = *table;
      t.ttl = {store::TtlStatus::kEnabling, "exp", kNowMs};
      return catalog_.Update(tx, t);
    });
    ASSERT_TRUE(st.ok());
  }

  std::set<std::string> Keys() {
    std::set<std::string> out;
    auto table = Table();
    auto tx = db_->CreateTransaction();
    auto [begin, end] = store::layout::Items(table->id).Range();
    Result<kv::RangeResult> r = tx->GetRange(begin, end);
    EXPECT_TRUE(r.ok());
    for (const kv::KeyValue& kv : r->kvs) {
      Result<model::Item> item = model::DecodeStoredItem(*store::WholeImage(kv.value).value());
      out.insert(std::get<std::string>(item->at("pk").v));
    }
    return out;
  }

  std::vector<store::ChangeRecord> Records() {
    auto table = Table();
    auto tx = db_->CreateTransaction();
    auto [begin, end] = store::SlotRange(table->stream.stream_id, 0);
    Result<kv::RangeResult> r = tx->GetRange(begin, end);
    store::RecordAssembler a;
    std::vector<store::ChangeRecord> out;
    for (const kv::KeyValue& kv : r->kvs) {
      auto rec = a.Add(table->stream.stream_id, 0, kv);
      if (rec.ok() && *rec) out.push_back(*store::DecodeChangeRecord((*rec)->bytes));
    }
    return out;
  }

  ManualClock clock_;
  std::unique_ptr<kv::Database> db_;
  store::Catalog catalog_;
  TtlOptions options_;
};

TEST_F(TtlWorkerTest, BackfillCoversTheItemsThatExistedThenEnables) {
  for (int i = 0; i < 23; ++i)
    Put("old" + std::to_string(i), i % 2 ? std::optional(kNowS - 10) : std::nullopt);
  EnableTtl();
  Put("during", kNowS - 10);  // written while ENABLING: indexed by the write itself
  Result<TtlBackfill> r = BackfillTtl(*db_, catalog_, options_);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->enabled);
  EXPECT_EQ(r->items, 24);
  EXPECT_EQ(Table()->ttl.status, store::TtlStatus::kEnabled);
  Result<TtlStats> swept = SweepTable(*db_, catalog_, kTable, options_);
  ASSERT_TRUE(swept.ok());
  EXPECT_EQ(swept->deleted, 12);  // 11 odd old items and "during"
  EXPECT_EQ(Keys().size(), 12u);
  EXPECT_FALSE(Keys().contains("during"));
}

TEST_F(TtlWorkerTest, SweepDeletesOnlyWhatHasExpiredAndRecordsItAsTimeToLive) {
  EnableTtl();
  ASSERT_TRUE(BackfillTtl(*db_, catalog_, options_).ok());
  Put("past", kNowS - 1);
  Put("now", kNowS);  // this very second: not yet
  Put("future", kNowS + 100);
  Put("ancient", kNowS - store::kTtlIgnoreOlderThanSeconds - 10);  // ignored
  Put("none", std::nullopt);
  Result<TtlStats> r = SweepTable(*db_, catalog_, kTable, options_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->deleted, 1);
  EXPECT_EQ(Keys(), (std::set<std::string>{"now", "future", "ancient", "none"}));
  std::vector<store::ChangeRecord> records = Records();
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.back().event, store::StreamEvent::kRemove);
  EXPECT_EQ(records.back().source, store::ChangeSource::kTimeToLive);
  EXPECT_EQ(std::get<std::string>(records.back().keys.at("pk").v), "past");
  clock_.Advance(std::chrono::seconds(101));
  ASSERT_TRUE(SweepTable(*db_, catalog_, kTable, options_).ok());
  EXPECT_EQ(Keys(), (std::set<std::string>{"ancient", "none"}));
  auto tx = db_->CreateTransaction();
  EXPECT_EQ(store::ReadItemCounts(*tx, *Table())->table, 2);
}

// An item refreshed after the sweeper read the expiry index, before its delete transaction:
// the delete reads the item again and leaves it.
TEST_F(TtlWorkerTest, ARefreshBetweenTheIndexReadAndTheDeleteIsKept) {
  EnableTtl();
  ASSERT_TRUE(BackfillTtl(*db_, catalog_, options_).ok());
  Put("a", kNowS - 5);
  Put("b", kNowS - 5);
  Result<std::vector<store::ExpiryEntry>> entries =
      ReadExpiredEntries(*db_, catalog_, kTable, kNowMs, 10);
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 2u);
  Put("a", kNowS + 3600);  // refreshed
  Result<int> deleted = DeleteIfExpired(*db_, catalog_, kTable, *entries, kNowMs);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 1);
  EXPECT_EQ(Keys(), std::set<std::string>{"a"});
}

// Seeded random interleavings of the sweep's two steps with writes: between the index read and
// the delete transaction, random items get a new expiry (in the future, or another time in the
// past) or are deleted. An item whose expiry is in the future when its delete transaction runs
// is never deleted; every item still expired then is.
TEST_F(TtlWorkerTest, WritesBetweenTheSweepStepsAreRespected) {
  EnableTtl();
  ASSERT_TRUE(BackfillTtl(*db_, catalog_, options_).ok());
  std::mt19937 rng(7);
  std::map<std::string, std::optional<int64_t>> model;  // pk -> expiry (nullopt: absent)
  for (int i = 0; i < 60; ++i) {
    model["k" + std::to_string(i)] = kNowS - 1 - (i % 5);
    Put("k" + std::to_string(i), model["k" + std::to_string(i)]);
  }
  for (int round = 0; round < 30; ++round) {
    Result<std::vector<store::ExpiryEntry>> entries =
        ReadExpiredEntries(*db_, catalog_, kTable, kNowMs, 1 + static_cast<int>(rng() % 12));
    ASSERT_TRUE(entries.ok());
    for (int w = 0; w < 4; ++w) {
      const std::string pk = "k" + std::to_string(rng() % 60);
      const int64_t exp = rng() % 2 ? kNowS + 100 : kNowS - 2;
      Put(pk, exp);
      model[pk] = exp;
    }
    ASSERT_TRUE(DeleteIfExpired(*db_, catalog_, kTable, *entries, kNowMs).ok());
    // What the model says the delete did: every item it read that is still expired is gone.
    std::set<std::string> keys = Keys();
    for (auto& [pk, exp] : model) {
      if (!exp) {
        EXPECT_FALSE(keys.contains(pk)) << pk;
      } else if (*exp > kNowS) {
        ASSERT_TRUE(keys.contains(pk)) << "round " << round << ": refreshed " << pk << " deleted";
      } else if (!keys.contains(pk)) {
        exp.reset();  // deleted by this round's sweep, while expired
      }
    }
  }
  ASSERT_TRUE(SweepTable(*db_, catalog_, kTable, options_).ok());
  for (const std::string& pk : Keys()) {
    ASSERT_TRUE(model[pk]);
    EXPECT_GT(*model[pk], kNowS) << pk << " expired but not deleted";
  }
}

// Several processes over one database: an owner with its own lease clock and its own view of
// the database (counting the commits it wrote); expiry is decided by the test's clock.
struct TtlOwner {
  TtlOwner(kv::Database* db, const TtlOptions& base, std::string name) : db(db), options(base) {
    options.lease.owner = std::move(name);
    options.lease.clock = &lease_clock;
  }
  ManualClock lease_clock{kNowMs};
  testing::PausingDatabase db;
  TtlOptions options;
};

TEST_F(TtlWorkerTest, LeasedSweepDeletesEachItemOnceAndIsTakenOverAfterItsLeaseExpires) {
  for (int i = 0; i < 20; ++i) Put("gone" + std::to_string(i), kNowS - 3600);
  for (int i = 0; i < 5; ++i) Put("kept" + std::to_string(i), kNowS + 86400);
  EnableTtl();
  ASSERT_TRUE(BackfillTtl(*db_, catalog_, options_).ok());
  TtlOwner a(db_.get(), options_, "a"), b(db_.get(), options_, "b");
  // a deletes one batch, then stops without releasing the table's lease (a dead process).
  auto entries = ReadExpiredEntries(*db_, catalog_, kTable, kNowMs, options_.delete_batch);
  ASSERT_TRUE(entries.ok());
  auto first = DeleteIfExpired(a.db, catalog_, kTable, *entries, kNowMs, a.options.lease);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, 7);
  auto swept = SweepTable(b.db, catalog_, kTable, b.options);
  ASSERT_TRUE(swept.ok());
  EXPECT_EQ(swept->deleted, 0);
  EXPECT_EQ(swept->elsewhere, 1);
  EXPECT_EQ(b.db.commits(), 0);
  b.lease_clock.Advance(std::chrono::milliseconds(10'000));
  swept = SweepTable(b.db, catalog_, kTable, b.options);
  ASSERT_TRUE(swept.ok());
  EXPECT_EQ(swept->deleted, 13);
  EXPECT_EQ(Keys().size(), 5u);
  int removes = 0;
  for (const auto& r : Records()) removes += r.event == store::StreamEvent::kRemove ? 1 : 0;
  EXPECT_EQ(removes, 20);  // each expired item deleted exactly once
  // b's sweep released the lease: a sweeps the next time, finding nothing left.
  swept = SweepTable(a.db, catalog_, kTable, a.options);
  ASSERT_TRUE(swept.ok());
  EXPECT_EQ(swept->elsewhere, 0);
  EXPECT_EQ(swept->deleted, 0);
}

TEST_F(TtlWorkerTest, StaleSweeperResumingAfterItsLeaseWasTakenDeletesNothing) {
  for (int i = 0; i < 20; ++i) Put("gone" + std::to_string(i), kNowS - 3600);
  EnableTtl();
  ASSERT_TRUE(BackfillTtl(*db_, catalog_, options_).ok());
  TtlOwner a(db_.get(), options_, "a"), b(db_.get(), options_, "b");
  auto entries = ReadExpiredEntries(*db_, catalog_, kTable, kNowMs, options_.delete_batch);
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(*DeleteIfExpired(a.db, catalog_, kTable, *entries, kNowMs, a.options.lease), 7);
  // a's next batch pauses before its commit, past its lease, and b takes the table's lease.
  entries = ReadExpiredEntries(*db_, catalog_, kTable, kNowMs, options_.delete_batch);
  ASSERT_TRUE(entries.ok());
  a.db.PauseBeforeNextCommit([&] {
    b.lease_clock.Advance(std::chrono::milliseconds(10'000));
    auto took = kv::Run(b.db, [&](kv::Transaction& tx, const kv::Attempt&) {
      return store::TakeLease(tx, store::TtlLeaseKey(Table()->id), b.options.lease);
    });
    EXPECT_TRUE(took.ok() && *took);
  });
  auto stale = DeleteIfExpired(a.db, catalog_, kTable, *entries, kNowMs, a.options.lease);
  ASSERT_TRUE(stale.ok());
  EXPECT_EQ(*stale, 0);
  EXPECT_EQ(a.db.commits(), 1);
  auto swept = SweepTable(b.db, catalog_, kTable, b.options);
  ASSERT_TRUE(swept.ok());
  EXPECT_EQ(swept->deleted, 13);  // every expired item deleted once
  EXPECT_TRUE(Keys().empty());
}

TEST_F(TtlWorkerTest, LeasedBackfillIsTakenOverAfterItsLeaseExpires) {
  for (int i = 0; i < 23; ++i) Put("old" + std::to_string(i), kNowS - 10);
  EnableTtl();
  TtlOwner a(db_.get(), options_, "a"), b(db_.get(), options_, "b");
  // a took the table's lease and stopped before its first page (a dead process).
  ASSERT_TRUE(kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
                return store::TakeLease(tx, store::TtlLeaseKey(Table()->id), a.options.lease);
              }).ok());
  auto r = BackfillTtl(b.db, catalog_, b.options);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->elsewhere);
  EXPECT_EQ(r->items, 0);
  EXPECT_EQ(Table()->ttl.status, store::TtlStatus::kEnabling);
  b.lease_clock.Advance(std::chrono::milliseconds(10'000));
  r = BackfillTtl(b.db, catalog_, b.options);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->enabled);
  EXPECT_EQ(r->items, 23);
  EXPECT_EQ(Table()->ttl.status, store::TtlStatus::kEnabled);
  EXPECT_EQ(SweepTable(*db_, catalog_, kTable, options_)->deleted, 23);
}

}  // namespace
}  // namespace fdyno::workers
