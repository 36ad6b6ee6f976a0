// The FoundationDB engine: the kv contract (kv/kv.h) on a FoundationDB cluster through its C
// client, libfdb_c, which is loaded at run time (loader.h), so fdyno builds and runs without it
// and only `--engine fdb` needs it. The client (one per process, client.h) selects API version
// 730, or 710 with a FoundationDB 7.1 client, and runs FoundationDB's one network thread.
//
// Every key lives under FdbOptions::prefix, so that several fdyno deployments can share one
// cluster. The contract maps one to one (transaction.h): FoundationDB's own codes, limits,
// read-your-writes, conflict ranges, versionstamps and 5-second window. There is no snapshot
// transaction (Database::CreateSnapshotTransaction answers null): FoundationDB cannot hold a
// read version past 5 s, so readers pin one with SetReadVersion and get 1007 once it ages out.
// Commits are asynchronous: CommitAsync returns at once and fdb_c's network thread runs `done`.
//
// Thread-safety: the Database is thread-safe; every Transaction must be destroyed before it.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "base/result.h"
#include "kv/engines/fdb/loader.h"
#include "kv/kv.h"

namespace fdyno::kv {

struct FdbOptions {
  // The cluster file. Empty: FoundationDB's default (FDB_CLUSTER_FILE, ./fdb.cluster, then
  // /etc/foundationdb/fdb.cluster).
  std::string cluster_file = {};
  // Bytes before every key (fdb::ParsePrefix reads them from a flag), at most
  // fdb::kMaxPrefixBytes, not starting with 0xff.
  std::string prefix = {};
  // libfdb_c: a name on the loader's path, or a path. A process loads one library only.
  std::string library = fdb::kDefaultLibrary;
  // How long opening waits for the cluster to answer (a read version) before giving up.
  std::chrono::milliseconds connect_timeout{10'000};
};

// Opens the database: starts the process's client if needed, then asks the cluster for a read
// version to show that it is reachable. Errors, each saying what to check: the prefix is
// invalid (Validation); libfdb_c cannot be loaded or is too old (InternalServerError); the
// cluster file cannot be used, or the cluster did not answer within connect_timeout (kv error
// with FoundationDB's code: 1031 for the timeout).
Result<std::unique_ptr<Database>> OpenFdb(const FdbOptions& options);

}  // namespace fdyno::kv
