// Approximate SearchVectors (store/vector_search.h with store/vector_graphs.h) against brute
// force on random data: every hit is a present entry with its exact score, recall@10 is
// measured, writes after the graph was built are found and deletes never return, and a new
// process (new graphs over the same database) answers as exact search does at small sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "model/test_values.h"
#include "store/mutation.h"
#include "store/vector_distance.h"
#include "store/vector_graphs.h"
#include "store/vector_index.h"
#include "store/vector_search.h"

namespace fdyno::store {
namespace {

using test::S;

using model::AttributeValue;
using model::Item;

constexpr int kDims = 32;

AttributeValue Num(int v) { return AttributeValue::N(*model::Number::Parse(std::to_string(v))); }

TableInfo MakeTable(DistanceFunction f, bool with_hash) {
  TableInfo t;
  t.name = "t";
  t.id = 9;
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

VectorQuery Query(std::vector<float> v, int top_k, const AttributeValue* hash = nullptr) {
  VectorQuery q;
  q.vector = std::move(v);
  q.top_k = top_k;
  q.hash = hash;
  return q;
}

struct Stored {
  std::vector<float> v;  // as stored (the float32 of each decimal)
  std::string cat;
  int color = 0;
};

class AnnTest : public ::testing::Test {
 protected:
  void Init(DistanceFunction f, bool with_hash, int64_t threshold) {
    table_ = MakeTable(f, with_hash);
    db_ = kv::OpenMemoryEngine();
    NewProcess(threshold);
  }
  // Graphs of a new process over the same database.
  void NewProcess(int64_t threshold, const VectorGraphOptions& graph = {}) {
    VectorGraphsOptions o;
    o.graph = graph;
    o.threshold = threshold;
    o.build_batch = 700;
    graphs_ = std::make_unique<VectorGraphs>(db_.get(), nullptr, o);
  }
  const VectorIndex& index() const { return table_.vector_indexes[0]; }

  std::vector<float> RandomVector() {
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> v(kDims);
    for (float& f : v) f = u(rng_);
    return v;
  }

  // Puts `n` items (pk from `first`) with random vectors, or deletes them (`put` false).
  void Write(int first, int n, bool put) {
    for (int start = first; start < first + n; start += 100) {
      std::map<std::string, std::optional<Stored>> staged;
      Status s = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
        staged.clear();
        std::mt19937 local(static_cast<uint32_t>(start * 7 + (put ? 1 : 0) + writes_));
        for (int i = start; i < std::min(first + n, start + 100); ++i) {
          const std::string pk = "p" + std::to_string(i);
          const std::string key = ItemStorageKey(table_, Item{{"pk", S(pk)}});
          std::optional<Item> next;
          if (put) {
            std::uniform_real_distribution<float> u(-1, 1);
            model::List list;
            for (int d = 0; d < kDims; ++d) {
              list.push_back(AttributeValue::N(*model::Number::Parse(std::to_string(u(local)))));
            }
            Stored st;
            st.cat = std::string(1, static_cast<char>('a' + local() % 3));
            st.color = static_cast<int>(local() % 2);
            next = Item{{"pk", S(pk)},
                        {"v", AttributeValue{list}},
                        {"cat", S(st.cat)},
                        {"color", Num(st.color)}};
            st.v = *ParseVector((*next)["v"], kDims);
            staged[key] = st;
          } else {
            staged[key] = std::nullopt;
          }
          FDYNO_ASSIGN_OR_RETURN(CurrentItem cur, ReadCurrent(tx, table_, key, false));
          Mutation m(MutationOptions{});
          m.Stage(table_, std::move(cur), next);
          FDYNO_RETURN_IF_ERROR(m.Write(tx));
        }
        return Status::Ok();
      });
      ASSERT_TRUE(s.ok()) << s.error().message;
      for (auto& [key, st] : staged) {
        if (st) {
          model_[key] = *st;
        } else {
          model_.erase(key);
        }
      }
    }
    ++writes_;
  }

  Result<VectorSearchResult> Search(const VectorQuery& q, bool with_graphs = true) {
    VectorSearchOptions o;
    if (with_graphs) o.graphs = graphs_.get();
    return kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
      return SearchVectorIndex(tx, table_, index(), q, o);
    });
  }

  // The exact score of item `key` (which must be in the model) for `q`.
  double ScoreOf(const std::string& key, const VectorQuery& q) const {
    const std::vector<float>& v = model_.at(key).v;
    const double qn = std::sqrt(SquaredNorm(q.vector.data(), kDims));
    return VectorScore(index().distance, q.vector.data(), qn, v.data(), kDims);
  }

  bool Matches(const Stored& s, const VectorQuery& q) const {
    if (q.hash != nullptr && !(S(s.cat) == *q.hash)) return false;
    for (const auto& [name, value] : q.filters) {
      if (!(Num(s.color) == value)) return false;
    }
    return true;
  }

  // The true TopK item keys by brute force.
  std::vector<std::string> BruteForce(const VectorQuery& q) const {
    std::vector<std::pair<double, std::string>> all;
    for (const auto& [key, s] : model_) {
      if (Matches(s, q)) all.emplace_back(RankOf(index().distance, ScoreOf(key, q)), key);
    }
    std::sort(all.begin(), all.end());
    std::vector<std::string> out;
    for (size_t i = 0; i < all.size() && i < static_cast<size_t>(q.top_k); ++i) {
      out.push_back(all[i].second);
    }
    return out;
  }

  // Checks every hit (present, matching, exactly scored, in order) and returns the recall.
  double CheckHits(const VectorQuery& q, const VectorSearchResult& r) {
    std::set<std::string> got;
    double last_rank = -1e300;
    for (const VectorHit& h : r.hits) {
      Result<std::string> key = ItemKeyOfEntry(table_, index(), h.entry_key);
      EXPECT_TRUE(key.ok());
      auto it = model_.find(*key);
      if (it == model_.end()) {
        ADD_FAILURE() << "a hit that is not a present item: " << *key;
        continue;
      }
      EXPECT_TRUE(Matches(it->second, q));
      EXPECT_EQ(h.score, ScoreOf(*key, q));
      const double rank = RankOf(index().distance, h.score);
      EXPECT_GE(rank, last_rank);
      last_rank = rank;
      got.insert(*key);
    }
    const std::vector<std::string> truth = BruteForce(q);
    if (truth.empty()) return 1;
    size_t found = 0;
    for (const std::string& k : truth) found += got.count(k);
    return static_cast<double>(found) / static_cast<double>(truth.size());
  }

  // Builds the graph as the first search past the threshold asks it to.
  void BuildGraph() {
    VectorQuery q = Query(RandomVector(), 10);
    Result<VectorSearchResult> first = Search(q);
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_FALSE(first->approximate);  // no graph yet: exact
    Status built = graphs_->RunRequests();
    ASSERT_TRUE(built.ok()) << built.error().message;
    ASSERT_NE(graphs_->Find(table_.id, index().id), nullptr);
  }

  void RecallAgainstBruteForce(DistanceFunction f) {
    Init(f, /*with_hash=*/false, /*threshold=*/1000);
    Write(0, 3000, true);
    BuildGraph();
    // Changes after the graph was built: the searches replay them from the journal.
    Write(3000, 150, true);  // new
    Write(100, 100, true);   // replaced vectors
    Write(500, 100, false);  // deleted
    double recall = 0;
    const int queries = 60;
    for (int i = 0; i < queries; ++i) {
      VectorQuery q = Query(RandomVector(), 10);
      if (i % 3 == 0) q.filters.emplace_back("color", Num(i % 2));
      Result<VectorSearchResult> r = Search(q);
      ASSERT_TRUE(r.ok()) << r.error().message;
      EXPECT_TRUE(r->approximate);
      recall += CheckHits(q, *r);
    }
    recall /= queries;
    RecordProperty("recall_at_10", std::to_string(recall));
    EXPECT_GE(recall, 0.95);
    // A vector written after the graph was built is its own nearest neighbour (not so for
    // DOT_PRODUCT, where a longer vector may score higher), and a deleted one never returns.
    for (int i : {3000, 3077, 3149, 150, 199}) {
      const std::string key = ItemStorageKey(table_, Item{{"pk", S("p" + std::to_string(i))}});
      VectorQuery q = Query(model_.at(key).v, 1);
      Result<VectorSearchResult> r = Search(q);
      ASSERT_TRUE(r.ok());
      CheckHits(q, *r);
      if (f != DistanceFunction::kDotProduct) {
        ASSERT_EQ(r->hits.size(), 1u);
        EXPECT_EQ(*ItemKeyOfEntry(table_, index(), r->hits[0].entry_key), key) << i;
      }
    }
  }

  // Mean recall@10 of approximate searches for `queries`, every hit checked.
  double MeanRecall(const std::vector<VectorQuery>& queries) {
    double recall = 0;
    for (const VectorQuery& q : queries) {
      Result<VectorSearchResult> r = Search(q);
      EXPECT_TRUE(r.ok()) << r.error().message;
      if (!r.ok()) return 0;
      EXPECT_TRUE(r->approximate);
      recall += CheckHits(q, *r);
    }
    return recall / static_cast<double>(queries.size());
  }

  TableInfo table_;
  std::unique_ptr<kv::Database> db_;
  std::unique_ptr<VectorGraphs> graphs_;
  std::map<std::string, Stored> model_;  // item key -> what it holds (items with an entry)
  std::mt19937 rng_{2026};
  int writes_ = 0;
};

TEST_F(AnnTest, CosineRecallAndExactScores) { RecallAgainstBruteForce(DistanceFunction::kCosine); }
TEST_F(AnnTest, EuclideanRecallAndExactScores) {
  RecallAgainstBruteForce(DistanceFunction::kEuclidean);
}
TEST_F(AnnTest, DotProductRecallAndExactScores) {
  RecallAgainstBruteForce(DistanceFunction::kDotProduct);
}

TEST_F(AnnTest, HashPartitionsStayInTheirPartition) {
  Init(DistanceFunction::kEuclidean, /*with_hash=*/true, /*threshold=*/500);
  Write(0, 2000, true);
  const AttributeValue b = S("b");
  VectorQuery first = Query(RandomVector(), 10, &b);
  ASSERT_TRUE(Search(first).ok());
  ASSERT_TRUE(graphs_->RunRequests().ok());
  Write(0, 50, false);
  Write(2000, 100, true);  // replayed from the journal: each in its own partition only
  double recall = 0;
  for (int i = 0; i < 30; ++i) {
    const AttributeValue cat = S(std::string(1, static_cast<char>('a' + i % 3)));
    VectorQuery q = Query(RandomVector(), 10, &cat);
    if (i % 2 == 0) q.filters.emplace_back("color", Num(1));
    Result<VectorSearchResult> r = Search(q);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r->approximate);
    recall += CheckHits(q, *r);
  }
  EXPECT_GE(recall / 30, 0.95);
}

TEST_F(AnnTest, BelowTheThresholdOrDisabledTheSearchIsExact) {
  Init(DistanceFunction::kCosine, false, /*threshold=*/1000);
  Write(0, 999, true);
  VectorQuery q = Query(RandomVector(), 10);
  ASSERT_TRUE(Search(q).ok());
  ASSERT_TRUE(graphs_->RunRequests().ok());
  EXPECT_EQ(graphs_->Find(table_.id, index().id), nullptr);  // never requested
  NewProcess(0);
  Write(999, 10, true);
  Result<VectorSearchResult> r = Search(q);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->approximate);
  EXPECT_EQ(CheckHits(q, *r), 1.0);
}

TEST_F(AnnTest, DeletingMostVectorsKeepsTheGraphBoundedAndItsRecall) {
  // 2,000 live vectors; 30 times, the 200 oldest are deleted and 200 written under new keys
  // (6,000 deleted in all), each step replayed by the searches themselves.
  Init(DistanceFunction::kEuclidean, /*with_hash=*/false, /*threshold=*/500);
  // A narrow graph and beam, so that recall is below 1 and shows a worse graph.
  const VectorGraphOptions narrow{.m = 6, .ef_construction = 32, .ef_search = 10};
  NewProcess(500, narrow);
  Write(0, 2000, true);
  BuildGraph();
  std::vector<VectorQuery> queries;
  for (int i = 0; i < 30; ++i) queries.push_back(Query(RandomVector(), 10));
  const size_t live = model_.size();
  size_t most_labels = 0;
  double worn_recall = 0;
  int first = 0;
  for (int step = 0; step < 30; ++step, first += 200) {
    Write(first, 200, false);
    Write(first + 2000, 200, true);
    ASSERT_EQ(model_.size(), live);
    // The graph serves (correct hits, its recall) until the rebuild it asked for replaces it.
    worn_recall += MeanRecall(queries);
    const std::shared_ptr<VectorGraph> graph = graphs_->Find(table_.id, index().id);
    ASSERT_NE(graph, nullptr);
    most_labels = std::max(most_labels, graph->labels());
    ASSERT_TRUE(graphs_->RunRequests().ok());
  }
  worn_recall /= 30;
  // Rebuilt once more than half its nodes are deleted: at most twice the live entries, plus
  // the step that crossed the line.
  EXPECT_LE(most_labels, 2 * live + 200);
  const double churned = MeanRecall(queries);
  NewProcess(500, narrow);  // a graph built fresh from the same entries
  BuildGraph();
  const double fresh = MeanRecall(queries);
  RecordProperty("recall_worn", std::to_string(worn_recall));
  RecordProperty("recall_churned", std::to_string(churned));
  RecordProperty("recall_fresh", std::to_string(fresh));
  EXPECT_GE(worn_recall, fresh - 0.02);
  EXPECT_GE(churned, fresh - 0.02);
}

TEST_F(AnnTest, ANewProcessRebuildsAndAnswersAsExactSearch) {
  Init(DistanceFunction::kEuclidean, false, /*threshold=*/1);
  Write(0, 300, true);
  BuildGraph();
  Write(0, 20, false);
  NewProcess(1);  // a restart: the graph is gone, the entries and journal are not
  BuildGraph();
  Write(300, 20, true);
  for (int i = 0; i < 30; ++i) {
    VectorQuery q = Query(RandomVector(), 10);
    Result<VectorSearchResult> approx = Search(q);
    Result<VectorSearchResult> exact = Search(q, /*with_graphs=*/false);
    ASSERT_TRUE(approx.ok() && exact.ok());
    EXPECT_TRUE(approx->approximate);
    ASSERT_EQ(approx->hits.size(), exact->hits.size());
    for (size_t h = 0; h < exact->hits.size(); ++h) {
      EXPECT_EQ(approx->hits[h].entry_key, exact->hits[h].entry_key);
      EXPECT_EQ(approx->hits[h].score, exact->hits[h].score);
    }
  }
}

}  // namespace
}  // namespace fdyno::store
