// Power loss for tests: what a machine that loses power keeps of the embedded engine's files.
//
// A process killed with SIGKILL keeps every byte it wrote (the page cache survives), so a crash
// test alone cannot tell whether acknowledged commits were fsynced. This file system wrapper
// journals what the disk would hold after a power cut: each file's length at its last
// Sync/Fsync, and which new directory entries a directory fsync made durable. After the process
// is killed, SimulatePowerLoss applies the journal to the files on disk: every file is cut back
// to its last synced length, and files whose directory entry was never fsynced are removed.
//
// The journal is appended with one write(2) per line (no fsync: it describes the disk as the
// killed process left it, and SIGKILL keeps the page cache). Creations, renames and deletes are
// journaled before they are made, syncs after they return: a kill can fall between a line and
// its operation, and a journal ahead of the disk is harmless (an operation that never happened
// only leaves a file the model does not touch, or keeps the older one), whereas a rename made but
// not journaled would leave a renamed CURRENT whose MANIFEST the model removes.
//
// Model and its limits: data is durable up to the last sync of its file; a new file's entry is
// durable once its directory is fsynced after its creation; a rename onto an existing durable
// name, and a delete, are taken as durable at once (ext4's behaviour for the rename RocksDB
// makes of CURRENT), and with them every metadata operation made before them (ext4's and XFS's
// journals commit metadata in order: RocksDB renames CURRENT onto a new MANIFEST before it
// fsyncs the directory, and no disk keeps that rename without the MANIFEST's creation). Writes
// that were never synced are dropped whole, never torn in part.
//
// Thread-safety: the file system is thread-safe (one journal descriptor, O_APPEND).
#pragma once

#include <rocksdb/file_system.h>

#include <memory>
#include <string>

#include "base/result.h"

namespace fdyno::kv::testing {

// Wraps `base` (null: rocksdb::FileSystem::Default()), journaling to `journal_path` (created or
// truncated).
Result<std::shared_ptr<rocksdb::FileSystem>> NewPowerLossJournalingFileSystem(
    std::string journal_path, std::shared_ptr<rocksdb::FileSystem> base = nullptr);

// What SimulatePowerLoss did.
struct PowerLossEffect {
  int files_truncated = 0;
  int files_removed = 0;
  uint64_t bytes_dropped = 0;
};

// Applies the journal at `journal_path` to the files it names: the disk after a power cut.
// REQUIRES: the process that wrote the files is dead.
Result<PowerLossEffect> SimulatePowerLoss(const std::string& journal_path);

}  // namespace fdyno::kv::testing
