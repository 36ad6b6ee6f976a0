// Reopening RocksDB after a failed write.
//
// On disk the engine never writes again to a RocksDB whose write failed (commit_pipeline.cc,
// WritesResumed, says why DB::Resume is not enough in RocksDB 7.8.3). Some failures also leave
// a fatal background error that only closing and opening RocksDB ends: a disk that fills while
// RocksDB switches to a new write-ahead log, a MANIFEST write that fails. RocksDB still serves
// reads meanwhile. Every acknowledged write is in the synced log or the table files, so the
// reopened RocksDB holds all of them (with durability none: in the page cache, which the
// process still shares); a write that failed was answered commit_unknown_result and may or may
// not be there.
//
// RocksDB may not be opened twice in one process, so the old one is closed first, once nobody
// reads it: it is retired, the published views are withdrawn (new transactions answer
// transaction_too_old, which kv::Run retries), and every read of a view of the retired RocksDB
// answers transaction_too_old too, so its holders let go; commits are refused meanwhile. Reads
// resume on the reopened one. Only the committer thread reopens, in place of batches (and
// polling while nothing is written), only when the disk has room again. A failed open leaves no
// RocksDB to read until a later try opens it; readers that outlast the wait make it give up.
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <spdlog/spdlog.h>

#include "kv/engines/embedded/engine.h"

namespace fdyno::kv::embedded {
namespace {

// How often a reopen may begin, or an open be retried, while the fault lasts; how long a reopen
// waits for the readers of the retired RocksDB (then it gives up, and waits as long to retry).
constexpr std::chrono::seconds kReopenInterval{1};
constexpr std::chrono::seconds kDrainTimeout{10};

// Whether the disk holding path has room for what an open writes (a new log, a new MANIFEST,
// and the memtables that the replay of the old log flushes). Unknown counts as room.
bool HasRoom(const rocksdb::Options& options, const std::string& path) {
  uint64_t free = 0;
  rocksdb::Env* env = options.env != nullptr ? options.env : rocksdb::Env::Default();
  if (!env->GetFreeSpace(path, &free).ok()) return true;
  return free >= 2 * options.write_buffer_size;
}

}  // namespace

rocksdb::Status EmbeddedDatabase::ReopenAfterFailedWrite(const rocksdb::Status& failure) {
  // In memory nothing holds the memtables but RocksDB itself (no log): closing loses them.
  if (write_options_.disableWAL) return failure;
  if (!ReopenPending()) {
    const auto now = std::chrono::steady_clock::now();
    if (now < next_reopen_) return failure;
    next_reopen_ = now + kReopenInterval;
    if (!HasRoom(rocks_options_, rocks_path_)) return failure;
    spdlog::warn("embedded engine: reopening RocksDB after a failed write: {}", failure.ToString());
    Retire();
  }
  return FinishReopen();
}

void EmbeddedDatabase::Retire() {
  retiring_ = rocks_;
  retiring_->retired.store(true);
  retire_deadline_ = std::chrono::steady_clock::now() + kDrainTimeout;
  std::lock_guard<std::mutex> lock(view_mu_);
  current_.reset();
  views_.clear();
}

rocksdb::Status EmbeddedDatabase::FinishReopen() {
  const auto now = std::chrono::steady_clock::now();
  if (retiring_) {
    // Held by rocks_, retiring_ and each view still held: by a reader, or by a commit queued
    // behind this batch, which the committer refuses (and so lets go of) meanwhile.
    if (retiring_.use_count() > 2) {
      if (now < retire_deadline_) return rocksdb::Status::Busy("RocksDB is being reopened");
      spdlog::warn("embedded engine: readers held RocksDB for {} s; the reopen waits",
                   kDrainTimeout.count());
      retiring_->retired.store(false);
      retiring_.reset();
      Publish(last_version_);
      next_reopen_ = now + kDrainTimeout;
      return rocksdb::Status::Busy("readers held the RocksDB being reopened");
    }
    {
      std::lock_guard<std::mutex> lock(rocks_mu_);
      rocks_.reset();
    }
    // A metrics collection may still hold it for a moment; nothing else can take it now.
    while (retiring_.use_count() > 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    retiring_.reset();  // closes it
  } else if (now < next_reopen_) {
    return rocksdb::Status::IOError("RocksDB is closed; reopening it failed");
  }
  rocksdb::Status s = OpenAgain();
  if (!s.ok()) next_reopen_ = now + kReopenInterval;
  return s;
}

rocksdb::Status EmbeddedDatabase::OpenAgain() {
  Result<std::shared_ptr<RocksInstance>> opened = OpenInstance(/*in_memory=*/false);
  if (!opened.ok()) {
    spdlog::error("embedded engine: reopening RocksDB failed: {}", opened.error().message);
    return rocksdb::Status::IOError("reopening RocksDB failed", opened.error().message);
  }
  {
    std::lock_guard<std::mutex> lock(rocks_mu_);
    rocks_ = std::move(*opened);
  }
  {
    std::lock_guard<std::mutex> lock(reported_mu_);
    reported_ = {};  // RocksDB's cumulative statistics start again from zero
  }
  // The failed batch may have reached the log and be applied now, unknown to the resolver:
  // every transaction that read before the reopen conflicts.
  resolver_.AddRange(std::string(), std::string(kMaxKeyBytes + 1, '\xff'), last_version_);
  Publish(last_version_);
  write_failed_ = false;  // also when the reopen finished while nothing was written
  spdlog::warn("embedded engine: RocksDB reopened; writes resume");
  return rocksdb::Status::OK();
}

}  // namespace fdyno::kv::embedded
