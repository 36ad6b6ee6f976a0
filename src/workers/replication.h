// The replication of global tables (store/replication.h), in bounded transactions:
//
// * Delivery. Each table with replicas has an outbox for every other replica. A page takes the
//   oldest entries that are at least `delay` old (DynamoDB's replication is asynchronous; the
//   delay lets users see it), applies each to the replica by the last-writer-wins rule, and
//   clears them, in one transaction: a change reaches a replica once, whatever fails or
//   restarts. Entries for a replica that is gone (or DELETING) are cleared unapplied.
// * Backfill. A replica being created (CREATING) is filled from the table UpdateTable named:
//   pages of its items, each item applied with its clock's stamp (an item without a clock, one
//   written before the table was global, with time 0: any replicated write beats it), the
//   cursor at ("replica_backfill", source id, replica id) under layout::Leases(). Changes made
//   meanwhile reach the replica through the outbox, and the stamps order the two. The last page
//   makes the replica ACTIVE on every replica's record.
// * Removal. A replica DELETING (UpdateTable's Delete) leaves the group (store::LeaveReplicaGroup)
//   and its table is dropped, in one transaction.
//
// Several processes: each outbox's delivery, each backfill and each removal is leased
// ("replication", source id, region), ("replica_backfill", source id, replica id),
// ("replica_removal", table id); a page is done only under its lease.
//
// Metrics: fdyno_replication_applied_total, fdyno_replication_superseded_total (changes the
// rule dropped), fdyno_replica_backfill_items_total, fdyno_replication_lag_seconds (a histogram
// of each change's age when delivered, the delay included).
//
// Thread-safety: the Run* functions may be called from any thread; ReplicationWorker owns one
// thread.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/log_limiter.h"
#include "base/result.h"
#include "kv/kv.h"
#include "store/catalog.h"
#include "store/leases.h"
#include "workers/periodic.h"

namespace fdyno::workers {

struct ReplicationOptions {
  std::chrono::milliseconds delay{300};   // --replication-delay
  int page_items = 200;                   // entries or items per page transaction
  uint64_t page_bytes = 2 * 1024 * 1024;  // backfill: image bytes per page
  std::chrono::milliseconds poll{50};     // ReplicationWorker: pass interval
  store::LeaseOptions lease;
  const Clock* clock = Clock::Real();
  const std::atomic<bool>* stop = nullptr;  // set: a pass returns after its current page
};

struct ReplicationStep {
  int done = 0;            // changes delivered, items copied, or 1 for a removal
  int superseded = 0;      // delivery: changes the item's later write beat
  bool finished = false;   // nothing more now (outbox drained of due entries, backfill over)
  bool elsewhere = false;  // another owner holds the lease: nothing was done
};

// One page of delivery from `source`'s outbox to its replica in `region`.
Result<ReplicationStep> DeliverStep(kv::Database& db, store::Catalog& catalog,
                                    const store::QualifiedName& source, const std::string& region,
                                    const ReplicationOptions& options);
// One page of the backfill of `source`'s replica in `region` (CREATING, filled from `source`).
Result<ReplicationStep> ReplicaBackfillStep(kv::Database& db, store::Catalog& catalog,
                                            const store::QualifiedName& source,
                                            const std::string& region,
                                            const ReplicationOptions& options);
// The removal of `replica` when it is DELETING.
Result<ReplicationStep> ReplicaRemovalStep(kv::Database& db, store::Catalog& catalog,
                                           const store::QualifiedName& replica,
                                           const ReplicationOptions& options);

struct ReplicationPass {
  int steps = 0;            // pages run
  bool any_global = false;  // some table has replicas
};

// Every delivery, backfill and removal that is due, until none is or options.stop is set.
Result<ReplicationPass> RunAllReplication(kv::Database& db, store::Catalog& catalog,
                                          const ReplicationOptions& options = {});

// A background thread running RunAllReplication every options.poll, skipping the pass while the
// catalog is unchanged since a pass that found no global table (an idle server with no global
// tables reads one key per poll).
class ReplicationWorker {
 public:
  ReplicationWorker(kv::Database* db, store::Catalog* catalog, ReplicationOptions options = {});
  void Start();
  void Stop();

 private:
  LogLimiter error_log_{std::chrono::seconds(60)};
  std::optional<std::string> idle_version_;  // the catalog version of a pass with no global table
  Periodic periodic_;                        // last: stopped before the rest goes
};

}  // namespace fdyno::workers
