#include "store/vector_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "model/test_values.h"
#include "store/mutation.h"
#include "store/vector_distance.h"
#include "store/vector_index.h"

namespace fdyno::store {
namespace {

using test::S;

using model::AttributeValue;
using model::Item;

AttributeValue Num(int v) { return AttributeValue::N(*model::Number::Parse(std::to_string(v))); }

constexpr int kDims = 4;

TableInfo MakeTable(DistanceFunction f, bool with_hash) {
  TableInfo t;
  t.name = "t";
  t.id = 3;
  t.key_schema.hash = {"pk", ScalarType::kS};
  VectorIndex v;
  v.name = "idx";
  v.id = 1;
  v.attribute = "v";
  v.dimensions = kDims;
  v.distance = f;
  if (with_hash) v.search_schema.push_back({{"cat", ScalarType::kS}, SearchRole::kHash});
  v.search_schema.push_back({{"color", ScalarType::kN}, SearchRole::kInlineFilter});
  t.vector_indexes.push_back(v);
  return t;
}

// The model: what the items say, searched by brute force with the same distance function.
struct Model {
  std::map<std::string, Item> items;  // storage key -> item

  std::vector<std::pair<double, std::string>> Search(const TableInfo& t, const VectorQuery& q) {
    const VectorIndex& index = t.vector_indexes[0];
    const double qn = std::sqrt(SquaredNorm(q.vector.data(), q.vector.size()));
    std::vector<std::tuple<double, std::string, double>> all;
    for (const auto& [key, item] : items) {
      if (!HasVectorEntry(index, item)) continue;
      if (q.hash != nullptr && !(item.at("cat") == *q.hash)) continue;
      bool match = true;
      for (const auto& [name, value] : q.filters) {
        auto it = item.find(name);
        match = match && it != item.end() && it->second == value;
      }
      if (!match) continue;
      std::vector<float> v = *ParseVector(item.at("v"), kDims);
      const double score = VectorScore(index.distance, q.vector.data(), qn, v.data(), kDims);
      all.emplace_back(RankOf(index.distance, score), key, score);
    }
    std::sort(all.begin(), all.end());
    std::vector<std::pair<double, std::string>> out;
    for (size_t i = 0; i < all.size() && i < static_cast<size_t>(q.top_k); ++i) {
      out.emplace_back(std::get<2>(all[i]), std::get<1>(all[i]));
    }
    return out;
  }
};

// Small integer components make exact ties common, so the tie order is tested too.
Item RandomItem(std::mt19937& rng, int pk) {
  Item item{{"pk", S("p" + std::to_string(pk))}};
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  if (pick(5) != 0) {
    model::List v;
    for (int d = 0; d < kDims; ++d) v.push_back(Num(pick(5) - 2));
    item["v"] = AttributeValue{v};
  }
  if (pick(6) != 0) item["cat"] = S(std::string(1, static_cast<char>('a' + pick(3))));
  if (pick(2) != 0) item["color"] = Num(pick(3));
  return item;
}

void RunModel(DistanceFunction f, bool with_hash, uint32_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed) + " (replay: set it in RunModel)");
  std::mt19937 rng(seed);
  TableInfo t = MakeTable(f, with_hash);
  std::unique_ptr<kv::Database> db = kv::OpenMemoryEngine();
  Model model;
  for (int step = 0; step < 400; ++step) {
    const int pk = static_cast<int>(rng() % 60);
    std::optional<Item> next;
    if (rng() % 5 != 0) next = RandomItem(rng, pk);
    const std::string key = ItemStorageKey(t, Item{{"pk", S("p" + std::to_string(pk))}});
    auto st = kv::Run(*db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(CurrentItem cur, ReadCurrent(tx, t, key, false));
      Mutation m(MutationOptions{});
      m.Stage(t, std::move(cur), next);
      FDYNO_RETURN_IF_ERROR(m.Write(tx));
      return Status::Ok();
    });
    ASSERT_TRUE(st.ok()) << st.error().message;
    if (next) {
      model.items[key] = *next;
    } else {
      model.items.erase(key);
    }
    if (step % 20 != 19) continue;
    for (int q = 0; q < 10; ++q) {
      VectorQuery query;
      for (int d = 0; d < kDims; ++d) query.vector.push_back(static_cast<float>(rng() % 7) - 3);
      query.top_k = 1 + static_cast<int>(rng() % 12);
      AttributeValue hash = S(std::string(1, static_cast<char>('a' + rng() % 3)));
      if (with_hash) query.hash = &hash;
      if (rng() % 2 == 0) query.filters.emplace_back("color", Num(static_cast<int>(rng() % 3)));
      auto got = kv::Run(*db, [&](kv::Transaction& tx, const kv::Attempt&) {
        return SearchVectorIndex(tx, t, t.vector_indexes[0], query, {.read_batch = 7});
      });
      ASSERT_TRUE(got.ok()) << got.error().message;
      std::vector<std::pair<double, std::string>> actual;
      for (const VectorHit& h : got->hits) {
        auto k = ItemKeyOfEntry(t, t.vector_indexes[0], h.entry_key);
        ASSERT_TRUE(k.ok());
        actual.emplace_back(h.score, *k);
      }
      ASSERT_EQ(actual, model.Search(t, query)) << "step " << step << " query " << q;
    }
  }
}

TEST(VectorSearchTest, CosineMatchesBruteForce) { RunModel(DistanceFunction::kCosine, false, 11); }
TEST(VectorSearchTest, EuclideanMatchesBruteForce) {
  RunModel(DistanceFunction::kEuclidean, false, 12);
}
TEST(VectorSearchTest, DotProductMatchesBruteForce) {
  RunModel(DistanceFunction::kDotProduct, false, 13);
}
TEST(VectorSearchTest, HashPartitionsMatchBruteForce) {
  for (DistanceFunction f :
       {DistanceFunction::kCosine, DistanceFunction::kEuclidean, DistanceFunction::kDotProduct}) {
    RunModel(f, true, 20 + static_cast<uint32_t>(f));
  }
}

}  // namespace
}  // namespace fdyno::store
