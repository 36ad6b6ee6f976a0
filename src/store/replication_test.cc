#include "store/replication.h"

#include <gtest/gtest.h>

#include "kv/testing/memory_engine.h"
#include "kv/tuple.h"
#include "model/item_codec.h"
#include "model/test_values.h"
#include "store/mutation.h"

namespace fdyno::store {
namespace {

using model::Item;
using test::S;

constexpr char kEast[] = "us-east-1";
constexpr char kWest[] = "eu-west-1";

// One global table's two replicas, keyed by pk (S), stored in one engine.
class ReplicationTest : public ::testing::Test {
 protected:
  ReplicationTest() : db_(kv::OpenMemoryEngine()) {
    east_ = Replica(kEast, 21);
    west_ = Replica(kWest, 22);
  }

  static TableInfo Replica(const char* region, int64_t id) {
    TableInfo t;
    t.name = "g";
    t.region = region;
    t.id = id;
    t.key_schema.hash = {"pk", ScalarType::kS};
    t.replicas = {{kWest, 22, ReplicaStatus::kActive, {}}, {kEast, 21, ReplicaStatus::kActive, {}}};
    return t;
  }

  static Item Key(const std::string& pk) { return {{"pk", S(pk)}}; }
  static std::string Suffix(const TableInfo& t, const std::string& pk) {
    return std::string(ItemKeySuffix(t.id, ItemStorageKey(t, Key(pk))));
  }

  // A local write of `pk` (nullopt: a delete) to `table` at wall time now_ms.
  void Write(const TableInfo& table, const std::string& pk, std::optional<Item> next,
             int64_t now_ms) {
    auto tx = db_->CreateTransaction();
    Mutation m({.now_ms = now_ms});
    Result<CurrentItem> c = ReadCurrent(*tx, table, ItemStorageKey(table, Key(pk)), false);
    ASSERT_TRUE(c.ok());
    m.Stage(table, std::move(c).value(), std::move(next));
    ASSERT_TRUE(m.Write(*tx).ok());
    ASSERT_TRUE(tx->Commit().ok());
  }

  bool Apply(const TableInfo& target, const std::string& pk, ReplicaStamp stamp,
             std::optional<Item> image) {
    auto tx = db_->CreateTransaction();
    Result<bool> applied =
        ApplyReplicated(*tx, target, Suffix(target, pk), stamp, image, /*now_ms=*/1);
    EXPECT_TRUE(applied.ok()) << applied.error().message;
    EXPECT_TRUE(tx->Commit().ok());
    return applied.ok() && *applied;
  }

  std::optional<ReplicaClock> Clock(const TableInfo& t, const std::string& pk) {
    auto tx = db_->CreateTransaction();
    auto clock = ReadReplicaClock(*tx, t.id, Suffix(t, pk));
    EXPECT_TRUE(clock.ok());
    return *clock;
  }

  OutboxPage Pending(const TableInfo& t, const char* region, int64_t up_to_us = INT64_MAX) {
    auto tx = db_->CreateTransaction();
    auto page = ReadOutbox(*tx, t.id, region, up_to_us, 100);
    EXPECT_TRUE(page.ok());
    return *page;
  }

  std::optional<Item> Get(const TableInfo& t, const std::string& pk) {
    auto tx = db_->CreateTransaction();
    auto c = ReadCurrent(*tx, t, ItemStorageKey(t, Key(pk)), true);
    EXPECT_TRUE(c.ok());
    return c->image;
  }

  std::unique_ptr<kv::Database> db_;
  TableInfo east_, west_;
};

TEST_F(ReplicationTest, LocalWriteStampsItsItemAndWaitsInTheOtherReplicasOutbox) {
  Write(east_, "a", Item{{"pk", S("a")}, {"v", S("1")}}, 1000);
  auto clock = Clock(east_, "a");
  ASSERT_TRUE(clock.has_value());
  EXPECT_EQ(clock->stamp, (ReplicaStamp{1'000'000, kEast}));
  EXPECT_FALSE(clock->deleted);
  OutboxPage west = Pending(east_, kWest);
  ASSERT_EQ(west.entries.size(), 1u);
  EXPECT_EQ(west.entries[0].time_us, 1'000'000);
  EXPECT_EQ(west.entries[0].suffix, Suffix(east_, "a"));
  ASSERT_TRUE(west.entries[0].image.has_value());
  EXPECT_EQ(*model::DecodeStoredItem(*west.entries[0].image),
            (Item{{"pk", S("a")}, {"v", S("1")}}));
  EXPECT_TRUE(Pending(east_, kEast).entries.empty());  // never to itself

  Write(east_, "a", std::nullopt, 1001);
  west = Pending(east_, kWest);
  ASSERT_EQ(west.entries.size(), 2u);
  EXPECT_FALSE(west.entries[1].image.has_value());  // a delete
  EXPECT_TRUE(Clock(east_, "a")->deleted);
}

TEST_F(ReplicationTest, OneItemsWritesAreOrderedWhenTheWallClockGoesBack) {
  Write(east_, "a", Item{{"pk", S("a")}}, 2000);
  Write(east_, "a", Item{{"pk", S("a")}, {"v", S("later")}}, 1000);
  EXPECT_EQ(Clock(east_, "a")->stamp.time_us, 2'000'001);
}

TEST_F(ReplicationTest, TheOutboxGivesOnlyWhatIsDue) {
  Write(east_, "a", Item{{"pk", S("a")}}, 1000);
  Write(east_, "b", Item{{"pk", S("b")}}, 3000);
  OutboxPage due = Pending(east_, kWest, 2'000'000);
  ASSERT_EQ(due.entries.size(), 1u);
  EXPECT_EQ(due.entries[0].suffix, Suffix(east_, "a"));
  EXPECT_TRUE(due.more);
}

TEST_F(ReplicationTest, TheLastWriterWinsByTimeThenRegion) {
  const Item first{{"pk", S("a")}, {"v", S("first")}};
  EXPECT_TRUE(Apply(west_, "a", {5, kEast}, first));
  EXPECT_FALSE(Apply(west_, "a", {4, "us-west-2"}, Item{{"pk", S("a")}, {"v", S("older")}}));
  EXPECT_FALSE(Apply(west_, "a", {5, kEast}, Item{{"pk", S("a")}, {"v", S("again")}}));
  EXPECT_EQ(Get(west_, "a"), first);
  const Item tie{{"pk", S("a")}, {"v", S("tie")}};
  EXPECT_TRUE(Apply(west_, "a", {5, "us-west-2"}, tie));  // same time, greater region
  EXPECT_EQ(Get(west_, "a"), tie);
  EXPECT_EQ(Clock(west_, "a")->stamp, (ReplicaStamp{5, "us-west-2"}));
}

TEST_F(ReplicationTest, AReplicatedWriteGoesToNoOutbox) {
  EXPECT_TRUE(Apply(west_, "a", {5, kEast}, Item{{"pk", S("a")}}));
  EXPECT_TRUE(Pending(west_, kEast).entries.empty());
  // A local write after it is stamped after it, whatever the wall clock says.
  Write(west_, "a", Item{{"pk", S("a")}, {"v", S("2")}}, 0);
  EXPECT_EQ(Clock(west_, "a")->stamp, (ReplicaStamp{6, kWest}));
  EXPECT_EQ(Pending(west_, kEast).entries.size(), 1u);
}

TEST_F(ReplicationTest, ADeleteBeatsTheOlderWritesThatArriveAfterIt) {
  EXPECT_TRUE(Apply(west_, "a", {10, kEast}, std::nullopt));  // nothing there: a tombstone
  EXPECT_TRUE(Clock(west_, "a")->deleted);
  EXPECT_FALSE(Apply(west_, "a", {8, kEast}, Item{{"pk", S("a")}}));
  EXPECT_FALSE(Get(west_, "a").has_value());
  EXPECT_TRUE(Apply(west_, "a", {11, kEast}, Item{{"pk", S("a")}}));
  EXPECT_TRUE(Get(west_, "a").has_value());
}

TEST_F(ReplicationTest, ADeletingReplicaGetsNoMoreChanges) {
  east_.replicas[0].status = ReplicaStatus::kDeleting;  // eu-west-1
  Write(east_, "a", Item{{"pk", S("a")}}, 1000);
  EXPECT_TRUE(Pending(east_, kWest).entries.empty());
}

TEST_F(ReplicationTest, ARegionalTableKeepsNoClock) {
  east_.replicas.clear();
  Write(east_, "a", Item{{"pk", S("a")}}, 1000);
  EXPECT_FALSE(Clock(east_, "a").has_value());
}

TEST_F(ReplicationTest, CorruptOutboxEntriesAreRefused) {
  auto tx = db_->CreateTransaction();
  std::string key = Outbox(east_.id, kWest).key();
  kv::AppendPackedInt(&key, 1);
  tx->Set(key, std::string("\x01\x01short", 7));
  Result<OutboxPage> page = ReadOutbox(*tx, east_.id, kWest, INT64_MAX, 10);
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.error().type, ErrorType::kInternalServerError);
}

}  // namespace
}  // namespace fdyno::store
