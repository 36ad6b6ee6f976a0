#include "store/vector_search.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <unordered_set>

#include "model/item_codec.h"
#include "store/item_counts.h"
#include "store/vector_distance.h"
#include "store/vector_graph.h"
#include "store/vector_graphs.h"
#include "store/vector_index.h"

namespace fdyno::store {
namespace {

// How much wider than its first request a narrowed search may ask the graph before it answers
// exactly instead.
constexpr size_t kMaxWidening = 64;

struct Candidate {
  double rank;
  double score;
  std::string key;
};

// Orders the heap with the worst candidate on top: higher rank, then the later key.
bool Better(const Candidate& a, const Candidate& b) {
  return a.rank < b.rank || (a.rank == b.rank && a.key < b.key);
}

// Whether the entry's INLINE_FILTER attributes equal the query's.
Result<bool> Matches(const VectorQuery& query, std::string_view filters) {
  if (query.filters.empty()) return true;
  FDYNO_ASSIGN_OR_RETURN(model::Item stored, model::DecodeStoredItem(filters));
  for (const auto& [name, value] : query.filters) {
    auto it = stored.find(name);
    if (it == stored.end() || !(it->second == value)) return false;
  }
  return true;
}

// The TopK of one search, kept as a heap of at most top_k.
class TopK {
 public:
  explicit TopK(size_t k) : k_(k) { heap_.reserve(k + 1); }

  // Whether a candidate of `rank` could enter (saves building its key when it cannot).
  bool Admits(double rank) const { return heap_.size() < k_ || rank <= heap_.front().rank; }

  void Offer(double rank, double score, std::string_view key) {
    Candidate c{rank, score, std::string(key)};
    if (heap_.size() == k_ && !Better(c, heap_.front())) return;
    heap_.push_back(std::move(c));
    std::push_heap(heap_.begin(), heap_.end(), Better);
    if (heap_.size() > k_) {
      std::pop_heap(heap_.begin(), heap_.end(), Better);
      heap_.pop_back();
    }
  }

  std::vector<VectorHit> Sorted() && {
    std::sort_heap(heap_.begin(), heap_.end(), Better);
    std::vector<VectorHit> out;
    out.reserve(heap_.size());
    for (Candidate& c : heap_) out.push_back({c.score, std::move(c.key)});
    return out;
  }

 private:
  size_t k_;
  std::vector<Candidate> heap_;
};

// Scores entries against one query into its TopK.
class Scorer {
 public:
  Scorer(const VectorIndex& index, const VectorQuery& query)
      : index_(index),
        query_(query),
        dims_(query.vector.size()),
        query_norm_(std::sqrt(SquaredNorm(query.vector.data(), dims_))),
        buffer_(dims_),
        top_(static_cast<size_t>(query.top_k)) {}

  // Scores the entry stored at `key` as `value` when it matches the filters; returns whether it
  // matched.
  Result<bool> Score(std::string_view key, std::string_view value) {
    FDYNO_ASSIGN_OR_RETURN(VectorEntryView entry, ParseVectorEntry(value));
    if (entry.dimensions != dims_) return Error::Internal("vector index entry of another size");
    FDYNO_ASSIGN_OR_RETURN(bool matches, Matches(query_, entry.filters));
    if (!matches) return false;
    ++examined_;
    std::memcpy(buffer_.data(), entry.floats, dims_ * sizeof(float));
    const double score =
        VectorScore(index_.distance, query_.vector.data(), query_norm_, buffer_.data(), dims_);
    const double rank = RankOf(index_.distance, score);
    if (top_.Admits(rank)) top_.Offer(rank, score, key);
    return true;
  }

  VectorSearchResult Finish(bool approximate) && {
    return {std::move(top_).Sorted(), examined_, approximate};
  }

 private:
  const VectorIndex& index_;
  const VectorQuery& query_;
  const size_t dims_;
  const double query_norm_;
  std::vector<float> buffer_;  // aligned copy of one entry's vector
  TopK top_;
  uint64_t examined_ = 0;
};

Result<VectorSearchResult> ExactSearch(kv::Transaction& tx, const TableInfo& table,
                                       const VectorIndex& index, const VectorQuery& query,
                                       const VectorSearchOptions& options) {
  auto [from, end] = VectorIndexRange(table, index, query.hash);
  Scorer scorer(index, query);
  while (from < end) {
    kv::RangeOptions ro;
    ro.limit = options.read_batch;
    ro.snapshot = true;  // read-only: the snapshot is what matters, not conflicts
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult page, tx.GetRange(from, end, ro));
    for (const kv::KeyValue& kv : page.kvs) {
      FDYNO_RETURN_IF_ERROR(scorer.Score(kv.key, kv.value));
    }
    if (!page.more || page.kvs.empty()) break;
    from = page.kvs.back().key + '\x00';
  }
  return std::move(scorer).Finish(/*approximate=*/false);
}

// The graph of `index` brought to tx's snapshot (its changes scored into `scorer`), or null
// when the search must be exact (header comment).
Result<std::shared_ptr<VectorGraph>> GraphAtSnapshot(kv::Transaction& tx, const TableInfo& table,
                                                     const VectorIndex& index,
                                                     const VectorQuery& query, VectorGraphs& graphs,
                                                     Scorer& scorer,
                                                     std::unordered_set<std::string>& scored) {
  const int64_t threshold = graphs.options().threshold;
  std::shared_ptr<VectorGraph> graph = graphs.Find(table.id, index.id);
  if (graph == nullptr) {
    FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> n,
                           tx.Get(ItemCountKey(table.id, index.id), /*snapshot=*/true));
    if (n && kv::DecodeCounter(*n).value_or(0) >= threshold) graphs.Request(table, index);
    return std::shared_ptr<VectorGraph>();
  }
  FDYNO_ASSIGN_OR_RETURN(int64_t read_version, tx.GetReadVersion());
  const int64_t position = graph->position();
  if (position < read_version) {
    FDYNO_ASSIGN_OR_RETURN(
        EntryChanges changes,
        ReadChangesSince(tx, table, index, position, graphs.options().search_replay_limit));
    if (changes.trimmed) {
      graphs.Rebuild(table, index, graph.get());
      return std::shared_ptr<VectorGraph>();
    }
    if (!changes.complete) {
      graphs.Request(table, index);
      return std::shared_ptr<VectorGraph>();
    }
    FDYNO_RETURN_IF_ERROR(ApplyChanges(*graph, changes));
    // Only the changed entries of the requested partition are candidates.
    auto [from, end] = VectorIndexRange(table, index, query.hash);
    for (const EntryChanges::Entry& e : changes.entries) {
      scored.insert(e.key);
      if (e.value && e.key >= from && e.key < end) {
        FDYNO_RETURN_IF_ERROR(scorer.Score(e.key, *e.value));
      }
    }
  }
  if (static_cast<int64_t>(graph->size()) < threshold) return std::shared_ptr<VectorGraph>();
  // Mostly deleted nodes: a new graph is built in the background, this one serves meanwhile.
  if (graph->NeedsRebuild()) graphs.Request(table, index);
  return graph;
}

// The approximate search, or nullopt when it must be exact (header comment).
Result<std::optional<VectorSearchResult>> GraphSearch(kv::Transaction& tx, const TableInfo& table,
                                                      const VectorIndex& index,
                                                      const VectorQuery& query,
                                                      VectorGraphs& graphs) {
  Scorer scorer(index, query);
  std::unordered_set<std::string> scored;  // entry keys already read
  FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<VectorGraph> graph,
                         GraphAtSnapshot(tx, table, index, query, graphs, scorer, scored));
  if (graph == nullptr) return std::optional<VectorSearchResult>();
  const bool narrowed = query.hash != nullptr || !query.filters.empty();
  auto [from, end] = VectorIndexRange(table, index, query.hash);
  const size_t wanted = std::max<size_t>(4 * static_cast<size_t>(query.top_k), 64);
  size_t matched = 0;
  for (size_t k = wanted;; k *= 4) {
    if (k > kMaxWidening * wanted) return std::optional<VectorSearchResult>();
    const std::vector<std::string> keys = graph->Nearest(query.vector.data(), k);
    for (const std::string& key : keys) {
      if (key < from || key >= end || !scored.insert(key).second) continue;
      FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> value, tx.Get(key, /*snapshot=*/true));
      if (!value) continue;  // removed since the graph's position: deleted items never return
      FDYNO_ASSIGN_OR_RETURN(bool matches, scorer.Score(key, *value));
      matched += matches ? 1 : 0;
    }
    if (!narrowed || matched >= wanted || keys.size() < k) break;
  }
  return std::optional<VectorSearchResult>(std::move(scorer).Finish(/*approximate=*/true));
}

}  // namespace

Result<VectorSearchResult> SearchVectorIndex(kv::Transaction& tx, const TableInfo& table,
                                             const VectorIndex& index, const VectorQuery& query,
                                             const VectorSearchOptions& options) {
  if (options.graphs != nullptr && options.graphs->options().threshold > 0) {
    FDYNO_ASSIGN_OR_RETURN(std::optional<VectorSearchResult> found,
                           GraphSearch(tx, table, index, query, *options.graphs));
    if (found) return std::move(*found);
  }
  return ExactSearch(tx, table, index, query, options);
}

}  // namespace fdyno::store
