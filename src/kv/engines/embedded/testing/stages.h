// The stages of the embedded engine's life, told from the files RocksDB touches: which stage a
// file operation belongs to, for the fault-injecting file systems of this directory
// (power_loss.h cuts the power at a stage, full_disk.h fills the disk at one).
//
// Flushes and compactions are told apart by the RocksDB thread that writes the table file, not
// by a RocksDB EventListener: in 7.8.3 any registered listener makes error recovery race
// (docs/format/kv_embedded.md, "RocksDB features"), and a test that fills the disk met that race
// (writes never resumed). With max_background_jobs 2 RocksDB runs flushes in its HIGH pool and
// compactions in its LOW pool.
//
// Thread-safety: StageTracker is thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace fdyno::kv::testing {

// By the file an operation touches:
//   kAppend      a write-ahead log: its creation, appends and syncs (a commit's write)
//   kFlush       a table file a memtable flush writes (on RocksDB's "rocksdb:high" threads)
//   kCompaction  a table file a compaction writes (on its "rocksdb:low" threads)
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

// A moment in the engine's life: the nth file operation of a stage.
struct StagePoint {
  Stage stage = Stage::kAppend;
  int nth = 1;  // counted from 1, since the tracker was made
  // A flag after the count ("after" for a power cut, "short" for a full disk), or empty.
  std::string flag;
};

// "STAGE:N" or "STAGE:N:FLAG" with FLAG one of `flags`, e.g. "flush:3:after".
Result<StagePoint> ParseStagePoint(std::string_view text,
                                   std::initializer_list<std::string_view> flags);

class StageTracker {
 public:
  // The stage of an operation on `path` (lexically normal); `deleting` for a deletion.
  Stage StageOf(const std::string& path, bool deleting);
  // A directory fsync belongs to what this thread did last (a flush's table file, CURRENT).
  Stage StageOfDirectorySync() const;
  // Counts an operation of `stage`; true when it is `point`'s.
  bool Count(Stage stage, const StagePoint& point);

  // Call once the database has opened: every operation before counts as kRecovery.
  void Opened() { opened_.store(true); }
  bool opened() const { return opened_.load(); }

 private:
  std::array<std::atomic<int>, kStageCount> counts_{};
  std::atomic<bool> opened_{false};
};

}  // namespace fdyno::kv::testing
