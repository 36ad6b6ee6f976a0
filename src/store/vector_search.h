// Exact nearest-neighbour search over the entries of one vector index (store/vector_index.h):
// the TopK entries by the index's distance function (store/vector_distance.h) among those of
// the requested HASH partition that match the INLINE_FILTER equalities.
//
// Exact: every candidate entry is read from the kv store in the caller's transaction and
// scored, so the result is what the items say as of that snapshot. Cost: one pass over the
// candidates (their float32 vectors are decoded in place; filters are decoded only when the
// query has some) and a bounded heap of TopK; no copy of an entry that does not enter the heap.
// Ties are broken by the entry key (the base item key within a partition), so a search is
// deterministic.
//
// Thread-safety: a function over a Transaction used by one thread.
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
};

struct VectorSearchOptions {
  int read_batch = 1024;  // entries per engine range read
};

// The search. Malformed entries are InternalServerError (fail closed).
Result<VectorSearchResult> SearchVectorIndex(kv::Transaction& tx, const TableInfo& table,
                                             const VectorIndex& index, const VectorQuery& query,
                                             const VectorSearchOptions& options = {});

}  // namespace fdyno::store
