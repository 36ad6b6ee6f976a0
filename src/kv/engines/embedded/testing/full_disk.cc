#include "kv/engines/embedded/testing/full_disk.h"

#include <filesystem>
#include <utility>

namespace fdyno::kv::testing {
namespace {

rocksdb::IOStatus Refuse(DiskSpace& space) {
  space.refused_writes.fetch_add(1, std::memory_order_relaxed);
  return rocksdb::IOStatus::NoSpace("No space left on device (fdyno test: disk full)");
}

// Whether the disk is full now: space returns when the space file appears.
bool Full(DiskSpace& space) {
  if (!space.full.load()) return false;
  std::error_code ec;
  if (!space.space_file.empty() && std::filesystem::exists(space.space_file, ec)) {
    space.full.store(false);
    return false;
  }
  return true;
}

class FullDiskFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  FullDiskFile(std::unique_ptr<rocksdb::FSWritableFile> f, std::string name,
               std::shared_ptr<DiskSpace> space)
      : FSWritableFileOwnerWrapper(std::move(f)),
        name_(std::move(name)),
        space_(std::move(space)) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* d) override {
    if (Full(*space_)) return Refuse(*space_);
    if (FillsHere()) return FillWith(data, o, d);
    return target()->Append(data, o, d);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           const rocksdb::DataVerificationInfo& v,
                           rocksdb::IODebugContext* d) override {
    if (Full(*space_)) return Refuse(*space_);
    if (FillsHere()) return FillWith(data, o, d);
    return target()->Append(data, o, v, d);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                     const rocksdb::IOOptions& o,
                                     rocksdb::IODebugContext* d) override {
    if (Full(*space_)) return Refuse(*space_);
    return target()->PositionedAppend(data, offset, o, d);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                     const rocksdb::IOOptions& o,
                                     const rocksdb::DataVerificationInfo& v,
                                     rocksdb::IODebugContext* d) override {
    if (Full(*space_)) return Refuse(*space_);
    return target()->PositionedAppend(data, offset, o, v, d);
  }

 private:
  // Whether this append is the one the disk fills at.
  bool FillsHere() {
    if (!space_->fill_at || !space_->stages) return false;
    const Stage stage = space_->stages->StageOf(name_, /*deleting=*/false);
    return space_->stages->Count(stage, *space_->fill_at);
  }
  // The disk fills during this append: refused, after part of it when the point says "short".
  rocksdb::IOStatus FillWith(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                             rocksdb::IODebugContext* d) {
    if (space_->fill_at->flag == "short" && data.size() > 1) {
      target()->Append(rocksdb::Slice(data.data(), data.size() / 2), o, d).PermitUncheckedError();
      space_->short_writes.fetch_add(1, std::memory_order_relaxed);
    }
    space_->full.store(true);
    if (space_->on_fill) space_->on_fill(name_);
    return Refuse(*space_);
  }

  std::string name_;
  std::shared_ptr<DiskSpace> space_;
};

class FullDiskFileSystem : public rocksdb::FileSystemWrapper {
 public:
  FullDiskFileSystem(std::shared_ptr<rocksdb::FileSystem> base, std::shared_ptr<DiskSpace> space)
      : FileSystemWrapper(std::move(base)), space_(std::move(space)) {}

  const char* Name() const override { return "fdyno.FullDisk"; }

  rocksdb::IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* d) override {
    if (Full(*space_)) return Refuse(*space_);
    return Wrap(f, target()->NewWritableFile(f, o, r, d), r);
  }
  rocksdb::IOStatus ReopenWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                       std::unique_ptr<rocksdb::FSWritableFile>* r,
                                       rocksdb::IODebugContext* d) override {
    return Wrap(f, target()->ReopenWritableFile(f, o, r, d), r);
  }
  rocksdb::IOStatus ReuseWritableFile(const std::string& f, const std::string& old,
                                      const rocksdb::FileOptions& o,
                                      std::unique_ptr<rocksdb::FSWritableFile>* r,
                                      rocksdb::IODebugContext* d) override {
    if (Full(*space_)) return Refuse(*space_);
    return Wrap(f, target()->ReuseWritableFile(f, old, o, r, d), r);
  }
  // RocksDB's own LOG file through this file system too, as on a real disk
  // (FileSystemWrapper's would open it on the base file system, which never fills).
  rocksdb::IOStatus NewLogger(const std::string& f, const rocksdb::IOOptions& o,
                              std::shared_ptr<rocksdb::Logger>* r,
                              rocksdb::IODebugContext* d) override {
    return rocksdb::FileSystem::NewLogger(f, o, r, d);
  }
  rocksdb::IOStatus GetFreeSpace(const std::string& path, const rocksdb::IOOptions& o,
                                 uint64_t* free, rocksdb::IODebugContext* d) override {
    if (Full(*space_)) {
      *free = 0;
      return rocksdb::IOStatus::OK();
    }
    return target()->GetFreeSpace(path, o, free, d);
  }

 private:
  rocksdb::IOStatus Wrap(const std::string& f, rocksdb::IOStatus s,
                         std::unique_ptr<rocksdb::FSWritableFile>* r) {
    const std::string name = std::filesystem::path(f).lexically_normal().string();
    if (s.ok()) *r = std::make_unique<FullDiskFile>(std::move(*r), name, space_);
    return s;
  }
  std::shared_ptr<DiskSpace> space_;
};

}  // namespace

std::shared_ptr<rocksdb::FileSystem> NewFullDiskFileSystem(
    std::shared_ptr<DiskSpace> space, std::shared_ptr<rocksdb::FileSystem> base) {
  if (!base) base = rocksdb::FileSystem::Default();
  return std::make_shared<FullDiskFileSystem>(std::move(base), std::move(space));
}

}  // namespace fdyno::kv::testing
