// On-demand backups and restores in the background (store/backups.h; formats in
// docs/format/backups.md): multi-transaction workflows that are safe to resume.
//
// Backup. CreateBackup stores the backup CREATING. The worker claims it (its process becomes the
// owner), reads the table's items at one consistent snapshot and writes them as chunks, each
// chunk in its own bounded transaction that also records the progress and checks that this
// process still owns the backup; the last transaction marks it AVAILABLE with its totals
// (metadata last). The snapshot is the engine's snapshot transaction
// (kv::Database::CreateSnapshotTransaction), which never ages out; on an engine without one
// (FoundationDB) every page is read at one pinned read version, and a backup that outlives the
// 5 s window fails rather than mixing snapshots. A backup that cannot be made (its table is
// gone, or its read version aged out) is removed and the failure logged. A snapshot lives in
// its process only: a process that finds a CREATING backup owned by another process whose
// lease ran out (BackupWorkerOptions::takeover) takes it over and starts it again from an
// empty backup at a new snapshot.
//
// Restore. RestoreTableFromBackup creates the target table CREATING (unusable) with a restore
// job. The worker writes the backup's items into it in bounded transactions through the
// mutation path (store/mutation.h), so index entries, item counts and item collections are
// rebuilt exactly, moving the job's cursor in the same transaction, so it resumes after a
// restart; the transaction that writes the last items' cursor past the end marks the table
// ACTIVE. A restore that cannot finish (its backup is unreadable) drops the table it created.
// Each batch takes the restore's lease (store/leases.h, unit ("restore", table id)) in its own
// transaction, so one process at a time restores a table, and the restore of a process that
// died is taken over once its lease runs out; the last transaction releases it.
//
// Thread-safety: the free functions may run on any thread; BackupWorker owns one thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/result.h"
#include "kv/kv.h"
#include "store/catalog.h"
#include "store/leases.h"
#include "workers/periodic.h"

namespace fdyno::workers {

struct BackupWorkerOptions {
  // How often the worker looks for work it was not woken for (another process's requests, work
  // left by a restart); this process's requests wake it at once.
  std::chrono::milliseconds poll{1000};
  size_t chunk_bytes = 512 << 10;  // item image bytes per chunk (one chunk transaction)
  int page_keys = 256;             // kv pairs per snapshot read (values are at most 100 KB)
  int restore_items = 2000;        // items per restore transaction (halved when too large)
  uint64_t restore_bytes = 1 << 20;
  int purge_keys = 256;  // keys cleared per transaction when a backup is deleted
  // Exports and imports (workers/exports.h): the directory standing for Amazon S3 (buckets are
  // its subdirectories) and the items per exported data file.
  std::string export_root;
  int64_t export_file_items = 100'000;
  // How often the point-in-time recovery histories are trimmed (workers/pitr.h).
  std::chrono::milliseconds pitr_trim_every{60'000};
  // How long a backup owned by another process may go without progress before this process
  // takes it over. 0: at once, for an engine that one process alone opens (the embedded engine:
  // any other owner has died).
  std::chrono::milliseconds takeover{0};
  store::LeaseOptions lease;                // the restores' leases
  Clock* clock = nullptr;                   // null: Clock::Real()
  std::string owner;                        // this process; empty: a random id
  const std::atomic<bool>* stop = nullptr;  // set: long work returns early, to resume later
  // Tests only (FDYNO_TEST_BACKUP_PAUSE_AFTER): after this many chunk or restore transactions
  // the worker does nothing more until stopped, standing for a process killed half-way. 0: never.
  int pause_after = 0;
  std::atomic<int>* steps = nullptr;  // the transactions counted for pause_after
};

struct BackupStats {
  int backups_completed = 0;
  int backups_failed = 0;
  int restores_completed = 0;
  int restores_failed = 0;
  int64_t items = 0;  // items copied into backups or restored
};

// Runs backup `id` to its end (AVAILABLE, or removed when it cannot be made). Does nothing when
// it is not CREATING or another process holds it.
Result<BackupStats> RunBackup(kv::Database& db, store::Catalog& catalog, const std::string& id,
                              const BackupWorkerOptions& options);
// Runs the restore into table `table_id` to its end (ACTIVE, or dropped), unless another
// process holds its lease.
Result<BackupStats> RunRestore(kv::Database& db, store::Catalog& catalog, int64_t table_id,
                               const BackupWorkerOptions& options);
// The key of the lease on the restore into table `table_id`, from a backup or to a point in
// time (workers/pitr.h).
std::string RestoreLeaseKey(int64_t table_id);

// The table a restore job writes: its account and name.
struct RestoreTarget {
  std::string account;
  std::string region;
  std::string table_name;
};
// Drops table `table_id` of a restore that cannot finish (a backup's or a point in time's): in
// one transaction, its job record at `job_key` (read by `read_job`; no job: nothing to do) is
// cleared, its lease released and the table dropped when it is still that table; then the
// dropped table's data is purged (a purge left unfinished is the purge worker's, workers/purge.h).
Status AbandonRestore(
    kv::Database& db, store::Catalog& catalog, int64_t table_id, const std::string& job_key,
    const std::function<Result<std::optional<RestoreTarget>>(kv::Transaction&)>& read_job,
    const BackupWorkerOptions& options);
// Every CREATING backup, every restore, then the purge of deleted backups' chunks.
Result<BackupStats> RunBackupPass(kv::Database& db, store::Catalog& catalog,
                                  const BackupWorkerOptions& options);

// A thread running RunBackupPass, then the restores to a point in time (workers/pitr.h), then
// the exports and imports (workers/exports.h), every
// options.poll (and at once when woken), and trimming point-in-time recovery histories every
// options.pitr_trim_every.
class BackupWorker {
 public:
  BackupWorker(kv::Database* db, store::Catalog* catalog, BackupWorkerOptions options);
  void Start();
  // Returns once the current chunk or batch is written; the rest resumes later. Also on
  // destruction.
  void Stop();
  void Wake();  // a backup or restore was requested

 private:
  void Pass();
  kv::Database* db_;
  store::Catalog* catalog_;
  BackupWorkerOptions options_;
  std::atomic<int> steps_{0};
  std::chrono::steady_clock::time_point last_trim_{};  // the worker thread's only
  Periodic periodic_;                                  // last: stopped before the rest is destroyed
};

}  // namespace fdyno::workers
