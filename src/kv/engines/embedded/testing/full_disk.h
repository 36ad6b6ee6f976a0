// A full disk for tests: a file system wrapper that, while its switch is on, refuses every
// write with ENOSPC (RocksDB's IOStatus::NoSpace) the way a file system that ran out of space
// does: appends to open files, new files and the free-space query all say the disk is full.
// Turning the switch off is space returning. Reads are never affected.
//
// Thread-safety: thread-safe; the switch may be flipped while RocksDB writes.
#pragma once

#include <rocksdb/file_system.h>

#include <atomic>
#include <memory>

namespace fdyno::kv::testing {

struct DiskSpace {
  std::atomic<bool> full{false};
  std::atomic<int64_t> refused_writes{0};  // writes refused while full
};

// Wraps `base` (null: rocksdb::FileSystem::Default()).
std::shared_ptr<rocksdb::FileSystem> NewFullDiskFileSystem(
    std::shared_ptr<DiskSpace> space, std::shared_ptr<rocksdb::FileSystem> base = nullptr);

}  // namespace fdyno::kv::testing
