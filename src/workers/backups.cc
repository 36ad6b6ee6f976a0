#include "workers/backups.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "base/stop_flag.h"
#include "kv/run.h"
#include "model/item_codec.h"
#include "model/stored_json.h"
#include "store/backups.h"
#include "store/item_cursor.h"
#include "store/items.h"
#include "store/layout.h"
#include "store/mutation.h"
#include "workers/exports.h"
#include "workers/pitr.h"
#include "workers/snapshot_reader.h"

namespace fdyno::workers {
namespace {

Clock* ClockOf(const BackupWorkerOptions& o) {
  return o.clock != nullptr ? o.clock : Clock::Real();
}

// Long work logs its progress every this many chunks or batches.
constexpr int64_t kLogEvery = 64;

// The pause_after test hook: counts a chunk or restore transaction, then waits for Stop once the
// count is reached.
void CountStep(const BackupWorkerOptions& o) {
  if (o.pause_after <= 0 || o.steps == nullptr) return;
  if (o.steps->fetch_add(1) + 1 != o.pause_after) return;
  spdlog::warn("backup worker paused after {} steps (FDYNO_TEST_BACKUP_PAUSE_AFTER)",
               o.pause_after);
  while (!StopRequested(o.stop)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// Why a backup cannot be made: the backup is then removed. Never matched by message text.
struct Unmakeable {
  std::string reason;
};

// ---- backups ----------------------------------------------------------------------------------

enum class Claim { kClaimed, kNotMine, kNothing };

// Takes backup `id` over for this process from an empty start, unless another live owner holds
// it. The claim conflicts with every chunk transaction of a previous owner (they read the
// record), so two processes never both write one backup.
Result<std::pair<Claim, store::BackupInfo>> ClaimBackup(kv::Database& db, const std::string& id,
                                                        const BackupWorkerOptions& options) {
  using Out = std::pair<Claim, store::BackupInfo>;
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Out> {
    FDYNO_ASSIGN_OR_RETURN(std::optional<store::BackupInfo> info, store::ReadBackup(tx, id));
    if (!info || info->status != store::BackupStatus::kCreating) {
      return Out{Claim::kNothing, store::BackupInfo{}};
    }
    const int64_t now = ClockOf(options)->WallMillis();
    const store::BackupProgress& p = info->progress;
    if (!p.owner.empty() && p.owner != options.owner &&
        now - p.heartbeat_ms < options.takeover.count()) {
      return Out{Claim::kNotMine, *info};
    }
    if (!p.owner.empty()) {
      spdlog::info("backup {}: starting again (owner {} stopped after {} items)", id, p.owner,
                   p.items);
    }
    info->progress = store::BackupProgress();
    info->progress.owner = options.owner;
    info->progress.heartbeat_ms = now;
    auto [begin, end] = store::ChunksRange(id);
    tx.ClearRange(begin, end);
    store::WriteBackup(tx, *info);
    return Out{Claim::kClaimed, *info};
  });
}

// A backup of a deleted table (SYSTEM) holds the table's data from the purge until it is made
// or abandoned.
void ReleaseDeletedTable(kv::Transaction& tx, const store::BackupInfo& b) {
  if (b.type == store::BackupType::kSystem) store::Catalog::ReleaseDropped(tx, b.table_id);
}

// Writes one chunk and the progress after it; `last` also marks the backup AVAILABLE. False when
// this process no longer owns the backup (nothing written).
Result<bool> WriteChunkStep(kv::Database& db, const store::BackupInfo& mine,
                            const store::ChunkBuilder& chunk, const store::BackupProgress& after,
                            bool last, const BackupWorkerOptions& options) {
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<bool> {
    FDYNO_ASSIGN_OR_RETURN(std::optional<store::BackupInfo> info, store::ReadBackup(tx, mine.id));
    if (!info || info->progress.owner != options.owner) return false;
    const store::BackupProgress& p = info->progress;
    if (p.chunks == after.chunks && p.items == after.items &&
        (!last || info->status == store::BackupStatus::kAvailable)) {
      return true;  // an attempt whose commit outcome was unknown (1021) did commit
    }
    if (info->status != store::BackupStatus::kCreating ||
        p.chunks != after.chunks - (chunk.items() > 0 ? 1 : 0)) {
      return false;
    }
    if (chunk.items() > 0) store::WriteChunk(tx, mine.id, after.chunks - 1, chunk);
    info->progress = after;
    info->progress.heartbeat_ms = ClockOf(options)->WallMillis();
    if (last) {
      info->status = store::BackupStatus::kAvailable;
      ReleaseDeletedTable(tx, *info);
    }
    store::WriteBackup(tx, *info);
    return true;
  });
}

// Removes a backup that cannot be made, if this process still owns it.
Status AbandonBackup(kv::Database& db, const std::string& id, const BackupWorkerOptions& options) {
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    FDYNO_ASSIGN_OR_RETURN(std::optional<store::BackupInfo> info, store::ReadBackup(tx, id));
    if (!info || info->progress.owner != options.owner) return Status::Ok();
    ReleaseDeletedTable(tx, *info);
    store::DeleteBackupRecord(tx, id);
    return Status::Ok();
  });
}

// Copies the table's items into chunks. Returns the items copied, nullopt when this process
// lost the backup or was stopped, or Unmakeable.
Result<std::optional<int64_t>> CopyItems(kv::Database& db, store::Catalog& catalog,
                                         const store::BackupInfo& mine,
                                         const BackupWorkerOptions& options,
                                         std::optional<Unmakeable>* unmakeable) {
  SnapshotReader reader(db);
  // A SYSTEM backup is of a dropped table whose data its drop holds; nothing writes it.
  if (mine.type != store::BackupType::kSystem) {
    FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> table,
                           reader.FindTable(catalog, mine.scope(), mine.table_name));
    if (!table || table->id != mine.table_id) {
      *unmakeable = Unmakeable{"its table was deleted before it started"};
      return std::optional<int64_t>();
    }
  }
  auto [begin, end] = store::layout::Items(mine.table_id).Range();
  store::BackupProgress progress = mine.progress;
  store::ChunkBuilder chunk;
  // Writes the chunk built so far with the progress after it; `last` marks the backup AVAILABLE.
  auto flush = [&](bool last) -> Result<bool> {
    store::BackupProgress after = progress;
    if (chunk.items() > 0) after.chunks = progress.chunks + 1;
    FDYNO_ASSIGN_OR_RETURN(bool mine_still, WriteChunkStep(db, mine, chunk, after, last, options));
    if (!mine_still) return false;
    progress = after;
    chunk.Clear();
    if (progress.chunks % kLogEvery == 0 && !last) {
      spdlog::info("backup {} of table {}: {} items copied", mine.id, mine.table_name,
                   progress.items);
    }
    CountStep(options);
    return true;
  };
  bool lost = false;  // another process owns the backup now
  auto visit = [&](const std::string& key, std::string_view image) -> Result<bool> {
    FDYNO_ASSIGN_OR_RETURN(uint64_t size, model::StoredItemSize(image));
    chunk.Add(image);
    ++progress.items;
    progress.bytes += static_cast<int64_t>(size);
    progress.next_key = store::ItemRangeEnd(key);
    if (chunk.bytes() < options.chunk_bytes) return true;
    FDYNO_ASSIGN_OR_RETURN(bool mine_still, flush(/*last=*/false));
    lost = !mine_still;
    return !lost;
  };
  store::ItemCursor cursor(begin, end);
  while (!cursor.done()) {
    if (StopRequested(options.stop)) return std::optional<int64_t>();
    FDYNO_RETURN_IF_ERROR(
        cursor.Step([&](const std::string& b,
                        const std::string& e) { return reader.GetRange(b, e, options.page_keys); },
                    visit));
    if (lost) return std::optional<int64_t>();
  }
  FDYNO_ASSIGN_OR_RETURN(bool mine_still, flush(/*last=*/true));
  if (!mine_still) return std::optional<int64_t>();
  return std::optional<int64_t>(progress.items);
}

// ---- restores ---------------------------------------------------------------------------------

enum class RestoreStep { kMore, kFinished, kGone, kElsewhere };

// One bounded batch of the restore into `table_id`: at most `items` items (and about
// options.restore_bytes) of the chunk at the cursor, written through the mutation path with the
// cursor; past the last chunk, the table becomes ACTIVE.
Result<std::pair<RestoreStep, int>> RestoreBatch(kv::Database& db, store::Catalog& catalog,
                                                 int64_t table_id, int items,
                                                 const BackupWorkerOptions& options) {
  using Out = std::pair<RestoreStep, int>;
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Out> {
    FDYNO_ASSIGN_OR_RETURN(std::optional<store::RestoreJob> job,
                           store::ReadRestoreJob(tx, table_id));
    if (!job) return Out{RestoreStep::kGone, 0};
    // The fence: this batch commits only while this process holds the restore's lease.
    FDYNO_ASSIGN_OR_RETURN(bool held,
                           store::TakeLease(tx, RestoreLeaseKey(table_id), options.lease));
    if (!held) return Out{RestoreStep::kElsewhere, 0};
    FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> table,
                           catalog.Find(tx, {job->account, job->region}, job->table_name));
    if (!table || table->id != table_id) {
      tx.Clear(store::RestoreJobKey(table_id));  // the table was dropped: nothing to finish
      FDYNO_RETURN_IF_ERROR(store::ReleaseLease(tx, RestoreLeaseKey(table_id), options.lease));
      return Out{RestoreStep::kGone, 0};
    }
    if (job->next_chunk >= job->chunks) {
      store::TableInfo active = *table;
      active.status = store::TableStatus::kActive;
      if (active.restore) active.restore->in_progress = false;
      FDYNO_RETURN_IF_ERROR(catalog.Update(tx, active));
      tx.Clear(store::RestoreJobKey(table_id));
      FDYNO_RETURN_IF_ERROR(store::ReleaseLease(tx, RestoreLeaseKey(table_id), options.lease));
      return Out{RestoreStep::kFinished, 0};
    }
    Result<std::optional<std::vector<std::string>>> images =
        store::ReadChunk(tx, job->backup_id, job->next_chunk);
    if (!images.ok() && images.error().is_kv()) return std::move(images).error();
    if (!images.ok() || !*images) {
      return Error::Internal("backup " + job->backup_id + " lacks a readable chunk " +
                             std::to_string(job->next_chunk))
          .WithCause(ErrorCause::kUnrecoverable);
    }
    store::Mutation mutation({.now_ms = ClockOf(options)->WallMillis()});
    const size_t first = static_cast<size_t>(job->next_item);
    size_t i = first;
    uint64_t bytes = 0;
    const std::vector<std::string>& chunk = **images;
    for (; i < chunk.size() && i - first < static_cast<size_t>(items) &&
           bytes < options.restore_bytes;
         ++i) {
      bytes += chunk[i].size();
      Result<model::Item> decoded = model::DecodeStoredItem(chunk[i]);
      if (!decoded.ok()) return std::move(decoded).error().WithCause(ErrorCause::kUnrecoverable);
      model::Item item = std::move(decoded).value();
      FDYNO_ASSIGN_OR_RETURN(
          store::CurrentItem current,
          store::ReadCurrent(tx, *table, store::ItemStorageKey(*table, item), /*decode=*/false));
      mutation.Stage(*table, std::move(current), std::move(item));
    }
    FDYNO_ASSIGN_OR_RETURN(store::Written written, mutation.Write(tx));
    if (!written.ok()) {
      return Error::Internal("restoring the backup would take an item collection past its limit")
          .WithCause(ErrorCause::kUnrecoverable);
    }
    job->items += static_cast<int64_t>(i - first);
    if (i >= chunk.size()) {
      ++job->next_chunk;
      job->next_item = 0;
    } else {
      job->next_item = static_cast<int64_t>(i);
    }
    tx.Set(store::RestoreJobKey(table_id), store::EncodeRestoreJob(*job));
    return Out{RestoreStep::kMore, static_cast<int>(i - first)};
  });
}

std::string RandomOwner() {
  std::mt19937_64 rng{std::random_device{}()};
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

}  // namespace

std::string RestoreLeaseKey(int64_t table_id) {
  return store::LeaseKey(kv::Tuple{"restore", table_id});
}

Status AbandonRestore(
    kv::Database& db, store::Catalog& catalog, int64_t table_id, const std::string& job_key,
    const std::function<Result<std::optional<RestoreTarget>>(kv::Transaction&)>& read_job,
    const BackupWorkerOptions& options) {
  FDYNO_RETURN_IF_ERROR(kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    FDYNO_ASSIGN_OR_RETURN(std::optional<RestoreTarget> job, read_job(tx));
    if (!job) return Status::Ok();
    tx.Clear(job_key);
    FDYNO_RETURN_IF_ERROR(store::ReleaseLease(tx, RestoreLeaseKey(table_id), options.lease));
    FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> table,
                           catalog.Find(tx, {job->account, job->region}, job->table_name));
    if (table && table->id == table_id) FDYNO_RETURN_IF_ERROR(catalog.Drop(tx, *table));
    return Status::Ok();
  }));
  Result<int> purged = catalog.PurgeDropped(db);
  if (!purged.ok()) spdlog::warn("restore: data removal deferred: {}", purged.error().message);
  return Status::Ok();
}

Result<BackupStats> RunBackup(kv::Database& db, store::Catalog& catalog, const std::string& id,
                              const BackupWorkerOptions& options) {
  BackupStats stats;
  FDYNO_ASSIGN_OR_RETURN(auto claim, ClaimBackup(db, id, options));
  if (claim.first != Claim::kClaimed) return stats;
  std::optional<Unmakeable> unmakeable;
  Result<std::optional<int64_t>> copied =
      CopyItems(db, catalog, claim.second, options, &unmakeable);
  if (!copied.ok() && copied.error().cause == ErrorCause::kSnapshotLost) {
    unmakeable = Unmakeable{"its read version aged out (the engine holds no snapshot longer)"};
  } else if (!copied.ok() && copied.error().cause == ErrorCause::kUnrecoverable) {
    unmakeable = Unmakeable{copied.error().message};
  } else if (!copied.ok()) {
    return std::move(copied).error();
  }
  if (unmakeable) {
    spdlog::warn("backup {} of table {} failed and was removed: {}", id, claim.second.table_name,
                 unmakeable->reason);
    FDYNO_RETURN_IF_ERROR(AbandonBackup(db, id, options));
    ++stats.backups_failed;
    return stats;
  }
  if (*copied) {
    spdlog::info("backup {} of table {} is AVAILABLE: {} items", id, claim.second.table_name,
                 **copied);
    ++stats.backups_completed;
    stats.items += **copied;
  }
  return stats;
}

Result<BackupStats> RunRestore(kv::Database& db, store::Catalog& catalog, int64_t table_id,
                               const BackupWorkerOptions& options) {
  BackupStats stats;
  int batch = std::max(options.restore_items, 1);
  for (int64_t batches = 1; !StopRequested(options.stop); ++batches) {
    Result<std::pair<RestoreStep, int>> step = RestoreBatch(db, catalog, table_id, batch, options);
    if (!step.ok() && step.error().is_kv() && step.error().kv_code == kv::kTransactionTooLarge &&
        batch > 1) {
      batch = std::max(batch / 2, 1);  // items with many index entries: smaller batches
      continue;
    }
    if (!step.ok()) {
      if (step.error().cause != ErrorCause::kUnrecoverable) return std::move(step).error();
      spdlog::error("restore into table id {} failed, its table is dropped: {}", table_id,
                    step.error().message);
      FDYNO_RETURN_IF_ERROR(AbandonRestore(
          db, catalog, table_id, store::RestoreJobKey(table_id),
          [&](kv::Transaction& tx) -> Result<std::optional<RestoreTarget>> {
            FDYNO_ASSIGN_OR_RETURN(std::optional<store::RestoreJob> job,
                                   store::ReadRestoreJob(tx, table_id));
            if (!job) return std::optional<RestoreTarget>();
            return std::optional<RestoreTarget>(
                RestoreTarget{job->account, job->region, job->table_name});
          },
          options));
      ++stats.restores_failed;
      return stats;
    }
    stats.items += step->second;
    if (batches % kLogEvery == 0) {
      spdlog::info("restore into table id {}: {} items written by this process", table_id,
                   stats.items);
    }
    if (step->first == RestoreStep::kMore) CountStep(options);
    if (step->first == RestoreStep::kFinished) {
      spdlog::info("restore into table id {} finished", table_id);
      ++stats.restores_completed;
      return stats;
    }
    if (step->first == RestoreStep::kGone || step->first == RestoreStep::kElsewhere) return stats;
  }
  return stats;
}

Result<BackupStats> RunBackupPass(kv::Database& db, store::Catalog& catalog,
                                  const BackupWorkerOptions& options) {
  struct Work {
    std::vector<std::string> backups;
    std::vector<int64_t> restores;
    std::vector<std::string> purges;
    std::vector<std::string> expired;  // SYSTEM backups past their retention
  };
  const int64_t now_ms = ClockOf(options)->WallMillis();
  kv::RunOptions ro;
  ro.read_only = true;
  FDYNO_ASSIGN_OR_RETURN(
      Work work, kv::Run(db, ro, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Work> {
        Work w;
        FDYNO_ASSIGN_OR_RETURN(std::vector<store::BackupInfo> backups,
                               store::ListBackupRecords(tx, "", 0));
        for (const store::BackupInfo& b : backups) {
          if (b.status == store::BackupStatus::kCreating) w.backups.push_back(b.id);
          if (b.type == store::BackupType::kSystem && b.status == store::BackupStatus::kAvailable &&
              now_ms >= b.created_ms + store::kSystemBackupRetentionMs) {
            w.expired.push_back(b.id);
          }
        }
        FDYNO_ASSIGN_OR_RETURN(std::vector<store::RestoreJob> jobs, store::ListRestoreJobs(tx));
        for (const store::RestoreJob& j : jobs) w.restores.push_back(j.table_id);
        FDYNO_ASSIGN_OR_RETURN(w.purges, store::PendingBackupPurges(tx));
        return w;
      }));
  BackupStats total;
  auto add = [&](const BackupStats& s) {
    total.backups_completed += s.backups_completed;
    total.backups_failed += s.backups_failed;
    total.restores_completed += s.restores_completed;
    total.restores_failed += s.restores_failed;
    total.items += s.items;
  };
  for (const std::string& id : work.backups) {
    Result<BackupStats> r = RunBackup(db, catalog, id, options);
    if (!r.ok()) {
      spdlog::warn("backup {}: {}", id, r.error().message);
      continue;
    }
    add(*r);
  }
  for (int64_t table_id : work.restores) {
    Result<BackupStats> r = RunRestore(db, catalog, table_id, options);
    if (!r.ok()) {
      spdlog::warn("restore into table id {}: {}", table_id, r.error().message);
      continue;
    }
    add(*r);
  }
  for (const std::string& id : work.expired) {
    FDYNO_RETURN_IF_ERROR(kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(std::optional<store::BackupInfo> b, store::ReadBackup(tx, id));
      if (b) store::DeleteBackupRecord(tx, id);
      return Status::Ok();
    }));
    spdlog::info("system backup {} expired and was removed", id);
    work.purges.push_back(id);
  }
  for (const std::string& id : work.purges) {
    for (bool finished = false; !finished && !StopRequested(options.stop);) {
      FDYNO_ASSIGN_OR_RETURN(finished, kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) {
                               return store::PurgeBackupChunks(tx, id, options.purge_keys);
                             }));
    }
  }
  return total;
}

BackupWorker::BackupWorker(kv::Database* db, store::Catalog* catalog, BackupWorkerOptions options)
    : db_(db),
      catalog_(catalog),
      options_(std::move(options)),
      periodic_("fdyno-backup", options_.poll, [this] { Pass(); }) {
  if (options_.owner.empty()) options_.owner = RandomOwner();
  options_.stop = periodic_.stop_flag();
  options_.steps = &steps_;
}

void BackupWorker::Start() { periodic_.Start(); }

void BackupWorker::Stop() { periodic_.Stop(); }

void BackupWorker::Wake() { periodic_.Wake(); }

void BackupWorker::Pass() {
  Result<BackupStats> r = RunBackupPass(*db_, *catalog_, options_);
  if (!r.ok()) spdlog::warn("backup pass: {}", r.error().message);
  const auto now = std::chrono::steady_clock::now();
  const bool trim = now - last_trim_ >= options_.pitr_trim_every;
  if (trim) last_trim_ = now;
  Result<PitrStats> p = RunPitrPass(*db_, *catalog_, options_, trim);
  if (!p.ok()) spdlog::warn("point-in-time recovery pass: {}", p.error().message);
  Result<ExportStats> e = RunExportPass(*db_, *catalog_, options_);
  if (!e.ok()) spdlog::warn("export and import pass: {}", e.error().message);
}

}  // namespace fdyno::workers
