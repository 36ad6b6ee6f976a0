// A full disk for tests: a file system wrapper that, while its switch is on, refuses every
// write with ENOSPC (RocksDB's IOStatus::NoSpace) the way a file system that ran out of space
// does: appends to open files, new files and the free-space query all say the disk is full.
// Turning the switch off is space returning. Reads are never affected.
//
// The disk can also fill at a chosen moment (`fill_at`): at the nth append of a stage of the
// engine's life (stages.h: a log append, a flush's or a compaction's table file, a MANIFEST
// write), which is refused, after writing part of its data when the point's flag is "short" (a
// short write, as a real disk that fills mid-write gives); from then on the disk is full. And a
// process outside can give space back by creating `space_file`.
//
// Thread-safety: thread-safe; the switch may be flipped while RocksDB writes. `fill_at`,
// `stages` and `space_file` are set before the file system is used.
#pragma once

#include <rocksdb/file_system.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "kv/engines/embedded/testing/stages.h"

namespace fdyno::kv::testing {

struct DiskSpace {
  std::atomic<bool> full{false};
  std::atomic<int64_t> refused_writes{0};  // writes refused while full
  std::atomic<int64_t> short_writes{0};    // of them, writes that wrote part of their data
  std::optional<StagePoint> fill_at;       // flag "short": a short write there
  std::shared_ptr<StageTracker> stages;    // tells the stage of each append (with fill_at)
  std::string space_file;                  // while full: space returns once this file exists
  std::function<void(const std::string& file)> on_fill;  // told when the disk fills at fill_at
};

// Wraps `base` (null: rocksdb::FileSystem::Default()).
std::shared_ptr<rocksdb::FileSystem> NewFullDiskFileSystem(
    std::shared_ptr<DiskSpace> space, std::shared_ptr<rocksdb::FileSystem> base = nullptr);

}  // namespace fdyno::kv::testing
