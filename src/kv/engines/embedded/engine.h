// The embedded engine's internals, shared by its parts: the database and its opening
// (embedded.cc), the commit pipeline (commit_pipeline.cc) and transactions (transaction.cc).
// Nothing outside src/kv/engines/embedded includes this; the engine's interface is embedded.h.
#pragma once

#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/options_util.h>
#include <rocksdb/write_batch.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "base/metrics.h"
#include "base/thread_name.h"
#include "kv/engines/embedded/atomic.h"
#include "kv/engines/embedded/embedded.h"
#include "kv/engines/embedded/resolver.h"
#include "kv/engines/embedded/rocks_options.h"

namespace fdyno::kv::embedded {

// Persisted names and values (docs/format/kv_embedded.md); never change or renumber them.
constexpr char kMetaColumnFamily[] = "fdyno_meta";
constexpr char kFormatKey[] = "format_version";
constexpr char kLastVersionKey[] = "last_commit_version";
constexpr char kFormatVersion = 1;
constexpr char kAddOperandTag = 2;  // merge operand tag = fdb's MutationType ADD
constexpr char kRocksSubdir[] = "rocksdb";
constexpr char kLockFile[] = "LOCK";

constexpr int64_t kMaxAgeNs =
    std::chrono::duration_cast<std::chrono::nanoseconds>(kMaxTransactionAge).count();
constexpr size_t kPruneBudget = 16;  // resolver boundaries swept per batch, at least
constexpr size_t kMaxBatchRequests = 4096;
constexpr size_t kMaxPointDeletes = 64;  // a ClearRange over more keys stays a range tombstone
constexpr size_t kMaxBatchBytes = 64 << 20;
// In memory: the block cache (data already is in memory, so it only saves decoding blocks),
// the manifest's size before RocksDB starts a new one, and the memtable cost of an entry
// beyond its key and value.
constexpr size_t kInMemoryBlockCacheBytes = 8 << 20;
constexpr uint64_t kInMemoryManifestBytes = 4 << 20;
constexpr size_t kInMemoryWriteBufferBytes = 4 << 20;
constexpr size_t kInMemoryMetaWriteBufferBytes = 256 << 10;
constexpr uint64_t kInMemoryTableFileBytes = 2 << 20;
constexpr size_t kInMemoryFileBufferBytes = 8 << 20;
constexpr uint64_t kInMemoryLevelBaseBytes = 8 << 20;
constexpr uint64_t kEntryOverheadBytes = 32;
constexpr uint64_t kMinDeleteReserveBytes = 4 << 20;
constexpr char kInMemoryRoot[] = "/fdyno-in-memory";
constexpr std::chrono::seconds kMinReclaimInterval{1};
// How long a reclaim waits for the snapshots older than its deletes to be released (they are
// transactions' read views, which live at most the 5 s transaction window and their request),
// and how often it looks.
constexpr std::chrono::seconds kReclaimSnapshotWait{10};
constexpr std::chrono::milliseconds kReclaimSnapshotPoll{10};
// While RocksDB is being reopened, how often the idle committer looks whether it can go on.
constexpr std::chrono::milliseconds kReopenPoll{10};

inline Error KvErr(int code, std::string detail = {}) {
  std::string msg(ErrorName(code));
  if (!detail.empty()) msg += ": " + detail;
  return Error::Kv(code, std::move(msg));
}

inline Error IoErr(const std::string& what, const rocksdb::Status& s) {
  return Error::Kv(kIoError, "io_error: " + what + ": " + s.ToString());
}

inline std::string EncodeBigEndian64(int64_t v) {
  std::string s(8, '\0');
  uint64_t u = static_cast<uint64_t>(v);
  for (int i = 7; i >= 0; --i) {
    s[i] = static_cast<char>(u & 0xff);
    u >>= 8;
  }
  return s;
}

inline int64_t DecodeBigEndian64(std::string_view s) {
  uint64_t u = 0;
  for (char c : s) u = (u << 8) | static_cast<unsigned char>(c);
  return static_cast<int64_t>(u);
}

// One open RocksDB and its column families (data, then meta). Closed when its last holder lets
// go: the engine and every read view taken from it. After a failed write on disk the engine
// replaces it (ReopenAfterFailedWrite): the old one is retired, its views answer too old, and
// it is closed once the last of them is gone, before the new one opens.
struct RocksInstance {
  RocksInstance() = default;
  ~RocksInstance();
  RocksInstance(const RocksInstance&) = delete;
  RocksInstance& operator=(const RocksInstance&) = delete;

  rocksdb::ColumnFamilyHandle* data() const { return handles[0]; }
  rocksdb::ColumnFamilyHandle* meta() const { return handles[1]; }

  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  // Writes do not sync the log (durability none): Close syncs it (see the destructor).
  bool sync_log_at_close = false;
  std::atomic<bool> retired{false};
  // A write to it failed: its log's writer may be failed too, and syncing that aborts.
  std::atomic<bool> write_failed{false};
};

// A published commit version and a RocksDB snapshot of exactly the state after that commit.
// Shared by every transaction reading at that version.
struct ReadView {
  ReadView(std::shared_ptr<RocksInstance> rocks_in, int64_t version_in)
      : rocks(std::move(rocks_in)), version(version_in), snapshot(rocks->db->GetSnapshot()) {}
  ~ReadView() { rocks->db->ReleaseSnapshot(snapshot); }
  ReadView(const ReadView&) = delete;
  ReadView& operator=(const ReadView&) = delete;

  std::shared_ptr<RocksInstance> rocks;
  int64_t version;
  const rocksdb::Snapshot* snapshot;
  // Clock time (ns) at which a newer version was published; -1 while this one is newest.
  std::atomic<int64_t> superseded_ns{-1};
};

enum class Op : uint8_t {
  kSet,                 // a: key, b: value
  kClear,               // a: key
  kClearRange,          // a: begin, b: end
  kAdd,                 // a: key, b: param
  kVersionstampedKey,   // a: key with placeholder and offset suffix, b: value
  kVersionstampedValue  // a: key, b: value with placeholder and offset suffix
};

struct Mutation {
  Op op;
  std::string a;
  std::string b;
};

// What a committing transaction hands to the pipeline, and what the pipeline answers.
struct CommitRequest {
  const std::vector<Mutation>* mutations = nullptr;
  const std::vector<std::string>* read_points = nullptr;
  const std::vector<KeyRange>* read_ranges = nullptr;
  const std::vector<std::string>* write_points = nullptr;
  const std::vector<KeyRange>* write_ranges = nullptr;
  int64_t read_version = -1;
  int64_t read_time_ns = 0;
  size_t bytes = 0;
  const std::atomic<bool>* cancelled = nullptr;
  // In memory with a limit (EmbeddedOptions::memory_limit_bytes): what the commit adds to the
  // stored data, and whether it also deletes.
  uint64_t growth_bytes = 0;
  bool frees = false;

  // CommitAsync: run on the committer thread once status and version are final. Empty for a
  // Commit() waiting on cv.
  std::function<void()> complete;

  Status status;
  int64_t version = -1;
  uint16_t batch_order = 0;
  bool done = false;  // guarded by the queue mutex
  std::condition_variable cv;
};

class EmbeddedDatabase;

class EmbeddedTransaction : public Transaction {
 public:
  explicit EmbeddedTransaction(EmbeddedDatabase* db);
  // A read-only transaction reading `pinned` for as long as it lives
  // (Database::CreateSnapshotTransaction).
  EmbeddedTransaction(EmbeddedDatabase* db, std::shared_ptr<ReadView> pinned);

  Result<int64_t> GetReadVersion() override;
  void SetReadVersion(int64_t version) override { pinned_version_ = version; }
  Result<std::optional<std::string>> Get(std::string_view key, bool snapshot) override;
  Result<RangeResult> GetRange(std::string_view begin, std::string_view end,
                               const RangeOptions& options) override;
  void Set(std::string_view key, std::string_view value) override;
  void Clear(std::string_view key) override;
  void ClearRange(std::string_view begin, std::string_view end) override;
  void AtomicOp(MutationType type, std::string_view key, std::string_view param) override;
  Status AddConflictRange(std::string_view begin, std::string_view end,
                          ConflictRangeType type) override;
  void SetTimeout(std::chrono::milliseconds timeout) override { timeout_ = timeout; }
  Status Commit() override;
  void CommitAsync(std::function<void(Status)> done) override;
  Result<int64_t> GetCommittedVersion() override;
  Result<std::string> GetVersionstamp() override;
  void Reset() override;
  void Cancel() override { cancelled_.store(true, std::memory_order_relaxed); }

 private:
  // A buffered point write. known: the value is fully determined by this transaction
  // (value, or absent when nullopt); otherwise it is the snapshot value with ops (ADD
  // params) applied. unreadable: set with a versionstamped value, not readable until commit.
  struct Entry {
    bool known = true;
    bool unreadable = false;
    std::optional<std::string> value;
    std::vector<std::string> adds;
  };

  int64_t NowNs() const;
  Status CheckUsable(int64_t now_ns) const;
  // Fills r for the pipeline, or returns the commit's final status when it needs none (an
  // error found before committing, or a commit without mutations).
  std::optional<Status> PrepareCommit(CommitRequest* r);
  // The status of r after the pipeline, recording the commit version on success.
  Status FinishCommit(CommitRequest* r);
  Status EnsureView(int64_t now_ns);
  bool InCleared(std::string_view key) const;
  // The cleared range [begin, end) containing key, if any.
  const std::pair<const std::string, std::string>* ClearedContaining(std::string_view key) const;
  void AddCleared(std::string_view begin, std::string_view end);
  Entry& EntryFor(std::string_view key);
  void Defer(Error e) {
    if (!deferred_error_) deferred_error_ = std::move(e);
  }
  void CheckKey(size_t key_bytes) {
    if (key_bytes > kMaxKeyBytes) Defer(KvErr(kKeyTooLarge));
  }
  void CheckValue(size_t value_bytes) {
    if (value_bytes > kMaxValueBytes) Defer(KvErr(kValueTooLarge));
  }
  // A snapshot transaction refuses writes: its Commit fails.
  bool RefuseWrite() {
    if (!pinned_view_) return false;
    Defer(KvErr(kClientInvalidOperation, "a snapshot transaction is read-only"));
    return true;
  }
  static std::optional<std::string> Resolve(const Entry& e,
                                            const std::optional<std::string>& base) {
    if (e.known) return e.value;
    std::optional<std::string> v = base;
    for (const std::string& p : e.adds) v = ApplyAdd(v, p);
    return v;
  }

  EmbeddedDatabase* db_;
  std::chrono::milliseconds timeout_{0};
  std::atomic<bool> cancelled_{false};

  int64_t start_ns_ = 0;
  std::shared_ptr<ReadView> view_;
  int64_t read_time_ns_ = 0;
  std::optional<int64_t> pinned_version_;
  // Set for a snapshot transaction: the view it reads, never too old, kept across Reset.
  std::shared_ptr<ReadView> pinned_view_;

  std::map<std::string, Entry, std::less<>> writes_;
  std::map<std::string, std::string, std::less<>> cleared_;  // begin -> end, disjoint
  std::vector<Mutation> mutations_;
  std::vector<std::string> read_points_;
  std::vector<KeyRange> read_ranges_;
  std::vector<std::string> write_points_;
  std::vector<KeyRange> write_ranges_;
  size_t bytes_ = 0;
  std::optional<Error> deferred_error_;

  bool committed_ = false;
  int64_t committed_version_ = -1;
  std::string versionstamp_;
  std::unique_ptr<CommitRequest> async_request_;  // CommitAsync's request while it is queued
};

class EmbeddedDatabase : public Database {
 public:
  static Result<std::unique_ptr<EmbeddedDatabase>> Open(const EmbeddedOptions& options);
  ~EmbeddedDatabase() override;

  std::unique_ptr<Transaction> CreateTransaction() override {
    return std::make_unique<EmbeddedTransaction>(this);
  }
  bool CommitsAsynchronously() const override { return true; }
  bool memory_limited() const { return memory_limit_ != 0; }
  std::unique_ptr<Transaction> CreateSnapshotTransaction() override {
    return std::make_unique<EmbeddedTransaction>(this, PinnedView());
  }

  Clock* clock() const { return clock_; }
  // The open RocksDB (tests only: it changes when ReopenAfterFailedWrite replaces it).
  rocksdb::DB* db() const { return Rocks()->db; }
  rocksdb::ColumnFamilyHandle* data() const { return Rocks()->data(); }
  rocksdb::ColumnFamilyHandle* meta() const { return Rocks()->meta(); }
  int64_t NowNs() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(clock_->Now().time_since_epoch())
        .count();
  }

  // The newest published view; null while ReopenAfterFailedWrite replaces RocksDB.
  std::shared_ptr<ReadView> CurrentView() {
    std::lock_guard<std::mutex> lock(view_mu_);
    return current_;
  }
  // The view at version, and the time from which its age counts.
  Result<std::shared_ptr<ReadView>> ViewAt(int64_t version, int64_t now_ns, int64_t* read_ns);
  // A view of the newest version that no published view shares, for a snapshot transaction:
  // holding a published view for long would keep the resolver's horizon back (Publish), so it
  // takes a RocksDB snapshot of its own of exactly the newest version's state.
  std::shared_ptr<ReadView> PinnedView();

  // In memory with a limit: RocksDB deleted a table file, whose memory the in-memory Env freed
  // (a compaction of its own, or files an iterator held until now). The reclaim thread returns
  // it to the system (ReleaseFreeMemory), at most once a second.
  void RequestMemoryRelease();

  // Runs r through the commit pipeline. Without r->complete: returns when r->status/version
  // are final. With it: returns at once; the committer runs r->complete when they are.
  void Commit(CommitRequest* r);

  // The value of memory key `key` at read version `version` when memory can answer (the key
  // is a memory key, its copy is known and was written at or before `version`).
  std::optional<std::optional<std::string>> MemoryRead(std::string_view key, int64_t version) {
    if (memory_keys_.empty()) return std::nullopt;  // the set is fixed after Open
    std::lock_guard<std::mutex> lock(memory_mu_);
    auto it = memory_keys_.find(key);
    if (it == memory_keys_.end() || !it->second.known || it->second.version > version) {
      return std::nullopt;
    }
    return it->second.value;
  }

 private:
  EmbeddedDatabase() = default;
  static Result<std::unique_ptr<EmbeddedDatabase>> OpenInMemory(std::unique_ptr<EmbeddedDatabase> d,
                                                                const EmbeddedOptions& o);
  // Opens RocksDB at rocks_path with `options` and starts the committer.
  static Result<std::unique_ptr<EmbeddedDatabase>> OpenRocks(std::unique_ptr<EmbeddedDatabase> d,
                                                             const EmbeddedOptions& o,
                                                             const rocksdb::Options& options,
                                                             const std::string& rocks_path);
  // Opens RocksDB (rocks_options_ at rocks_path_), cutting a damaged MANIFEST tail, and checks
  // its format version.
  Result<std::shared_ptr<RocksInstance>> OpenInstance(bool in_memory) const;
  // The open RocksDB; null only between closing and reopening it (ReopenAfterFailedWrite).
  std::shared_ptr<RocksInstance> Rocks() const {
    std::lock_guard<std::mutex> lock(rocks_mu_);
    return rocks_;
  }
  // After a failed write (`failure`) on disk, once the disk has room again: retires the open
  // RocksDB (its views answer too old), and once no view of it is held, closes it and opens it
  // again (reopen.cc). Answers OK once writes may go on, otherwise why not yet. The committer
  // thread calls it for each batch, and every kReopenPoll while a reopen is under way
  // (ReopenPending) even when nothing is written.
  rocksdb::Status ReopenAfterFailedWrite(const rocksdb::Status& failure);
  bool ReopenPending() const { return retiring_ != nullptr || rocks_ == nullptr; }
  rocksdb::Status FinishReopen();
  void Retire();
  rocksdb::Status OpenAgain();
  void RegisterMetrics();
  void CommitterLoop();
  void ProcessBatch(const std::vector<CommitRequest*>& batch);
  bool WritesResumed(const std::vector<CommitRequest*>& batch);
  void ClearRangeInto(rocksdb::WriteBatch* wb, const std::string& begin, const std::string& end,
                      const std::set<std::string, std::less<>>& batch_keys);
  // Makes version the current read view; returns the oldest version a live view still reads.
  int64_t Publish(int64_t version);

  // Reads RocksDB's sizes and counters into the engine's gauges (a metrics collector).
  void CollectMetrics();
  // In memory with a limit: what the stored data takes, as one batch's admission sees it.
  struct MemoryUse {
    // Everything memory holds now (MemoryHeld).
    uint64_t held = 0;
    // Only the live data (MemoryLive), read when a delete first needs it.
    std::optional<uint64_t> live;
    // What the requests the batch accepted so far add.
    uint64_t growth = 0;
  };
  // In memory: the bytes memory holds for the stored data: every memtable and table file,
  // including those already replaced (flushed memtables, compaction inputs) that RocksDB keeps
  // while an older version of the data is still read, by a running compaction or an iterator.
  uint64_t MemoryHeld() const;
  // In memory: the bytes of the live data alone: the current memtables and table files.
  uint64_t MemoryLive() const;
  // In memory with a limit: refuses r (LimitExceededException) when accepting it would take the
  // stored data past the limit, and adds what it accepts to use->growth.
  bool WithinMemoryLimit(CommitRequest* r, MemoryUse* use);

  Clock* clock_ = nullptr;
  std::function<void()> before_batch_;  // EmbeddedOptions::before_batch
  std::string path_;
  int lock_fd_ = -1;
  std::unique_ptr<rocksdb::Env> env_;  // a test's file system (EmbeddedOptions::file_system)
  // In memory: RocksDB's in-memory Env, which must outlive rocks_.
  std::unique_ptr<rocksdb::Env> memory_env_;
  uint64_t memory_limit_ = 0;
  // In memory with a limit: deletes free memory only once their tombstones are flushed and
  // compacted with what they delete. The committer asks this thread to do that (Reclaim) when a
  // write was refused or the data passes three quarters of the limit, if anything was deleted
  // since the last time. A snapshot older than the deletes makes RocksDB keep what they delete
  // (the snapshot may still read it), so the reclaim first waits for those to be released.
  void ReclaimLoop();
  void RequestReclaim();
  // Waits (at most kReclaimSnapshotWait, or until stopping) until no RocksDB snapshot is older
  // than sequence number `seq`. Called with `lock` held on reclaim_mu_; returns with it held.
  void AwaitSnapshotsFrom(RocksInstance& rocks, uint64_t seq, std::unique_lock<std::mutex>& lock);
  std::thread reclaimer_;
  std::mutex reclaim_mu_;
  std::condition_variable reclaim_cv_;
  bool reclaim_wanted_ = false;  // guarded by reclaim_mu_
  bool reclaim_stop_ = false;    // guarded by reclaim_mu_
  bool release_wanted_ = false;  // guarded by reclaim_mu_
  // The RocksDB sequence number the deletes that asked for the reclaim end at.
  uint64_t reclaim_after_seq_ = 0;    // guarded by reclaim_mu_
  bool freed_since_reclaim_ = false;  // committer thread only

  // Metrics of the commit pipeline, and the id of the collector reading RocksDB's figures.
  Histogram* batch_transactions_ = nullptr;
  Histogram* batch_bytes_ = nullptr;
  Histogram* write_seconds_ = nullptr;
  uint64_t collector_id_ = 0;
  // What CollectMetrics last added to the cumulative counters.
  std::mutex reported_mu_;
  struct {
    int64_t compactions = 0;
    int64_t written = 0;
    int64_t stalls = 0;
  } reported_;
  // Set by the committer thread alone (and at open); read elsewhere through Rocks().
  mutable std::mutex rocks_mu_;
  std::shared_ptr<RocksInstance> rocks_;
  rocksdb::Options rocks_options_;  // what rocks_ was opened with, for a reopen
  std::string rocks_path_;
  rocksdb::WriteOptions write_options_;
  // Committer thread only (ReopenAfterFailedWrite): the RocksDB being reopened, until no view
  // of it is held or the deadline passes; when a reopen may next begin, or an open be retried.
  std::shared_ptr<RocksInstance> retiring_;
  std::chrono::steady_clock::time_point retire_deadline_{};
  std::chrono::steady_clock::time_point next_reopen_{};
  // Committer thread only: the last RocksDB write failed (with write_failure_), so no batch is
  // written until writes resume (see WritesResumed).
  bool write_failed_ = false;
  rocksdb::Status write_failure_;

  // EmbeddedOptions::memory_keys: the latest committed value of each and the version that
  // wrote it. Updated by the committer thread before it publishes that version.
  struct MemoryKey {
    bool known = true;  // false after a failed write: read RocksDB instead
    int64_t version = 0;
    std::optional<std::string> value;
  };
  std::mutex memory_mu_;
  std::map<std::string, MemoryKey, std::less<>> memory_keys_;

  std::mutex view_mu_;
  std::shared_ptr<ReadView> current_;
  std::map<int64_t, std::weak_ptr<ReadView>> views_;  // for SetReadVersion
  size_t views_sweep_at_ = 4096;

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<CommitRequest*> queue_;
  bool stopping_ = false;  // guarded by queue_mu_: the committer drains the queue and exits
  std::thread committer_;

  // Owned by the committer thread.
  Resolver resolver_;
  int64_t last_version_ = 0;
  std::deque<std::pair<int64_t, int64_t>> history_;  // (commit version, commit time ns)
  // fdyno_kv_resolver_writes: point writes the resolvers of all open databases remember. This
  // database's share, as last added to it.
  Gauge* resolver_writes_ = &Metrics::Global().GetGauge("fdyno_kv_resolver_writes");
  int64_t resolver_writes_reported_ = 0;
};

}  // namespace fdyno::kv::embedded
