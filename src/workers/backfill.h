// Backfills and index removals, in bounded transactions (docs/architecture.md, "Work in several
// transactions"): one worker for every kind of derived data that can be added to a table that
// already holds items (store::BackfillParts: a global secondary index or a vector index being
// created, the expiry index of TTL being enabled), and for the removal of deleted indexes.
//
// Protocol. A part is registered in the catalog first (an index CREATING with backfilling=true,
// TTL ENABLING); from that commit on, every item write maintains it (store/maintainers.h). The
// worker then fills it from the existing items page by page: each page is one transaction that
// reads a bounded range of base items (normal, conflicting reads, so a concurrent write to an
// item of the page makes the page retry against the new image), has the part's maintainer
// backfill each item, and advances a cursor stored in the database, so the backfill resumes
// after a restart. The page that reaches the end finishes the part (the index ACTIVE, TTL
// ENABLED) in the same transaction. A DELETING index is cleared in bounded transactions and
// removed from the catalog by the last one.
//
// Several processes: the work on one part is leased (store/leases.h; the part's lease key:
// ("index", table id, index id), or TTL's ("ttl", table id), which the sweeper shares). Every
// page transaction takes or renews the lease before its work and is skipped when another owner
// holds it, so one process does each part's pages and a dead process's part is taken over once
// its lease expires; the last page releases the lease.
//
// Cursors: layout::Leases() + ("index_backfill", table id, index id), or ("ttl_backfill",
// table id) -> the kv key to resume at (store/maintainers.h).
//
// Lifecycle lines (info): when a part's backfill or an index's removal starts, every 10 s while
// it goes on, and when it ends. Metrics: fdyno_index_backfill_items_total,
// fdyno_index_backfills_finished_total, fdyno_index_removal_keys_total,
// fdyno_index_work_running.
//
// Thread-safety: RunIndexStep/RunAllIndexWork may be called from any thread; IndexWorker owns
// one thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "base/log_limiter.h"
#include "base/result.h"
#include "kv/kv.h"
#include "store/catalog.h"
#include "store/leases.h"
#include "workers/periodic.h"

namespace fdyno::workers {

struct BackfillOptions {
  int page_items = 200;                   // base items per page transaction
  uint64_t page_bytes = 2 * 1024 * 1024;  // image bytes per page (well under 10 MB)
  std::chrono::milliseconds poll{200};    // IndexWorker: catalog scan interval
  store::LeaseOptions lease;              // who works, and for how long a lease holds
  // Set (IndexWorker::Stop): RunAllIndexWork returns after the current page; the work resumes
  // from its stored cursor at the next run. Null: never.
  const std::atomic<bool>* stop = nullptr;
  // DynamoDB Local's -delayTransientStatuses: an index that UpdateTable adds or deletes keeps
  // CREATING or DELETING at least this long, its backfill or removal beginning only once this
  // long has passed since a pass first found it (0: at once). TTL's backfill is not held.
  std::chrono::milliseconds status_hold{0};
  // With status_hold: when a pass first found each (table id, index id) (IndexWorker's own).
  std::map<std::pair<int64_t, int64_t>, std::chrono::steady_clock::time_point>* first_found =
      nullptr;
};

struct StepResult {
  int items = 0;           // base items copied (backfill) or keys cleared (delete)
  bool finished = false;   // the index became ACTIVE, or was removed
  bool elsewhere = false;  // another owner holds the index's lease: nothing was done
};

// One page of work on part `index_id` of table `table`: a backfill when a part of
// store::BackfillParts has that id (store::kExpiryIndexPart: TTL's), the removal of a DELETING
// index; nothing otherwise (finished=true).
Result<StepResult> RunIndexStep(kv::Database& db, store::Catalog& catalog,
                                const store::QualifiedName& table, int64_t index_id,
                                const BackfillOptions& options = {});

// Steps every part and index of every table that needs work, and whose lease is free, expired
// or ours, until none does, or until options.stop is set (checked between pages). Returns steps
// run.
Result<int> RunAllIndexWork(kv::Database& db, store::Catalog& catalog,
                            const BackfillOptions& options = {});

// A background thread running RunAllIndexWork every options.poll.
class IndexWorker {
 public:
  // options.stop is the worker's own.
  IndexWorker(kv::Database* db, store::Catalog* catalog, BackfillOptions options = {});
  void Start();
  // Returns once the current page is committed; a backfill or removal in progress resumes from
  // its cursor at the next Start (or in the next process). Also on destruction.
  void Stop();

 private:
  LogLimiter error_log_{std::chrono::seconds(60)};  // failed passes
  std::map<std::pair<int64_t, int64_t>, std::chrono::steady_clock::time_point> first_found_;
  Periodic periodic_;  // last: stopped before the rest goes
};

}  // namespace fdyno::workers
