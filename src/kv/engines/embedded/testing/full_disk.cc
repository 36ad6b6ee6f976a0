#include "kv/engines/embedded/testing/full_disk.h"

#include <utility>

namespace fdyno::kv::testing {
namespace {

rocksdb::IOStatus Refuse(DiskSpace& space) {
  space.refused_writes.fetch_add(1, std::memory_order_relaxed);
  return rocksdb::IOStatus::NoSpace("No space left on device (fdyno test: disk full)");
}

class FullDiskFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  FullDiskFile(std::unique_ptr<rocksdb::FSWritableFile> f, std::shared_ptr<DiskSpace> space)
      : FSWritableFileOwnerWrapper(std::move(f)), space_(std::move(space)) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* d) override {
    if (space_->full.load()) return Refuse(*space_);
    return target()->Append(data, o, d);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           const rocksdb::DataVerificationInfo& v,
                           rocksdb::IODebugContext* d) override {
    if (space_->full.load()) return Refuse(*space_);
    return target()->Append(data, o, v, d);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                     const rocksdb::IOOptions& o,
                                     rocksdb::IODebugContext* d) override {
    if (space_->full.load()) return Refuse(*space_);
    return target()->PositionedAppend(data, offset, o, d);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                     const rocksdb::IOOptions& o,
                                     const rocksdb::DataVerificationInfo& v,
                                     rocksdb::IODebugContext* d) override {
    if (space_->full.load()) return Refuse(*space_);
    return target()->PositionedAppend(data, offset, o, v, d);
  }

 private:
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
    if (space_->full.load()) return Refuse(*space_);
    return Wrap(target()->NewWritableFile(f, o, r, d), r);
  }
  rocksdb::IOStatus ReopenWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                       std::unique_ptr<rocksdb::FSWritableFile>* r,
                                       rocksdb::IODebugContext* d) override {
    return Wrap(target()->ReopenWritableFile(f, o, r, d), r);
  }
  rocksdb::IOStatus ReuseWritableFile(const std::string& f, const std::string& old,
                                      const rocksdb::FileOptions& o,
                                      std::unique_ptr<rocksdb::FSWritableFile>* r,
                                      rocksdb::IODebugContext* d) override {
    if (space_->full.load()) return Refuse(*space_);
    return Wrap(target()->ReuseWritableFile(f, old, o, r, d), r);
  }
  rocksdb::IOStatus GetFreeSpace(const std::string& path, const rocksdb::IOOptions& o,
                                 uint64_t* free, rocksdb::IODebugContext* d) override {
    if (space_->full.load()) {
      *free = 0;
      return rocksdb::IOStatus::OK();
    }
    return target()->GetFreeSpace(path, o, free, d);
  }

 private:
  rocksdb::IOStatus Wrap(rocksdb::IOStatus s, std::unique_ptr<rocksdb::FSWritableFile>* r) {
    if (s.ok()) *r = std::make_unique<FullDiskFile>(std::move(*r), space_);
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
