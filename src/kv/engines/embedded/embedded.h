// The embedded engine: the kv contract (kv/kv.h) on RocksDB, in this process.
//
// What it adds to RocksDB: read versions pinned by RocksDB snapshots, read-your-writes over
// point and range reads, a resolver holding the write conflict ranges of the last 5 seconds
// (1020 on conflict, 1007 for older read versions), commit versions and versionstamps that
// keep increasing across restarts, FoundationDB's limits (2101-2103, reported at Commit),
// timeouts (1031) and cancellation (1025). Commits go through one pipeline, served by one
// committer thread, that batches concurrent transactions into one RocksDB write and one fsync
// (group commit). CommitAsync returns at once: the committer thread runs its callback once
// the commit is durable (or failed), so a commit needs no waiting thread of its own.
//
// Besides the contract's codes, it answers FoundationDB's 1009 future_version (SetReadVersion
// ahead of the newest version), 1036 accessed_unreadable (reading a key set with a
// versionstamped value before commit), 2000 client_invalid_operation (malformed versionstamp
// offset), 2005 inverted_range (begin > end) and 2021 no_commit_version; storage failures are
// 1510 io_error, and a failed RocksDB write during commit is 1021 commit_unknown_result.
// What it persists, and the RocksDB features it uses: docs/format/kv_embedded.md.
//
// Changes to this engine land only with the crash test and the soak test passing on them
// (README.md beside this file).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "kv/kv.h"

namespace rocksdb {
class FileSystem;
}  // namespace rocksdb

namespace fdyno::kv {

enum class Durability {
  kFsync,  // default: a commit returns after its WAL write is fsynced (group commit)
  kNone,   // tests and benchmarks only: WAL written, not fsynced
};

struct EmbeddedOptions {
  std::string path;  // data directory, created if missing (in memory: only a name)
  Durability durability = Durability::kFsync;
  // In memory: RocksDB runs on its in-memory Env (rocksdb::NewMemEnv) without a write-ahead
  // log; nothing touches the disk, `durability` does not apply, no directory is created or
  // locked, and everything is gone when the database closes. For tests and CI, like DynamoDB
  // Local's -inMemory.
  bool in_memory = false;
  // In memory, when not 0: the bytes the stored data may take (memtables, pinned ones
  // included, and table files; see docs/format/kv_embedded.md for the rest of the process). A
  // commit that would take it past the limit fails with LimitExceededException, a DynamoDB
  // error rather than a kv code (nothing would come of a retry), and commits nothing; one that
  // also deletes may use a reserve of a sixteenth of the limit (at least 4 MiB) above it, so a
  // full database can still be emptied, and counts only the live data, not the older copies
  // RocksDB keeps while a compaction or an iterator still reads them.
  uint64_t memory_limit_bytes = 0;
  // null: Clock::Real(). Drives the 5 s window and transaction timeouts; must outlive the
  // database.
  Clock* clock = nullptr;
  // Keys that nearly every transaction reads (the catalog's metadata version). The engine
  // keeps each one's latest committed value in memory with the version that wrote it, and
  // serves a read at that version or later from memory instead of RocksDB. Reads still add
  // conflict ranges; older read versions read RocksDB. Writes of every kind keep the copy
  // exact; after a failed RocksDB write the key is read from RocksDB from then on.
  std::vector<std::string> memory_keys = {};
  // Tests only: the file system RocksDB uses (null: the operating system's), e.g. the power-loss
  // journaling one of testing/power_loss.h. Must stay alive while the database is open.
  std::shared_ptr<rocksdb::FileSystem> file_system = nullptr;
  // Tests only: RocksDB options in RocksDB's own "name=value;name=value" form
  // (rocksdb::GetOptionsFromString), applied over the engine's own for the database and its data
  // column family: e.g. small write buffers and levels, so that flushes, compactions and log
  // deletions come often. Options RocksDB does not know make OpenEmbedded fail.
  std::string rocksdb_options = {};
  // Tests only: runs on the committer thread (holding no lock) after it woke for queued
  // commits and before it takes them as one batch. A test that blocks here queues commits
  // that must then share that batch.
  std::function<void()> before_batch = nullptr;
};

// Metrics (base/metrics.h): fdyno_kv_commit_batch_transactions and _bytes (histograms of
// group-commit batches), fdyno_kv_commit_write_seconds (each batch's RocksDB write, the WAL
// fsync included), and, read from RocksDB at each scrape: fdyno_kv_memtable_bytes,
// fdyno_kv_sst_bytes, fdyno_kv_compactions_total, fdyno_kv_compaction_written_bytes_total,
// fdyno_kv_running_compactions, fdyno_kv_write_stalls_total, fdyno_kv_write_stopped,
// fdyno_kv_delayed_write_rate_bytes, and fdyno_kv_memory_limit_bytes in memory.
//
// Opens (creating if needed) the database in options.path and takes an exclusive lock on
// the directory. A second opener, in this or another process, gets an error (kv code 1510,
// io_error) naming the path and the holder's pid. The lock is released when the Database is
// destroyed or its process dies. The Database is thread-safe; every Transaction must be
// destroyed before it.
Result<std::unique_ptr<Database>> OpenEmbedded(const EmbeddedOptions& options);

}  // namespace fdyno::kv
