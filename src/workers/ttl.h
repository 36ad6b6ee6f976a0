// Time to Live in the background: the sweeper that deletes expired items (store/ttl.h). The
// expiry index of a table whose TTL is ENABLING is filled from the items that existed by the
// backfill worker (workers/backfill.h; store::kExpiryIndexPart), which marks TTL ENABLED.
//
// Sweep. For each table whose TTL is ENABLED it reads the expiry index from five years ago to
// now, in bounded batches, and deletes the items in transactions that read each item again and
// delete it only if it has still expired at that moment: an item refreshed concurrently (a new
// expiry) is never deleted, because its write moved its index key and, committing first, makes
// the sweep's transaction conflict and re-check. Deletes go through the mutation path with the
// Time to Live identity, so indexes, counts, item collections and the stream stay exact and the
// stream records carry DynamoDB's userIdentity. Reads hide expired items until then.
//
// Several processes: a table's TTL work is leased (store/leases.h, store::TtlLeaseKey: unit
// ("ttl", table id), shared with the backfill). Every delete batch takes or renews the lease in
// its own transaction and is skipped when another owner holds it; the end of a sweep releases
// it. So one process at a time sweeps a table, and a dead process's table is taken over once its
// lease expires.
//
// Thread-safety: the free functions may run on any thread; TtlWorker owns one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "kv/kv.h"
#include "store/catalog.h"
#include "store/leases.h"
#include "store/ttl.h"
#include "workers/periodic.h"
#include "workers/tables.h"

namespace fdyno::workers {

struct TtlOptions {
  // How often expired items are looked for (--ttl-sweep-interval): an expired item is deleted
  // within about this long.
  std::chrono::milliseconds sweep_interval{30'000};
  std::chrono::milliseconds poll{200};
  int delete_batch = 50;      // items per delete transaction
  int max_per_table = 10000;  // items deleted per table and sweep (the rest at the next)
  Clock* clock = nullptr;     // null: Clock::Real(); wall time decides expiry
  store::LeaseOptions lease;  // who works, and for how long a lease holds
};

struct TtlStats {
  int deleted = 0;    // expired items deleted
  int elsewhere = 0;  // tables left to the owner of their lease
};

// Deletes the items of `table` that have expired at the clock's now, up to
// options.max_per_table.
Result<TtlStats> SweepTable(kv::Database& db, store::Catalog& catalog,
                            const store::QualifiedName& table, const TtlOptions& options);
// The two steps of a sweep, exposed so that tests can interleave writes between them: the
// expiry index entries of the items that have expired at now_ms (a snapshot, at most `limit`),
// then one transaction that reads each of those items again and deletes it if it has still
// expired at now_ms, under the table's lease. Returns how many it deleted (0 when another owner
// holds the lease).
Result<std::vector<store::ExpiryEntry>> ReadExpiredEntries(kv::Database& db,
                                                           store::Catalog& catalog,
                                                           const store::QualifiedName& table,
                                                           int64_t now_ms, int limit);
Result<int> DeleteIfExpired(kv::Database& db, store::Catalog& catalog,
                            const store::QualifiedName& table,
                            const std::vector<store::ExpiryEntry>& entries, int64_t now_ms,
                            const store::LeaseOptions& lease = {});

// With `sweep`, sweeps every ENABLED table.
Result<TtlStats> RunTtlPass(kv::Database& db, store::Catalog& catalog, const TtlOptions& options,
                            bool sweep);

// A thread running RunTtlPass every options.poll, sweeping every options.sweep_interval.
class TtlWorker {
 public:
  TtlWorker(kv::Database* db, store::Catalog* catalog, TtlOptions options);
  void Start();
  void Stop();  // also on destruction

 private:
  void Pass();
  kv::Database* db_;
  store::Catalog* catalog_;
  TtlOptions options_;
  std::chrono::steady_clock::time_point last_sweep_{};
  Periodic periodic_;  // last: stopped before the rest is destroyed
};

}  // namespace fdyno::workers
