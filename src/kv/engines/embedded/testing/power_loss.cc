// The journaling file system of power_loss.h: what reaches the disk, by stage, and the self cut.
// SimulatePowerLoss, which applies the journal, is in power_cut.cc.
#include "kv/engines/embedded/testing/power_loss.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

namespace fdyno::kv::testing {
namespace {

std::string Normal(const std::string& path) {
  return std::filesystem::path(path).lexically_normal().string();
}

// The journal and the self cut, shared by the file system, its files and its directories.
class Recorder {
 public:
  Recorder(int fd, std::optional<StagePoint> cut, std::shared_ptr<StageTracker> stages)
      : fd_(fd), cut_(std::move(cut)), stages_(std::move(stages)) {}
  ~Recorder() { ::close(fd_); }

  void Line(const std::string& line) {
    const std::string l = line + "\n";
    ssize_t n = ::write(fd_, l.data(), l.size());
    (void)n;  // a short journal only makes the simulation drop more, never less
  }

  // Runs `op`, the operation of `stage` on the file system, journaling the stage when it
  // changes and cutting the power around the operation the cut point names.
  template <typename Op>
  auto Run(Stage stage, Op&& op) {
    if (last_stage_.exchange(static_cast<int>(stage)) != static_cast<int>(stage)) {
      Line("stage " + std::string(StageName(stage)));
    }
    const bool cut_here = cut_ && stages_->Count(stage, *cut_);
    if (cut_here && cut_->flag != "after") Cut(stage);
    auto result = op();
    if (cut_here) Cut(stage);
    return result;
  }

  StageTracker& stages() { return *stages_; }

  void Opened() {
    stages_->Opened();
    Line("opened");
  }

 private:
  [[noreturn]] void Cut(Stage stage) {
    Line("cut " + std::string(StageName(stage)));
    ::kill(::getpid(), SIGKILL);
    for (;;) ::pause();  // SIGKILL is not delivered to this thread alone: wait for it
  }

  int fd_;
  std::optional<StagePoint> cut_;
  std::shared_ptr<StageTracker> stages_;
  std::atomic<int> last_stage_{-1};
};

// Names are written as they are: RocksDB's file names have no spaces or newlines.
class JournaledFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  JournaledFile(std::unique_ptr<rocksdb::FSWritableFile> f, std::string name,
                std::shared_ptr<Recorder> recorder)
      : FSWritableFileOwnerWrapper(std::move(f)), name_(std::move(name)), rec_(recorder) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* d) override {
    return rec_->Run(FileStage(), [&] { return target()->Append(data, o, d); });
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           const rocksdb::DataVerificationInfo& v,
                           rocksdb::IODebugContext* d) override {
    return rec_->Run(FileStage(), [&] { return target()->Append(data, o, v, d); });
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* d) override {
    return rec_->Run(FileStage(), [&] { return Synced(target()->Sync(o, d), o, d); });
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* d) override {
    return rec_->Run(FileStage(), [&] { return Synced(target()->Fsync(o, d), o, d); });
  }
  rocksdb::IOStatus RangeSync(uint64_t offset, uint64_t nbytes, const rocksdb::IOOptions& o,
                              rocksdb::IODebugContext* d) override {
    // A range sync writes back a range but promises nothing about the file's metadata; the
    // model counts only full syncs.
    return target()->RangeSync(offset, nbytes, o, d);
  }

 private:
  Stage FileStage() { return rec_->stages().StageOf(name_, /*deleting=*/false); }
  rocksdb::IOStatus Synced(rocksdb::IOStatus s, const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* d) {
    if (s.ok()) rec_->Line("sync " + name_ + " " + std::to_string(target()->GetFileSize(o, d)));
    return s;
  }
  std::string name_;
  std::shared_ptr<Recorder> rec_;
};

class JournaledDirectory : public rocksdb::FSDirectoryWrapper {
 public:
  JournaledDirectory(std::unique_ptr<rocksdb::FSDirectory> d, std::string name,
                     std::shared_ptr<Recorder> recorder)
      : FSDirectoryWrapper(std::move(d)), name_(std::move(name)), rec_(std::move(recorder)) {}

  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* d) override {
    return rec_->Run(rec_->stages().StageOfDirectorySync(),
                     [&] { return Synced(FSDirectoryWrapper::Fsync(o, d)); });
  }
  rocksdb::IOStatus FsyncWithDirOptions(const rocksdb::IOOptions& o, rocksdb::IODebugContext* d,
                                        const rocksdb::DirFsyncOptions& options) override {
    return rec_->Run(rec_->stages().StageOfDirectorySync(), [&] {
      return Synced(FSDirectoryWrapper::FsyncWithDirOptions(o, d, options));
    });
  }

 private:
  rocksdb::IOStatus Synced(rocksdb::IOStatus s) {
    if (s.ok()) rec_->Line("dirsync " + name_);
    return s;
  }
  std::string name_;
  std::shared_ptr<Recorder> rec_;
};

class JournalingFileSystem : public rocksdb::FileSystemWrapper {
 public:
  JournalingFileSystem(std::shared_ptr<rocksdb::FileSystem> base,
                       std::shared_ptr<Recorder> recorder)
      : FileSystemWrapper(std::move(base)), rec_(std::move(recorder)) {}

  const char* Name() const override { return "fdyno.PowerLossJournaling"; }

  rocksdb::IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* d) override {
    return rec_->Run(StageOf(f), [&] {
      rec_->Line("create " + Normal(f));
      return Wrap(f, target()->NewWritableFile(f, o, r, d), r);
    });
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
    return rec_->Run(StageOf(f), [&] {
      rec_->Line("rename " + Normal(old) + " " + Normal(f));
      return Wrap(f, target()->ReuseWritableFile(f, old, o, r, d), r);
    });
  }
  rocksdb::IOStatus NewDirectory(const std::string& name, const rocksdb::IOOptions& o,
                                 std::unique_ptr<rocksdb::FSDirectory>* r,
                                 rocksdb::IODebugContext* d) override {
    rocksdb::IOStatus s = target()->NewDirectory(name, o, r, d);
    if (s.ok()) *r = std::make_unique<JournaledDirectory>(std::move(*r), Normal(name), rec_);
    return s;
  }
  rocksdb::IOStatus RenameFile(const std::string& s, const std::string& t,
                               const rocksdb::IOOptions& o, rocksdb::IODebugContext* d) override {
    return rec_->Run(StageOf(t), [&] {
      rec_->Line("rename " + Normal(s) + " " + Normal(t));  // before: see the header
      return target()->RenameFile(s, t, o, d);
    });
  }
  rocksdb::IOStatus DeleteFile(const std::string& f, const rocksdb::IOOptions& o,
                               rocksdb::IODebugContext* d) override {
    return rec_->Run(rec_->stages().StageOf(Normal(f), /*deleting=*/true), [&] {
      rec_->Line("delete " + Normal(f));  // before: see the header
      return target()->DeleteFile(f, o, d);
    });
  }

 private:
  Stage StageOf(const std::string& f) {
    return rec_->stages().StageOf(Normal(f), /*deleting=*/false);
  }
  rocksdb::IOStatus Wrap(const std::string& f, rocksdb::IOStatus s,
                         std::unique_ptr<rocksdb::FSWritableFile>* r) {
    if (s.ok()) *r = std::make_unique<JournaledFile>(std::move(*r), Normal(f), rec_);
    return s;
  }
  std::shared_ptr<Recorder> rec_;
};

}  // namespace

Result<PowerLossFileSystem> NewPowerLossFileSystem(std::string journal_path,
                                                   std::optional<StagePoint> cut,
                                                   std::shared_ptr<rocksdb::FileSystem> base) {
  int fd = ::open(journal_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Error::Internal("cannot open journal " + journal_path + ": " + std::strerror(errno));
  }
  if (!base) base = rocksdb::FileSystem::Default();
  auto stages = std::make_shared<StageTracker>();
  auto recorder = std::make_shared<Recorder>(fd, std::move(cut), stages);
  PowerLossFileSystem out;
  out.file_system = std::make_shared<JournalingFileSystem>(std::move(base), recorder);
  out.opened = [recorder] { recorder->Opened(); };
  return out;
}

Result<std::shared_ptr<rocksdb::FileSystem>> NewPowerLossJournalingFileSystem(
    std::string journal_path, std::shared_ptr<rocksdb::FileSystem> base) {
  FDYNO_ASSIGN_OR_RETURN(PowerLossFileSystem fs,
                         NewPowerLossFileSystem(std::move(journal_path), std::nullopt, base));
  return fs.file_system;
}

}  // namespace fdyno::kv::testing
