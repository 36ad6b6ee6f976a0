#include "store/vector_index.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/test_values.h"
#include "store/item_counts.h"
#include "store/layout.h"
#include "store/mutation.h"
#include "store/vector_distance.h"

namespace fdyno::store {
namespace {

using test::S;

using model::AttributeValue;
using model::Item;

AttributeValue Num(const std::string& text) {
  return AttributeValue::N(*model::Number::Parse(text));
}
AttributeValue Vec(const std::vector<std::string>& parts) {
  model::List list;
  for (const std::string& p : parts) list.push_back(Num(p));
  return AttributeValue{list};
}

// pk (S); vector index "byv" on v (3 dims, COSINE) with HASH cat (S) and INLINE_FILTER color
// (S); vector index "all" on w (2 dims, EUCLIDEAN) without a search schema.
TableInfo MakeTable() {
  TableInfo t;
  t.name = "t";
  t.id = 9;
  t.key_schema.hash = {"pk", ScalarType::kS};
  VectorIndex byv;
  byv.name = "byv";
  byv.id = 1;
  byv.attribute = "v";
  byv.dimensions = 3;
  byv.search_schema = {{{"cat", ScalarType::kS}, SearchRole::kHash},
                       {{"color", ScalarType::kS}, SearchRole::kInlineFilter}};
  byv.projection.type = ProjectionType::kKeysOnly;
  t.vector_indexes.push_back(byv);
  VectorIndex all;
  all.name = "all";
  all.id = 2;
  all.attribute = "w";
  all.dimensions = 2;
  all.distance = DistanceFunction::kEuclidean;
  t.vector_indexes.push_back(all);
  return t;
}

TEST(VectorDistanceTest, FunctionsOnKnownVectors) {
  const float a[] = {1, 0, 0}, b[] = {0, 1, 0}, c[] = {-2, 0, 0}, z[] = {0, 0, 0};
  const double na = 1.0;
  EXPECT_DOUBLE_EQ(Cosine(a, na, a, 3), 0.0);
  EXPECT_DOUBLE_EQ(Cosine(a, na, b, 3), 1.0);
  EXPECT_DOUBLE_EQ(Cosine(a, na, c, 3), 2.0);
  EXPECT_DOUBLE_EQ(Cosine(a, na, z, 3), 1.0);  // a zero vector has no direction
  EXPECT_DOUBLE_EQ(Cosine(z, 0.0, a, 3), 1.0);
  const float p[] = {0, 0, 3, 1, 2}, q[] = {4, 0, 0, 1, 2};
  EXPECT_DOUBLE_EQ(Euclidean(p, q, 5), 5.0);
  EXPECT_DOUBLE_EQ(DotProduct(p, q, 5), 5.0);
  EXPECT_DOUBLE_EQ(SquaredNorm(p, 5), 14.0);
  EXPECT_DOUBLE_EQ(RankOf(DistanceFunction::kDotProduct, 5.0), -5.0);
  EXPECT_DOUBLE_EQ(RankOf(DistanceFunction::kEuclidean, 5.0), 5.0);
}

TEST(VectorDistanceTest, UnrolledSumsMatchASimpleLoopForEveryLength) {
  for (size_t n = 1; n <= 19; ++n) {
    std::vector<float> a(n), b(n);
    for (size_t i = 0; i < n; ++i) {
      a[i] = static_cast<float>(i) * 0.5f - 3;
      b[i] = 2.0f - static_cast<float>(i % 5);
    }
    double dot = 0, sq = 0, nb = 0;
    for (size_t i = 0; i < n; ++i) {
      dot += static_cast<double>(a[i]) * b[i];
      sq += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
      nb += static_cast<double>(b[i]) * b[i];
    }
    const double na = std::sqrt(SquaredNorm(a.data(), n));
    EXPECT_NEAR(DotProduct(a.data(), b.data(), n), dot, 1e-9) << n;
    EXPECT_NEAR(Euclidean(a.data(), b.data(), n), std::sqrt(sq), 1e-9) << n;
    const double cosine = na == 0 || nb == 0 ? 1.0 : 1.0 - dot / (na * std::sqrt(nb));
    EXPECT_NEAR(Cosine(a.data(), na, b.data(), n), cosine, 1e-9) << n;
  }
}

TEST(VectorIndexTest, ParseVectorAcceptsExactlyDimensionsFloat32Numbers) {
  EXPECT_EQ(ParseVector(Vec({"1", "-2.5", "3e10"}), 3), (std::vector<float>{1, -2.5f, 3e10f}));
  EXPECT_FALSE(ParseVector(Vec({"1", "2"}), 3));
  EXPECT_FALSE(ParseVector(Vec({"1", "2", "3", "4"}), 3));
  EXPECT_FALSE(ParseVector(Vec({"1", "2", "1e39"}), 3));   // beyond float32
  EXPECT_FALSE(ParseVector(Vec({"1", "2", "-4e38"}), 3));  // beyond float32
  EXPECT_EQ(ParseVector(Vec({"1", "2", "1e-60"}), 3), (std::vector<float>{1, 2, 0}));
  EXPECT_FALSE(ParseVector(S("1,2,3"), 3));
  EXPECT_FALSE(ParseVector(AttributeValue{model::List{Num("1"), S("2"), Num("3")}}, 3));
}

TEST(VectorIndexTest, ParseVectorRoundsEveryNumberAsStrtofDoes) {
  // The float32 conversion reads the digits in place and falls back on strtof for what it
  // declines: both must give strtof's float for every number, at the edges of the range too.
  std::mt19937_64 rng(7);
  std::vector<std::string> texts = {"3.4028235e38",
                                    "3.40282356e38",
                                    "3.4028236e38",
                                    "-3.4028234e38",
                                    "1e38",
                                    "9.99999e38",
                                    "1.17549435e-38",
                                    "1.4e-45",
                                    "7e-46",
                                    "1e-130",
                                    "0.1",
                                    "-0",
                                    "16777217",
                                    "123456789012345678901234567890123456e2"};
  for (int i = 0; i < 20000; ++i) {
    std::string digits = std::to_string(rng() % 9 + 1);
    const int len = static_cast<int>(rng() % 38);
    for (int d = 0; d < len; ++d) digits += static_cast<char>('0' + rng() % 10);
    const int exponent = static_cast<int>(rng() % 100) - 70;
    texts.push_back((rng() % 2 ? "-" : "") + digits + "e" + std::to_string(exponent));
  }
  for (const std::string& text : texts) {
    const AttributeValue n = Num(text);
    const std::string canonical = std::get<model::Number>(n.v).ToString();
    const float expected = std::strtof(canonical.c_str(), nullptr);
    std::optional<std::vector<float>> got = ParseVector(AttributeValue{model::List{n}}, 1);
    if (std::isinf(expected)) {
      EXPECT_FALSE(got) << text;
      continue;
    }
    ASSERT_TRUE(got) << text;
    EXPECT_EQ(std::memcmp(&expected, got->data(), sizeof expected), 0)
        << text << ": " << expected << " vs " << got->front();
  }
}

TEST(VectorIndexTest, ValidationNamesTheProblemAndTheIndex) {
  TableInfo t = MakeTable();
  Item ok{{"pk", S("a")}, {"v", Vec({"1", "2", "3"})}, {"cat", S("x")}};
  EXPECT_TRUE(ValidateVectorAttributes(t, ok).ok());
  EXPECT_TRUE(ValidateVectorAttributes(t, Item{{"pk", S("a")}}).ok());  // sparse

  Status s = ValidateVectorAttributes(t, Item{{"pk", S("a")}, {"v", S("x")}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().type, ErrorType::kValidation);
  EXPECT_EQ(s.error().cause, ErrorCause::kIndexKeyMismatch);
  EXPECT_EQ(s.error().message,
            "One or more parameter values were invalid: Type mismatch for vector attribute v "
            "Expected: L Actual: S IndexName: byv");
  s = ValidateVectorAttributes(
      t, Item{{"pk", S("a")}, {"v", AttributeValue{model::List{Num("1"), S("2"), Num("3")}}}});
  EXPECT_EQ(s.error().message,
            "One or more parameter values were invalid: Type mismatch for vector attribute v[1] "
            "Expected: N Actual: S IndexName: byv");
  s = ValidateVectorAttributes(t, Item{{"pk", S("a")}, {"v", Vec({"1", "2"})}});
  EXPECT_EQ(s.error().message,
            "One or more parameter values were invalid: Vector attribute v has 2 dimensions, but "
            "the index requires 3. IndexName: byv");
  s = ValidateVectorAttributes(t, Item{{"pk", S("a")}, {"v", Vec({"1", "2", "1e39"})}});
  EXPECT_EQ(s.error().message,
            "One or more parameter values were invalid: Vector attribute v[2] value "
            "1000000000000000000000000000000000000000 is out of range for a 32-bit float. "
            "IndexName: byv");
  s = ValidateVectorAttributes(t, Item{{"pk", S("a")}, {"cat", Num("1")}});
  EXPECT_EQ(s.error().message,
            "One or more parameter values were invalid: Type mismatch for Index Key cat Expected: "
            "S Actual: N IndexName: byv");
  s = ValidateVectorAttributes(t, Item{{"pk", S("a")}, {"cat", S("")}});
  EXPECT_EQ(s.error().cause, ErrorCause::kIndexKeyEmpty);
  EXPECT_TRUE(ValidateVectorAttributes(t, Item{{"pk", S("a")}, {"color", S("")}}).ok());
  // Both indexes have a problem: the alphabetically first is named.
  s = ValidateVectorAttributes(t, Item{{"pk", S("a")}, {"v", S("x")}, {"w", S("y")}});
  EXPECT_NE(s.error().message.find("IndexName: all"), std::string::npos);
}

TEST(VectorIndexTest, AnUpdateIsCheckedOnlyOnWhatItChanged) {
  TableInfo t = MakeTable();
  Item before{{"pk", S("a")}, {"v", S("not a vector")}};
  Item after = before;
  after["n"] = Num("1");
  EXPECT_TRUE(ValidateVectorAttributes(t, after, &before).ok());
  after["v"] = S("still not");
  EXPECT_FALSE(ValidateVectorAttributes(t, after, &before).ok());
}

TEST(VectorIndexTest, EntriesAreSparseOnTheVectorAndTheHash) {
  TableInfo t = MakeTable();
  const VectorIndex& byv = t.vector_indexes[0];
  EXPECT_TRUE(HasVectorEntry(byv, Item{{"v", Vec({"1", "2", "3"})}, {"cat", S("x")}}));
  EXPECT_FALSE(HasVectorEntry(byv, Item{{"v", Vec({"1", "2", "3"})}}));  // no HASH
  EXPECT_FALSE(HasVectorEntry(byv, Item{{"cat", S("x")}}));
  EXPECT_FALSE(HasVectorEntry(byv, Item{{"v", Vec({"1", "2"})}, {"cat", S("x")}}));
  EXPECT_TRUE(HasVectorEntry(t.vector_indexes[1], Item{{"w", Vec({"1", "2"})}}));
}

TEST(VectorIndexTest, WriteBytesAreTheReplicatedEntry) {
  const TableInfo t = MakeTable();
  const VectorIndex& byv = t.vector_indexes[0];  // KEYS_ONLY: pk, v, cat, color
  const Item a = {{"pk", S("k1")},
                  {"v", Vec({"1", "2", "3"})},
                  {"cat", S("x")},
                  {"color", S("red")},
                  {"other", S("o")}};
  // Written: 3 dimensions x 4 bytes, plus pk (2 + 2), cat (3 + 1) and color (5 + 3).
  EXPECT_EQ(VectorWriteBytes(t, byv, nullptr, &a), std::optional<uint64_t>(12 + 4 + 4 + 8));
  // A change of what the index does not hold replicates nothing.
  Item other = a;
  other["other"] = S("changed");
  EXPECT_EQ(VectorWriteBytes(t, byv, &a, &other), std::nullopt);
  EXPECT_EQ(VectorWriteBytes(t, byv, &a, &a), std::nullopt);
  // A change of the vector, of a filter or of the partition rewrites the entry.
  Item moved = a;
  moved["cat"] = S("yy");
  EXPECT_EQ(VectorWriteBytes(t, byv, &a, &moved), std::optional<uint64_t>(12 + 4 + 5 + 8));
  Item refiltered = a;
  refiltered.erase("color");
  EXPECT_EQ(VectorWriteBytes(t, byv, &a, &refiltered), std::optional<uint64_t>(12 + 4 + 4));
  // Removed (deleted, or its vector or HASH value gone): the key.
  EXPECT_EQ(VectorWriteBytes(t, byv, &a, nullptr), std::optional<uint64_t>(4));
  Item unhashed = a;
  unhashed.erase("cat");
  EXPECT_EQ(VectorWriteBytes(t, byv, &a, &unhashed), std::optional<uint64_t>(4));
  // Never in the index: nothing.
  EXPECT_EQ(VectorWriteBytes(t, byv, &unhashed, nullptr), std::nullopt);
  EXPECT_EQ(VectorWriteBytes(t, byv, nullptr, nullptr), std::nullopt);
  // ALL projects every attribute: any change is replicated.
  const VectorIndex& all = t.vector_indexes[1];
  const Item b = {{"pk", S("k1")}, {"w", Vec({"1", "2"})}, {"n", Num("5")}};
  Item b2 = b;
  b2["n"] = Num("6");
  EXPECT_EQ(VectorWriteBytes(t, all, &b, &b2), VectorWriteBytes(t, all, nullptr, &b));
  EXPECT_EQ(VectorWriteBytes(t, all, nullptr, &b),
            std::optional<uint64_t>(8 + 4 + model::AttributeSize("n", Num("5"))));
}

TEST(VectorIndexTest, ProjectionHoldsKeysVectorSchemaAndIncluded) {
  TableInfo t = MakeTable();
  const VectorIndex& byv = t.vector_indexes[0];
  Item item{{"pk", S("a")},
            {"v", Vec({"1", "2", "3"})},
            {"cat", S("x")},
            {"color", S("red")},
            {"other", S("o")}};
  Item projected = ProjectForVectorIndex(t, byv, item);
  EXPECT_EQ(projected.size(), 4u);
  EXPECT_FALSE(projected.count("other"));
  EXPECT_EQ(ProjectForVectorIndex(t, t.vector_indexes[1], item), item);  // ALL
}

// Writes through the mutation path and reads the index back.
class VectorMaintenanceTest : public ::testing::Test {
 protected:
  void Write(const std::string& pk, std::optional<Item> next) {
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      const std::string key = ItemStorageKey(table_, Item{{"pk", S(pk)}});
      FDYNO_ASSIGN_OR_RETURN(CurrentItem cur, ReadCurrent(tx, table_, key, false));
      Mutation m(MutationOptions{});
      m.Stage(table_, std::move(cur), next);
      FDYNO_RETURN_IF_ERROR(m.Write(tx));
      return Status::Ok();
    });
    ASSERT_TRUE(st.ok()) << st.error().message;
  }
  // Entry key -> base item key of every entry of index `i`, and the index's item count.
  std::pair<std::vector<std::string>, int64_t> Entries(size_t i) {
    const VectorIndex& index = table_.vector_indexes[i];
    auto r =
        kv::Run(*db_,
                [&](kv::Transaction& tx,
                    const kv::Attempt&) -> Result<std::pair<std::vector<std::string>, int64_t>> {
                  auto [b, e] = VectorIndexRange(table_, index, nullptr);
                  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(b, e));
                  std::vector<std::string> keys;
                  for (const auto& kv : rr.kvs) {
                    FDYNO_ASSIGN_OR_RETURN(std::string k, ItemKeyOfEntry(table_, index, kv.key));
                    FDYNO_RETURN_IF_ERROR(ParseVectorEntry(kv.value));
                    keys.push_back(k);
                  }
                  FDYNO_ASSIGN_OR_RETURN(ItemCounts counts, ReadItemCounts(tx, table_));
                  return std::make_pair(keys, counts.Index(index.id));
                });
    EXPECT_TRUE(r.ok());
    return *r;
  }
  std::string Key(const std::string& pk) { return ItemStorageKey(table_, Item{{"pk", S(pk)}}); }

  TableInfo table_ = MakeTable();
  std::unique_ptr<kv::Database> db_ = kv::OpenMemoryEngine();
};

TEST_F(VectorMaintenanceTest, WritesKeepEntriesAndCountsExact) {
  Write("a", Item{{"pk", S("a")}, {"v", Vec({"1", "0", "0"})}, {"cat", S("x")}});
  Write("b", Item{{"pk", S("b")}, {"v", Vec({"0", "1", "0"})}});  // no HASH: not in byv
  Write("c", Item{{"pk", S("c")}, {"w", Vec({"1", "1"})}});
  EXPECT_EQ(Entries(0), std::make_pair(std::vector<std::string>{Key("a")}, int64_t{1}));
  EXPECT_EQ(Entries(1), std::make_pair(std::vector<std::string>{Key("c")}, int64_t{1}));
  // The HASH attribute arrives: the item enters; it changes: the entry moves.
  Write("b", Item{{"pk", S("b")}, {"v", Vec({"0", "1", "0"})}, {"cat", S("y")}});
  Write("a", Item{{"pk", S("a")}, {"v", Vec({"1", "0", "0"})}, {"cat", S("z")}});
  auto [keys, count] = Entries(0);
  EXPECT_EQ(keys.size(), 2u);
  EXPECT_EQ(count, 2);
  // The vector goes away, then the item.
  Write("a", Item{{"pk", S("a")}, {"cat", S("z")}});
  Write("b", std::nullopt);
  Write("c", std::nullopt);
  EXPECT_EQ(Entries(0), std::make_pair(std::vector<std::string>{}, int64_t{0}));
  EXPECT_EQ(Entries(1), std::make_pair(std::vector<std::string>{}, int64_t{0}));
}

TEST_F(VectorMaintenanceTest, AnEntryIsRewrittenOnlyWhenItChanges) {
  // Journal records of index "all" (each entry set or cleared writes one).
  auto records = [&] {
    auto r = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
      auto [b, e] = layout::VectorJournal(table_.id, table_.vector_indexes[1].id).Range();
      return tx.GetRange(b, e);
    });
    EXPECT_TRUE(r.ok());
    return r->kvs.size();
  };
  Write("a", Item{{"pk", S("a")}, {"w", Vec({"0.1", "2"})}});
  EXPECT_EQ(records(), 1u);
  // Other numbers with the same float32 values, another non-indexed attribute: no write.
  Write("a", Item{{"pk", S("a")}, {"w", Vec({"0.1000000000001", "2.0"})}, {"x", S("y")}});
  EXPECT_EQ(records(), 1u);
  Write("a", Item{{"pk", S("a")}, {"w", Vec({"0.1", "2.0000002"})}});
  EXPECT_EQ(records(), 2u);
  Write("a", Item{{"pk", S("a")}, {"w", Vec({"0.1", "2.0000002"})}});
  EXPECT_EQ(records(), 2u);
  Write("a", Item{{"pk", S("a")}, {"w", Vec({"0.3", "2.0000002"})}});
  EXPECT_EQ(records(), 3u);
  Write("a", std::nullopt);
  EXPECT_EQ(records(), 4u);
  EXPECT_EQ(Entries(1), std::make_pair(std::vector<std::string>{}, int64_t{0}));
}

TEST_F(VectorMaintenanceTest, AnInvalidVectorIsRejectedByTheNewImageCheck) {
  Status st = ValidateNewImage(table_, Item{{"pk", S("a")}, {"w", Vec({"1"})}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().type, ErrorType::kValidation);
}

TEST_F(VectorMaintenanceTest, ACopyIsWrittenAsItIsAndLeftOutOfTheIndex) {
  // What a restore writes: an item its source held, whose vector the source's index left out.
  const Item item{{"pk", S("a")}, {"w", Vec({"1"})}, {"v", S("text")}, {"cat", S("x")}};
  auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    FDYNO_ASSIGN_OR_RETURN(CurrentItem cur, ReadCurrent(tx, table_, Key("a"), false));
    Mutation m(MutationOptions{});
    m.Stage(table_, std::move(cur), item);
    FDYNO_RETURN_IF_ERROR(m.Write(tx));
    return Status::Ok();
  });
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(Entries(0), std::make_pair(std::vector<std::string>{}, int64_t{0}));
  EXPECT_EQ(Entries(1), std::make_pair(std::vector<std::string>{}, int64_t{0}));
  auto stored = kv::Run(
      *db_, [&](kv::Transaction& tx, const kv::Attempt&) { return ReadItem(tx, Key("a")); });
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ(model::DecodeStoredItem((*stored)->image).value(), item);
}

}  // namespace
}  // namespace fdyno::store
