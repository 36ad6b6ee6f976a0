#include "store/item_collections.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "model/item_size.h"
#include "model/key_codec.h"
#include "model/test_values.h"
#include "store/layout.h"

namespace fdyno::store {
namespace {

using test::N;
using test::S;

using model::AttributeValue;
using model::Item;

// pk (S) + sk (N); LSI keys (pk, lsk S) KEYS_ONLY; LSI inc (pk, lsk2 N) INCLUDE x; GSI g ALL
// (does not count).
TableInfo MakeTable(int64_t id = 7) {
  TableInfo t;
  t.region = "us-east-1";
  t.name = "t";
  t.id = id;
  t.key_schema.hash = {"pk", ScalarType::kS};
  t.key_schema.range = model::KeyAttribute{"sk", ScalarType::kN};
  SecondaryIndex keys;
  keys.name = "keys";
  keys.id = 1;
  keys.key_schema.hash = {"pk", ScalarType::kS};
  keys.key_schema.range = model::KeyAttribute{"lsk", ScalarType::kS};
  keys.projection.type = ProjectionType::kKeysOnly;
  t.local_indexes.push_back(keys);
  SecondaryIndex inc;
  inc.name = "inc";
  inc.id = 2;
  inc.key_schema.hash = {"pk", ScalarType::kS};
  inc.key_schema.range = model::KeyAttribute{"lsk2", ScalarType::kN};
  inc.projection.type = ProjectionType::kInclude;
  inc.projection.non_key_attributes = {"x"};
  t.local_indexes.push_back(inc);
  SecondaryIndex g;
  g.name = "g";
  g.id = 3;
  g.key_schema.hash = {"x", ScalarType::kS};
  t.global_indexes.push_back(g);
  return t;
}

Item MakeItem(const std::string& pk, int sk, const std::string& payload) {
  return Item{{"pk", S(pk)}, {"sk", N(sk)}, {"payload", S(payload)}};
}

std::string Enc(const std::string& pk) { return model::EncodeKeyValue(S(pk)); }

class ItemCollectionsTest : public ::testing::Test {
 protected:
  // Applies one change in its own transaction; returns the collections over the limit.
  Result<std::vector<ItemCollectionRef>> Change(const TableInfo& t, const Item* old_item,
                                                const Item* new_item,
                                                uint64_t limit = kItemCollectionSizeLimitBytes) {
    return kv::Run(
        *db_,
        [&](kv::Transaction& tx, const kv::Attempt&) -> Result<std::vector<ItemCollectionRef>> {
          ItemCollectionChanges changes;
          changes.Record(t, old_item, new_item);
          return changes.Apply(tx, limit);
        });
  }

  uint64_t Size(int64_t table_id, const std::string& pk) {
    auto r = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
      return ReadItemCollectionSize(tx, table_id, Enc(pk));
    });
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : ~uint64_t{0};
  }

  bool KeyExists(int64_t table_id, const std::string& pk) {
    auto r = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
      return tx.Get(ItemCollectionSizeKey(table_id, Enc(pk)));
    });
    EXPECT_TRUE(r.ok());
    return r.ok() && r->has_value();
  }

  std::unique_ptr<kv::Database> db_ = kv::OpenMemoryEngine();
};

TEST(ItemCollectionBytesTest, BaseItemPlusLocalIndexEntriesWithOverhead) {
  TableInfo t = MakeTable();
  Item plain = MakeItem("a", 1, "hello");
  // No local index key attribute: only the base item counts (the GSI never counts).
  Item with_x = plain;
  with_x["x"] = S("gsi-key");
  EXPECT_EQ(ItemCollectionBytes(t, with_x), model::ItemSize(with_x));

  // KEYS_ONLY entry: table key + index key.
  Item one = plain;
  one["lsk"] = S("l");
  Item keys_entry{{"pk", S("a")}, {"sk", N(1)}, {"lsk", S("l")}};
  EXPECT_EQ(ItemCollectionBytes(t, one),
            model::ItemSize(one) + model::ItemSize(keys_entry) + kLocalIndexEntryOverheadBytes);

  // Both indexes; INCLUDE projects x.
  Item both = one;
  both["lsk2"] = N(5);
  both["x"] = S("xx");
  Item keys_entry2{{"pk", S("a")}, {"sk", N(1)}, {"lsk", S("l")}};
  Item inc_entry{{"pk", S("a")}, {"sk", N(1)}, {"lsk2", N(5)}, {"x", S("xx")}};
  EXPECT_EQ(ItemCollectionBytes(t, both), model::ItemSize(both) + model::ItemSize(keys_entry2) +
                                              model::ItemSize(inc_entry) +
                                              2 * kLocalIndexEntryOverheadBytes);

  // Tables without local indexes have no collections.
  TableInfo no_lsi = MakeTable();
  no_lsi.local_indexes.clear();
  EXPECT_FALSE(HasItemCollections(no_lsi));
  EXPECT_EQ(ItemCollectionBytes(no_lsi, both), 0u);
}

TEST(ItemCollectionBytesTest, SizeEstimateRangeIsTheGigabyteBracket) {
  EXPECT_EQ(SizeEstimateRangeGB(0), std::make_pair(0.0, 1.0));
  EXPECT_EQ(SizeEstimateRangeGB(1000), std::make_pair(0.0, 1.0));
  EXPECT_EQ(SizeEstimateRangeGB((uint64_t{1} << 30) - 1), std::make_pair(0.0, 1.0));
  EXPECT_EQ(SizeEstimateRangeGB(uint64_t{1} << 30), std::make_pair(1.0, 2.0));
  EXPECT_EQ(SizeEstimateRangeGB(kItemCollectionSizeLimitBytes), std::make_pair(10.0, 11.0));
}

TEST(ItemCollectionBytesTest, ExactMarginIsHalfTheLimitOrAllOfASmallOne) {
  EXPECT_EQ(ItemCollectionExactMargin(kItemCollectionSizeLimitBytes), uint64_t{5} << 30);
  EXPECT_EQ(ItemCollectionExactMargin(4000), 4000u);
  EXPECT_EQ(ItemCollectionExactMargin(uint64_t{64} << 20), uint64_t{64} << 20);
  EXPECT_EQ(ItemCollectionExactMargin(uint64_t{128} << 20), uint64_t{64} << 20);
}

TEST_F(ItemCollectionsTest, AddUpdateRemoveKeepsTheSizeExact) {
  TableInfo t = MakeTable();
  Item a = MakeItem("p", 1, "aaaa");
  a["lsk"] = S("k");
  Item b = MakeItem("p", 2, "bbbbbbbb");
  Item other = MakeItem("q", 1, "other");
  const uint64_t sa = ItemCollectionBytes(t, a), sb = ItemCollectionBytes(t, b);

  ASSERT_TRUE(Change(t, nullptr, &a).ok());
  EXPECT_EQ(Size(t.id, "p"), sa);
  ASSERT_TRUE(Change(t, nullptr, &b).ok());
  ASSERT_TRUE(Change(t, nullptr, &other).ok());
  EXPECT_EQ(Size(t.id, "p"), sa + sb);
  EXPECT_EQ(Size(t.id, "q"), ItemCollectionBytes(t, other));

  // Update: a loses its index entry and grows its payload.
  Item a2 = MakeItem("p", 1, std::string(300, 'z'));
  ASSERT_TRUE(Change(t, &a, &a2).ok());
  EXPECT_EQ(Size(t.id, "p"), ItemCollectionBytes(t, a2) + sb);
  EXPECT_LT(ItemCollectionBytes(t, a), ItemCollectionBytes(t, a2));

  // Removing every item clears the key.
  ASSERT_TRUE(Change(t, &a2, nullptr).ok());
  EXPECT_EQ(Size(t.id, "p"), sb);
  ASSERT_TRUE(Change(t, &b, nullptr).ok());
  EXPECT_EQ(Size(t.id, "p"), 0u);
  EXPECT_FALSE(KeyExists(t.id, "p"));
  EXPECT_TRUE(KeyExists(t.id, "q"));
}

TEST_F(ItemCollectionsTest, SeveralChangesOfOneTransactionNetOut) {
  TableInfo t = MakeTable();
  Item a = MakeItem("p", 1, "a"), b = MakeItem("p", 2, "b"), c = MakeItem("r", 1, "c");
  auto r = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<uint64_t> {
    ItemCollectionChanges changes;
    changes.Record(t, nullptr, &a);
    changes.Record(t, nullptr, &b);
    changes.Record(t, nullptr, &c);
    EXPECT_EQ(changes.Delta(CollectionOf(t, a)),
              static_cast<int64_t>(ItemCollectionBytes(t, a) + ItemCollectionBytes(t, b)));
    FDYNO_ASSIGN_OR_RETURN(auto exceeded, changes.Apply(tx, kItemCollectionSizeLimitBytes));
    EXPECT_TRUE(exceeded.empty());
    return changes.SizeAfter(tx, CollectionOf(t, b));
  });
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, ItemCollectionBytes(t, a) + ItemCollectionBytes(t, b));
  EXPECT_EQ(Size(t.id, "p"), *r);
  EXPECT_EQ(Size(t.id, "r"), ItemCollectionBytes(t, c));
}

TEST_F(ItemCollectionsTest, GrowthPastTheLimitIsRefusedAndShrinkingIsAlwaysAllowed) {
  TableInfo t = MakeTable();
  Item small = MakeItem("p", 1, "x");
  Item big = MakeItem("p", 2, std::string(500, 'y'));
  const uint64_t limit = ItemCollectionBytes(t, small) + ItemCollectionBytes(t, big);
  ASSERT_TRUE(Change(t, nullptr, &small, limit).ok());
  ASSERT_TRUE(Change(t, nullptr, &big, limit).ok());  // exactly at the limit: allowed
  EXPECT_EQ(Size(t.id, "p"), limit);

  Item one_more = MakeItem("p", 3, "z");
  auto refused = Change(t, nullptr, &one_more, limit);
  ASSERT_TRUE(refused.ok()) << refused.error().message;
  ASSERT_EQ(refused->size(), 1u);
  EXPECT_EQ((*refused)[0], CollectionOf(t, one_more));
  EXPECT_EQ(Size(t.id, "p"), limit);  // nothing buffered

  // Another collection is unaffected.
  Item elsewhere = MakeItem("q", 3, "z");
  auto ok = Change(t, nullptr, &elsewhere, limit);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->empty());

  // Lower the limit below the current size: a shrinking update and a delete still succeed, a
  // same-size rewrite too; growth does not.
  const uint64_t lower = limit / 2;
  Item big_smaller = MakeItem("p", 2, std::string(400, 'y'));
  auto shrink = Change(t, &big, &big_smaller, lower);
  ASSERT_TRUE(shrink.ok());
  EXPECT_TRUE(shrink->empty());
  auto same = Change(t, &big_smaller, &big_smaller, lower);
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->empty());
  auto grow = Change(t, &small, &one_more, lower);  // same size: "z" vs "x"
  ASSERT_TRUE(grow.ok());
  EXPECT_TRUE(grow->empty());
  Item small_bigger = MakeItem("p", 3, "zz");
  auto grow2 = Change(t, &one_more, &small_bigger, lower);
  ASSERT_TRUE(grow2.ok());
  EXPECT_EQ(grow2->size(), 1u);
  auto del = Change(t, &big_smaller, nullptr, lower);
  ASSERT_TRUE(del.ok());
  EXPECT_TRUE(del->empty());
  EXPECT_EQ(Size(t.id, "p"), ItemCollectionBytes(t, one_more));
}

// Far from the limit, writers of different items of one partition do not conflict; near it,
// the second of two concurrent growing writes conflicts and (retried) sees the first.
TEST_F(ItemCollectionsTest, ConcurrentWritersConflictOnlyNearTheLimit) {
  TableInfo t = MakeTable();
  Item a = MakeItem("p", 1, "a"), b = MakeItem("p", 2, "b");
  auto concurrent = [&](uint64_t limit) -> Status {
    auto t1 = db_->CreateTransaction();
    auto t2 = db_->CreateTransaction();
    ItemCollectionChanges c1, c2;
    c1.Record(t, nullptr, &a);
    c2.Record(t, nullptr, &b);
    auto r1 = c1.Apply(*t1, limit);
    auto r2 = c2.Apply(*t2, limit);
    EXPECT_TRUE(r1.ok() && r1->empty());
    EXPECT_TRUE(r2.ok() && r2->empty());
    FDYNO_RETURN_IF_ERROR(t1->Commit());
    return t2->Commit();
  };
  const uint64_t sa = ItemCollectionBytes(t, a), sb = ItemCollectionBytes(t, b);
  Status far = concurrent(kItemCollectionSizeLimitBytes);
  EXPECT_TRUE(far.ok()) << far.error().message;
  EXPECT_EQ(Size(t.id, "p"), sa + sb);

  // Near the limit: a large item fills most of the collection, and both small writes fit
  // together, so only the conflict makes the second one see the first.
  Item base = MakeItem("p", 0, std::string(4000, 'f'));
  ASSERT_TRUE(Change(t, nullptr, &base).ok());
  const uint64_t sbase = ItemCollectionBytes(t, base);
  ASSERT_TRUE(Change(t, &a, nullptr).ok());
  ASSERT_TRUE(Change(t, &b, nullptr).ok());
  ASSERT_EQ(Size(t.id, "p"), sbase);
  const uint64_t limit = sbase + sa + sb;
  ASSERT_GT(sbase + sa + ItemCollectionExactMargin(limit), limit);
  Status near = concurrent(limit);
  ASSERT_FALSE(near.ok());
  EXPECT_TRUE(near.error().is_kv());
  EXPECT_EQ(near.error().kv_code, kv::kNotCommitted);
  EXPECT_EQ(Size(t.id, "p"), sbase + sa);
}

TEST_F(ItemCollectionsTest, MalformedSizeFailsClosed) {
  TableInfo t = MakeTable();
  ASSERT_TRUE(kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                tx.Set(ItemCollectionSizeKey(t.id, Enc("p")), "abc");
                return Status();
              }).ok());
  Item a = MakeItem("p", 1, "a");
  auto r = Change(t, nullptr, &a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kInternalServerError);
}

TEST_F(ItemCollectionsTest, TablesWithoutLocalIndexesWriteNothing) {
  TableInfo t = MakeTable();
  t.local_indexes.clear();
  Item a = MakeItem("p", 1, "a");
  auto r = Change(t, nullptr, &a, 1);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
  EXPECT_FALSE(KeyExists(t.id, "p"));
}

TEST_F(ItemCollectionsTest, DroppingTheTableRemovesItsSizes) {
  Catalog catalog;
  TableInfo t = MakeTable(0);
  t.attribute_definitions = {{"pk", ScalarType::kS},
                             {"sk", ScalarType::kN},
                             {"lsk", ScalarType::kS},
                             {"lsk2", ScalarType::kN},
                             {"x", ScalarType::kS}};
  auto created = kv::Run(
      *db_, [&](kv::Transaction& tx, const kv::Attempt&) { return catalog.Create(tx, t, {}); });
  ASSERT_TRUE(created.ok()) << created.error().message;
  const TableInfo& stored = **created;
  Item a = MakeItem("p", 1, "a"), b = MakeItem("q", 1, "b");
  ASSERT_TRUE(Change(stored, nullptr, &a).ok());
  ASSERT_TRUE(Change(stored, nullptr, &b).ok());
  ASSERT_TRUE(KeyExists(stored.id, "p"));
  ASSERT_TRUE(kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
                return catalog.Drop(tx, stored);
              }).ok());
  auto purged = catalog.PurgeDropped(*db_);
  ASSERT_TRUE(purged.ok()) << purged.error().message;
  EXPECT_FALSE(KeyExists(stored.id, "p"));
  EXPECT_FALSE(KeyExists(stored.id, "q"));
  auto left = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<size_t> {
    auto [begin, end] = layout::ItemCollections(stored.id).Range();
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(begin, end));
    return rr.kvs.size();
  });
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(*left, 0u);
}

}  // namespace
}  // namespace fdyno::store
