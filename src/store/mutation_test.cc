#include "store/mutation.h"

#include <gtest/gtest.h>

#include "kv/testing/memory_engine.h"
#include "model/number.h"
#include "model/test_values.h"
#include "store/item_counts.h"
#include "store/ttl.h"

namespace fdyno::store {
namespace {

using test::N;
using test::S;

using model::AttributeValue;
using model::Item;

// pk (S) + sk (S), an LSI on lsk, a stream (NEW_AND_OLD_IMAGES) and TTL on `exp`.
class MutationTest : public ::testing::Test {
 protected:
  MutationTest() : db_(kv::OpenMemoryEngine()) {
    table_.name = "t";
    table_.id = 11;
    table_.key_schema.hash = {"pk", ScalarType::kS};
    table_.key_schema.range = model::KeyAttribute{"sk", ScalarType::kS};
    SecondaryIndex lsi;
    lsi.name = "by_lsk";
    lsi.id = 1;
    lsi.key_schema.hash = {"pk", ScalarType::kS};
    lsi.key_schema.range = model::KeyAttribute{"lsk", ScalarType::kS};
    table_.local_indexes.push_back(lsi);
    table_.ttl = {TtlStatus::kEnabled, "exp", 0};
    auto tx = db_->CreateTransaction();
    StreamInfo info;
    info.table_name = "t";
    info.key_schema = table_.key_schema;
    table_.stream = {true, StreamViewType::kNewAndOldImages, "l", *CreateStream(*tx, info), 1};
    EXPECT_TRUE(tx->Commit().ok());
  }

  static Item Key(const std::string& pk, const std::string& sk) {
    return {{"pk", S(pk)}, {"sk", S(sk)}};
  }

  // Applies one transaction of changes (key -> new image or nullopt).
  Written Apply(const std::vector<std::pair<Item, std::optional<Item>>>& changes,
                uint64_t limit = kItemCollectionSizeLimitBytes) {
    auto tx = db_->CreateTransaction();
    Mutation m({.now_ms = 1000, .item_collection_limit_bytes = limit});
    for (const auto& [key, next] : changes) {
      Result<CurrentItem> c = ReadCurrent(*tx, table_, ItemStorageKey(table_, key), false);
      EXPECT_TRUE(c.ok());
      m.Stage(table_, std::move(c).value(), next);
    }
    Result<Written> w = m.Write(*tx);
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE(tx->Commit().ok());
    return *w;
  }

  std::vector<ChangeRecord> Records() {
    auto tx = db_->CreateTransaction();
    auto [begin, end] = SlotRange(table_.stream.stream_id, 0);
    RecordAssembler a;
    std::vector<ChangeRecord> out;
    Result<kv::RangeResult> range = tx->GetRange(begin, end);
    EXPECT_TRUE(range.ok());
    for (const kv::KeyValue& kv : range->kvs) {
      auto r = a.Add(table_.stream.stream_id, 0, kv);
      if (r.ok() && *r) out.push_back(*DecodeChangeRecord((*r)->bytes));
    }
    return out;
  }

  int64_t Count() {
    auto tx = db_->CreateTransaction();
    return ReadItemCounts(*tx, table_)->table;
  }

  size_t Expiries() {
    auto tx = db_->CreateTransaction();
    auto [begin, end] = ExpiryIndexRange(table_.id);
    return tx->GetRange(begin, end)->kvs.size();
  }

  std::unique_ptr<kv::Database> db_;
  TableInfo table_;
};

TEST_F(MutationTest, EveryDerivedStructureFollowsTheChanges) {
  Item a = Key("p", "1");
  a["lsk"] = S("x");
  a["exp"] = N(2'000'000'000);
  Apply({{Key("p", "1"), a}, {Key("p", "2"), Key("p", "2")}});
  EXPECT_EQ(Count(), 2);
  EXPECT_EQ(Expiries(), 1u);
  std::vector<ChangeRecord> records = Records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].event, StreamEvent::kInsert);
  EXPECT_EQ(records[0].new_image, a);  // staged order is commit order within the transaction
  EXPECT_EQ(records[1].keys, Key("p", "2"));

  Item a2 = a;
  a2.erase("exp");
  Apply({{Key("p", "1"), a2}, {Key("p", "2"), std::nullopt}});
  EXPECT_EQ(Count(), 1);
  EXPECT_EQ(Expiries(), 0u);
  records = Records();
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[2].event, StreamEvent::kModify);
  EXPECT_EQ(records[2].old_image, a);
  EXPECT_EQ(records[3].event, StreamEvent::kRemove);
}

TEST_F(MutationTest, ChangesThatChangeNothingWriteNoRecord) {
  Item a = Key("p", "1");
  a["v"] = S("same");
  Apply({{Key("p", "1"), a}});
  Apply({{Key("p", "1"), a}, {Key("p", "9"), std::nullopt}});  // identical put, absent delete
  EXPECT_EQ(Records().size(), 1u);
  EXPECT_EQ(Count(), 1);
}

TEST_F(MutationTest, AWriteOverTheCollectionLimitNamesTheGrowingChangesAndWritesNothing) {
  Item small = Key("p", "1");
  Apply({{Key("p", "1"), small}}, 1000);
  Item big = Key("p", "2");
  big["v"] = S(std::string(2000, 'x'));
  Written w = Apply({{Key("q", "1"), Key("q", "1")}, {Key("p", "2"), big}}, 1000);
  EXPECT_EQ(w.collection_limit_exceeded, std::vector<size_t>{1});
  EXPECT_EQ(Count(), 1);
  EXPECT_EQ(Records().size(), 1u);
}

TEST_F(MutationTest, ATableWithNothingDerivedKeepsItsCountWithoutDecoding) {
  TableInfo plain;
  plain.name = "plain";
  plain.id = 12;
  plain.key_schema = table_.key_schema;
  ASSERT_FALSE(NeedsOldImage(plain));
  auto write = [&](std::optional<Item> next) {
    auto tx = db_->CreateTransaction();
    Mutation m({.now_ms = 1});
    Result<CurrentItem> c = ReadCurrent(*tx, plain, ItemStorageKey(plain, Key("k", "1")), false);
    ASSERT_TRUE(c.ok());
    EXPECT_FALSE(c->image);
    m.Stage(plain, *c, next);
    ASSERT_TRUE(m.Write(*tx)->ok());
    ASSERT_TRUE(tx->Commit().ok());
  };
  write(Key("k", "1"));
  write(Key("k", "1"));
  auto tx = db_->CreateTransaction();
  EXPECT_EQ(ReadItemCounts(*tx, plain)->table, 1);
  tx.reset();
  write(std::nullopt);
  tx = db_->CreateTransaction();
  EXPECT_EQ(ReadItemCounts(*tx, plain)->table, 0);
}

TEST_F(MutationTest, TheOldImageIsDecodedExactlyWhenAMaintainerOfTheTableNeedsIt) {
  TableInfo t;
  t.key_schema = table_.key_schema;
  EXPECT_FALSE(NeedsOldImage(t));  // the item count needs only whether the item existed
  t.pitr.enabled = true;
  EXPECT_FALSE(NeedsOldImage(t));  // the history keeps the stored bytes
  TableInfo ttl = t;
  ttl.ttl = {TtlStatus::kEnabling, "exp", 0};
  EXPECT_TRUE(NeedsOldImage(ttl));
  TableInfo stream = t;
  stream.stream = table_.stream;
  EXPECT_TRUE(NeedsOldImage(stream));
  TableInfo lsi = t;
  lsi.local_indexes = table_.local_indexes;
  EXPECT_TRUE(NeedsOldImage(lsi));
}

TEST_F(MutationTest, NewImagesWithWronglyTypedIndexKeysAreRejectedWithTheirCause) {
  Item bad = Key("p", "1");
  bad["lsk"] = N(1);
  Status st = ValidateNewImage(table_, bad);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().cause, ErrorCause::kIndexKeyMismatch);
}

}  // namespace
}  // namespace fdyno::store
