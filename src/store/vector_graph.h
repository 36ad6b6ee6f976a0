// An in-memory HNSW graph over the entries of one vector index: a cache that proposes
// candidates for approximate SearchVectors (store/vector_search.h), never a source of truth.
// Every candidate it proposes is read and scored from its entry by the search.
//
// The graph is Debian's header-only hnswlib (libhnswlib-dev 0.6.2): a well-kept library
// implementing the reference HNSW algorithm, with deletion marks and in-place updates, so
// fdyno keeps only the mapping between entry keys and graph labels. Distances: squared L2 for
// EUCLIDEAN, inner product for DOT_PRODUCT, and inner product over vectors scaled to unit length
// for COSINE (a zero vector stays zero: distance 1 to everything, as the exact score says).
//
// Position: the graph holds, for every entry not changed after commit version position(), the
// entry as it was at that version (present with its vector, or absent). Entries changed after
// it may be in any later state: the search re-reads them (store/vector_journal.h names them).
//
// Thread-safety: thread-safe. Nearest runs concurrently with other Nearest calls; Apply
// excludes them while it changes the graph.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "store/catalog.h"

namespace hnswlib {
template <typename T>
class HierarchicalNSW;
template <typename T>
class SpaceInterface;
}  // namespace hnswlib

namespace fdyno::store {

// The defaults are chosen for recall@10 on 100,000 uniform random 128-dimension vectors
// (bench/README.md, vector_bench, has the recall at these and other beam widths): uniform
// random data is the hard case, real embeddings cluster and are easier.
struct VectorGraphOptions {
  size_t m = 24;                 // links per node (HNSW's M; 2M on the base layer)
  size_t ef_construction = 120;  // beam width while inserting
  size_t ef_search = 768;        // least beam width of a search (a search for more uses more)
};

class VectorGraph {
 public:
  // An empty graph at position `position`, with room for `capacity` entries before it grows.
  VectorGraph(DistanceFunction distance, size_t dimensions, int64_t position, size_t capacity,
              const VectorGraphOptions& options = {});
  ~VectorGraph();
  VectorGraph(const VectorGraph&) = delete;
  VectorGraph& operator=(const VectorGraph&) = delete;

  // The state of one entry at some version: its vector (dimensions floats), or absent.
  struct Change {
    std::string key;  // the entry's kv key
    std::optional<std::vector<float>> vector;
  };

  // Brings the graph forward with `changes`, the state at read version `read_version` of every
  // entry changed after the position the caller started from up to `through` (<= read_version),
  // and moves the position to `through`. Does nothing (returns false) when the position is
  // already past `read_version` (another caller brought it further). InternalServerError when
  // the graph cannot grow (out of memory): the graph is then unusable.
  Result<bool> Apply(const std::vector<Change>& changes, int64_t through, int64_t read_version);

  // The keys of the (up to) `k` present entries nearest to `query` (dimensions floats), nearest
  // first, by the graph's approximate search.
  std::vector<std::string> Nearest(const float* query, size_t k) const;

  // The vector the graph holds for entry `key` (scaled to unit length for COSINE), or nullopt
  // when it holds the entry as absent. For tests.
  std::optional<std::vector<float>> Get(const std::string& key) const;

  // Sets the least beam width of later searches (VectorGraphOptions::ef_search). For benchmarks.
  void SetSearchBreadth(size_t ef_search);

  int64_t position() const;
  size_t size() const;    // present entries
  size_t labels() const;  // nodes of the graph: present entries and deleted ones
  // Whether the graph should be rebuilt from the entries: more of its nodes are deleted than
  // present. hnswlib 0.6.2 keeps a deleted node (markDelete; it has no allow_replace_deleted),
  // so a table whose vectors are deleted and rewritten under new keys would grow its graph
  // without bound, and searches would wade through dead nodes. A changed vector is a new node
  // too (Set), never an update in place. Rebuilding at half dead bounds the graph at twice its
  // live entries and costs, amortized, one insert per deletion or change.
  bool NeedsRebuild() const;
  size_t dimensions() const { return dimensions_; }

 private:
  // A new or changed entry is a new node (the old one deleted); an unchanged one is left as is.
  void Set(const std::string& key, const std::vector<float>& vector);  // REQUIRES: mu_ held
  void Remove(const std::string& key);                                 // REQUIRES: mu_ held
  std::vector<float> Prepared(const float* v) const;  // scaled to unit length for COSINE

  const DistanceFunction distance_;
  const size_t dimensions_;
  const VectorGraphOptions options_;
  std::unique_ptr<hnswlib::SpaceInterface<float>> space_;

  mutable std::shared_mutex mu_;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> hnsw_;  // guarded by mu_
  std::unordered_map<std::string, size_t> labels_;         // entry key -> label; guarded
  std::vector<std::string> keys_;                          // label -> entry key; guarded
  std::vector<bool> present_;                              // by label; guarded
  size_t size_ = 0;                                        // guarded
  int64_t position_ = 0;                                   // guarded
};

}  // namespace fdyno::store
