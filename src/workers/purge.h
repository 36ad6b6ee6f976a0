// The purge of dropped tables in the background: DeleteTable removes a table's data itself
// right after the drop, and this worker finishes what a process left undone (it crashed, or its
// purge failed), so the data of a dropped table is removed within a bounded time even when the
// process that dropped it is gone.
//
// Several processes: each table's purge is leased (Catalog::PurgeDropped, store/leases.h): a
// table being purged by a live process is left to it, and a dead process's purge is taken over
// once its lease expires.
//
// Thread-safety: PurgeWorker owns one thread; Start/Stop from one owner thread.
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

 private:
  Periodic periodic_;
};

}  // namespace fdyno::workers
