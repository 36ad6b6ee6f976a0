#include "workers/pitr.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/stop_flag.h"
#include "kv/run.h"
#include "model/item_codec.h"
#include "store/items.h"
#include "store/mutation.h"
#include "store/pitr.h"
#include "workers/tables.h"

namespace fdyno::workers {
namespace {

using store::PitrRestoreJob;

Clock* ClockOf(const BackupWorkerOptions& o) {
  return o.clock != nullptr ? o.clock : Clock::Real();
}

// Long work logs its progress every this many batches.
constexpr int64_t kLogEvery = 64;
// Transactions of one table's retention per pass: the rest waits for the next pass.
constexpr int kTrimTransactionsPerTable = 64;

enum class Step { kMore, kFinished, kGone, kElsewhere };

struct Batch {
  Step step = Step::kMore;
  int items = 0;
};

Error Unrecoverable(std::string message) {
  return Error::Internal(std::move(message)).WithCause(ErrorCause::kUnrecoverable);
}

// Marks the restored table ACTIVE and forgets its job.
Status Finish(kv::Transaction& tx, store::Catalog& catalog, const store::TableInfo& target) {
  store::TableInfo active = target;
  active.status = store::TableStatus::kActive;
  if (active.restore) active.restore->in_progress = false;
  FDYNO_RETURN_IF_ERROR(catalog.Update(tx, active));
  tx.Clear(store::PitrRestoreJobKey(target.id));
  return Status::Ok();
}

Status WriteStaged(kv::Transaction& tx, store::Mutation& mutation) {
  FDYNO_ASSIGN_OR_RETURN(store::Written written, mutation.Write(tx));
  if (!written.ok()) {
    return Unrecoverable(
        "restoring to a point in time would take an item collection past its "
        "limit");
  }
  return Status::Ok();
}

// Copies one page of the source's items (as they are now) into the target.
Result<Batch> CopyBatch(kv::Transaction& tx, const store::TableInfo& source,
                        const store::TableInfo& target, PitrRestoreJob& job, int items,
                        const BackupWorkerOptions& options) {
  store::Mutation mutation({.now_ms = ClockOf(options)->WallMillis()});
  // Snapshot reads: a restore never makes the source's writers retry, nor retries for them.
  PageLimits limits{.items = items, .bytes = options.restore_bytes, .snapshot = true};
  FDYNO_ASSIGN_OR_RETURN(
      ItemPage page,
      VisitItemPage(tx, source, job.next_key, limits,
                    [&](std::string_view key, const model::Item& item) -> Status {
                      std::string target_key =
                          store::ItemKeyFromSuffix(target.id, store::ItemSuffix(source.id, key));
                      FDYNO_ASSIGN_OR_RETURN(store::CurrentItem current,
                                             store::ReadCurrent(tx, target, std::move(target_key),
                                                                /*decode=*/false));
                      mutation.Stage(target, std::move(current), item);
                      return Status::Ok();
                    }));
  FDYNO_RETURN_IF_ERROR(WriteStaged(tx, mutation));
  job.items += page.items;
  if (page.last) {
    job.phase = PitrRestoreJob::Phase::kUndo;
    job.next_key.clear();
    job.undo_end.clear();
  } else {
    job.next_key = page.next;
  }
  tx.Set(store::PitrRestoreJobKey(target.id), store::EncodePitrRestoreJob(job));
  return Batch{Step::kMore, page.items};
}

// Undoes one page of the source's history, newest record first, down to the restore time.
Result<Batch> UndoBatch(kv::Transaction& tx, store::Catalog& catalog,
                        const store::TableInfo& target, PitrRestoreJob& job, int records,
                        const BackupWorkerOptions& options) {
  auto [begin, end] = store::HistoryRange(job.source_id, job.epoch);
  const std::string read_end = job.undo_end.empty() ? end : job.undo_end;
  // Enough keys for a whole record of the largest size (64 parts) and more.
  const int limit = std::max(options.page_keys, 160);
  FDYNO_ASSIGN_OR_RETURN(
      kv::RangeResult page,
      tx.GetRange(begin, read_end, {.limit = limit, .reverse = true, .snapshot = true}));
  // Per item, the image before the oldest change of this page that is undone: later (older)
  // records replace earlier ones.
  std::map<std::string, std::optional<std::string>> images;
  store::ReverseUndoAssembler assembler;
  std::string cursor = read_end;
  bool reached = false;
  int undone = 0;
  uint64_t bytes = 0;
  for (const kv::KeyValue& kv : page.kvs) {
    if (undone >= records || bytes >= options.restore_bytes) break;
    FDYNO_ASSIGN_OR_RETURN(std::optional<store::ReverseUndoAssembler::Assembled> r,
                           assembler.Add(kv));
    if (!r) continue;
    if (r->record.time_ms <= job.time_ms) {
      reached = true;  // this change and every one before it stay
      break;
    }
    bytes += r->record.old_image ? r->record.old_image->size() : 0;
    images.insert_or_assign(std::move(r->record.item_suffix), std::move(r->record.old_image));
    cursor = r->key;
    ++undone;
  }
  // The bottom of the history: every change in it is after the restore time (parts without a
  // head there are what a trim left of a record before the restore time).
  if (!reached && !page.more && undone < records && bytes < options.restore_bytes) reached = true;
  store::Mutation mutation({.now_ms = ClockOf(options)->WallMillis()});
  for (auto& [suffix, image] : images) {
    std::optional<model::Item> next;
    if (image) {
      Result<model::Item> decoded = model::DecodeStoredItem(*image);
      if (!decoded.ok()) return Unrecoverable(decoded.error().message);
      next = std::move(decoded).value();
    }
    FDYNO_ASSIGN_OR_RETURN(
        store::CurrentItem current,
        store::ReadCurrent(tx, target, store::ItemKeyFromSuffix(target.id, suffix),
                           /*decode=*/false));
    mutation.Stage(target, std::move(current), std::move(next));
  }
  FDYNO_RETURN_IF_ERROR(WriteStaged(tx, mutation));
  job.items += undone;
  if (reached) {
    FDYNO_RETURN_IF_ERROR(Finish(tx, catalog, target));
    return Batch{Step::kFinished, undone};
  }
  if (undone == 0) return Unrecoverable("a history record does not fit one page");
  job.undo_end = cursor;
  tx.Set(store::PitrRestoreJobKey(target.id), store::EncodePitrRestoreJob(job));
  return Batch{Step::kMore, undone};
}

// One bounded batch of the restore into `table_id`.
Result<Batch> RestoreBatch(kv::Database& db, store::Catalog& catalog, int64_t table_id, int items,
                           const BackupWorkerOptions& options) {
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt& attempt) -> Result<Batch> {
    FDYNO_ASSIGN_OR_RETURN(std::optional<PitrRestoreJob> job,
                           store::ReadPitrRestoreJob(tx, table_id));
    // After an ambiguous commit, a job gone is the last batch's doing.
    if (!job) return Batch{attempt.maybe_committed ? Step::kFinished : Step::kGone, 0};
    FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> target,
                           catalog.Find(tx, {job->account, job->region}, job->table_name));
    // The fence: this batch commits only while this process holds the restore's lease.
    FDYNO_ASSIGN_OR_RETURN(bool held,
                           store::TakeLease(tx, RestoreLeaseKey(table_id), options.lease));
    if (!held) return Batch{Step::kElsewhere, 0};
    if (!target || target->id != table_id) {
      tx.Clear(store::PitrRestoreJobKey(table_id));  // the table was dropped: nothing to finish
      FDYNO_RETURN_IF_ERROR(store::ReleaseLease(tx, RestoreLeaseKey(table_id), options.lease));
      return Batch{Step::kGone, 0};
    }
    FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> source,
                           catalog.Find(tx, {job->account, job->region}, job->source_name));
    if (!source || source->id != job->source_id) {
      return Unrecoverable("its source table " + job->source_name + " was deleted");
    }
    FDYNO_ASSIGN_OR_RETURN(Batch batch,
                           job->phase == PitrRestoreJob::Phase::kCopy
                               ? CopyBatch(tx, *source, *target, *job, items, options)
                               : UndoBatch(tx, catalog, *target, *job, items, options));
    if (batch.step == Step::kFinished) {
      FDYNO_RETURN_IF_ERROR(store::ReleaseLease(tx, RestoreLeaseKey(table_id), options.lease));
    }
    return batch;
  });
}

// Whether the restore time of the job of `table_id` is settled; nullopt when there is no job.
Result<std::optional<bool>> Settled(kv::Database& db, int64_t table_id,
                                    const BackupWorkerOptions& options) {
  kv::RunOptions ro;
  ro.read_only = true;
  return kv::Run(db, ro,
                 [&](kv::Transaction& tx, const kv::Attempt&) -> Result<std::optional<bool>> {
                   FDYNO_ASSIGN_OR_RETURN(std::optional<PitrRestoreJob> job,
                                          store::ReadPitrRestoreJob(tx, table_id));
                   if (!job) return std::optional<bool>();
                   return std::optional<bool>(ClockOf(options)->WallMillis() >=
                                              job->time_ms + store::kPitrSettleMs);
                 });
}

// The cutoff below which history `epoch` of `table` may go: its recovery period, but never
// past a restore that reads it. Reads the jobs (a conflicting read: a restore created after
// this read makes the trim's commit fail).
Result<int64_t> TrimCutoff(kv::Transaction& tx, const store::TableInfo& table, int64_t now_ms) {
  int64_t cutoff = now_ms - table.pitr.recovery_days * store::kMsPerDay;
  FDYNO_ASSIGN_OR_RETURN(std::vector<PitrRestoreJob> jobs, store::ListPitrRestoreJobs(tx));
  for (const PitrRestoreJob& j : jobs) {
    if (j.source_id == table.id && j.epoch == table.pitr.epoch)
      cutoff = std::min(cutoff, j.time_ms);
  }
  return cutoff;
}

// The histories of `table` that stay: the enabled one, and any a restore reads.
Result<std::vector<int64_t>> KeptHistories(kv::Transaction& tx, const store::TableInfo& table) {
  std::vector<int64_t> keep;
  if (table.pitr.enabled) keep.push_back(table.pitr.epoch);
  FDYNO_ASSIGN_OR_RETURN(std::vector<PitrRestoreJob> jobs, store::ListPitrRestoreJobs(tx));
  for (const PitrRestoreJob& j : jobs) {
    if (j.source_id == table.id) keep.push_back(j.epoch);
  }
  return keep;
}

Result<int64_t> TrimTable(kv::Database& db, store::Catalog& catalog,
                          const store::QualifiedName& name, const BackupWorkerOptions& options) {
  int64_t transactions = 0;
  enum class Phase { kTrim, kClear, kDone };
  for (Phase phase = Phase::kTrim;
       phase != Phase::kDone && transactions < kTrimTransactionsPerTable &&
       !StopRequested(options.stop);
       ++transactions) {
    FDYNO_ASSIGN_OR_RETURN(
        phase, kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Phase> {
          FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> t,
                                 catalog.Find(tx, name.scope(), name.name));
          if (!t || t->pitr.epoch == 0) return Phase::kDone;
          if (phase == Phase::kTrim && t->pitr.enabled) {
            FDYNO_ASSIGN_OR_RETURN(int64_t cutoff,
                                   TrimCutoff(tx, *t, ClockOf(options)->WallMillis()));
            FDYNO_ASSIGN_OR_RETURN(bool reached, store::TrimHistory(tx, t->id, t->pitr.epoch,
                                                                    cutoff, options.purge_keys));
            return reached ? Phase::kClear : Phase::kTrim;
          }
          FDYNO_ASSIGN_OR_RETURN(std::vector<int64_t> keep, KeptHistories(tx, *t));
          FDYNO_ASSIGN_OR_RETURN(bool none_left,
                                 store::ClearOtherHistories(tx, t->id, keep, options.purge_keys));
          return none_left ? Phase::kDone : Phase::kClear;
        }));
  }
  return transactions;
}

}  // namespace

Result<PitrStats> RunPitrRestore(kv::Database& db, store::Catalog& catalog, int64_t table_id,
                                 const BackupWorkerOptions& options) {
  PitrStats stats;
  FDYNO_ASSIGN_OR_RETURN(std::optional<bool> settled, Settled(db, table_id, options));
  if (!settled) return stats;
  if (!*settled) {
    ++stats.restores_waiting;
    return stats;
  }
  int batch = std::max(options.restore_items, 1);
  for (int64_t batches = 1; !StopRequested(options.stop); ++batches) {
    Result<Batch> step = RestoreBatch(db, catalog, table_id, batch, options);
    if (!step.ok() && step.error().is_kv() && step.error().kv_code == kv::kTransactionTooLarge &&
        batch > 1) {
      batch = std::max(batch / 2, 1);  // items with many index entries: smaller batches
      continue;
    }
    if (!step.ok()) {
      if (step.error().cause != ErrorCause::kUnrecoverable) return std::move(step).error();
      spdlog::error("point-in-time restore into table id {} failed, its table is dropped: {}",
                    table_id, step.error().message);
      FDYNO_RETURN_IF_ERROR(AbandonRestore(
          db, catalog, table_id, store::PitrRestoreJobKey(table_id),
          [&](kv::Transaction& tx) -> Result<std::optional<RestoreTarget>> {
            FDYNO_ASSIGN_OR_RETURN(std::optional<PitrRestoreJob> job,
                                   store::ReadPitrRestoreJob(tx, table_id));
            if (!job) return std::optional<RestoreTarget>();
            return std::optional<RestoreTarget>(
                RestoreTarget{job->account, job->region, job->table_name});
          },
          options));
      ++stats.restores_failed;
      return stats;
    }
    stats.items += step->items;
    if (batches % kLogEvery == 0) {
      spdlog::info(
          "point-in-time restore into table id {}: {} items and changes written by this "
          "process",
          table_id, stats.items);
    }
    if (step->step == Step::kFinished) {
      spdlog::info("point-in-time restore into table id {} finished", table_id);
      ++stats.restores_completed;
      return stats;
    }
    if (step->step == Step::kGone || step->step == Step::kElsewhere) return stats;
  }
  return stats;
}

Result<PitrStats> TrimHistories(kv::Database& db, store::Catalog& catalog,
                                const BackupWorkerOptions& options) {
  PitrStats stats;
  FDYNO_ASSIGN_OR_RETURN(auto tables, AllTables(db, catalog));
  for (const auto& t : tables) {
    if (t->pitr.epoch == 0) continue;
    Result<int64_t> n = TrimTable(db, catalog, {t->account, t->region, t->name}, options);
    if (!n.ok()) {
      spdlog::warn("point-in-time recovery history of {}: {}", t->name, n.error().message);
      continue;
    }
    stats.trim_transactions += *n;
  }
  return stats;
}

Result<PitrStats> RunPitrPass(kv::Database& db, store::Catalog& catalog,
                              const BackupWorkerOptions& options, bool trim) {
  kv::RunOptions ro;
  ro.read_only = true;
  FDYNO_ASSIGN_OR_RETURN(std::vector<PitrRestoreJob> jobs,
                         kv::Run(db, ro, [&](kv::Transaction& tx, const kv::Attempt&) {
                           return store::ListPitrRestoreJobs(tx);
                         }));
  PitrStats total;
  for (const PitrRestoreJob& job : jobs) {
    Result<PitrStats> r = RunPitrRestore(db, catalog, job.table_id, options);
    if (!r.ok()) {
      spdlog::warn("point-in-time restore into table {}: {}", job.table_name, r.error().message);
      continue;
    }
    total.restores_completed += r->restores_completed;
    total.restores_failed += r->restores_failed;
    total.restores_waiting += r->restores_waiting;
    total.items += r->items;
  }
  if (trim) {
    FDYNO_ASSIGN_OR_RETURN(PitrStats t, TrimHistories(db, catalog, options));
    total.trim_transactions = t.trim_transactions;
  }
  return total;
}

}  // namespace fdyno::workers
