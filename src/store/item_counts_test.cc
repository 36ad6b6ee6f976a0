// Item counts (store/item_counts.h): the table and index counters under puts, updates that
// add, move and drop index keys, and deletes; the journal of a backfilling index; reading and
// failing closed. The backfill's use of the journal under concurrent writers is tested in
// workers/backfill_test.cc.
#include "store/item_counts.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "model/key_codec.h"
#include "model/number.h"
#include "model/test_values.h"
#include "store/indexes.h"
#include "store/items.h"
#include "store/layout.h"

namespace fdyno::store {
namespace {

using test::S;

using model::AttributeValue;
using model::Item;

TableInfo MakeTable(bool backfilling) {
  TableInfo t;
  t.name = "counted";
  t.id = 7;
  t.key_schema.hash = {"pk", ScalarType::kS};
  SecondaryIndex g;
  g.name = "by_g";
  g.id = 1;
  g.key_schema.hash = {"g", ScalarType::kS};
  g.status = backfilling ? IndexStatus::kCreating : IndexStatus::kActive;
  g.backfilling = backfilling;
  SecondaryIndex gone = g;
  gone.name = "gone";
  gone.id = 2;
  gone.status = IndexStatus::kDeleting;
  gone.backfilling = false;
  t.global_indexes = {g, gone};
  return t;
}

Item It(const std::string& pk, std::optional<std::string> g = std::nullopt) {
  Item item{{"pk", S(pk)}};
  if (g) item["g"] = S(*g);
  return item;
}

class ItemCountsTest : public ::testing::Test {
 protected:
  void Change(const TableInfo& t, std::optional<Item> old_item, std::optional<Item> new_item) {
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      RecordItemCountChange(tx, t, old_item ? &*old_item : nullptr,
                            new_item ? &*new_item : nullptr);
      return Status();
    });
    ASSERT_TRUE(st.ok()) << st.error().message;
  }
  ItemCounts Read(const TableInfo& t) {
    auto r = kv::Run(
        *db_, [&](kv::Transaction& tx, const kv::Attempt&) { return ReadItemCounts(tx, t); });
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? r.value() : ItemCounts{};
  }
  std::unique_ptr<kv::Database> db_ = kv::OpenMemoryEngine();
};

TEST_F(ItemCountsTest, TableAndIndexCountsFollowEveryKindOfWrite) {
  const TableInfo t = MakeTable(false);
  Change(t, std::nullopt, It("a", "x"));  // new, indexed
  Change(t, std::nullopt, It("b"));       // new, not indexed (sparse)
  ItemCounts c = Read(t);
  EXPECT_EQ(c.table, 2);
  EXPECT_EQ(c.Index(1), 1);
  EXPECT_EQ(c.Index(2), 0);               // DELETING indexes are not maintained
  Change(t, It("a", "x"), It("a", "y"));  // index key moves: same count
  Change(t, It("b"), It("b", "x"));       // gains an entry
  c = Read(t);
  EXPECT_EQ(c.table, 2);
  EXPECT_EQ(c.Index(1), 2);
  Change(t, It("a", "y"), It("a"));  // loses its entry
  Change(t, It("b", "x"), std::nullopt);
  c = Read(t);
  EXPECT_EQ(c.table, 1);
  EXPECT_EQ(c.Index(1), 0);
  // A wrong-typed index key has no entry (writers reject it before; the count agrees).
  Item n = It("c");
  n["g"] = AttributeValue::N(model::Number::Parse("1").value());
  Change(t, std::nullopt, n);
  EXPECT_EQ(Read(t).Index(1), 0);
  // Nothing is journaled for an ACTIVE index.
  auto journal = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<size_t> {
    auto [b, e] = layout::ItemCountJournal(t.id, 1).Range();
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(b, e));
    return rr.kvs.size();
  });
  ASSERT_TRUE(journal.ok());
  EXPECT_EQ(journal.value(), 0u);
}

TEST_F(ItemCountsTest, BackfillingIndexJournalsPerItemAndAPageTakesItsRange) {
  const TableInfo t = MakeTable(true);
  Change(t, It("a", "x"), It("a"));       // -1 for "a" (an entry it may not have had)
  Change(t, std::nullopt, It("b", "x"));  // +1 for "b"
  Change(t, It("c", "x"), It("c", "y"));  // 0: nothing journaled
  Change(t, It("d", "x"), std::nullopt);  // -1 for "d"
  auto key_of = [&](const std::string& pk) {
    return ItemKey(t.id, model::EncodeKeyValue(S(pk)), nullptr);
  };
  // A page over the items' whole key range takes every delta: -1 + 1 - 1.
  const auto items = layout::Items(t.id).Range();  // not bound: clang 14 cannot capture bindings
  const auto& items_begin = items.first;
  const auto& items_end = items.second;
  auto taken = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
    return TakeBackfillJournal(tx, t.id, 1, items_begin, items_end);
  });
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  EXPECT_EQ(taken.value(), -1);
  // Taken means cleared.
  taken = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
    return TakeBackfillJournal(tx, t.id, 1, items_begin, items_end);
  });
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(taken.value(), 0);
  // A page takes only its own range: [key(b), key(b) + 0xff) holds b's delta alone.
  Change(t, std::nullopt, It("b", "x"));
  Change(t, It("a"), It("a", "x"));
  taken = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
    return TakeBackfillJournal(tx, t.id, 1, key_of("b"), ItemRangeEnd(key_of("b")));
  });
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(taken.value(), 1);
  auto rest = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
    return TakeBackfillJournal(tx, t.id, 1, items_begin, items_end);
  });
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest.value(), 1);  // a's
  // The counter itself carries every delta (-1 +1 -1 +1 +1), clamped at 0 when read.
  EXPECT_EQ(Read(t).Index(1), 1);
  EXPECT_EQ(Read(t).table, 1);  // the table deltas: +1 (b) -1 (d) +1 (b again)
}

TEST_F(ItemCountsTest, NegativeCountersReadAsZeroAndMalformedOnesFailClosed) {
  const TableInfo t = MakeTable(false);
  auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    AddItemCount(tx, t.id, kTableCountId, -3);
    return Status();
  });
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(Read(t).table, 0);
  st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    tx.Set(ItemCountKey(t.id, 1), "bad");
    return Status();
  });
  ASSERT_TRUE(st.ok());
  auto r =
      kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) { return ReadItemCounts(tx, t); });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kInternalServerError);
  // Index deletion removes the counter and the journal.
  st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    ClearIndexCounts(tx, t.id, 1);
    return Status();
  });
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(Read(t).Index(1), 0);
}

}  // namespace
}  // namespace fdyno::store
