// Nearest-neighbour search over the entries of one vector index (store/vector_index.h): the
// TopK entries by the index's distance function (store/vector_distance.h) among those of the
// requested HASH partition that match the INLINE_FILTER equalities.
//
// Exact (the reference, and the answer for indexes below the threshold): every candidate entry
// is read from the kv store in the caller's transaction and scored, so the result is what the
// items say as of that snapshot. Cost: one pass over the candidates (their float32 vectors are
// decoded in place; filters are decoded only when the query has some) and a bounded heap of
// TopK; no copy of an entry that does not enter the heap. Ties are broken by the entry key (the
// base item key within a partition), so a search is deterministic.
//
// Approximate (with options.graphs, for an index of at least its threshold of entries whose
// graph is ready, store/vector_graphs.h): the search first replays into the graph the journal
// records after the graph's position, reading the entries they name at the caller's snapshot,
// and scores those entries; then it takes max(4 x TopK, 64) candidates from the graph and
// point-reads and scores each AT THE CALLER'S SNAPSHOT. Every hit is therefore a present entry
// with its exact score; only recall is approximate (a true neighbour the graph does not
// propose is missed). The graph covers the whole index: with a HASH value or INLINE_FILTER
// equalities, candidates outside the partition or not matching are dropped and the graph is
// asked for four times as many, until max(4 x TopK, 64) candidates match or the graph has no
// more; past 64 times the first request the search answers exactly instead (a selective
// condition; for HASH that reads only the partition's range). When the graph is missing (it is
// then requested), was trimmed past, or is too far behind, the search is exact.
//
// Thread-safety: a function over a Transaction used by one thread (and a thread-safe
// VectorGraphs).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "kv/kv.h"
#include "model/attribute_value.h"
#include "store/catalog.h"

namespace fdyno::store {

struct VectorQuery {
  std::vector<float> vector;                    // REQUIRES: the index's Dimensions values
  int top_k = 1;                                // REQUIRES: >= 1
  const model::AttributeValue* hash = nullptr;  // REQUIRES: non-null iff the index has HASH
  // INLINE_FILTER attribute name -> the value it must equal.
  std::vector<std::pair<std::string, model::AttributeValue>> filters;
};

struct VectorHit {
  double score = 0;       // as SearchVectors reports it
  std::string entry_key;  // store::ItemKeyOfEntry gives the base item
};

struct VectorSearchResult {
  std::vector<VectorHit> hits;  // most similar first, at most top_k
  uint64_t examined = 0;        // entries scored (the candidates)
  bool approximate = false;     // answered through the graph
};

class VectorGraphs;

struct VectorSearchOptions {
  int read_batch = 1024;  // entries per engine range read
  // The process's graphs; null: exact only.
  VectorGraphs* graphs = nullptr;
};

// The search (header comment). Malformed entries are InternalServerError (fail closed).
Result<VectorSearchResult> SearchVectorIndex(kv::Transaction& tx, const TableInfo& table,
                                             const VectorIndex& index, const VectorQuery& query,
                                             const VectorSearchOptions& options = {});

}  // namespace fdyno::store
