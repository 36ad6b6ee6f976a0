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
}

namespace fdyno::kv {

enum class Durability {
  kFsync,  // default: a commit returns after its WAL write is fsynced (group commit)
  kNone,   // tests and benchmarks only: WAL written, not fsynced
};

struct EmbeddedOptions {
  std::string path;  // data directory, created if missing
  Durability durability = Durability::kFsync;
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
  // Tests only: runs on the committer thread (holding no lock) after it woke for queued
  // commits and before it takes them as one batch. A test that blocks here queues commits
  // that must then share that batch.
  std::function<void()> before_batch = nullptr;
};

// Opens (creating if needed) the database in options.path and takes an exclusive lock on
// the directory. A second opener, in this or another process, gets an error (kv code 1510,
// io_error) naming the path and the holder's pid. The lock is released when the Database is
// destroyed or its process dies. The Database is thread-safe; every Transaction must be
// destroyed before it.
Result<std::unique_ptr<Database>> OpenEmbedded(const EmbeddedOptions& options);

}  // namespace fdyno::kv
