// The process's HNSW graphs (store/vector_graph.h), one per (table id, vector index id), and
// what keeps them derived from the durable entries: building a graph from the entries, bringing
// it forward from the index's change journal (store/vector_journal.h), trimming journals, and
// forgetting graphs of tables and indexes that are gone.
//
// A graph is built when a search finds none for an index of at least `threshold` entries
// (Request), on the background thread (Start); until it is ready, searches are exact. Building
// reads the entries in bounded transactions at successive read versions and takes the first
// one's version as the graph's position: every entry changed after it is named by the journal,
// which the build then replays up to a current version. The same replay (ReadChangesSince,
// ApplyChanges) is what a search does first (store/vector_search.h), so each process over one
// database keeps its own graphs correct whoever writes.
//
// Journal retention: every maintenance pass (period `maintenance_period`) notes the database's
// read version with the time; a journal is trimmed of the records committed at or before the
// newest version noted at least `journal_retention_ms` ago. A graph that has not moved forward
// since (a process idle for that long) finds its position below the trim marker and is rebuilt.
// Journals of indexes that no longer exist or are being deleted are removed.
//
// A graph whose nodes are mostly deleted (VectorGraph::NeedsRebuild) is built anew the same
// way when a search or the background thread finds it so; the old one serves until then.
//
// Thread-safety: thread-safe. Ownership: the database and catalog must outlive this.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "kv/kv.h"
#include "store/catalog.h"
#include "store/vector_graph.h"

namespace fdyno::store {

struct VectorGraphsOptions {
  // Indexes of at least this many entries are searched through a graph; 0: never (exact only).
  int64_t threshold = 10'000;
  // Journal records a search replays itself; past that, it answers exactly and asks the
  // background thread to bring the graph forward.
  int search_replay_limit = 500;
  int build_batch = 5'000;  // entries or journal records read per transaction by the builder
  std::chrono::milliseconds maintenance_period{60'000};
  int64_t journal_retention_ms = 10 * 60 * 1000;
  Clock* clock = nullptr;  // null: Clock::Real()
  VectorGraphOptions graph;
};

// The state at one read version of the entries a journal names after a version.
struct EntryChanges {
  struct Entry {
    std::string key;
    std::optional<std::string> value;  // nullopt: absent at the read version
  };
  std::vector<Entry> entries;
  int64_t through = 0;       // every entry changed in (after, through] is in `entries`
  int64_t read_version = 0;  // the snapshot the values were read at
  bool complete = false;     // through == read_version: nothing later was left unread
  bool trimmed = false;      // records after `after` were trimmed: rebuild instead (no entries)
};

// Reads at tx's snapshot the journal of `index` after commit version `after` (at most `limit`
// records) and the entries it names.
Result<EntryChanges> ReadChangesSince(kv::Transaction& tx, const TableInfo& table,
                                      const VectorIndex& index, int64_t after, int limit);

// Applies `changes` (read from graph.position() or earlier) to `graph`; false when the graph was
// already past them. Malformed entries are InternalServerError.
Result<bool> ApplyChanges(VectorGraph& graph, const EntryChanges& changes);

class VectorGraphs {
 public:
  VectorGraphs(kv::Database* db, Catalog* catalog, VectorGraphsOptions options = {});
  ~VectorGraphs();  // stops the background thread
  VectorGraphs(const VectorGraphs&) = delete;
  VectorGraphs& operator=(const VectorGraphs&) = delete;

  const VectorGraphsOptions& options() const { return options_; }

  // The ready graph of index `index_id` of table `table_id`, or null.
  std::shared_ptr<VectorGraph> Find(int64_t table_id, int64_t index_id) const;
  // Asks for the graph of `index` of `table` to be built, or brought forward when it exists.
  void Request(const TableInfo& table, const VectorIndex& index);
  // Drops `graph` (the journal was trimmed past it) and asks for a new one.
  void Rebuild(const TableInfo& table, const VectorIndex& index, const VectorGraph* graph);

  // Runs the background thread: requests, then a maintenance pass every maintenance_period.
  void Start();

  // The thread's work, callable directly (tests). Builds or brings forward every requested
  // graph; the first error is returned after all were tried.
  Status RunRequests();
  // Builds the graph of `index` from its entries and publishes it (replacing any).
  Status Build(const TableInfo& table, const VectorIndex& index);
  // Replays the journal into `graph` until it reaches a current read version; false when the
  // journal was trimmed past it (it must be rebuilt).
  Result<bool> BringForward(const TableInfo& table, const VectorIndex& index, VectorGraph& graph);
  // Notes the read version, trims every journal (retention above), removes the journals of
  // indexes gone, and forgets graphs whose table or index is gone.
  Status Maintain();

 private:
  using Key = std::pair<int64_t, int64_t>;  // (table id, index id)
  struct Slot {
    std::shared_ptr<VectorGraph> graph;  // null until built
    std::string account, table_name;
    bool requested = false;
  };
  struct Request_ {
    std::shared_ptr<const TableInfo> table;
    int64_t index_id = 0;
  };
  Status TrimTable(const TableInfo& table, int64_t cutoff);
  bool Stopping() const;                 // the destructor has begun: long work gives up
  int64_t Cutoff(int64_t now_ms) const;  // REQUIRES: mu_ held

  kv::Database* const db_;
  Catalog* const catalog_;
  const VectorGraphsOptions options_;
  Clock* const clock_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::map<Key, Slot> slots_;                        // guarded by mu_
  std::map<Key, Request_> requests_;                 // guarded by mu_
  std::deque<std::pair<int64_t, int64_t>> samples_;  // (time ms, read version); guarded
  bool stop_ = false;                                // guarded by mu_
  std::thread thread_;
};

}  // namespace fdyno::store
