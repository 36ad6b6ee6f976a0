#include "store/indexes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "model/item_codec.h"
#include "model/key_codec.h"
#include "model/test_values.h"
#include "store/items.h"
#include "store/layout.h"

namespace fdyno::store {
namespace {

using test::N;
using test::S;

using model::AttributeValue;
using model::Item;

// pk (S) + sk (N); LSI by_lsk (pk, lsk S) KEYS_ONLY; GSI sparse (g S) ALL; GSI inc (g2 N, g3 S)
// INCLUDE x; GSI multi with a multi-attribute key (m1 S, m2 N; m3 N, m4 S) KEYS_ONLY.
TableInfo MakeTable() {
  TableInfo t;
  t.name = "t";
  t.id = 7;
  t.key_schema.hash = {"pk", ScalarType::kS};
  t.key_schema.range = model::KeyAttribute{"sk", ScalarType::kN};
  SecondaryIndex lsi;
  lsi.name = "by_lsk";
  lsi.id = 1;
  lsi.key_schema.hash = {"pk", ScalarType::kS};
  lsi.key_schema.range = model::KeyAttribute{"lsk", ScalarType::kS};
  lsi.projection.type = ProjectionType::kKeysOnly;
  t.local_indexes.push_back(lsi);
  SecondaryIndex sparse;
  sparse.name = "sparse";
  sparse.id = 2;
  sparse.key_schema.hash = {"g", ScalarType::kS};
  t.global_indexes.push_back(sparse);
  SecondaryIndex inc;
  inc.name = "inc";
  inc.id = 3;
  inc.key_schema.hash = {"g2", ScalarType::kN};
  inc.key_schema.range = model::KeyAttribute{"g3", ScalarType::kS};
  inc.projection.type = ProjectionType::kInclude;
  inc.projection.non_key_attributes = {"x"};
  t.global_indexes.push_back(inc);
  SecondaryIndex multi;
  multi.name = "multi";
  multi.id = 4;
  multi.key_schema.hash = {"m1", ScalarType::kS};
  multi.key_schema.more_hash = {{"m2", ScalarType::kN}};
  multi.key_schema.range = model::KeyAttribute{"m3", ScalarType::kN};
  multi.key_schema.more_range = {{"m4", ScalarType::kS}};
  multi.projection.type = ProjectionType::kKeysOnly;
  t.global_indexes.push_back(multi);
  return t;
}

std::string BaseKey(const TableInfo& t, const Item& item) {
  std::string h = model::EncodeKeyValue(item.at("pk"));
  std::string r = model::EncodeKeyValue(item.at("sk"));
  return ItemKey(t.id, h, &r);
}

// Every entry of one index, as stored: key -> image.
std::map<std::string, Item> ReadIndex(kv::Database& db, const TableInfo& t,
                                      const SecondaryIndex& index) {
  auto result = kv::Run(
      db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<std::map<std::string, Item>> {
        std::map<std::string, Item> out;
        auto [begin, end] = layout::Index(t.id, index.id).Range();
        FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(begin, end));
        ItemAssembler assembler;
        for (const kv::KeyValue& kv : rr.kvs) {
          FDYNO_ASSIGN_OR_RETURN(auto whole, assembler.Add(kv));
          if (whole) {
            FDYNO_ASSIGN_OR_RETURN(Item item, model::DecodeStoredItem(whole->image));
            out.emplace(whole->key, std::move(item));
          }
        }
        return out;
      });
  EXPECT_TRUE(result.ok());
  return result.ok() ? std::move(result).value() : std::map<std::string, Item>{};
}

// The test's own statement of what an index holds, independent of ComputeIndexEntry and
// ProjectForIndex: an item has an entry when it has every index key attribute (each of a
// multi-attribute key's partition and sort attributes) with the
// index's type; the entry's image is the whole item (ALL), the table and index keys
// (KEYS_ONLY), or those and the listed attributes that the item has (INCLUDE). Entry keys
// come from IndexEntryKey, the layout's documented key (its order is checked black-box by
// the index model test through Query).
std::optional<Item> OwnEntryImage(const TableInfo& t, const SecondaryIndex& index,
                                  const Item& item) {
  std::vector<model::KeyAttribute> index_keys = {index.key_schema.hash};
  for (const model::KeyAttribute& k : index.key_schema.more_hash) index_keys.push_back(k);
  if (index.key_schema.range) index_keys.push_back(*index.key_schema.range);
  for (const model::KeyAttribute& k : index.key_schema.more_range) index_keys.push_back(k);
  for (const model::KeyAttribute& k : index_keys) {
    auto it = item.find(k.name);
    if (it == item.end() || static_cast<int>(it->second.type()) != static_cast<int>(k.type)) {
      return std::nullopt;
    }
  }
  if (index.projection.type == ProjectionType::kAll) return item;
  std::vector<std::string> kept = {t.key_schema.hash.name};
  if (t.key_schema.range) kept.push_back(t.key_schema.range->name);
  for (const model::KeyAttribute& k : index_keys) kept.push_back(k.name);
  if (index.projection.type == ProjectionType::kInclude) {
    kept.insert(kept.end(), index.projection.non_key_attributes.begin(),
                index.projection.non_key_attributes.end());
  }
  Item image;
  for (const std::string& name : kept) {
    auto it = item.find(name);
    if (it != item.end()) image[name] = it->second;
  }
  return image;
}

// The index recomputed from the base items by the test's own rules.
std::map<std::string, Item> Expected(const TableInfo& t, const SecondaryIndex& index,
                                     const std::map<std::string, Item>& items) {
  std::map<std::string, Item> out;
  for (const auto& [k, item] : items) {
    if (auto image = OwnEntryImage(t, index, item)) {
      out.emplace(IndexEntryKey(t.id, index, t.key_schema, item), std::move(*image));
    }
  }
  return out;
}

void CheckAll(kv::Database& db, const TableInfo& t, const std::map<std::string, Item>& items,
              uint64_t seed) {
  for (const auto* list : {&t.local_indexes, &t.global_indexes}) {
    for (const SecondaryIndex& index : *list) {
      EXPECT_EQ(ReadIndex(db, t, index), Expected(t, index, items))
          << "index " << index.name << " seed " << seed;
    }
  }
}

TEST(IndexesTest, SeededRandomModel) {
  const TableInfo t = MakeTable();
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    std::unique_ptr<kv::Database> db = kv::OpenMemoryEngine();
    std::mt19937_64 rng(seed);
    std::map<std::string, Item> model;  // base key -> item
    auto pick = [&](int n) { return static_cast<int>(rng() % n); };
    for (int step = 0; step < 400; ++step) {
      Item item;
      item["pk"] = S("p" + std::to_string(pick(3)));
      item["sk"] = N(pick(8));
      const std::string key = BaseKey(t, item);
      const bool del = pick(5) == 0;
      if (!del) {
        if (pick(4) != 0) item["lsk"] = S("l" + std::to_string(pick(4)));
        if (pick(2) == 0) item["g"] = S("g" + std::to_string(pick(3)));  // sparse
        if (pick(3) != 0) item["g2"] = N(pick(3));
        if (pick(3) != 0) item["g3"] = S("v" + std::to_string(pick(3)));
        if (pick(2) == 0) item["x"] = N(pick(100));
        // The multi-attribute key: any attribute may be missing or (m2) of another type.
        if (pick(5) != 0) item["m1"] = S("a" + std::to_string(pick(2)));
        if (pick(5) != 0) item["m2"] = pick(6) == 0 ? S("wrong") : N(pick(2));
        if (pick(5) != 0) item["m3"] = N(pick(4) - 2);
        if (pick(5) != 0) item["m4"] = S("z" + std::to_string(pick(3)));
        if (pick(2) == 0) item["y"] = S(std::string(pick(2) == 0 ? 10 : 150'000, 'y'));
        ASSERT_TRUE(ValidateIndexKeys(t, item).ok());
      }
      auto status = kv::Run(*db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
        FDYNO_ASSIGN_OR_RETURN(std::optional<StoredItem> stored, ReadItem(tx, key));
        std::optional<Item> old;
        if (stored) {
          FDYNO_ASSIGN_OR_RETURN(Item decoded, model::DecodeStoredItem(stored->image));
          old = std::move(decoded);
        }
        if (del) {
          DeleteItem(tx, key, OldItem::Of(stored));
          UpdateIndexes(tx, t, old ? &*old : nullptr, nullptr);
        } else {
          WriteItem(tx, key, model::EncodeStoredItem(item), OldItem::Of(stored));
          UpdateIndexes(tx, t, old ? &*old : nullptr, &item);
        }
        return Status();
      });
      ASSERT_TRUE(status.ok()) << status.error().message;
      if (del) {
        model.erase(key);
      } else {
        model[key] = item;
      }
      if (step % 100 == 99) CheckAll(*db, t, model, seed);
    }
    CheckAll(*db, t, model, seed);
  }
}

TEST(IndexesTest, ProjectionsAndSparseness) {
  const TableInfo t = MakeTable();
  Item item{{"pk", S("a")}, {"sk", N(1)}, {"lsk", S("z")}, {"x", N(5)}, {"y", S("w")}};
  auto lsi = ComputeIndexEntry(t, t.local_indexes[0], item);
  ASSERT_TRUE(lsi);
  EXPECT_EQ(lsi->image, (Item{{"pk", S("a")}, {"sk", N(1)}, {"lsk", S("z")}}));
  EXPECT_FALSE(ComputeIndexEntry(t, t.global_indexes[0], item));  // no g: sparse
  EXPECT_FALSE(ComputeIndexEntry(t, t.global_indexes[1], item));  // no g2/g3
  item["g2"] = N(3);
  item["g3"] = S("q");
  auto inc = ComputeIndexEntry(t, t.global_indexes[1], item);
  ASSERT_TRUE(inc);
  EXPECT_EQ(inc->image,
            (Item{{"pk", S("a")}, {"sk", N(1)}, {"g2", N(3)}, {"g3", S("q")}, {"x", N(5)}}));
}

// A multi-attribute key's entries: one partition per combination of partition key values,
// ordered by the sort key attributes in sequence, then the table key; an item missing any key
// attribute, or with a mistyped one, has no entry.
TEST(IndexesTest, MultiAttributeKeyEntries) {
  const TableInfo t = MakeTable();
  const SecondaryIndex& multi = t.global_indexes[2];
  auto entry = [&](int sk, std::string m1, int m2, int m3, std::string m4) {
    Item item{{"pk", S("p")}, {"sk", N(sk)}, {"m1", S(m1)},
              {"m2", N(m2)},  {"m3", N(m3)}, {"m4", S(m4)}};
    auto e = ComputeIndexEntry(t, multi, item);
    EXPECT_TRUE(e);
    return e ? e->key : std::string();
  };
  // Within partition (a, 1): m3 numerically first, then m4, then the table key.
  std::vector<std::string> ordered = {entry(9, "a", 1, -5, "z"), entry(1, "a", 1, 2, "b"),
                                      entry(2, "a", 1, 2, "c"), entry(3, "a", 1, 2, "c"),
                                      entry(0, "a", 1, 10, "a")};
  EXPECT_TRUE(std::is_sorted(ordered.begin(), ordered.end()));
  const std::vector<AttributeValue> partition = {S("a"), N(1)};
  auto [begin, end] = IndexPartitionRange(t.id, multi.id, partition);
  for (const std::string& k : ordered) {
    EXPECT_TRUE(begin <= k && k < end);
  }
  // Another value of either partition attribute is another partition.
  for (const std::string& k : {entry(1, "a", 2, 2, "b"), entry(1, "b", 1, 2, "b")}) {
    EXPECT_FALSE(begin <= k && k < end);
  }
  // Sort key prefixes: m3 = 2 holds exactly the three entries with m3 = 2.
  const std::string m3 = IndexSortPrefix(t.id, multi.id, partition, {N(2)});
  for (size_t i = 0; i < ordered.size(); ++i) {
    const bool has_prefix = ordered[i].rfind(m3, 0) == 0;
    EXPECT_EQ(has_prefix, i >= 1 && i <= 3) << i;
  }
  // Sparse: a missing or mistyped key attribute.
  Item missing{{"pk", S("p")}, {"sk", N(1)}, {"m1", S("a")}, {"m2", N(1)}, {"m3", N(1)}};
  EXPECT_FALSE(ComputeIndexEntry(t, multi, missing));
  Item mistyped = missing;
  mistyped["m4"] = S("x");
  mistyped["m2"] = S("1");
  EXPECT_FALSE(ComputeIndexEntry(t, multi, mistyped));
  EXPECT_TRUE(ValidateIndexKeys(t, mistyped).ok());
  mistyped["m2"] = N(1);
  auto e = ComputeIndexEntry(t, multi, mistyped);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->image, (Item{{"pk", S("p")},
                            {"sk", N(1)},
                            {"m1", S("a")},
                            {"m2", N(1)},
                            {"m3", N(1)},
                            {"m4", S("x")}}));
}

// DynamoDB names the alphabetically first index with a bad key attribute; an update is
// checked only on the attributes it changed, with its own wording for an empty value.
TEST(IndexesTest, ValidateIndexKeysOrderAndUpdates) {
  TableInfo t = MakeTable();
  t.local_indexes[0].name = "zz_lsi";  // by_lsk renamed: after "sparse" alphabetically
  t.global_indexes[0].key_schema.hash = {"lsk", ScalarType::kS};
  Item item{{"pk", S("a")}, {"sk", N(1)}, {"lsk", N(1)}};
  auto s = ValidateIndexKeys(t, item);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "One or more parameter values were invalid: Type mismatch for Index Key lsk Expected: "
            "S Actual: N IndexName: sparse");
  EXPECT_EQ(s.error().cause, ErrorCause::kIndexKeyMismatch);
  // Unchanged by an update: not checked.
  EXPECT_TRUE(ValidateIndexKeys(t, item, &item).ok());
  Item before{{"pk", S("a")}, {"sk", N(1)}};
  Item after = before;
  after["lsk"] = S("");
  s = ValidateIndexKeys(t, after, &before);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "One or more parameter values are not valid. The update expression attempted to "
            "update a secondary index key to a value that is not supported. The AttributeValue "
            "for a key attribute cannot contain an empty string value.");
  EXPECT_EQ(s.error().cause, ErrorCause::kIndexKeyEmpty);
}

// An index partition key value may hold 2,048 bytes and a sort key value 1,024, as a table's;
// one byte more is DynamoDB's "Size limit exceeded" naming the index, and such an item has no
// entry (what a backfill relies on to skip it).
TEST(IndexesTest, IndexKeySizeLimits) {
  const TableInfo t = MakeTable();                     // GSI inc: g2 (N) partition, g3 (S) sort
  const SecondaryIndex& sparse = t.global_indexes[0];  // g (S) partition
  Item item{{"pk", S("a")}, {"sk", N(1)}, {"g", S(std::string(2048, 'x'))}};
  EXPECT_TRUE(ValidateIndexKeys(t, item).ok());
  EXPECT_TRUE(IndexKeyIsStorable(sparse, item));
  item["g"] = S(std::string(2049, 'x'));
  auto s = ValidateIndexKeys(t, item);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "One or more parameter values were invalid: Size limit exceeded for Index Key g "
            "Actual Size: 2049 bytes Max Size: 2048 bytes IndexName: sparse");
  EXPECT_EQ(s.error().cause, ErrorCause::kIndexKeyTooLong);
  EXPECT_FALSE(IndexKeyIsStorable(sparse, item));
  EXPECT_FALSE(ComputeIndexEntry(t, sparse, item));
  // Unchanged by an update: not checked (the item simply has no entry).
  EXPECT_TRUE(ValidateIndexKeys(t, item, &item).ok());

  Item sorted{{"pk", S("a")}, {"sk", N(1)}, {"g2", N(1)}, {"g3", S(std::string(1024, 'y'))}};
  EXPECT_TRUE(ValidateIndexKeys(t, sorted).ok());
  sorted["g3"] = S(std::string(1025, 'y'));
  s = ValidateIndexKeys(t, sorted);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "One or more parameter values were invalid: Size limit exceeded for Index Key g3 "
            "Actual Size: 1025 bytes Max Size: 1024 bytes IndexName: inc");
  // An LSI sort key has the same limit.
  Item lsi{{"pk", S("a")}, {"sk", N(1)}, {"lsk", S(std::string(1025, 'l'))}};
  s = ValidateIndexKeys(t, lsi);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("Max Size: 1024 bytes IndexName: by_lsk"), std::string::npos)
      << s.error().message;
}

TEST(IndexesTest, ValidateIndexKeysMessages) {
  const TableInfo t = MakeTable();
  Item item{{"pk", S("a")}, {"sk", N(1)}, {"g", N(1)}};
  auto s = ValidateIndexKeys(t, item);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "One or more parameter values were invalid: Type mismatch for Index Key g Expected: S "
            "Actual: N IndexName: sparse");
  item["g"] = S("");
  s = ValidateIndexKeys(t, item);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "One or more parameter values are not valid. A value specified for a secondary index "
            "key is not supported. The AttributeValue for a key attribute cannot contain an empty "
            "string value. IndexName: sparse, IndexKey: g");
}

}  // namespace
}  // namespace fdyno::store
