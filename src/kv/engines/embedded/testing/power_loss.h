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
// the file system can cut the power itself at the nth operation of a stage (SelfCut): it
// journals "cut NAME" and kills its own process with SIGKILL, before or after that operation.
//
// Thread-safety: the file system is thread-safe (one journal descriptor, O_APPEND).
#pragma once

#include <rocksdb/file_system.h>
#include <rocksdb/listener.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace fdyno::kv::testing {

// The stages of the engine's life a cut can land in, by the file an operation touches:
//   kAppend      a write-ahead log: its creation, appends and syncs (a commit's write)
//   kFlush       a table file a memtable flush writes
//   kCompaction  a table file a compaction writes
//   kLogDelete   a write-ahead log's deletion once nothing needs it
//   kManifest    the MANIFEST's appends and syncs, CURRENT's temporary file and rename, and
//                the directory fsync that follows them
//   kRecovery    anything before the database reported that it opened (replaying the log,
//                flushing what it replayed, writing a new MANIFEST)
//   kOther       the rest (OPTIONS files, deleting obsolete table files)
enum class Stage { kAppend, kFlush, kCompaction, kLogDelete, kManifest, kRecovery, kOther };
inline constexpr int kStageCount = 7;
inline constexpr Stage kStages[kStageCount] = {
    Stage::kAppend,   Stage::kFlush,    Stage::kCompaction, Stage::kLogDelete,
    Stage::kManifest, Stage::kRecovery, Stage::kOther};

// "append", "flush", "compaction", "log_delete", "manifest", "recovery", "other".
std::string_view StageName(Stage stage);
std::optional<Stage> StageNamed(std::string_view name);

// A power cut the file system makes itself.
struct SelfCut {
  Stage stage = Stage::kAppend;
  int nth = 1;         // at the nth operation of `stage` since the file system was made
  bool after = false;  // after that operation returns (its data written, not synced), or before
};

// "STAGE:N" or "STAGE:N:after", e.g. "flush:3:after".
Result<SelfCut> ParseSelfCut(std::string_view text);

// The journaling file system and what the database must be told to feed it.
struct PowerLossFileSystem {
  std::shared_ptr<rocksdb::FileSystem> file_system;
  // Add to the database's listeners: tells the file system which table files a flush, a
  // compaction or recovery writes. Without it those count as kOther.
  std::shared_ptr<rocksdb::EventListener> listener;
  // Call once the database has opened: every operation before counts as kRecovery.
  std::function<void()> opened;
};

// Wraps `base` (null: rocksdb::FileSystem::Default()), journaling to `journal_path` (created or
// truncated), cutting the power itself at `cut` when given.
Result<PowerLossFileSystem> NewPowerLossFileSystem(
    std::string journal_path, std::optional<SelfCut> cut = std::nullopt,
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
  bool self_cut = false;  // the process cut the power itself (a SelfCut fired)
};

// Applies the journal at `journal_path` to the files it names: the disk after a power cut.
// REQUIRES: the process that wrote the files is dead.
Result<PowerLossEffect> SimulatePowerLoss(const std::string& journal_path,
                                          const PowerCutOptions& options = {});

}  // namespace fdyno::kv::testing
