#include "workers/streams.h"

#include <gtest/gtest.h>

#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "model/item_codec.h"
#include "store/layout.h"
#include "store/mutation.h"
#include "workers/pausing_database_testing.h"

namespace fdyno::workers {
namespace {

const store::TableScope kScope{store::kSharedAccount, "us-east-1"};

using model::AttributeValue;
using model::Item;

constexpr int64_t kStartMs = 1'800'000'000'000;

class StreamWorkerTest : public ::testing::Test {
 protected:
  StreamWorkerTest()
      : clock_(kStartMs), db_(kv::OpenMemoryEngine({.clock = &clock_})), catalog_(&clock_) {
    options_.clock = &clock_;
    options_.trim_batch = 4;
    options_.rotation = std::chrono::hours(4);
  }

  // Creates table `name` with its stream enabled as a binary without streams did (no stream
  // id) when `legacy`, else as CreateTable does.
  void CreateTable(const std::string& name, bool legacy = false) {
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      store::TableInfo t;
      t.region = "us-east-1";
      t.name = name;
      t.key_schema.hash = {"pk", store::ScalarType::kS};
      t.attribute_definitions = {{"pk", store::ScalarType::kS}};
      t.stream = {true, store::StreamViewType::kKeysOnly, "label-" + name, 0, 1};
      FDYNO_ASSIGN_OR_RETURN(auto created, catalog_.Create(tx, t, {}));
      if (legacy) return Status::Ok();
      store::TableInfo with_stream = *created;
      FDYNO_RETURN_IF_ERROR(store::SyncStream(tx, nullptr, &with_stream, 1, clock_.WallMillis()));
      return catalog_.Update(tx, with_stream);
    });
    ASSERT_TRUE(st.ok()) << st.error().message;
  }

  std::shared_ptr<const store::TableInfo> Table(const std::string& name) {
    return *kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
      return catalog_.Find(tx, kScope, name);
    });
  }

  void Put(const std::string& table_name, const std::string& pk) {
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto table, catalog_.Find(tx, kScope, table_name));
      Item item{{"pk", AttributeValue::S(pk)}, {"n", AttributeValue::S(std::to_string(++n_))}};
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

  store::StreamView View(int64_t id) {
    auto tx = db_->CreateTransaction();
    return **store::ReadStream(*tx, id);
  }

  size_t RecordCount(int64_t id) {
    auto tx = db_->CreateTransaction();
    auto [begin, end] = store::SlotRange(id, 0);
    return tx->GetRange(begin, end)->kvs.size();
  }

  StreamStats Pass() {
    Result<StreamStats> r = RunStreamPass(*db_, catalog_, options_);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : StreamStats{};
  }

  ManualClock clock_;
  std::unique_ptr<kv::Database> db_;
  store::Catalog catalog_;
  StreamWorkerOptions options_;
  int n_ = 0;
};

TEST_F(StreamWorkerTest, RecordsOlderThan24HoursAreTrimmedAndTheTrimPointMovesPastThem) {
  CreateTable("t");
  const int64_t id = Table("t")->stream.stream_id;
  for (int i = 0; i < 10; ++i) Put("t", "a" + std::to_string(i));
  clock_.Advance(std::chrono::hours(20));
  for (int i = 0; i < 3; ++i) Put("t", "b" + std::to_string(i));
  EXPECT_EQ(Pass().trimmed, 0);
  clock_.Advance(std::chrono::hours(5));  // the first 10 are now 25 hours old
  EXPECT_EQ(Pass().trimmed, 10);
  EXPECT_EQ(RecordCount(id), 3u);
  auto tx = db_->CreateTransaction();
  std::optional<store::Position> trim = *store::ReadTrimPoint(*tx, id, 0);
  ASSERT_TRUE(trim);
  auto [begin, end] = store::SlotRange(id, 0);
  Result<kv::RangeResult> left = tx->GetRange(begin, end);
  EXPECT_GT(*store::RecordPosition(id, 0, left->kvs.front().key), *trim);
}

TEST_F(StreamWorkerTest, ShardsRotateAndEmptyOldGenerationsAreForgotten) {
  CreateTable("t");
  const int64_t id = Table("t")->stream.stream_id;
  Put("t", "x");
  clock_.Advance(std::chrono::hours(3));
  EXPECT_EQ(Pass().rotated, 0);
  clock_.Advance(std::chrono::hours(2));
  EXPECT_EQ(Pass().rotated, 1);
  Put("t", "y");
  store::StreamView view = View(id);
  ASSERT_EQ(view.generations.size(), 2u);
  EXPECT_EQ(store::ShardEnd(view, 0), view.generations[1].start);
  EXPECT_FALSE(store::ShardEnd(view, 1));
  clock_.Advance(std::chrono::hours(30));  // both records trimmed; generation 0 long closed
  StreamStats stats = Pass();
  EXPECT_EQ(stats.trimmed, 2);
  EXPECT_EQ(stats.forgotten, 1);
  view = View(id);
  ASSERT_GE(view.generations.size(), 1u);
  EXPECT_EQ(view.generations[0].number, 1);
}

TEST_F(StreamWorkerTest, DisabledStreamsAreRemoved24HoursLater) {
  CreateTable("t");
  const int64_t id = Table("t")->stream.stream_id;
  Put("t", "x");
  auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    FDYNO_ASSIGN_OR_RETURN(auto t, catalog_.Find(tx, kScope, "t"));
    store::TableInfo after = *t;
    after.stream.enabled = false;
    FDYNO_RETURN_IF_ERROR(store::SyncStream(tx, t.get(), &after, 1, clock_.WallMillis()));
    return catalog_.Update(tx, after);
  });
  ASSERT_TRUE(st.ok());
  clock_.Advance(std::chrono::hours(23));
  EXPECT_EQ(Pass().deleted, 0);
  EXPECT_EQ(RecordCount(id), 1u);
  clock_.Advance(std::chrono::hours(2));
  EXPECT_EQ(Pass().deleted, 1);
  auto tx = db_->CreateTransaction();
  EXPECT_FALSE(*store::ReadStream(*tx, id));
  EXPECT_EQ(RecordCount(id), 0u);
}

TEST_F(StreamWorkerTest, TablesWhoseStreamWasNeverRecordedGetOne) {
  CreateTable("old", /*legacy=*/true);
  ASSERT_EQ(Table("old")->stream.stream_id, 0);
  EXPECT_EQ(Pass().migrated, 1);
  const int64_t id = Table("old")->stream.stream_id;
  ASSERT_NE(id, 0);
  Put("old", "x");
  EXPECT_EQ(RecordCount(id), 1u);
  EXPECT_EQ(Pass().migrated, 0);
}

// One of several processes over one database: its own lease clock and view of the database.
struct StreamOwner {
  StreamOwner(kv::Database* inner, const StreamWorkerOptions& base, std::string name)
      : db(inner), options(base) {
    options.lease.owner = std::move(name);
    options.lease.clock = &lease_clock;
  }
  StreamStats Pass(store::Catalog& catalog) {
    Result<StreamStats> r = RunStreamPass(db, catalog, options);
    EXPECT_TRUE(r.ok());
    if (r.ok()) trimmed += r->trimmed;
    return r.ok() ? *r : StreamStats{};
  }
  ManualClock lease_clock{kStartMs};
  testing::PausingDatabase db;
  StreamWorkerOptions options;
  int trimmed = 0;
};

TEST_F(StreamWorkerTest, LeasedTrimmingIsDoneByOneOwnerAndTakenOverAfterItsLeaseExpires) {
  CreateTable("t");
  const int64_t id = Table("t")->stream.stream_id;
  for (int i = 0; i < 10; ++i) Put("t", "a" + std::to_string(i));
  clock_.Advance(std::chrono::hours(25));
  StreamOwner a(db_.get(), options_, "a"), b(db_.get(), options_, "b");
  // While a trims (between its batches), b leaves the stream to it.
  a.db.PauseBeforeNextCommit([&] { EXPECT_EQ(b.Pass(catalog_).elsewhere, 1); }, 2);
  EXPECT_EQ(a.Pass(catalog_).elsewhere, 0);
  EXPECT_EQ(a.trimmed, 10);
  EXPECT_EQ(b.trimmed, 0);
  EXPECT_EQ(b.db.commits(), 0);
  EXPECT_EQ(RecordCount(id), 0u);
  // a takes the stream's lease and stops (a dead process): b takes over after the lease.
  for (int i = 0; i < 6; ++i) Put("t", "c" + std::to_string(i));
  clock_.Advance(std::chrono::hours(25));
  ASSERT_TRUE(kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
                return store::TakeLease(tx, StreamLeaseKey(id), a.options.lease);
              }).ok());
  EXPECT_EQ(b.Pass(catalog_).elsewhere, 1);
  EXPECT_EQ(RecordCount(id), 6u);
  b.lease_clock.Advance(std::chrono::milliseconds(10'000));
  EXPECT_EQ(b.Pass(catalog_).elsewhere, 0);
  EXPECT_EQ(b.trimmed, 6);
  EXPECT_EQ(RecordCount(id), 0u);
}

TEST_F(StreamWorkerTest, StaleTrimmerResumingAfterItsLeaseWasTakenCommitsNothing) {
  CreateTable("t");
  const int64_t id = Table("t")->stream.stream_id;
  for (int i = 0; i < 10; ++i) Put("t", "a" + std::to_string(i));
  clock_.Advance(std::chrono::hours(25));
  StreamOwner a(db_.get(), options_, "a"), b(db_.get(), options_, "b");
  // a's first batch commits; its second pauses before its commit, past its lease, and b takes
  // the stream's lease.
  a.db.PauseBeforeNextCommit(
      [&] {
        b.lease_clock.Advance(std::chrono::milliseconds(10'000));
        auto took = kv::Run(b.db, [&](kv::Transaction& tx, const kv::Attempt&) {
          return store::TakeLease(tx, StreamLeaseKey(id), b.options.lease);
        });
        EXPECT_TRUE(took.ok() && *took);
      },
      2);
  EXPECT_EQ(a.Pass(catalog_).elsewhere, 1);
  EXPECT_EQ(a.db.commits(), 1);
  EXPECT_EQ(a.trimmed, 4);
  EXPECT_EQ(b.Pass(catalog_).elsewhere, 0);
  EXPECT_EQ(b.trimmed, 6);  // every record trimmed once
  EXPECT_EQ(RecordCount(id), 0u);
}

}  // namespace
}  // namespace fdyno::workers
