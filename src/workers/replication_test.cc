#include "workers/replication.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>

#include "kv/engines/faulty/faulty.h"
#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "model/test_values.h"
#include "store/layout.h"
#include "store/mutation.h"
#include "store/replication.h"
#include "workers/tables.h"

namespace fdyno::workers {
namespace {

using model::Item;
using test::S;

constexpr char kEast[] = "us-east-1";
constexpr char kWest[] = "eu-west-1";
constexpr char kAp[] = "ap-southeast-2";

// A table "g" in us-east-1 with items, made global with a replica in eu-west-1 the way
// UpdateTable's ReplicaUpdates makes one (api/replica_updates.h): the new replica CREATING and
// filled from us-east-1, the table UPDATING until then.
class ReplicationWorkerTest : public ::testing::Test {
 protected:
  template <typename F>
  auto Run(F&& body) {
    return kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) { return body(tx); });
  }

  // A copy of us-east-1's table in `region` with `status`, and the group of every replica set
  // to `group` (region, status, filled_from) on every record.
  void SetGroup(
      const std::vector<std::tuple<const char*, store::ReplicaStatus, std::string>>& group) {
    auto done = Run([&](kv::Transaction& tx) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto east, catalog_.Find(tx, {store::kSharedAccount, kEast}, "g"));
      std::vector<store::TableInfo> records;
      std::vector<store::Replica> list;
      for (const auto& [region, status, from] : group) {
        FDYNO_ASSIGN_OR_RETURN(auto t, catalog_.Find(tx, {store::kSharedAccount, region}, "g"));
        if (!t) {
          store::TableInfo copy = *east;
          copy.region = region;
          copy.replicas.clear();
          copy.status = status == store::ReplicaStatus::kCreating ? store::TableStatus::kCreating
                                                                  : store::TableStatus::kActive;
          FDYNO_ASSIGN_OR_RETURN(t, catalog_.Create(tx, copy, {}));
        }
        records.push_back(*t);
        list.push_back({region, t->id, status, from});
      }
      for (store::TableInfo& rec : records) {
        rec.replicas = list;
        FDYNO_RETURN_IF_ERROR(catalog_.Update(tx, rec));
      }
      return Status::Ok();
    });
    ASSERT_TRUE(done.ok()) << done.error().message;
  }

  void CreateEast(int items) {
    store::TableInfo t;
    t.region = kEast;
    t.name = "g";
    t.key_schema.hash = {"pk", store::ScalarType::kS};
    t.attribute_definitions = {{"pk", store::ScalarType::kS}};
    ASSERT_TRUE(Run([&](kv::Transaction& tx) { return catalog_.Create(tx, t, {}); }).ok());
    for (int i = 0; i < items; ++i) {
      Write(kEast, "k" + std::to_string(i), Item{{"pk", S("k" + std::to_string(i))}}, 1);
    }
  }

  void AddWest() {
    auto done = Run([&](kv::Transaction& tx) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto east, catalog_.Find(tx, {store::kSharedAccount, kEast}, "g"));
      store::TableInfo west = *east;
      west.region = kWest;
      west.status = store::TableStatus::kCreating;
      FDYNO_ASSIGN_OR_RETURN(auto made, catalog_.Create(tx, west, {}));
      const std::vector<store::Replica> list = {
          {kWest, made->id, store::ReplicaStatus::kCreating, kEast},
          {kEast, east->id, store::ReplicaStatus::kActive, {}}};
      store::TableInfo e = *east, w = *made;
      e.replicas = w.replicas = list;
      e.status = store::TableStatus::kUpdating;
      FDYNO_RETURN_IF_ERROR(catalog_.Update(tx, e));
      return catalog_.Update(tx, w);
    });
    ASSERT_TRUE(done.ok()) << done.error().message;
  }

  std::shared_ptr<const store::TableInfo> Table(const char* region) {
    auto t = Run([&](kv::Transaction& tx) {
      return catalog_.Find(tx, {store::kSharedAccount, region}, "g");
    });
    EXPECT_TRUE(t.ok());
    return *t;
  }

  // A local write (nullopt: a delete) at wall time now_ms; returns the stamp it got.
  store::ReplicaStamp Write(const char* region, const std::string& pk, std::optional<Item> next,
                            int64_t now_ms) {
    auto stamp = Run([&](kv::Transaction& tx) -> Result<store::ReplicaStamp> {
      FDYNO_ASSIGN_OR_RETURN(auto t, catalog_.Find(tx, {store::kSharedAccount, region}, "g"));
      const std::string key = store::ItemStorageKey(*t, {{"pk", S(pk)}});
      FDYNO_ASSIGN_OR_RETURN(store::CurrentItem c, store::ReadCurrent(tx, *t, key, false));
      store::Mutation m({.now_ms = now_ms});
      m.Stage(*t, std::move(c), next);
      FDYNO_ASSIGN_OR_RETURN(store::Written written, m.Write(tx));
      (void)written;
      FDYNO_ASSIGN_OR_RETURN(auto clock,
                             store::ReadReplicaClock(tx, t->id, store::ItemKeySuffix(t->id, key)));
      return clock ? clock->stamp : store::ReplicaStamp{};
    });
    EXPECT_TRUE(stamp.ok()) << stamp.error().message;
    return *stamp;
  }

  std::map<std::string, Item> Items(const char* region) {
    std::map<std::string, Item> out;
    auto t = Table(region);
    auto done = Run([&](kv::Transaction& tx) -> Status {
      out.clear();
      FDYNO_ASSIGN_OR_RETURN(
          ItemPage page,
          VisitItemPage(tx, *t, "", {100000, 1u << 30}, [&](std::string_view, const Item& item) {
            out[std::get<std::string>(item.at("pk").v)] = item;
            return Status::Ok();
          }));
      (void)page;
      return Status::Ok();
    });
    EXPECT_TRUE(done.ok());
    return out;
  }

  size_t Pending(const char* from, const char* to) {
    auto t = Table(from);
    auto page = Run(
        [&](kv::Transaction& tx) { return store::ReadOutbox(tx, t->id, to, INT64_MAX, 100000); });
    EXPECT_TRUE(page.ok());
    return page->entries.size();
  }

  ReplicationOptions Options() {
    ReplicationOptions o;
    o.delay = std::chrono::milliseconds(0);
    o.page_items = 100;
    return o;
  }

  std::unique_ptr<kv::Database> db_ = kv::OpenMemoryEngine();
  store::Catalog catalog_;
};

TEST_F(ReplicationWorkerTest, ANewReplicaIsFilledPageByPageThenActiveOnEveryRecord) {
  CreateEast(250);
  AddWest();
  const store::QualifiedName east{std::string(store::kSharedAccount), kEast, "g"};
  // One page, then another process's restart would resume from the cursor.
  auto first = ReplicaBackfillStep(*db_, catalog_, east, kWest, Options());
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->done, 100);
  EXPECT_FALSE(first->finished);
  EXPECT_EQ(Items(kWest).size(), 100u);
  EXPECT_EQ(Table(kWest)->status, store::TableStatus::kCreating);

  ASSERT_TRUE(RunAllReplication(*db_, catalog_, Options()).ok());
  EXPECT_EQ(Items(kWest), Items(kEast));
  EXPECT_EQ(Items(kWest).size(), 250u);
  for (const char* region : {kEast, kWest}) {
    auto t = Table(region);
    EXPECT_EQ(t->status, store::TableStatus::kActive) << region;
    ASSERT_EQ(t->replicas.size(), 2u);
    for (const store::Replica& r : t->replicas) {
      EXPECT_EQ(r.status, store::ReplicaStatus::kActive) << region << " " << r.region;
    }
  }
}

TEST_F(ReplicationWorkerTest, ChangesMadeDuringTheBackfillAreNotLost) {
  CreateEast(150);
  AddWest();
  const store::QualifiedName east{std::string(store::kSharedAccount), kEast, "g"};
  ASSERT_TRUE(ReplicaBackfillStep(*db_, catalog_, east, kWest, Options()).ok());
  // k0 was copied, k149 not yet: both change, and k1 goes.
  Write(kEast, "k0", Item{{"pk", S("k0")}, {"v", S("new")}}, 5);
  Write(kEast, "k149", Item{{"pk", S("k149")}, {"v", S("new")}}, 5);
  Write(kEast, "k1", std::nullopt, 5);
  Write(kEast, "fresh", Item{{"pk", S("fresh")}}, 5);
  ASSERT_TRUE(RunAllReplication(*db_, catalog_, Options()).ok());
  EXPECT_EQ(Items(kWest), Items(kEast));
  EXPECT_EQ(Items(kWest).count("k1"), 0u);
  EXPECT_EQ(Items(kWest).at("k149").at("v"), S("new"));
}

// Concurrent writers in both regions, replication interleaved at random, under every retried
// commit fault: both replicas end with, for every item, the write with the greatest stamp, and
// every outbox empty.
TEST_F(ReplicationWorkerTest, BothRegionsConvergeOnTheLastWriterUnderCommitFaults) {
  CreateEast(0);
  AddWest();
  ASSERT_TRUE(RunAllReplication(*db_, catalog_, Options()).ok());
  kv::FaultOptions faults;
  faults.seed = 20261207;
  faults.commit_conflict = 0.1;
  faults.unknown_applied = 0.15;
  faults.unknown_not_applied = 0.1;
  faults.unknown_late = 0.1;
  std::unique_ptr<kv::FaultyDatabase> faulty = kv::WrapFaulty(db_.get(), faults);
  std::mt19937 rng(7);
  std::map<std::string, std::pair<store::ReplicaStamp, std::optional<Item>>> last;
  for (int i = 0; i < 400; ++i) {
    const char* region = rng() % 2 ? kEast : kWest;
    const std::string pk = "k" + std::to_string(rng() % 20);
    std::optional<Item> next;
    if (rng() % 4 != 0) next = Item{{"pk", S(pk)}, {"v", S(std::to_string(i))}};
    // Wall times that repeat and go back, as two regions' clocks would.
    const store::ReplicaStamp stamp = Write(region, pk, next, 1000 + rng() % 50);
    auto& winner = last[pk];
    if (winner.first < stamp) winner = {stamp, next};
    if (rng() % 10 == 0) {
      ASSERT_TRUE(RunAllReplication(*faulty, catalog_, Options()).ok());
    }
  }
  ASSERT_TRUE(RunAllReplication(*faulty, catalog_, Options()).ok());
  EXPECT_GT(faulty->counts().unknown_applied + faulty->counts().unknown_late_applied, 0);
  std::map<std::string, Item> expected;
  for (const auto& [pk, w] : last) {
    if (w.second) expected[pk] = *w.second;
  }
  EXPECT_EQ(Items(kEast), expected);
  EXPECT_EQ(Items(kWest), expected);
  EXPECT_EQ(Pending(kEast, kWest), 0u);
  EXPECT_EQ(Pending(kWest, kEast), 0u);
}

// An item deleted before the new replica joined stays deleted there, though an older write of
// it (a lagging clock's) from a third replica arrives after the backfill.
TEST_F(ReplicationWorkerTest, ANewReplicaGetsTheTombstonesSoOlderWritesStayDeleted) {
  CreateEast(0);
  const auto active = store::ReplicaStatus::kActive;
  SetGroup({{kAp, active, ""}, {kEast, active, ""}});
  Write(kEast, "k", Item{{"pk", S("k")}}, 1);
  Write(kEast, "k", std::nullopt, 10);  // a tombstone at 10 ms
  SetGroup(
      {{kAp, active, ""}, {kEast, active, ""}, {kWest, store::ReplicaStatus::kCreating, kEast}});
  Write(kAp, "k", Item{{"pk", S("k")}, {"v", S("older")}}, 5);  // ap's clock lags
  ASSERT_TRUE(RunAllReplication(*db_, catalog_, Options()).ok());
  EXPECT_EQ(Table(kWest)->status, store::TableStatus::kActive);
  for (const char* region : {kEast, kWest, kAp}) {
    EXPECT_EQ(Items(region).count("k"), 0u) << region;
  }
}

TEST_F(ReplicationWorkerTest, ARemovedReplicaIsDroppedAndTheTableIsRegionalAgain) {
  CreateEast(3);
  AddWest();
  ASSERT_TRUE(RunAllReplication(*db_, catalog_, Options()).ok());
  auto done = Run([&](kv::Transaction& tx) -> Status {
    FDYNO_ASSIGN_OR_RETURN(auto east, catalog_.Find(tx, {store::kSharedAccount, kEast}, "g"));
    return store::UpdateReplicaGroup(tx, catalog_, *east, [](store::TableInfo& t) {
      t.replicas[0].status = store::ReplicaStatus::kDeleting;  // eu-west-1
      if (t.region == kEast) t.status = store::TableStatus::kUpdating;
    });
  });
  ASSERT_TRUE(done.ok());
  Write(kEast, "late", Item{{"pk", S("late")}}, 9);  // not sent to a replica being deleted
  ASSERT_TRUE(RunAllReplication(*db_, catalog_, Options()).ok());
  EXPECT_EQ(Table(kWest), nullptr);
  auto east = Table(kEast);
  EXPECT_TRUE(east->replicas.empty());
  EXPECT_EQ(east->status, store::TableStatus::kActive);
  EXPECT_EQ(Items(kEast).size(), 4u);
  EXPECT_EQ(Pending(kEast, kWest), 0u);
}

}  // namespace
}  // namespace fdyno::workers
