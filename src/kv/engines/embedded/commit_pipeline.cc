// The embedded engine's commit pipeline: one committer thread takes every queued commit,
// checks each against the resolver, writes the accepted ones in one RocksDB WriteBatch (one WAL
// write, one fsync), publishes the new read view and answers each waiting commit (embedded.cc
// describes the whole engine). Also the in-memory mode's memory limit and reclaiming.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>
#include <spdlog/spdlog.h>

#include "base/allocator.h"
#include "base/thread_name.h"
#include "kv/engines/embedded/engine.h"

namespace fdyno::kv::embedded {

int64_t EmbeddedDatabase::Publish(int64_t version) {
  auto view = std::make_shared<ReadView>(rocks_, version);
  int64_t now = NowNs();
  std::lock_guard<std::mutex> lock(view_mu_);
  if (current_) current_->superseded_ns.store(now, std::memory_order_relaxed);
  current_ = view;
  views_[version] = view;
  while (!views_.empty() && views_.begin()->second.expired()) views_.erase(views_.begin());
  // Views held by long transactions keep older entries alive; sweep the rest now and then,
  // with a threshold that doubles so that many live views do not make every publish O(n).
  if (views_.size() > views_sweep_at_) {
    std::erase_if(views_, [](const auto& e) { return e.second.expired(); });
    views_sweep_at_ = std::max<size_t>(4096, 2 * views_.size());
  }
  return views_.begin()->first;  // the front is live: the loop above erased expired ones
}

Result<std::shared_ptr<ReadView>> EmbeddedDatabase::ViewAt(int64_t version, int64_t now_ns,
                                                           int64_t* read_ns) {
  std::lock_guard<std::mutex> lock(view_mu_);
  if (!current_) return KvErr(kTransactionTooOld, "RocksDB is being reopened");
  if (version == current_->version) {
    *read_ns = now_ns;
    return current_;
  }
  if (version > current_->version) return KvErr(kFutureVersion);
  auto it = views_.find(version);
  if (it != views_.end()) {
    if (std::shared_ptr<ReadView> v = it->second.lock()) {
      *read_ns = v->superseded_ns.load(std::memory_order_relaxed);
      return v;
    }
  }
  return KvErr(kTransactionTooOld, "no snapshot is held at that read version");
}

std::shared_ptr<ReadView> EmbeddedDatabase::PinnedView() {
  // The committer alone writes RocksDB, and publishes a version only after writing it: a
  // snapshot taken right after reading the current view shows exactly that view's state when
  // RocksDB's sequence number did not move in between. A commit that lands in between (a few
  // hundred nanoseconds against at least tens of microseconds per batch) makes it try again.
  constexpr int kAttempts = 1'000'000;
  for (int i = 0; i < kAttempts; ++i) {
    std::shared_ptr<ReadView> current = CurrentView();
    if (!current) return nullptr;  // being reopened: the transaction's reads answer too old
    auto view = std::make_shared<ReadView>(current->rocks, current->version);
    if (view->snapshot->GetSequenceNumber() == current->snapshot->GetSequenceNumber()) {
      return view;
    }
    std::this_thread::yield();
  }
  return CurrentView();  // correct too; it only keeps the resolver's horizon back meanwhile
}

void EmbeddedDatabase::Commit(CommitRequest* r) {
  std::unique_lock<std::mutex> lock(queue_mu_);
  if (stopping_) {
    r->status = KvErr(kIoError, "io_error: the database is closing");
    lock.unlock();
    if (r->complete) {
      std::function<void()> complete = std::move(r->complete);  // may destroy r
      complete();
    }
    return;
  }
  const bool wake = queue_.empty();  // otherwise the committer is already due to look
  queue_.push_back(r);
  if (wake) queue_cv_.notify_one();
  if (!r->complete) r->cv.wait(lock, [r] { return r->done; });
}

void EmbeddedDatabase::CommitterLoop() {
  std::vector<CommitRequest*> batch;
  std::vector<std::function<void()>> completions;
  for (;;) {
    batch.clear();
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      auto due = [this] { return stopping_ || !queue_.empty(); };
      if (!ReopenPending()) {
        queue_cv_.wait(lock, due);
      } else if (!queue_cv_.wait_for(lock, kReopenPoll, due)) {
        lock.unlock();
        FinishReopen().PermitUncheckedError();  // the next batch sees how it went
        continue;
      }
      if (queue_.empty()) return;  // stopping, and every queued commit is answered
      if (before_batch_) {
        lock.unlock();
        before_batch_();
        lock.lock();  // the queue is still not empty: only this thread takes from it
      }
      size_t bytes = 0;
      while (!queue_.empty() && batch.size() < kMaxBatchRequests &&
             (batch.empty() || bytes + queue_.front()->bytes <= kMaxBatchBytes)) {
        bytes += queue_.front()->bytes;
        batch.push_back(queue_.front());
        queue_.pop_front();
      }
    }
    ProcessBatch(batch);
    completions.clear();
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      for (CommitRequest* b : batch) {
        if (b->complete) {
          // The callback may destroy the request (and its transaction): take it out first.
          completions.push_back(std::move(b->complete));
        } else {
          b->done = true;
          b->cv.notify_one();  // under the lock: the waiter destroys b once it sees done
        }
      }
    }
    // Destroyed once run: they hold what their callers keep alive until answered.
    for (auto& complete : completions) std::exchange(complete, nullptr)();
    completions.clear();
  }
}

void EmbeddedDatabase::ClearRangeInto(rocksdb::WriteBatch* wb, const std::string& begin,
                                      const std::string& end,
                                      const std::set<std::string, std::less<>>& batch_keys) {
  // RocksDB range tombstones make every later read in their memtable and files slower (each
  // read consults the fragmented tombstones), so a range that holds few keys is cleared with
  // point deletes instead. The committer is the only writer, so the latest state read here plus
  // the keys written earlier in this batch are exactly what the range holds when it applies.
  rocksdb::ReadOptions ro;
  rocksdb::Slice upper(end);
  ro.iterate_upper_bound = &upper;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(rocks_->db->NewIterator(ro, rocks_->data()));
  std::vector<std::string> keys;
  for (it->Seek(begin); it->Valid() && keys.size() <= kMaxPointDeletes; it->Next()) {
    keys.push_back(it->key().ToString());
  }
  if (keys.size() > kMaxPointDeletes || !it->status().ok()) {
    wb->DeleteRange(rocks_->data(), begin, end).PermitUncheckedError();
    return;
  }
  for (auto k = batch_keys.lower_bound(begin); k != batch_keys.end() && *k < end; ++k) {
    keys.push_back(*k);
  }
  for (const std::string& k : keys) wb->Delete(rocks_->data(), k).PermitUncheckedError();
}

// A failed write puts RocksDB into its background-error state, in which it refuses every later
// write until it recovers. In memory the committer asks DB::Resume before the next batch, which
// recovers (flushing the memtables), answers Busy while RocksDB's own recovery is under way, or
// fails while the fault lasts. On disk it never writes to that RocksDB again: once the disk has
// room it closes and reopens it (reopen.cc). DB::Resume is not enough there. In RocksDB 7.8.3
// a write whose log append or sync failed leaves that log's writer failed, and only a memtable
// switch during recovery mends it (it retries the writer's buffer and moves to a new log); when
// every memtable is empty (a flush or log switch just happened, inside the failed write itself)
// Resume switches nothing, and the next write to the failed writer aborts the process on
// RocksDB's assertion (Debian's library has them on; without them every later write would
// fail). And the failed batch's record may be whole in the log while absent from the memtable:
// after Resume it would reappear only at the next restart. Reopened, the state served is the
// state the log holds. Until writes resume each batch is refused whole before anything is
// written: io_error, nothing applied. Answers false when it refused the batch.
bool EmbeddedDatabase::WritesResumed(const std::vector<CommitRequest*>& batch) {
  if (!write_failed_) return true;
  rocksdb::Status s =
      write_options_.disableWAL ? rocks_->db->Resume() : ReopenAfterFailedWrite(write_failure_);
  if (s.ok()) {
    spdlog::warn("embedded engine: writes resumed after a failed write");
    write_failed_ = false;
    return true;
  }
  for (CommitRequest* r : batch) {
    r->status = IoErr("writes are stopped after a failed write", s);
  }
  return false;
}

void EmbeddedDatabase::ProcessBatch(const std::vector<CommitRequest*>& batch) {
  if (!WritesResumed(batch)) return;
  int64_t now = NowNs();
  int64_t version = last_version_ + 1;
  rocksdb::WriteBatch wb;
  std::vector<CommitRequest*> accepted;
  uint16_t order = 0;
  size_t written = 0;  // conflict ranges added to the resolver
  // Keys written earlier in this batch, which a later ClearRange in it must also delete when it
  // turns into point deletes (see ClearRangeInto). Tracked only for batches that clear ranges.
  bool track_keys = false;
  for (const CommitRequest* r : batch) {
    for (const Mutation& m : *r->mutations) track_keys |= m.op == Op::kClearRange;
  }
  std::set<std::string, std::less<>> batch_keys;
  // The memory keys this batch writes, with their values after it (see MemoryKey).
  std::map<std::string, MemoryKey, std::less<>> staged;
  auto stage = [&](std::string_view key) -> MemoryKey* {
    if (memory_keys_.empty()) return nullptr;
    auto it = staged.find(key);
    if (it != staged.end()) return &it->second;
    std::lock_guard<std::mutex> lock(memory_mu_);
    auto m = memory_keys_.find(key);
    if (m == memory_keys_.end()) return nullptr;
    return &staged.emplace(std::string(key), m->second).first->second;
  };
  MemoryUse memory;
  if (memory_limited()) memory.held = MemoryHeld();
  bool refused_for_memory = false;
  for (CommitRequest* r : batch) {
    if (r->cancelled->load(std::memory_order_relaxed)) {
      r->status = KvErr(kTransactionCancelled);
      continue;
    }
    if (!r->read_points->empty() || !r->read_ranges->empty()) {
      if (r->read_version < resolver_.horizon() || now - r->read_time_ns > kMaxAgeNs) {
        r->status = KvErr(kTransactionTooOld);
        continue;
      }
      bool conflict = false;
      for (const std::string& k : *r->read_points) {
        if (resolver_.PointConflicts(k, r->read_version)) {
          conflict = true;
          break;
        }
      }
      for (size_t i = 0; !conflict && i < r->read_ranges->size(); ++i) {
        const KeyRange& kr = (*r->read_ranges)[i];
        conflict = resolver_.RangeConflicts(kr.begin, kr.end, r->read_version);
      }
      if (conflict) {
        r->status = KvErr(kNotCommitted);
        continue;
      }
    }
    if (memory_limited()) {
      if (!WithinMemoryLimit(r, &memory)) {
        refused_for_memory = true;
        continue;
      }
      freed_since_reclaim_ |= r->frees;
    }
    std::string stamp = MakeVersionstamp(version, order);
    for (const std::string& k : *r->write_points) resolver_.AddPoint(k, version);
    for (const KeyRange& kr : *r->write_ranges) resolver_.AddRange(kr.begin, kr.end, version);
    for (const Mutation& m : *r->mutations) {
      switch (m.op) {
        case Op::kSet:
          if (track_keys) batch_keys.insert(m.a);
          wb.Put(rocks_->data(), m.a, m.b).PermitUncheckedError();
          if (MemoryKey* mk = stage(m.a)) mk->value = m.b;
          break;
        case Op::kClear:
          wb.Delete(rocks_->data(), m.a).PermitUncheckedError();
          if (MemoryKey* mk = stage(m.a)) mk->value.reset();
          break;
        case Op::kClearRange:
          ClearRangeInto(&wb, m.a, m.b, batch_keys);
          for (auto k = memory_keys_.lower_bound(m.a); k != memory_keys_.end() && k->first < m.b;
               ++k) {
            stage(k->first)->value.reset();
          }
          break;
        case Op::kAdd: {
          if (track_keys) batch_keys.insert(m.a);
          std::string operand(1, kAddOperandTag);
          operand += m.b;
          wb.Merge(rocks_->data(), m.a, operand).PermitUncheckedError();
          if (MemoryKey* mk = stage(m.a); mk != nullptr && mk->known) {
            mk->value = ApplyAdd(mk->value, m.b);
          }
          break;
        }
        case Op::kVersionstampedKey: {
          std::string key = SubstituteVersionstamp(m.a, stamp);
          resolver_.AddPoint(key, version);
          if (track_keys) batch_keys.insert(key);
          wb.Put(rocks_->data(), key, m.b).PermitUncheckedError();
          if (MemoryKey* mk = stage(key)) mk->value = m.b;
          break;
        }
        case Op::kVersionstampedValue: {
          if (track_keys) batch_keys.insert(m.a);
          std::string value = SubstituteVersionstamp(m.b, stamp);
          wb.Put(rocks_->data(), m.a, value).PermitUncheckedError();
          if (MemoryKey* mk = stage(m.a)) mk->value = std::move(value);
          break;
        }
      }
    }
    written += r->write_points->size() + r->write_ranges->size() + r->mutations->size();
    r->version = version;
    r->batch_order = order++;
    accepted.push_back(r);
  }
  // Reclaim when deletes were accepted near the limit. Asked for once this batch is written (or
  // at once when nothing is): the reclaim's flush must find the batch's deletes in the memtable,
  // or the compaction after it leaves their data behind (it did when the reclaim thread ran
  // before the write, on a busy machine).
  const bool reclaim = memory_limited() && freed_since_reclaim_ &&
                       (refused_for_memory || memory.held + memory.growth > memory_limit_ / 4 * 3);
  if (reclaim) freed_since_reclaim_ = false;
  if (accepted.empty()) {
    if (reclaim) RequestReclaim();
    return;
  }
  wb.Put(rocks_->meta(), kLastVersionKey, EncodeBigEndian64(version)).PermitUncheckedError();
  batch_transactions_->Observe(static_cast<int64_t>(accepted.size()));
  batch_bytes_->Observe(static_cast<int64_t>(wb.GetDataSize()));
  const auto write_start = std::chrono::steady_clock::now();
  rocksdb::Status s = rocks_->db->Write(write_options_, &wb);
  if (reclaim) RequestReclaim();
  write_seconds_->Observe(std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::steady_clock::now() - write_start)
                              .count());
  // Versions never repeat, even after a failed write that may have reached the WAL.
  last_version_ = version;
  if (!staged.empty()) {
    // Before Publish: a reader of the new version must find the new values. On a failed
    // write nobody knows whether they were applied, so those keys are read from RocksDB.
    std::lock_guard<std::mutex> lock(memory_mu_);
    for (auto& [key, m] : staged) {
      MemoryKey& entry = memory_keys_[key];
      entry.known = s.ok() && m.known;
      entry.version = version;
      entry.value = std::move(m.value);
    }
  }
  if (!s.ok()) {
    write_failed_ = true;
    write_failure_ = s;
    rocks_->write_failed.store(true);
    spdlog::error("embedded engine: a commit of {} transactions failed: {}", accepted.size(),
                  s.ToString());
    for (CommitRequest* r : accepted) {
      r->status = Error::Kv(kCommitUnknownResult,
                            "commit_unknown_result: RocksDB write failed: " + s.ToString());
      r->version = -1;
    }
    return;
  }
  const int64_t oldest_view = Publish(version);

  // Forget writes that no transaction can still conflict with; read versions below the
  // horizon are then too old. A commit checks its reads at its transaction's read version,
  // whose view the transaction holds until its commit is answered, and a view that died never
  // comes back (ViewAt answers too old): writes at or below the oldest live view are needed
  // by nobody. Under load that keeps the resolver to the last few milliseconds of writes
  // instead of 5 s of them (a smaller hash map, cheaper lookups). Writes older than the 5 s
  // window go even while an older view lives: its transaction is too old anyway.
  // Each batch advances the sweep by a bounded amount of work, proportional to what it added.
  history_.emplace_back(version, now);
  while (!history_.empty() && history_.front().second < now - kMaxAgeNs) {
    resolver_.SetPendingHorizon(history_.front().first);
    history_.pop_front();
  }
  resolver_.SetPendingHorizon(oldest_view);
  resolver_.PruneStep(kPruneBudget + 4 * written);
  const auto remembered = static_cast<int64_t>(resolver_.point_writes());
  resolver_writes_->Add(remembered - std::exchange(resolver_writes_reported_, remembered));
}

uint64_t EmbeddedDatabase::MemoryHeld() const {
  uint64_t memtables = 0, tables = 0;
  // size-all-mem-tables: the active, the immutable and the flushed but still pinned ones.
  // total-sst-files-size: the files of every version still referenced.
  rocks_->db->GetAggregatedIntProperty(rocksdb::DB::Properties::kSizeAllMemTables, &memtables);
  rocks_->db->GetAggregatedIntProperty(rocksdb::DB::Properties::kTotalSstFilesSize, &tables);
  return memtables + tables;
}

uint64_t EmbeddedDatabase::MemoryLive() const {
  uint64_t memtables = 0, tables = 0;
  // cur-size-all-mem-tables: the active and the unflushed immutable ones.
  // live-sst-files-size: the files of the current version.
  rocks_->db->GetAggregatedIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &memtables);
  rocks_->db->GetAggregatedIntProperty(rocksdb::DB::Properties::kLiveSstFilesSize, &tables);
  return memtables + tables;
}

// A write that only adds counts everything memory holds, so memory stays within the limit.
// A write that also deletes counts only the live data, plus the reserve: what memory holds
// beside it are older copies of that data, which RocksDB drops when the compaction or the
// iterator still reading them ends (a running compaction keeps the files that another one
// replaced: 4 MiB of them at a 24 MiB limit under load). Counting them refused deletes exactly
// while the compactions that make room ran.
bool EmbeddedDatabase::WithinMemoryLimit(CommitRequest* r, MemoryUse* use) {
  uint64_t used = use->held + use->growth;
  if (used + r->growth_bytes <= memory_limit_) {
    use->growth += r->growth_bytes;
    return true;
  }
  if (r->frees) {
    if (!use->live) use->live = MemoryLive();
    used = *use->live + use->growth;
    const uint64_t reserve = std::max(memory_limit_ / 16, kMinDeleteReserveBytes);
    if (used + r->growth_bytes <= memory_limit_ + reserve) {
      use->growth += r->growth_bytes;
      return true;
    }
  }
  constexpr double kMiB = 1 << 20;
  char message[320];
  std::snprintf(message, sizeof message,
                "The in-memory database is full: it holds %.1f MiB of its %.1f MiB limit "
                "(fdyno serve --in-memory-limit), and this write needs %.1f MiB more. Delete "
                "items or tables, or restart with a larger limit",
                static_cast<double>(used) / kMiB, static_cast<double>(memory_limit_) / kMiB,
                static_cast<double>(r->growth_bytes) / kMiB);
  r->status = Error::Make(ErrorType::kLimitExceeded, message);
  return false;
}

void EmbeddedDatabase::RequestReclaim() {
  const uint64_t seq = rocks_->db->GetLatestSequenceNumber();  // past the batch just written
  {
    std::lock_guard<std::mutex> lock(reclaim_mu_);
    reclaim_wanted_ = true;
    reclaim_after_seq_ = std::max(reclaim_after_seq_, seq);
  }
  reclaim_cv_.notify_one();
}

void EmbeddedDatabase::RequestMemoryRelease() {
  {
    std::lock_guard<std::mutex> lock(reclaim_mu_);
    release_wanted_ = true;
  }
  reclaim_cv_.notify_one();
}

void EmbeddedDatabase::AwaitSnapshotsFrom(RocksInstance& rocks, uint64_t seq,
                                          std::unique_lock<std::mutex>& lock) {
  const auto deadline = std::chrono::steady_clock::now() + kReclaimSnapshotWait;
  while (!reclaim_stop_) {
    uint64_t snapshots = 0, oldest = 0;
    rocks.db->GetIntProperty(rocksdb::DB::Properties::kNumSnapshots, &snapshots);
    rocks.db->GetIntProperty(rocksdb::DB::Properties::kOldestSnapshotSequence, &oldest);
    if (snapshots == 0 || oldest >= seq) return;
    if (std::chrono::steady_clock::now() >= deadline) {
      spdlog::info(
          "in-memory engine: a snapshot older than the deleted data is still held "
          "after {} s; reclaiming what it lets go",
          kReclaimSnapshotWait.count());
      return;
    }
    reclaim_cv_.wait_for(lock, kReclaimSnapshotPoll, [this] { return reclaim_stop_; });
  }
}

void EmbeddedDatabase::ReclaimLoop() {
  std::unique_lock<std::mutex> lock(reclaim_mu_);
  for (;;) {
    reclaim_cv_.wait(lock, [this] { return reclaim_wanted_ || release_wanted_ || reclaim_stop_; });
    if (reclaim_stop_) return;
    release_wanted_ = false;
    if (!reclaim_wanted_) {  // only memory RocksDB freed by itself to give back
      lock.unlock();
      ReleaseFreeMemory();
      lock.lock();
      reclaim_cv_.wait_for(lock, kMinReclaimInterval, [this] { return reclaim_stop_; });
      continue;
    }
    reclaim_wanted_ = false;
    std::shared_ptr<RocksInstance> rocks = Rocks();  // never reopened in memory
    // The deletes' transaction (and any other running one) reads at a snapshot from before
    // them: while it is held, a flush and compaction would keep the deleted data for it.
    AwaitSnapshotsFrom(*rocks, reclaim_after_seq_, lock);
    if (reclaim_stop_) return;
    lock.unlock();
    // Tombstones reach the table files, then one compaction drops them with what they delete.
    rocksdb::FlushOptions flush;
    flush.wait = true;
    rocksdb::Status s = rocks->db->Flush(flush, rocks->handles);
    if (s.ok()) {
      rocksdb::CompactRangeOptions compact;
      compact.change_level = false;
      s = rocks->db->CompactRange(compact, rocks->data(), nullptr, nullptr);
    }
    if (!s.ok() && !s.IsIncomplete()) {  // Incomplete: closing (DisableManualCompaction)
      spdlog::warn("in-memory engine: reclaiming deleted data failed: {}", s.ToString());
    }
    // The freed memory goes back to the system, not only to the allocator's free lists.
    ReleaseFreeMemory();
    lock.lock();
    // At most one reclaim a second: deletes near the limit must not keep a core compacting.
    reclaim_cv_.wait_for(lock, kMinReclaimInterval, [this] { return reclaim_stop_; });
  }
}

}  // namespace fdyno::kv::embedded
