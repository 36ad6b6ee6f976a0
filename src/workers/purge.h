// The purge of dropped tables in the background. DeleteTable only drops a table in the catalog
// and wakes this worker (api::Services::wake_purge), which removes the table's data in bounded
// transactions (Catalog::PurgeDropped); it also finishes what a process left undone (it crashed
// or stopped half-way), so the data of a dropped table is removed within a bounded time even
// when the process that dropped it is gone.
//
// Several processes: each table's purge is leased (Catalog::PurgeDropped, store/leases.h): a
// table being purged by a live process is left to it, and a dead process's purge is taken over
// once its lease expires.
//
// Stop returns once the current purge transaction is done; the rest of the purge resumes at the
// next start (the pending-purge marker stays until the last transaction).
//
// Metrics: fdyno_table_purges_total (dropped tables whose data has been removed).
//
// Thread-safety: PurgeWorker owns one thread; Start/Stop from one owner thread, Wake from any.
#pragma once

#include <chrono>

#include "kv/kv.h"
#include "store/catalog.h"
#include "store/leases.h"
#include "workers/periodic.h"

namespace fdyno::workers {

struct PurgeOptions {
  std::chrono::milliseconds interval{5'000};  // how often dropped tables are looked for
  store::LeaseOptions lease;                  // who purges, and for how long a lease holds
};

class PurgeWorker {
 public:
  // `db` and `catalog` must outlive the worker.
  PurgeWorker(kv::Database* db, store::Catalog* catalog, PurgeOptions options = {});
  void Start();
  void Stop();  // also on destruction
  // Looks for dropped tables now rather than at the end of the interval (a DeleteTable).
  void Wake();

 private:
  Periodic periodic_;
};

}  // namespace fdyno::workers
