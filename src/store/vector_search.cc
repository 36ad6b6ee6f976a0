#include "store/vector_search.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/item_codec.h"
#include "store/vector_distance.h"
#include "store/vector_index.h"

namespace fdyno::store {
namespace {

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

}  // namespace

Result<VectorSearchResult> SearchVectorIndex(kv::Transaction& tx, const TableInfo& table,
                                             const VectorIndex& index, const VectorQuery& query,
                                             const VectorSearchOptions& options) {
  const size_t dims = query.vector.size();
  const double query_norm = std::sqrt(SquaredNorm(query.vector.data(), dims));
  auto [from, end] = VectorIndexRange(table, index, query.hash);
  std::vector<float> buffer(dims);  // aligned copy of one entry's vector
  TopK top(static_cast<size_t>(query.top_k));
  VectorSearchResult out;
  while (from < end) {
    kv::RangeOptions ro;
    ro.limit = options.read_batch;
    ro.snapshot = true;  // read-only: the snapshot is what matters, not conflicts
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult page, tx.GetRange(from, end, ro));
    for (const kv::KeyValue& kv : page.kvs) {
      FDYNO_ASSIGN_OR_RETURN(VectorEntryView entry, ParseVectorEntry(kv.value));
      if (entry.dimensions != dims) return Error::Internal("vector index entry of another size");
      FDYNO_ASSIGN_OR_RETURN(bool matches, Matches(query, entry.filters));
      if (!matches) continue;
      ++out.examined;
      std::memcpy(buffer.data(), entry.floats, dims * sizeof(float));
      const double score =
          VectorScore(index.distance, query.vector.data(), query_norm, buffer.data(), dims);
      const double rank = RankOf(index.distance, score);
      if (top.Admits(rank)) top.Offer(rank, score, kv.key);
    }
    if (!page.more || page.kvs.empty()) break;
    from = page.kvs.back().key + '\x00';
  }
  out.hits = std::move(top).Sorted();
  return out;
}

}  // namespace fdyno::store
