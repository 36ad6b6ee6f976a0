// Point-in-time recovery in the background (store/pitr.h; format in docs/format/pitr.md):
// restores to a point in time, and the retention of the histories they read. The backup
// worker's thread runs them (workers/backups.h), with its options.
//
// Restore. RestoreTableToPointInTime creates the target table CREATING (unusable) with a job.
// Once the restore time is kPitrSettleMs in the past (every change stamped at or before it has
// committed or failed), the worker copies the source table's items as they are now into the
// target, then undoes the source's history from its newest record down to the restore time:
// for each item changed since, the image before its first change after the restore time. Every
// batch is one bounded transaction through the mutation path (index entries, item counts and
// item collections follow) that also moves the job's cursor, so a restore resumes after a
// restart; the transaction that reaches the restore time marks the table ACTIVE. Copying reads
// the source at each batch's own version and undoing starts after the last copy: an item the
// copy read before a later change is set right by that change's undo record, and an item not
// changed since the restore time is the same at every version read. A restore whose source
// table is deleted drops the table it created.
//
// Retention. Every table's history loses, from its start, the records older than its recovery
// period, in bounded transactions, never past the time of a restore that reads it; the
// histories of earlier enables (after a disable) are removed unless a restore reads them.
//
// Thread-safety: the free functions may run on any thread.
#pragma once

#include <cstdint>

#include "base/result.h"
#include "kv/kv.h"
#include "store/catalog.h"
#include "workers/backups.h"

namespace fdyno::workers {

struct PitrStats {
  int restores_completed = 0;
  int restores_failed = 0;
  int restores_waiting = 0;  // restore time still within kPitrSettleMs of now
  int64_t items = 0;         // items copied and records undone
  int64_t trim_transactions = 0;
};

// Runs the restore into table `table_id` to its end (ACTIVE, or dropped), or until its restore
// time is settled.
Result<PitrStats> RunPitrRestore(kv::Database& db, store::Catalog& catalog, int64_t table_id,
                                 const BackupWorkerOptions& options);

// Trims every table's history to its recovery period and removes the histories no enabled
// recovery or restore reads.
Result<PitrStats> TrimHistories(kv::Database& db, store::Catalog& catalog,
                                const BackupWorkerOptions& options);

// Every restore to a point in time, then (when `trim`) TrimHistories.
Result<PitrStats> RunPitrPass(kv::Database& db, store::Catalog& catalog,
                              const BackupWorkerOptions& options, bool trim);

}  // namespace fdyno::workers
