// The embedded engine. See embedded.h for the contract and docs/format/kv_embedded.md for
// what it persists.
//
// Structure:
// * EmbeddedDatabase owns RocksDB, the published read view (the newest commit version and a
//   RocksDB snapshot of exactly that state) and the commit pipeline.
// * The commit pipeline is a queue served by one committer thread: a commit enqueues its
//   request; the committer takes every queued request and - alone, so without locks - checks
//   each against the resolver, assigns one commit version to the batch and a batch order to
//   each accepted transaction, writes all of them in one RocksDB WriteBatch (one WAL write,
//   one fsync), publishes the new read view, then wakes each waiting Commit() and runs each
//   CommitAsync callback. Conflict checking and version assignment are therefore serialized,
//   and durable throughput grows with concurrency. CommitAsync lets a network thread hand
//   its commit over without blocking, so a durable write costs no thread of its own.
// * EmbeddedTransaction buffers writes (an ordered map of point entries plus a set of cleared
//   ranges, and the ordered mutation log that the commit replays) and merges them with
//   RocksDB reads at its snapshot. Reads take no engine lock.
#include "kv/engines/embedded/embedded.h"

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
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "base/metrics.h"
#include "base/thread_name.h"
#include "kv/engines/embedded/atomic.h"
#include "kv/engines/embedded/resolver.h"
#include "kv/engines/embedded/rocks_options.h"

// gperftools' tcmalloc, when the process is linked with it (fdyno is; the tests are not).
extern "C" void MallocExtension_ReleaseFreeMemory(void) __attribute__((weak));

namespace fdyno::kv {
namespace embedded {
namespace {

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

Error KvErr(int code, std::string detail = {}) {
  std::string msg(ErrorName(code));
  if (!detail.empty()) msg += ": " + detail;
  return Error::Kv(code, std::move(msg));
}

Error IoErr(const std::string& what, const rocksdb::Status& s) {
  return Error::Kv(kIoError, "io_error: " + what + ": " + s.ToString());
}

std::string EncodeBigEndian64(int64_t v) {
  std::string s(8, '\0');
  uint64_t u = static_cast<uint64_t>(v);
  for (int i = 7; i >= 0; --i) {
    s[i] = static_cast<char>(u & 0xff);
    u >>= 8;
  }
  return s;
}

int64_t DecodeBigEndian64(std::string_view s) {
  uint64_t u = 0;
  for (char c : s) u = (u << 8) | static_cast<unsigned char>(c);
  return static_cast<int64_t>(u);
}

// ADD as a RocksDB merge operator, so a commit applies atomic adds without reading: RocksDB
// folds the operands into the value in order, after any Put/Delete/DeleteRange before them.
class AtomicMergeOperator : public rocksdb::MergeOperator {
 public:
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    std::optional<std::string> v;
    if (in.existing_value != nullptr) v = in.existing_value->ToString();
    for (const rocksdb::Slice& op : in.operand_list) {
      if (op.empty() || op[0] != kAddOperandTag) return false;  // corrupt: fail the read
      v = ApplyAdd(v, std::string_view(op.data() + 1, op.size() - 1));
    }
    out->new_value = v ? std::move(*v) : std::string();
    return true;
  }
  const char* Name() const override { return "fdyno.atomic.v1"; }
};

// A published read version: the newest commit version and a RocksDB snapshot of exactly the
// state after that commit. Shared by every transaction reading at that version.
struct ReadView {
  ReadView(rocksdb::DB* db_in, int64_t version_in)
      : db(db_in), version(version_in), snapshot(db_in->GetSnapshot()) {}
  ~ReadView() { db->ReleaseSnapshot(snapshot); }
  ReadView(const ReadView&) = delete;
  ReadView& operator=(const ReadView&) = delete;

  rocksdb::DB* db;
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

}  // namespace

rocksdb::Options DataOptions(size_t block_cache_bytes) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  options.IncreaseParallelism(2);
  options.max_background_jobs = 2;
  options.merge_operator = std::make_shared<AtomicMergeOperator>();
  // A counter that every write adds to (a table's item count) would otherwise pile up one
  // merge operand per write in the memtable, and each read of it would fold them all (33 ms
  // for DescribeTable after 200k inserts). Past 16, RocksDB stores the folded value instead.
  options.max_successive_merges = 16;
  // Overwritten items leave their older versions in the memtable until a flush drops them,
  // and every range read steps over them: after 8 s of PutItem at 10k/s over 10k items, Query
  // cost 161 us of CPU instead of 74. Flushing at 8 MB and compacting from 2 L0 files keeps
  // few old versions and few sorted runs: 107-110 us in the same test, with PutItem and
  // GetItem throughput unchanged within noise (bench/README.md).
  options.write_buffer_size = 8 << 20;
  options.level0_file_num_compaction_trigger = 2;
  // A bloom filter over each memtable's keys (160 KB for an 8 MB memtable, ~20 bits a key):
  // a point read of a key the memtable lacks skips its skiplist walk, mostly cache misses.
  // Every single-item write reads its item first, and under writes spread over many items
  // many of those reads miss the active memtable. Same-run A/B, PutItem: network-thread CPU
  // per request 28.1 -> 23.0 us and 32.3 -> 26.9 us; GetItem and Query unchanged within noise.
  options.memtable_whole_key_filtering = true;
  options.memtable_prefix_bloom_size_ratio = 0.02;
  // Every commit also writes the last version into the metadata column family. Its memtable
  // holds a few bytes but keeps every log file since its last flush alive, and RocksDB's
  // default bound (4x the write buffers, 288 MB) let the logs, and the replay at the next
  // open, grow with everything written. Past 32 MB RocksDB flushes that column family and
  // drops the logs.
  options.max_total_wal_size = 32 << 20;
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.block_cache = rocksdb::NewLRUCache(block_cache_bytes);
  table.whole_key_filtering = true;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

namespace {

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
  rocksdb::DB* db() const { return db_; }
  rocksdb::ColumnFamilyHandle* data() const { return data_cf_; }
  int64_t NowNs() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(clock_->Now().time_since_epoch())
        .count();
  }

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
  // In memory: the bytes the stored data takes now (memtables and table files).
  uint64_t MemoryUsed() const;
  // In memory with a limit: refuses r (LimitExceededException) when accepting it would take the
  // stored data past the limit; `growth` is what the batch has accepted so far.
  bool WithinMemoryLimit(CommitRequest* r, uint64_t used, uint64_t growth);

  Clock* clock_ = nullptr;
  std::function<void()> before_batch_;  // EmbeddedOptions::before_batch
  std::string path_;
  int lock_fd_ = -1;
  std::unique_ptr<rocksdb::Env> env_;  // a test's file system (EmbeddedOptions::file_system)
  // In memory: RocksDB's in-memory Env, which must outlive db_.
  std::unique_ptr<rocksdb::Env> memory_env_;
  uint64_t memory_limit_ = 0;
  // In memory with a limit: deletes free memory only once their tombstones are flushed and
  // compacted with what they delete. The committer asks this thread to do that (Reclaim) when a
  // write was refused or the data passes three quarters of the limit, if anything was deleted
  // since the last time.
  void ReclaimLoop();
  void RequestReclaim();
  std::thread reclaimer_;
  std::mutex reclaim_mu_;
  std::condition_variable reclaim_cv_;
  bool reclaim_wanted_ = false;       // guarded by reclaim_mu_
  bool reclaim_stop_ = false;         // guarded by reclaim_mu_
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
  rocksdb::DB* db_ = nullptr;
  rocksdb::ColumnFamilyHandle* data_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* meta_cf_ = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  rocksdb::WriteOptions write_options_;
  // Committer thread only: the last RocksDB write failed, so RocksDB refuses writes until
  // DB::Resume succeeds (see WritesResumed).
  bool write_failed_ = false;

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

// ---------------------------------------------------------------------------------------
// EmbeddedDatabase

Result<std::unique_ptr<EmbeddedDatabase>> EmbeddedDatabase::Open(const EmbeddedOptions& o) {
  if (o.path.empty()) return Error::Kv(kIoError, "io_error: embedded engine: empty data path");
  std::unique_ptr<EmbeddedDatabase> d(new EmbeddedDatabase());
  d->clock_ = o.clock != nullptr ? o.clock : Clock::Real();
  d->before_batch_ = o.before_batch;
  d->path_ = o.path;
  if (o.in_memory) return OpenInMemory(std::move(d), o);
  std::error_code ec;
  std::filesystem::create_directories(o.path, ec);
  if (ec) {
    return Error::Kv(kIoError,
                     "io_error: cannot create data directory '" + o.path + "': " + ec.message());
  }

  // The directory lock. flock() locks belong to the open file description, so a second open
  // in this process conflicts just like one in another process; the kernel drops the lock
  // when the holder dies, even by SIGKILL.
  std::string lock_path = (std::filesystem::path(o.path) / kLockFile).string();
  d->lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (d->lock_fd_ < 0) {
    return Error::Kv(
        kIoError, "io_error: cannot open lock file '" + lock_path + "': " + std::strerror(errno));
  }
  if (::flock(d->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    char buf[32] = {};
    ssize_t n = ::pread(d->lock_fd_, buf, sizeof(buf) - 1, 0);
    std::string holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "unknown";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    ::close(d->lock_fd_);
    d->lock_fd_ = -1;
    if (err == EWOULDBLOCK) {
      return Error::Kv(kIoError, "io_error: data directory '" + o.path +
                                     "' is already in use (locked by process " + holder +
                                     "); only one fdyno process may open it");
    }
    return Error::Kv(
        kIoError, "io_error: cannot lock data directory '" + o.path + "': " + std::strerror(err));
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(d->lock_fd_, 0) != 0 ||
      ::pwrite(d->lock_fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // The pid is only for the error message of a second opener; the lock itself holds.
  }

  rocksdb::Options options = DataOptions();
  if (o.file_system) {
    d->env_ = rocksdb::NewCompositeEnv(o.file_system);
    options.env = d->env_.get();
  }
  return OpenRocks(std::move(d), o, options,
                   (std::filesystem::path(o.path) / kRocksSubdir).string());
}

Result<std::unique_ptr<EmbeddedDatabase>> EmbeddedDatabase::OpenInMemory(
    std::unique_ptr<EmbeddedDatabase> d, const EmbeddedOptions& o) {
  d->memory_env_.reset(rocksdb::NewMemEnv(rocksdb::Env::Default()));
  d->memory_limit_ = o.memory_limit_bytes;
  rocksdb::Options options = DataOptions(kInMemoryBlockCacheBytes);
  options.env = d->memory_env_.get();
  // RocksDB's own log and its statistics dumps would grow in memory without bound.
  options.info_log_level = rocksdb::InfoLogLevel::HEADER_LEVEL;
  options.stats_dump_period_sec = 0;
  options.max_manifest_file_size = kInMemoryManifestBytes;
  // RocksDB's in-memory Env keeps a file in a std::string that grows by doubling as it is
  // appended to: a file written in several appends can hold up to twice its size. Table files
  // written in one append hold exactly their size: small memtables and table files, and a
  // write buffer larger than any of them.
  options.write_buffer_size = kInMemoryWriteBufferBytes;
  options.target_file_size_base = kInMemoryTableFileBytes;
  options.writable_file_max_buffer_size = kInMemoryFileBufferBytes;
  // A compaction keeps its inputs until its outputs are done, so memory briefly holds both:
  // small levels (8 MB, 80 MB, ...) keep each compaction, and with it that overlap, small.
  options.max_bytes_for_level_base = kInMemoryLevelBaseBytes;
  // Nothing survives the process, so a write-ahead log would only double what memory holds.
  d->write_options_.disableWAL = true;
  return OpenRocks(std::move(d), o, options, kInMemoryRoot);
}

Result<std::unique_ptr<EmbeddedDatabase>> EmbeddedDatabase::OpenRocks(
    std::unique_ptr<EmbeddedDatabase> d, const EmbeddedOptions& o, const rocksdb::Options& options,
    const std::string& rocks_path) {
  // No memtable insert hints (memtable_insert_with_hint_prefix_extractor): RocksDB 7.8 shares
  // them between point keys and range tombstones, which corrupts the memtable and the replay of
  // its log (docs/format/kv_embedded.md, "RocksDB features").
  std::vector<std::string> existing;
  rocksdb::Status ls = rocksdb::DB::ListColumnFamilies(options, rocks_path, &existing);
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  cfs.emplace_back(rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions(options));
  rocksdb::ColumnFamilyOptions meta;
  // In memory the metadata memtable (one small key, rewritten by every batch) need not reserve
  // a 64 MB memtable's arena blocks.
  if (o.in_memory) meta.write_buffer_size = kInMemoryMetaWriteBufferBytes;
  cfs.emplace_back(kMetaColumnFamily, meta);
  if (ls.ok()) {
    for (const std::string& name : existing) {
      if (name != rocksdb::kDefaultColumnFamilyName && name != kMetaColumnFamily) {
        return Error::Kv(kIoError, "io_error: data directory '" + o.path +
                                       "' holds an unknown column family '" + name + "'");
      }
    }
  }
  rocksdb::Status s =
      rocksdb::DB::Open(rocksdb::DBOptions(options), rocks_path, cfs, &d->handles_, &d->db_);
  if (!s.ok()) return IoErr("cannot open RocksDB in '" + rocks_path + "'", s);
  d->data_cf_ = d->handles_[0];
  d->meta_cf_ = d->handles_[1];

  std::string value;
  s = d->db_->Get(rocksdb::ReadOptions(), d->meta_cf_, kFormatKey, &value);
  if (s.IsNotFound()) {
    s = d->db_->Put(rocksdb::WriteOptions(), d->meta_cf_, kFormatKey,
                    std::string(1, kFormatVersion));
    if (!s.ok()) return IoErr("cannot write format version", s);
  } else if (!s.ok()) {
    return IoErr("cannot read format version", s);
  } else if (value != std::string(1, kFormatVersion)) {
    return Error::Kv(
        kIoError, "io_error: data directory '" + o.path + "' has an unsupported kv format version");
  }
  s = d->db_->Get(rocksdb::ReadOptions(), d->meta_cf_, kLastVersionKey, &value);
  if (s.ok()) {
    if (value.size() != 8) {
      return Error::Kv(kIoError, "io_error: corrupt last commit version in '" + o.path + "'");
    }
    d->last_version_ = DecodeBigEndian64(value);
  } else if (!s.IsNotFound()) {
    return IoErr("cannot read last commit version", s);
  }

  d->write_options_.sync = o.durability == Durability::kFsync && !o.in_memory;
  for (const std::string& key : o.memory_keys) {
    s = d->db_->Get(rocksdb::ReadOptions(), d->data_cf_, key, &value);
    if (!s.ok() && !s.IsNotFound()) return IoErr("cannot read a memory key", s);
    MemoryKey& m = d->memory_keys_[key];
    m.version = d->last_version_;
    if (s.ok()) m.value = value;
  }
  d->Publish(d->last_version_);
  d->RegisterMetrics();
  d->committer_ = std::thread([db = d.get()] {
    SetThreadName("fdyno-commit");
    db->CommitterLoop();
  });
  if (d->memory_limited()) {
    d->reclaimer_ = std::thread([db = d.get()] {
      SetThreadName("fdyno-reclaim");
      db->ReclaimLoop();
    });
  }
  return d;
}

EmbeddedDatabase::~EmbeddedDatabase() {
  if (collector_id_ != 0) Metrics::Global().RemoveCollector(collector_id_);
  if (reclaimer_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(reclaim_mu_);
      reclaim_stop_ = true;
    }
    db_->DisableManualCompaction();  // ends a reclaim's compaction early
    reclaim_cv_.notify_one();
    reclaimer_.join();
  }
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_one();
  if (committer_.joinable()) committer_.join();
  resolver_writes_->Add(-resolver_writes_reported_);
  {
    std::lock_guard<std::mutex> lock(view_mu_);
    current_.reset();
    views_.clear();
  }
  if (db_ != nullptr) {
    for (rocksdb::ColumnFamilyHandle* h : handles_)
      db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
    db_->Close().PermitUncheckedError();
    delete db_;
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

int64_t EmbeddedDatabase::Publish(int64_t version) {
  auto view = std::make_shared<ReadView>(db_, version);
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
    auto view = std::make_shared<ReadView>(db_, current->version);
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
      queue_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
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
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, data_cf_));
  std::vector<std::string> keys;
  for (it->Seek(begin); it->Valid() && keys.size() <= kMaxPointDeletes; it->Next()) {
    keys.push_back(it->key().ToString());
  }
  if (keys.size() > kMaxPointDeletes || !it->status().ok()) {
    wb->DeleteRange(data_cf_, begin, end).PermitUncheckedError();
    return;
  }
  for (auto k = batch_keys.lower_bound(begin); k != batch_keys.end() && *k < end; ++k) {
    keys.push_back(*k);
  }
  for (const std::string& k : keys) wb->Delete(data_cf_, k).PermitUncheckedError();
}

// A failed write puts RocksDB into its background-error state, in which it refuses every later
// write until it recovers. RocksDB 7.8 recovers by itself from ENOSPC (its SstFileManager
// checks the free space every 5 s, then resumes) and from errors it marks retryable, but not
// from other I/O errors. So before the next batch the committer asks DB::Resume, which
// recovers (flushing the memtables, starting a new WAL), answers Busy while RocksDB's own
// recovery is under way, or fails while the fault lasts. Until it succeeds each batch is
// refused whole before anything is written: io_error, nothing applied. Answers false when it
// refused the batch.
bool EmbeddedDatabase::WritesResumed(const std::vector<CommitRequest*>& batch) {
  if (!write_failed_) return true;
  rocksdb::Status s = db_->Resume();
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
  const uint64_t memory_used = memory_limited() ? MemoryUsed() : 0;
  uint64_t batch_growth = 0;  // in memory with a limit: what the accepted requests add
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
      if (!WithinMemoryLimit(r, memory_used, batch_growth)) {
        refused_for_memory = true;
        continue;
      }
      batch_growth += r->growth_bytes;
      freed_since_reclaim_ |= r->frees;
    }
    std::string stamp = MakeVersionstamp(version, order);
    for (const std::string& k : *r->write_points) resolver_.AddPoint(k, version);
    for (const KeyRange& kr : *r->write_ranges) resolver_.AddRange(kr.begin, kr.end, version);
    for (const Mutation& m : *r->mutations) {
      switch (m.op) {
        case Op::kSet:
          if (track_keys) batch_keys.insert(m.a);
          wb.Put(data_cf_, m.a, m.b).PermitUncheckedError();
          if (MemoryKey* mk = stage(m.a)) mk->value = m.b;
          break;
        case Op::kClear:
          wb.Delete(data_cf_, m.a).PermitUncheckedError();
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
          wb.Merge(data_cf_, m.a, operand).PermitUncheckedError();
          if (MemoryKey* mk = stage(m.a); mk != nullptr && mk->known) {
            mk->value = ApplyAdd(mk->value, m.b);
          }
          break;
        }
        case Op::kVersionstampedKey: {
          std::string key = SubstituteVersionstamp(m.a, stamp);
          resolver_.AddPoint(key, version);
          if (track_keys) batch_keys.insert(key);
          wb.Put(data_cf_, key, m.b).PermitUncheckedError();
          if (MemoryKey* mk = stage(key)) mk->value = m.b;
          break;
        }
        case Op::kVersionstampedValue: {
          if (track_keys) batch_keys.insert(m.a);
          std::string value = SubstituteVersionstamp(m.b, stamp);
          wb.Put(data_cf_, m.a, value).PermitUncheckedError();
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
  if (memory_limited() && freed_since_reclaim_ &&
      (refused_for_memory || memory_used + batch_growth > memory_limit_ / 4 * 3)) {
    freed_since_reclaim_ = false;
    RequestReclaim();
  }
  if (accepted.empty()) return;
  wb.Put(meta_cf_, kLastVersionKey, EncodeBigEndian64(version)).PermitUncheckedError();
  batch_transactions_->Observe(static_cast<int64_t>(accepted.size()));
  batch_bytes_->Observe(static_cast<int64_t>(wb.GetDataSize()));
  const auto write_start = std::chrono::steady_clock::now();
  rocksdb::Status s = db_->Write(write_options_, &wb);
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

uint64_t EmbeddedDatabase::MemoryUsed() const {
  uint64_t memtables = 0, tables = 0;
  // size-all-mem-tables: the active, the immutable and the flushed but still pinned ones.
  db_->GetAggregatedIntProperty(rocksdb::DB::Properties::kSizeAllMemTables, &memtables);
  db_->GetAggregatedIntProperty(rocksdb::DB::Properties::kTotalSstFilesSize, &tables);
  return memtables + tables;
}

bool EmbeddedDatabase::WithinMemoryLimit(CommitRequest* r, uint64_t used, uint64_t growth) {
  const uint64_t after = used + growth + r->growth_bytes;
  if (after <= memory_limit_) return true;
  const uint64_t reserve = std::max(memory_limit_ / 16, kMinDeleteReserveBytes);
  if (r->frees && after <= memory_limit_ + reserve) return true;
  constexpr double kMiB = 1 << 20;
  char message[320];
  std::snprintf(message, sizeof message,
                "The in-memory database is full: it holds %.1f MiB of its %.1f MiB limit "
                "(fdyno serve --in-memory-limit), and this write needs %.1f MiB more. Delete "
                "items or tables, or restart with a larger limit",
                static_cast<double>(used + growth) / kMiB,
                static_cast<double>(memory_limit_) / kMiB,
                static_cast<double>(r->growth_bytes) / kMiB);
  r->status = Error::Make(ErrorType::kLimitExceeded, message);
  return false;
}

void EmbeddedDatabase::RequestReclaim() {
  {
    std::lock_guard<std::mutex> lock(reclaim_mu_);
    reclaim_wanted_ = true;
  }
  reclaim_cv_.notify_one();
}

void EmbeddedDatabase::ReclaimLoop() {
  std::unique_lock<std::mutex> lock(reclaim_mu_);
  for (;;) {
    reclaim_cv_.wait(lock, [this] { return reclaim_wanted_ || reclaim_stop_; });
    if (reclaim_stop_) return;
    reclaim_wanted_ = false;
    lock.unlock();
    // Tombstones reach the table files, then one compaction drops them with what they delete.
    rocksdb::FlushOptions flush;
    flush.wait = true;
    rocksdb::Status s = db_->Flush(flush, handles_);
    if (s.ok()) {
      rocksdb::CompactRangeOptions compact;
      compact.change_level = false;
      s = db_->CompactRange(compact, data_cf_, nullptr, nullptr);
    }
    if (!s.ok() && !s.IsIncomplete()) {  // Incomplete: closing (DisableManualCompaction)
      spdlog::warn("in-memory engine: reclaiming deleted data failed: {}", s.ToString());
    }
    // The freed memory goes back to the system, not only to the allocator's free lists
    // (tcmalloc keeps what it freed until told; the symbol is absent without tcmalloc).
    if (MallocExtension_ReleaseFreeMemory != nullptr) MallocExtension_ReleaseFreeMemory();
    lock.lock();
    // At most one reclaim a second: deletes near the limit must not keep a core compacting.
    reclaim_cv_.wait_for(lock, kMinReclaimInterval, [this] { return reclaim_stop_; });
  }
}

void EmbeddedDatabase::RegisterMetrics() {
  Metrics& m = Metrics::Global();
  m.Describe("fdyno_kv_commit_batch_transactions",
             "Transactions committed together in one group-commit batch (one RocksDB write).");
  m.Describe("fdyno_kv_commit_batch_bytes", "Bytes of each group-commit batch's RocksDB write.");
  m.Describe("fdyno_kv_commit_write_seconds",
             "Time of each group-commit batch's RocksDB write, the WAL fsync included when "
             "durability is fsync.");
  m.Describe("fdyno_kv_memtable_bytes", "Bytes of RocksDB memtables, pinned ones included.");
  m.Describe("fdyno_kv_sst_bytes", "Bytes of RocksDB table (SST) files of every live version.");
  m.Describe("fdyno_kv_compactions", "RocksDB compactions finished, of the data column family.");
  m.Describe("fdyno_kv_compaction_written_bytes",
             "Bytes RocksDB compactions of the data column family wrote.");
  m.Describe("fdyno_kv_running_compactions", "RocksDB compactions running now.");
  m.Describe("fdyno_kv_write_stalls",
             "Times RocksDB slowed or stopped writes to let compaction catch up.");
  m.Describe("fdyno_kv_write_stopped", "1 while RocksDB stops writes, else 0.");
  m.Describe("fdyno_kv_delayed_write_rate_bytes",
             "The write rate RocksDB allows while it slows writes (bytes a second); 0 when not.");
  m.Describe("fdyno_kv_resolver_writes",
             "Point writes the conflict resolvers of the open databases remember (those newer "
             "than the oldest live read view).");
  m.Describe("fdyno_kv_memory_limit_bytes",
             "In memory: the bytes stored data may take (--in-memory-limit); 0 when unbounded.");
  batch_transactions_ =
      &m.GetHistogram("fdyno_kv_commit_batch_transactions", {},
                      Histogram::PowersOfTwoUpTo(static_cast<int64_t>(kMaxBatchRequests)));
  batch_bytes_ = &m.GetHistogram("fdyno_kv_commit_batch_bytes", {},
                                 Histogram::PowersOfTwoUpTo(static_cast<int64_t>(kMaxBatchBytes)));
  write_seconds_ = &m.GetHistogram("fdyno_kv_commit_write_seconds");
  if (memory_env_)
    m.GetGauge("fdyno_kv_memory_limit_bytes").Set(static_cast<int64_t>(memory_limit_));
  collector_id_ = m.AddCollector([this] { CollectMetrics(); });
}

void EmbeddedDatabase::CollectMetrics() {
  Metrics& m = Metrics::Global();
  auto aggregated = [&](const std::string& property) {
    uint64_t v = 0;
    db_->GetAggregatedIntProperty(property, &v);
    return static_cast<int64_t>(v);
  };
  auto integer = [&](const std::string& property) {
    uint64_t v = 0;
    db_->GetIntProperty(data_cf_, property, &v);
    return static_cast<int64_t>(v);
  };
  m.GetGauge("fdyno_kv_memtable_bytes").Set(aggregated(rocksdb::DB::Properties::kSizeAllMemTables));
  m.GetGauge("fdyno_kv_sst_bytes").Set(aggregated(rocksdb::DB::Properties::kTotalSstFilesSize));
  m.GetGauge("fdyno_kv_running_compactions")
      .Set(integer(rocksdb::DB::Properties::kNumRunningCompactions));
  m.GetGauge("fdyno_kv_write_stopped").Set(integer(rocksdb::DB::Properties::kIsWriteStopped));
  m.GetGauge("fdyno_kv_delayed_write_rate_bytes")
      .Set(integer(rocksdb::DB::Properties::kActualDelayedWriteRate));
  // Cumulative figures from the column family's statistics map. RocksDB counts them since
  // open; counters here move by the difference from what was last reported.
  std::map<std::string, std::string> stats;
  if (!db_->GetMapProperty(data_cf_, rocksdb::DB::Properties::kCFStats, &stats)) return;
  auto number = [&](const char* key) {
    auto it = stats.find(key);
    return it == stats.end() ? 0.0 : std::strtod(it->second.c_str(), nullptr);
  };
  const auto compactions = static_cast<int64_t>(number("compaction.Sum.CompCount"));
  const auto written = static_cast<int64_t>(number("compaction.Sum.WriteGB") * (1 << 30));
  const auto stalls =
      static_cast<int64_t>(number("io_stalls.total_stop") + number("io_stalls.total_slowdown"));
  std::lock_guard<std::mutex> lock(reported_mu_);
  m.GetCounter("fdyno_kv_compactions")
      .Add(compactions - std::exchange(reported_.compactions, compactions));
  m.GetCounter("fdyno_kv_compaction_written_bytes")
      .Add(std::max<int64_t>(0, written - std::exchange(reported_.written, written)));
  m.GetCounter("fdyno_kv_write_stalls").Add(stalls - std::exchange(reported_.stalls, stalls));
}

// ---------------------------------------------------------------------------------------
// EmbeddedTransaction

EmbeddedTransaction::EmbeddedTransaction(EmbeddedDatabase* db) : db_(db) { start_ns_ = NowNs(); }

EmbeddedTransaction::EmbeddedTransaction(EmbeddedDatabase* db, std::shared_ptr<ReadView> pinned)
    : db_(db), pinned_view_(std::move(pinned)) {
  start_ns_ = NowNs();
}

int64_t EmbeddedTransaction::NowNs() const { return db_->NowNs(); }

Status EmbeddedTransaction::CheckUsable(int64_t now_ns) const {
  if (cancelled_.load(std::memory_order_relaxed)) return KvErr(kTransactionCancelled);
  if (timeout_.count() > 0 &&
      now_ns - start_ns_ >=
          std::chrono::duration_cast<std::chrono::nanoseconds>(timeout_).count()) {
    return KvErr(kTransactionTimedOut);
  }
  return Status::Ok();
}

Status EmbeddedTransaction::EnsureView(int64_t now_ns) {
  if (!view_) {
    if (pinned_view_) {
      view_ = pinned_view_;
      read_time_ns_ = -1;  // never too old
    } else if (pinned_version_) {
      FDYNO_ASSIGN_OR_RETURN(view_, db_->ViewAt(*pinned_version_, now_ns, &read_time_ns_));
    } else {
      view_ = db_->CurrentView();
      read_time_ns_ = now_ns;
    }
  }
  if (read_time_ns_ >= 0 && now_ns - read_time_ns_ > kMaxAgeNs) {
    return KvErr(kTransactionTooOld);
  }
  return Status::Ok();
}

const std::pair<const std::string, std::string>* EmbeddedTransaction::ClearedContaining(
    std::string_view key) const {
  auto it = cleared_.upper_bound(key);
  if (it == cleared_.begin()) return nullptr;
  --it;
  return key < std::string_view(it->second) ? &*it : nullptr;
}

bool EmbeddedTransaction::InCleared(std::string_view key) const {
  return ClearedContaining(key) != nullptr;
}

void EmbeddedTransaction::AddCleared(std::string_view begin, std::string_view end) {
  std::string b(begin), e(end);
  auto it = cleared_.upper_bound(begin);
  if (it != cleared_.begin()) {
    auto prev = std::prev(it);
    if (std::string_view(prev->second) >= begin) {  // overlaps or touches: merge
      b = prev->first;
      if (prev->second > e) e = prev->second;
      it = cleared_.erase(prev);
    }
  }
  while (it != cleared_.end() && std::string_view(it->first) <= std::string_view(e)) {
    if (it->second > e) e = it->second;
    it = cleared_.erase(it);
  }
  cleared_.emplace(std::move(b), std::move(e));
}

EmbeddedTransaction::Entry& EmbeddedTransaction::EntryFor(std::string_view key) {
  auto it = writes_.find(key);
  if (it != writes_.end()) return it->second;
  return writes_.emplace(std::string(key), Entry{}).first->second;
}

Result<int64_t> EmbeddedTransaction::GetReadVersion() {
  int64_t now = NowNs();
  FDYNO_RETURN_IF_ERROR(CheckUsable(now));
  FDYNO_RETURN_IF_ERROR(EnsureView(now));
  return view_->version;
}

Result<std::optional<std::string>> EmbeddedTransaction::Get(std::string_view key, bool snapshot) {
  int64_t now = NowNs();
  FDYNO_RETURN_IF_ERROR(CheckUsable(now));
  const Entry* entry = nullptr;
  auto it = writes_.find(key);
  if (it != writes_.end()) {
    entry = &it->second;
    if (entry->unreadable) return KvErr(kAccessedUnreadable);
    if (entry->known) return entry->value;  // fully determined by our own writes
  } else if (InCleared(key)) {
    return std::optional<std::string>();
  }
  FDYNO_RETURN_IF_ERROR(EnsureView(now));
  std::optional<std::string> base;
  if (std::optional<std::optional<std::string>> memory = db_->MemoryRead(key, view_->version)) {
    base = std::move(*memory);
  } else {
    rocksdb::ReadOptions ro;
    ro.snapshot = view_->snapshot;
    rocksdb::PinnableSlice slice;
    rocksdb::Status s =
        db_->db()->Get(ro, db_->data(), rocksdb::Slice(key.data(), key.size()), &slice);
    if (s.ok()) {
      base.emplace(slice.data(), slice.size());
    } else if (!s.IsNotFound()) {
      return IoErr("read failed", s);
    }
  }
  if (!snapshot) {
    read_points_.emplace_back(key);
    bytes_ += 2 * key.size() + 1;
  }
  if (entry != nullptr) return Resolve(*entry, base);
  return base;
}

Result<RangeResult> EmbeddedTransaction::GetRange(std::string_view begin, std::string_view end,
                                                  const RangeOptions& options) {
  int64_t now = NowNs();
  FDYNO_RETURN_IF_ERROR(CheckUsable(now));
  RangeResult out;
  if (!(begin < end)) return out;
  FDYNO_RETURN_IF_ERROR(EnsureView(now));

  rocksdb::ReadOptions ro;
  ro.snapshot = view_->snapshot;
  rocksdb::Slice lower(begin.data(), begin.size());
  rocksdb::Slice upper(end.data(), end.size());
  ro.iterate_lower_bound = &lower;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> iter(db_->db()->NewIterator(ro, db_->data()));
  const bool reverse = options.reverse;

  // Forward: writes_ from lower_bound(begin); reverse: from the last entry below end.
  auto fwd = writes_.lower_bound(begin);
  auto rev = std::make_reverse_iterator(writes_.lower_bound(end));
  if (reverse) {
    iter->SeekToLast();
  } else {
    iter->Seek(lower);
  }

  auto skip_cleared = [&] {
    while (iter->Valid()) {
      rocksdb::Slice k = iter->key();
      const auto* c = ClearedContaining(std::string_view(k.data(), k.size()));
      if (c == nullptr) return;
      if (reverse) {
        iter->SeekForPrev(c->first);
        if (iter->Valid() && iter->key().compare(c->first) >= 0) iter->Prev();
      } else {
        iter->Seek(c->second);
      }
    }
  };
  auto write_valid = [&] {
    return reverse ? (rev != writes_.rend() && std::string_view(rev->first) >= begin)
                   : (fwd != writes_.end() && std::string_view(fwd->first) < end);
  };
  Status error = Status::Ok();
  // The next key-value of the merged view in iteration order, or nullopt at the end.
  auto next = [&]() -> std::optional<KeyValue> {
    for (;;) {
      skip_cleared();
      bool db_ok = iter->Valid();
      bool w_ok = write_valid();
      if (!db_ok && !w_ok) return std::nullopt;
      int cmp = 0;  // < 0: the RocksDB key comes first in iteration order
      if (db_ok && w_ok) {
        const std::string& wkey = reverse ? rev->first : fwd->first;
        cmp = iter->key().compare(rocksdb::Slice(wkey));
        if (reverse) cmp = -cmp;
      } else {
        cmp = db_ok ? -1 : 1;
      }
      if (cmp < 0) {
        KeyValue kv{iter->key().ToString(), iter->value().ToString()};
        if (reverse)
          iter->Prev();
        else
          iter->Next();
        return kv;
      }
      const std::pair<const std::string, Entry>& w = reverse ? *rev : *fwd;
      std::optional<std::string> base;
      if (cmp == 0) {
        base = iter->value().ToString();
        if (reverse)
          iter->Prev();
        else
          iter->Next();
      }
      if (reverse)
        ++rev;
      else
        ++fwd;
      if (w.second.unreadable) {
        error = KvErr(kAccessedUnreadable);
        return std::nullopt;
      }
      std::optional<std::string> v = Resolve(w.second, base);
      if (v) return KeyValue{w.first, std::move(*v)};
    }
  };

  const size_t limit = options.limit > 0 ? static_cast<size_t>(options.limit) : 0;
  while (limit == 0 || out.kvs.size() < limit) {
    std::optional<KeyValue> kv = next();
    if (!kv) break;
    out.kvs.push_back(std::move(*kv));
  }
  if (!error.ok()) return std::move(error).error();
  if (limit != 0 && out.kvs.size() == limit) {
    // Peek one step further for `more`; an unreadable key there still counts as more.
    out.more = next().has_value() || !error.ok();
  }
  if (!iter->status().ok()) return IoErr("range read failed", iter->status());

  if (!options.snapshot) {
    KeyRange r;
    if (out.more && reverse) {
      r = {out.kvs.back().key, std::string(end)};
    } else if (out.more) {
      r = {std::string(begin), KeyAfter(out.kvs.back().key)};
    } else {
      r = {std::string(begin), std::string(end)};
    }
    bytes_ += r.begin.size() + r.end.size();
    read_ranges_.push_back(std::move(r));
  }
  return out;
}

void EmbeddedTransaction::Set(std::string_view key, std::string_view value) {
  if (RefuseWrite()) return;
  CheckKey(key.size());
  CheckValue(value.size());
  Entry& e = EntryFor(key);
  e = Entry{true, false, std::string(value), {}};
  mutations_.push_back({Op::kSet, std::string(key), std::string(value)});
  write_points_.emplace_back(key);
  bytes_ += 3 * key.size() + 1 + value.size();
}

void EmbeddedTransaction::Clear(std::string_view key) {
  if (RefuseWrite()) return;
  CheckKey(key.size());
  Entry& e = EntryFor(key);
  e = Entry{true, false, std::nullopt, {}};
  mutations_.push_back({Op::kClear, std::string(key), {}});
  write_points_.emplace_back(key);
  bytes_ += 3 * key.size() + 1;
}

void EmbeddedTransaction::ClearRange(std::string_view begin, std::string_view end) {
  if (RefuseWrite()) return;
  if (begin > end) {
    Defer(KvErr(kInvertedRange));
    return;
  }
  // An end key may be one byte longer than the longest key (a key's successor).
  CheckKey(begin.size());
  if (end.size() > kMaxKeyBytes + 1) Defer(KvErr(kKeyTooLarge));
  if (begin == end) return;
  writes_.erase(writes_.lower_bound(begin), writes_.lower_bound(end));
  AddCleared(begin, end);
  mutations_.push_back({Op::kClearRange, std::string(begin), std::string(end)});
  write_ranges_.push_back({std::string(begin), std::string(end)});
  bytes_ += 2 * (begin.size() + end.size());
}

void EmbeddedTransaction::AtomicOp(MutationType type, std::string_view key,
                                   std::string_view param) {
  if (RefuseWrite()) return;
  switch (type) {
    case MutationType::kAdd: {
      CheckKey(key.size());
      CheckValue(param.size());
      bool fresh = writes_.find(key) == writes_.end();
      bool cleared = fresh && InCleared(key);
      Entry& e = EntryFor(key);
      // A key we never wrote adds to the snapshot value, unless our own clear hides it.
      if (fresh) e.known = cleared;
      if (e.known) {
        e.value = ApplyAdd(e.value, param);
      } else {
        e.adds.emplace_back(param);
      }
      mutations_.push_back({Op::kAdd, std::string(key), std::string(param)});
      write_points_.emplace_back(key);
      bytes_ += 3 * key.size() + 1 + param.size();
      return;
    }
    case MutationType::kSetVersionstampedKey: {
      if (!VersionstampOffset(key)) {
        Defer(KvErr(kClientInvalidOperation, "invalid versionstamp offset in key"));
        return;
      }
      CheckKey(key.size() - 4);
      CheckValue(param.size());
      mutations_.push_back({Op::kVersionstampedKey, std::string(key), std::string(param)});
      bytes_ += 3 * key.size() + 1 + param.size();
      return;
    }
    case MutationType::kSetVersionstampedValue: {
      if (!VersionstampOffset(param)) {
        Defer(KvErr(kClientInvalidOperation, "invalid versionstamp offset in value"));
        return;
      }
      CheckKey(key.size());
      CheckValue(param.size() - 4);
      Entry& e = EntryFor(key);
      e = Entry{true, true, std::nullopt, {}};
      mutations_.push_back({Op::kVersionstampedValue, std::string(key), std::string(param)});
      write_points_.emplace_back(key);
      bytes_ += 3 * key.size() + 1 + param.size();
      return;
    }
  }
  Defer(KvErr(kInvalidMutationType));
}

Status EmbeddedTransaction::AddConflictRange(std::string_view begin, std::string_view end,
                                             ConflictRangeType type) {
  FDYNO_RETURN_IF_ERROR(CheckUsable(NowNs()));
  if (type == ConflictRangeType::kWrite && RefuseWrite()) return Status::Ok();
  if (begin > end) return KvErr(kInvertedRange);
  if (begin == end) return Status::Ok();
  KeyRange r{std::string(begin), std::string(end)};
  bytes_ += begin.size() + end.size();
  if (type == ConflictRangeType::kRead) {
    read_ranges_.push_back(std::move(r));
  } else {
    write_ranges_.push_back(std::move(r));
  }
  return Status::Ok();
}

std::optional<Status> EmbeddedTransaction::PrepareCommit(CommitRequest* r) {
  int64_t now = NowNs();
  if (Status usable = CheckUsable(now); !usable.ok()) return usable;
  if (committed_ || async_request_) {
    return KvErr(kUsedDuringCommit, "transaction already committed");
  }
  if (deferred_error_) return Status(*deferred_error_);
  if (bytes_ > kMaxTransactionBytes) return KvErr(kTransactionTooLarge);
  if (mutations_.empty() && write_points_.empty() && write_ranges_.empty()) {
    committed_ = true;
    committed_version_ = -1;
    return Status::Ok();
  }
  bool has_reads = !read_points_.empty() || !read_ranges_.empty();
  if (has_reads && !view_) {
    if (Status view = EnsureView(now); !view.ok()) return view;
  }
  r->mutations = &mutations_;
  r->read_points = &read_points_;
  r->read_ranges = &read_ranges_;
  r->write_points = &write_points_;
  r->write_ranges = &write_ranges_;
  r->read_version = view_ ? view_->version : -1;
  r->read_time_ns = read_time_ns_;
  r->bytes = bytes_;
  r->cancelled = &cancelled_;
  if (db_->memory_limited()) {
    for (const Mutation& m : mutations_) {
      if (m.op == Op::kClear || m.op == Op::kClearRange) {
        r->frees = true;
      } else {
        r->growth_bytes += m.a.size() + m.b.size() + kEntryOverheadBytes;
      }
    }
  }
  return std::nullopt;
}

Status EmbeddedTransaction::FinishCommit(CommitRequest* r) {
  if (!r->status.ok()) return std::move(r->status).error();
  committed_ = true;
  committed_version_ = r->version;
  versionstamp_ = MakeVersionstamp(r->version, r->batch_order);
  return Status::Ok();
}

Status EmbeddedTransaction::Commit() {
  CommitRequest r;
  if (std::optional<Status> early = PrepareCommit(&r)) return std::move(*early);
  db_->Commit(&r);
  return FinishCommit(&r);
}

void EmbeddedTransaction::CommitAsync(std::function<void(Status)> done) {
  auto r = std::make_unique<CommitRequest>();
  if (std::optional<Status> early = PrepareCommit(r.get())) return done(std::move(*early));
  r->complete = [this, done = std::move(done)] {
    std::unique_ptr<CommitRequest> finished = std::move(async_request_);
    Status status = FinishCommit(finished.get());
    finished.reset();
    done(std::move(status));  // last: done may destroy this transaction
  };
  async_request_ = std::move(r);
  db_->Commit(async_request_.get());
}

Result<int64_t> EmbeddedTransaction::GetCommittedVersion() {
  if (!committed_) return KvErr(kNoCommitVersion, "transaction has not committed");
  return committed_version_;
}

Result<std::string> EmbeddedTransaction::GetVersionstamp() {
  if (!committed_ || committed_version_ < 0) {
    return KvErr(kNoCommitVersion, "no versionstamp: the transaction committed no mutation");
  }
  return versionstamp_;
}

void EmbeddedTransaction::Reset() {
  cancelled_.store(false, std::memory_order_relaxed);
  start_ns_ = NowNs();
  view_.reset();
  read_time_ns_ = 0;
  pinned_version_.reset();
  writes_.clear();
  cleared_.clear();
  mutations_.clear();
  read_points_.clear();
  read_ranges_.clear();
  write_points_.clear();
  write_ranges_.clear();
  bytes_ = 0;
  deferred_error_.reset();
  committed_ = false;
  committed_version_ = -1;
  versionstamp_.clear();
}

}  // namespace
}  // namespace embedded

Result<std::unique_ptr<Database>> OpenEmbedded(const EmbeddedOptions& options) {
  FDYNO_ASSIGN_OR_RETURN(std::unique_ptr<embedded::EmbeddedDatabase> db,
                         embedded::EmbeddedDatabase::Open(options));
  return std::unique_ptr<Database>(std::move(db));
}

}  // namespace fdyno::kv
