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

#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/options_util.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include "kv/engines/embedded/engine.h"
#include "kv/engines/embedded/manifest_tail.h"
#include "kv/engines/embedded/rocks_logger.h"
#include "kv/engines/embedded/rocks_options.h"

namespace fdyno::kv {
namespace embedded {
namespace {

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

// In memory, a table file RocksDB deletes frees its memory in the in-memory Env; the database
// returns it to the system (EmbeddedDatabase::RequestMemoryRelease).
class MemoryReleaseListener : public rocksdb::EventListener {
 public:
  explicit MemoryReleaseListener(EmbeddedDatabase* db) : db_(db) {}
  void OnTableFileDeleted(const rocksdb::TableFileDeletionInfo&) override {
    db_->RequestMemoryRelease();
  }

 private:
  EmbeddedDatabase* db_;  // outlives RocksDB, which it closes first
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
  // merge operand per write in the memtable, and each read of it would fold them all (a slow
  // DescribeTable after many inserts: bench/README.md, "Figures behind settings in the code").
  // Past 16, RocksDB stores the folded value instead.
  options.max_successive_merges = 16;
  // Overwritten items leave their older versions in the memtable until a flush drops them,
  // and every range read steps over them: a Query after many overwrites of the same items
  // costs much more CPU than on fresh data. Flushing at 8 MB and compacting from 2 L0 files
  // keeps few old versions and few sorted runs, which takes back most of that cost without
  // costing PutItem or GetItem throughput (bench/README.md, "Figures behind settings in the
  // code").
  options.write_buffer_size = 8 << 20;
  options.level0_file_num_compaction_trigger = 2;
  // A bloom filter over each memtable's keys (160 KB for an 8 MB memtable, ~20 bits a key):
  // a point read of a key the memtable lacks skips its skiplist walk, mostly cache misses.
  // Every single-item write reads its item first, and under writes spread over many items
  // many of those reads miss the active memtable. It lowers PutItem's CPU per request and
  // leaves GetItem and Query unchanged (bench/README.md, "Figures behind settings in the
  // code").
  options.memtable_whole_key_filtering = true;
  options.memtable_prefix_bloom_size_ratio = 0.02;
  // Every commit also writes the last version into the metadata column family. Its memtable
  // holds a few bytes but keeps every log file since its last flush alive, and RocksDB's
  // default bound (4x the write buffers, 288 MB) let the logs, and the replay at the next
  // open, grow with everything written. Past 32 MB RocksDB flushes that column family and
  // drops the logs.
  options.max_total_wal_size = 32 << 20;
  // RocksDB's default, named because durability rests on it: replay the write-ahead log up to
  // its first damaged record and stop there. A power cut can leave only the log's unsynced tail
  // damaged (cut short, torn at a sector, zeros or stale bytes), and no commit in that tail was
  // acknowledged; everything before it was synced whole (docs/format/kv_embedded.md, "Recovery").
  options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.block_cache = rocksdb::NewLRUCache(block_cache_bytes);
  table.whole_key_filtering = true;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

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
  // With RocksDB's log going through fdyno's (rocks_logger.h), RocksDB no longer creates its
  // directory before it lists it at open (an error line in the log on every first start).
  std::filesystem::create_directories(std::filesystem::path(o.path) / kRocksSubdir, ec);
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
  options.info_log = NewRocksLogger();  // not a LOG file: rocks_logger.h says why
  if (o.file_system) {
    d->env_ = rocksdb::NewCompositeEnv(o.file_system);
    options.env = d->env_.get();
  }
  if (!o.rocksdb_options.empty()) {
    rocksdb::ConfigOptions config;
    config.ignore_unknown_options = false;
    rocksdb::Options tuned;
    rocksdb::Status s = rocksdb::GetOptionsFromString(config, options, o.rocksdb_options, &tuned);
    if (!s.ok()) {
      return Error::Validation("embedded engine: RocksDB options '" + o.rocksdb_options +
                               "': " + s.ToString());
    }
    options = tuned;
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
  if (d->memory_limited())
    options.listeners.push_back(std::make_shared<MemoryReleaseListener>(d.get()));
  // Nothing survives the process, so a write-ahead log would only double what memory holds.
  d->write_options_.disableWAL = true;
  return OpenRocks(std::move(d), o, options, kInMemoryRoot);
}

Result<std::unique_ptr<EmbeddedDatabase>> EmbeddedDatabase::OpenRocks(
    std::unique_ptr<EmbeddedDatabase> d, const EmbeddedOptions& o, const rocksdb::Options& options,
    const std::string& rocks_path) {
  d->rocks_options_ = options;
  d->rocks_path_ = rocks_path;
  d->write_options_.sync = o.durability == Durability::kFsync && !o.in_memory;
  FDYNO_ASSIGN_OR_RETURN(d->rocks_, d->OpenInstance(o.in_memory));
  RocksInstance& rocks = *d->rocks_;
  std::string value;
  rocksdb::Status s = rocks.db->Get(rocksdb::ReadOptions(), rocks.meta(), kLastVersionKey, &value);
  if (s.ok()) {
    if (value.size() != 8) {
      return Error::Kv(kIoError, "io_error: corrupt last commit version in '" + o.path + "'");
    }
    d->last_version_ = DecodeBigEndian64(value);
  } else if (!s.IsNotFound()) {
    return IoErr("cannot read last commit version", s);
  }

  for (const std::string& key : o.memory_keys) {
    s = rocks.db->Get(rocksdb::ReadOptions(), rocks.data(), key, &value);
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

Result<std::shared_ptr<RocksInstance>> EmbeddedDatabase::OpenInstance(bool in_memory) const {
  // No memtable insert hints (memtable_insert_with_hint_prefix_extractor): RocksDB 7.8 shares
  // them between point keys and range tombstones, which corrupts the memtable and the replay of
  // its log (docs/format/kv_embedded.md, "RocksDB features").
  const rocksdb::Options& options = rocks_options_;
  std::vector<std::string> existing;
  rocksdb::Status ls = rocksdb::DB::ListColumnFamilies(options, rocks_path_, &existing);
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  cfs.emplace_back(rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions(options));
  rocksdb::ColumnFamilyOptions meta;
  // In memory the metadata memtable (one small key, rewritten by every batch) need not reserve
  // a 64 MB memtable's arena blocks.
  if (in_memory) meta.write_buffer_size = kInMemoryMetaWriteBufferBytes;
  cfs.emplace_back(kMetaColumnFamily, meta);
  if (ls.ok()) {
    for (const std::string& name : existing) {
      if (name != rocksdb::kDefaultColumnFamilyName && name != kMetaColumnFamily) {
        return Error::Kv(kIoError, "io_error: data directory '" + path_ +
                                       "' holds an unknown column family '" + name + "'");
      }
    }
  }
  auto rocks = std::make_shared<RocksInstance>();
  rocks->sync_log_at_close = !write_options_.sync && !in_memory;
  rocksdb::Status s =
      rocksdb::DB::Open(rocksdb::DBOptions(options), rocks_path_, cfs, &rocks->handles, &rocks->db);
  if (s.IsCorruption() && !in_memory) {
    // A power cut during a MANIFEST write may have left its unsynced tail damaged
    // (manifest_tail.h): cut that tail off, never anything before it, and open again.
    FDYNO_ASSIGN_OR_RETURN(bool cut, CutDamagedManifestTail(rocks_path_, path_));
    if (cut) {
      s = rocksdb::DB::Open(rocksdb::DBOptions(options), rocks_path_, cfs, &rocks->handles,
                            &rocks->db);
    }
  }
  if (!s.ok()) return IoErr("cannot open RocksDB in '" + rocks_path_ + "'", s);

  std::string value;
  s = rocks->db->Get(rocksdb::ReadOptions(), rocks->meta(), kFormatKey, &value);
  if (s.IsNotFound()) {
    s = rocks->db->Put(rocksdb::WriteOptions(), rocks->meta(), kFormatKey,
                       std::string(1, kFormatVersion));
    if (!s.ok()) return IoErr("cannot write format version", s);
  } else if (!s.ok()) {
    return IoErr("cannot read format version", s);
  } else if (value != std::string(1, kFormatVersion)) {
    return Error::Kv(
        kIoError, "io_error: data directory '" + path_ + "' has an unsupported kv format version");
  }
  return rocks;
}

RocksInstance::~RocksInstance() {
  if (db == nullptr) return;
  // Without fsync durability the log's tail is still only in the page cache, and RocksDB's
  // Close does not sync it: a power cut after a clean stop would lose what the stop promised
  // was kept. Sync it now (the power-cut test's clean stops would otherwise lose tables).
  // Not after a failed write: syncing a log whose writer failed aborts on RocksDB 7.8.3's
  // assertion; what the failed writer held cannot be synced anyway.
  if (sync_log_at_close && !write_failed.load()) {
    rocksdb::Status synced = db->SyncWAL();
    if (!synced.ok()) spdlog::warn("embedded engine: log sync at close: {}", synced.ToString());
  }
  for (rocksdb::ColumnFamilyHandle* h : handles)
    db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  db->Close().PermitUncheckedError();
  delete db;
}

EmbeddedDatabase::~EmbeddedDatabase() {
  if (collector_id_ != 0) Metrics::Global().RemoveCollector(collector_id_);
  if (reclaimer_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(reclaim_mu_);
      reclaim_stop_ = true;
    }
    rocks_->db->DisableManualCompaction();  // ends a reclaim's compaction early
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
  {
    std::lock_guard<std::mutex> lock(rocks_mu_);
    retiring_.reset();
    rocks_.reset();  // closes RocksDB unless a view outlives the engine
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
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
  std::shared_ptr<RocksInstance> rocks = Rocks();
  if (!rocks) return;  // being reopened
  rocksdb::DB* db = rocks->db;
  Metrics& m = Metrics::Global();
  auto aggregated = [&](const std::string& property) {
    uint64_t v = 0;
    db->GetAggregatedIntProperty(property, &v);
    return static_cast<int64_t>(v);
  };
  auto integer = [&](const std::string& property) {
    uint64_t v = 0;
    db->GetIntProperty(rocks->data(), property, &v);
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
  if (!db->GetMapProperty(rocks->data(), rocksdb::DB::Properties::kCFStats, &stats)) return;
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

}  // namespace embedded

Result<std::unique_ptr<Database>> OpenEmbedded(const EmbeddedOptions& options) {
  FDYNO_ASSIGN_OR_RETURN(std::unique_ptr<embedded::EmbeddedDatabase> db,
                         embedded::EmbeddedDatabase::Open(options));
  return std::unique_ptr<Database>(std::move(db));
}

}  // namespace fdyno::kv
