#include "workers/purge.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "store/layout.h"
#include "workers/pausing_database_testing.h"
#include "workers/purge_testing.h"

namespace fdyno::workers {
namespace {

const store::TableScope kScope{store::kSharedAccount, "us-east-1"};

constexpr int64_t kNowMs = 1'800'000'000'000;

// One of several processes over one database: its own catalog, lease clock and view of the
// database, purging 4 keys per transaction.
struct PurgeOwner {
  PurgeOwner(kv::Database* inner, std::string name)
      : db(inner), catalog(&lease_clock, store::CatalogOptions{4}) {
    lease.owner = std::move(name);
    lease.clock = &lease_clock;
  }
  Result<int> Purge() { return catalog.PurgeDropped(db, lease); }
  ManualClock lease_clock{kNowMs};
  testing::PausingDatabase db;
  store::Catalog catalog;
  store::LeaseOptions lease;
};

class PurgeTest : public ::testing::Test {
 protected:
  // Creates table "t" with 25 keys of data and drops it; returns its id.
  int64_t DropTableWithData() {
    auto id = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<int64_t> {
      store::TableInfo t;
      t.region = "us-east-1";
      t.name = "t";
      t.key_schema.hash = {"pk", store::ScalarType::kS};
      t.attribute_definitions = {{"pk", store::ScalarType::kS}};
      FDYNO_ASSIGN_OR_RETURN(auto created, catalog_.Create(tx, t, {}));
      for (int i = 0; i < 25; ++i) {
        tx.Set(store::layout::Items(created->id).Pack(kv::Tuple{i}), "v");
      }
      return created->id;
    });
    EXPECT_TRUE(id.ok());
    auto dropped = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto t, catalog_.Find(tx, kScope, "t"));
      return catalog_.Drop(tx, *t);
    });
    EXPECT_TRUE(dropped.ok());
    return *id;
  }

  size_t KeysLeft(int64_t id) { return testing::TableKeys(*db_, id); }
  bool Pending(int64_t id) { return testing::PurgePending(*db_, id); }

  ManualClock clock_{kNowMs};
  std::unique_ptr<kv::Database> db_ = kv::OpenMemoryEngine();
  store::Catalog catalog_{&clock_};
};

TEST_F(PurgeTest, APurgeIsDoneByOneOwnerAndTakenOverAfterItsLeaseExpires) {
  const int64_t id = DropTableWithData();
  PurgeOwner a(db_.get(), "a"), b(db_.get(), "b");
  // While a purges (between its batches), b leaves the table to it.
  a.db.PauseBeforeNextCommit([&] { EXPECT_EQ(*b.Purge(), 0); }, 2);
  ASSERT_EQ(*a.Purge(), 1);
  EXPECT_EQ(b.db.commits(), 0);
  EXPECT_EQ(a.db.commits(), 8);  // 7 batches of at most 4 keys, and the end
  EXPECT_EQ(KeysLeft(id), 0u);
  EXPECT_FALSE(Pending(id));
  // a takes the next dropped table's lease and stops (a dead process); b takes over after it.
  const int64_t next = DropTableWithData();
  ASSERT_TRUE(kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
                return store::TakeLease(tx, store::Catalog::PurgeLeaseKey(next), a.lease);
              }).ok());
  EXPECT_EQ(*b.Purge(), 0);
  EXPECT_EQ(KeysLeft(next), 25u);
  b.lease_clock.Advance(std::chrono::milliseconds(10'000));
  EXPECT_EQ(*b.Purge(), 1);
  EXPECT_EQ(KeysLeft(next), 0u);
  EXPECT_FALSE(Pending(next));
}

TEST_F(PurgeTest, StalePurgerResumingAfterItsLeaseWasTakenCommitsNothing) {
  const int64_t id = DropTableWithData();
  PurgeOwner a(db_.get(), "a"), b(db_.get(), "b");
  a.db.PauseBeforeNextCommit(
      [&] {
        b.lease_clock.Advance(std::chrono::milliseconds(10'000));
        auto took = kv::Run(b.db, [&](kv::Transaction& tx, const kv::Attempt&) {
          return store::TakeLease(tx, store::Catalog::PurgeLeaseKey(id), b.lease);
        });
        EXPECT_TRUE(took.ok() && *took);
      },
      2);
  EXPECT_EQ(*a.Purge(), 0);
  EXPECT_EQ(a.db.commits(), 1);  // its first batch only
  EXPECT_EQ(KeysLeft(id), 21u);
  EXPECT_EQ(*b.Purge(), 1);
  EXPECT_EQ(KeysLeft(id), 0u);
}

// A purge told to stop (a shutdown) returns after its current transaction; the next call
// resumes it from what is left.
TEST_F(PurgeTest, AStoppedPurgeReturnsBetweenTransactionsAndResumesLater) {
  const int64_t id = DropTableWithData();
  PurgeOwner a(db_.get(), "a");
  std::atomic<bool> stop{false};
  a.db.PauseBeforeNextCommit([&] { stop = true; }, 2);
  auto stopped = a.catalog.PurgeDropped(a.db, a.lease, &stop);
  ASSERT_TRUE(stopped.ok()) << stopped.error().message;
  EXPECT_EQ(*stopped, 0);
  EXPECT_EQ(a.db.commits(), 2);  // the transaction running when told to stop ends
  EXPECT_EQ(KeysLeft(id), 17u);
  EXPECT_TRUE(Pending(id));
  stop = false;
  EXPECT_EQ(*a.catalog.PurgeDropped(a.db, a.lease, &stop), 1);
  EXPECT_EQ(a.db.commits(), 8);  // 7 batches of at most 4 keys, and the end: none redone
  EXPECT_EQ(KeysLeft(id), 0u);
  EXPECT_FALSE(Pending(id));
}

TEST_F(PurgeTest, WorkerThreadPurgesWhatWasLeft) {
  const int64_t id = DropTableWithData();
  PurgeOptions options;
  options.interval = std::chrono::milliseconds(1);
  PurgeWorker worker(db_.get(), &catalog_, options);
  worker.Start();
  // The bound only keeps a broken worker from hanging the test.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (Pending(id) && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  worker.Stop();
  EXPECT_FALSE(Pending(id));
  EXPECT_EQ(KeysLeft(id), 0u);
}

}  // namespace
}  // namespace fdyno::workers
