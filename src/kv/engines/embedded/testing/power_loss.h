// Power loss for tests: what a machine that loses power keeps of the embedded engine's files.
//
// A process killed with SIGKILL keeps every byte it wrote (the page cache survives), so a crash
// test alone cannot tell whether acknowledged commits were fsynced. This file system wrapper
// journals what the disk would hold after a power cut: each file's length at its last
// Sync/Fsync, and which new directory entries a directory fsync made durable. After the process
// is killed, SimulatePowerLoss applies the journal to the files on disk: every file is cut back
// to its last synced length (or, in the torn modes, keeps part of what followed, see Tail), and
// files whose directory entry was never fsynced are removed.
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
// fsyncs the directory, and no disk keeps that rename without the MANIFEST's creation).
//
// Stages. The journal also says which stage of the engine's life each file operation belongs
// to (a "stage NAME" line whenever it changes), so a harness can tell where a cut landed; and
// the file system can cut the power itself at the nth operation of a stage (stages.h): it
// journals "cut NAME" and kills its own process with SIGKILL, before or after that operation.
//
// Thread-safety: the file system is thread-safe (one journal descriptor, O_APPEND).
#pragma once

#include <rocksdb/file_system.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "kv/engines/embedded/testing/stages.h"

namespace fdyno::kv::testing {

// The journaling file system and what the database must be told to feed it.
struct PowerLossFileSystem {
  std::shared_ptr<rocksdb::FileSystem> file_system;
  // Call once the database has opened: every operation before counts as kRecovery.
  std::function<void()> opened;
};

// Wraps `base` (null: rocksdb::FileSystem::Default()), journaling to `journal_path` (created or
// truncated), cutting the power itself at `cut` when given: before that operation starts, or
// after it returns (its data written, not synced) when its flag is "after".
Result<PowerLossFileSystem> NewPowerLossFileSystem(
    std::string journal_path, std::optional<StagePoint> cut = std::nullopt,
    std::shared_ptr<rocksdb::FileSystem> base = nullptr);

// The journaling file system alone (no stages, no self cut).
Result<std::shared_ptr<rocksdb::FileSystem>> NewPowerLossJournalingFileSystem(
    std::string journal_path, std::shared_ptr<rocksdb::FileSystem> base = nullptr);

// What becomes of the bytes written after a file's last sync.
enum class Tail {
  kDrop,         // dropped whole: the file is cut back to its last sync
  kTorn,         // a prefix of them kept, cut at a 512-byte or 4 KiB boundary; the rest dropped
  kTornZeros,    // that prefix kept and the rest of the file's length zeros (a size that reached
                 // the disk before the data did)
  kTornGarbage,  // that prefix kept and the rest random bytes (stale blocks)
};
std::string_view TailName(Tail tail);  // "drop", "torn", "zeros", "garbage"
std::optional<Tail> TailNamed(std::string_view name);

struct PowerCutOptions {
  Tail tail = Tail::kDrop;
  uint64_t seed = 0;  // picks each torn file's boundary, prefix and garbage
};

// What SimulatePowerLoss did, and where the cut landed.
struct PowerLossEffect {
  int files_truncated = 0;  // cut back to their last sync
  int files_removed = 0;    // their directory entry was never durable
  int files_torn = 0;       // left with part of their unsynced bytes (torn modes)
  uint64_t bytes_dropped = 0;
  // The self cut's stage; else the stage of the last journaled operation, or kRecovery when
  // the database never reported that it opened.
  Stage stage = Stage::kOther;
  bool self_cut = false;  // the process cut the power itself (its cut point was reached)
};

// Applies the journal at `journal_path` to the files it names: the disk after a power cut.
// REQUIRES: the process that wrote the files is dead.
Result<PowerLossEffect> SimulatePowerLoss(const std::string& journal_path,
                                          const PowerCutOptions& options = {});

}  // namespace fdyno::kv::testing
