// Exports and imports in the background (store/exports.h; formats in docs/format/exports.md),
// on the backup worker's thread (workers/backups.h), with its options.
//
// Export. ExportTableToPointInTime stores the export IN_PROGRESS. Once its time is
// kPitrSettleMs in the past (every change stamped at or before it has committed or failed), the
// worker claims it, reads the table at one consistent snapshot (workers/snapshot_reader.h) and
// undoes, in memory, the changes the point-in-time history (store/pitr.h) holds after the
// export time: a full export writes every item as it was then; an incremental export writes
// every item changed between its two times, with its images at both. The files go to
// <root>/<bucket>/<prefix>/AWSDynamoDB/<id>/ in DynamoDB's layout: data files first, then
// manifest-files.json, then manifest-summary.json, each whole (written aside, then renamed);
// the record becomes COMPLETED last. A process killed half-way leaves the export IN_PROGRESS:
// the next one claims it and writes it again from the start, at once when it is the only process
// (BackupWorkerOptions::takeover 0), else once the export's heartbeat is older than the takeover
// time. The owner renews the heartbeat as it writes (every quarter of the takeover time, and
// before the manifest), and a process that finds its export taken over (it paused that long)
// stops writing it. An export that cannot be made
// (its table or history is gone, a file cannot be written) becomes FAILED.
//
// Import. ImportTable creates the table CREATING with the import IN_PROGRESS. The worker reads
// the bucket's files under the prefix in key order and writes their items in bounded
// transactions through the mutation path (store/mutation.h: index entries, counts and item
// collections follow), each transaction also moving the import's cursor and counts, so it
// resumes after a restart, and taking the import's lease (ImportLeaseKey), so one process at a
// time imports; lines that are no valid item are counted (ErrorCount) and skipped.
// The transaction that finds no file left marks the table ACTIVE and the import COMPLETED. An
// import that cannot go on (no file, a file that does not decompress) drops its table and
// becomes FAILED: never a half table marked ACTIVE.
//
// Thread-safety: the free functions may run on any thread.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "kv/kv.h"
#include "store/catalog.h"
#include "workers/backups.h"

namespace fdyno::workers {

struct ExportStats {
  int exports_completed = 0;
  int exports_failed = 0;
  int exports_waiting = 0;  // export time still within kPitrSettleMs of now
  int imports_completed = 0;
  int imports_failed = 0;
  int64_t items = 0;  // items exported or imported
};

// Runs export `id` to its end (COMPLETED or FAILED), or leaves it waiting for its time to
// settle. Does nothing when it is not IN_PROGRESS or another live process holds it.
Result<ExportStats> RunExport(kv::Database& db, store::Catalog& catalog, const std::string& id,
                              const BackupWorkerOptions& options);
// Runs import `id` to its end (COMPLETED or FAILED).
Result<ExportStats> RunImport(kv::Database& db, store::Catalog& catalog, const std::string& id,
                              const BackupWorkerOptions& options);
// The key of the lease on import `id`: each batch takes it in its transaction, so one process at
// a time imports, and the import of a process that died is taken over once the lease runs out.
std::string ImportLeaseKey(const std::string& id);
// Every IN_PROGRESS export and import.
Result<ExportStats> RunExportPass(kv::Database& db, store::Catalog& catalog,
                                  const BackupWorkerOptions& options);

}  // namespace fdyno::workers
