#include "kv/engines/embedded/testing/power_loss.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

namespace fdyno::kv::testing {
namespace {

// One journal descriptor; each line written with one write(2).
class Journal {
 public:
  explicit Journal(int fd) : fd_(fd) {}
  ~Journal() { ::close(fd_); }
  void Line(const std::string& line) {
    const std::string l = line + "\n";
    ssize_t n = ::write(fd_, l.data(), l.size());
    (void)n;  // a short journal only makes the simulation drop more, never less
  }

 private:
  int fd_;
};

// Names are written as they are: RocksDB's file names have no spaces or newlines.
class JournaledFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  JournaledFile(std::unique_ptr<rocksdb::FSWritableFile> f, std::string name,
                std::shared_ptr<Journal> journal)
      : FSWritableFileOwnerWrapper(std::move(f)), name_(std::move(name)), journal_(journal) {}

  rocksdb::IOStatus Sync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* d) override {
    rocksdb::IOStatus s = target()->Sync(o, d);
    if (s.ok()) Synced(o, d);
    return s;
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* d) override {
    rocksdb::IOStatus s = target()->Fsync(o, d);
    if (s.ok()) Synced(o, d);
    return s;
  }
  rocksdb::IOStatus RangeSync(uint64_t offset, uint64_t nbytes, const rocksdb::IOOptions& o,
                              rocksdb::IODebugContext* d) override {
    // A range sync writes back a range but promises nothing about the file's metadata; the
    // model counts only full syncs.
    return target()->RangeSync(offset, nbytes, o, d);
  }

 private:
  void Synced(const rocksdb::IOOptions& o, rocksdb::IODebugContext* d) {
    journal_->Line("sync " + name_ + " " + std::to_string(target()->GetFileSize(o, d)));
  }
  std::string name_;
  std::shared_ptr<Journal> journal_;
};

class JournaledDirectory : public rocksdb::FSDirectoryWrapper {
 public:
  JournaledDirectory(std::unique_ptr<rocksdb::FSDirectory> d, std::string name,
                     std::shared_ptr<Journal> journal)
      : FSDirectoryWrapper(std::move(d)), name_(std::move(name)), journal_(std::move(journal)) {}

  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* d) override {
    rocksdb::IOStatus s = FSDirectoryWrapper::Fsync(o, d);
    if (s.ok()) journal_->Line("dirsync " + name_);
    return s;
  }
  rocksdb::IOStatus FsyncWithDirOptions(const rocksdb::IOOptions& o, rocksdb::IODebugContext* d,
                                        const rocksdb::DirFsyncOptions& options) override {
    rocksdb::IOStatus s = FSDirectoryWrapper::FsyncWithDirOptions(o, d, options);
    if (s.ok()) journal_->Line("dirsync " + name_);
    return s;
  }

 private:
  std::string name_;
  std::shared_ptr<Journal> journal_;
};

std::string Normal(const std::string& path) {
  return std::filesystem::path(path).lexically_normal().string();
}

class JournalingFileSystem : public rocksdb::FileSystemWrapper {
 public:
  JournalingFileSystem(std::shared_ptr<rocksdb::FileSystem> base, std::shared_ptr<Journal> journal)
      : FileSystemWrapper(std::move(base)), journal_(std::move(journal)) {}

  const char* Name() const override { return "fdyno.PowerLossJournaling"; }

  rocksdb::IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* d) override {
    journal_->Line("create " + Normal(f));
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
    journal_->Line("rename " + Normal(old) + " " + Normal(f));
    return Wrap(f, target()->ReuseWritableFile(f, old, o, r, d), r);
  }
  rocksdb::IOStatus NewDirectory(const std::string& name, const rocksdb::IOOptions& o,
                                 std::unique_ptr<rocksdb::FSDirectory>* r,
                                 rocksdb::IODebugContext* d) override {
    rocksdb::IOStatus s = target()->NewDirectory(name, o, r, d);
    if (s.ok()) *r = std::make_unique<JournaledDirectory>(std::move(*r), Normal(name), journal_);
    return s;
  }
  rocksdb::IOStatus RenameFile(const std::string& s, const std::string& t,
                               const rocksdb::IOOptions& o, rocksdb::IODebugContext* d) override {
    journal_->Line("rename " + Normal(s) + " " + Normal(t));  // before: see the header
    return target()->RenameFile(s, t, o, d);
  }
  rocksdb::IOStatus DeleteFile(const std::string& f, const rocksdb::IOOptions& o,
                               rocksdb::IODebugContext* d) override {
    journal_->Line("delete " + Normal(f));  // before: see the header
    return target()->DeleteFile(f, o, d);
  }

 private:
  rocksdb::IOStatus Wrap(const std::string& f, rocksdb::IOStatus s,
                         std::unique_ptr<rocksdb::FSWritableFile>* r) {
    if (s.ok()) *r = std::make_unique<JournaledFile>(std::move(*r), Normal(f), journal_);
    return s;
  }
  std::shared_ptr<Journal> journal_;
};

// A file as the journal describes it.
struct FileState {
  uint64_t synced = 0;         // length at its last sync
  bool entry_durable = false;  // its directory entry survives a power cut
};

// A metadata operation taken as durable at once (a rename onto a durable name, a delete) makes
// every earlier one durable: ext4's and XFS's journals commit metadata in the order it was made,
// so a disk never holds a later rename without the creations before it.
void MakeAllEntriesDurable(std::map<std::string, FileState>& files,
                           std::map<std::string, std::set<std::string>>& pending) {
  for (auto& [dir, entries] : pending) {
    for (const std::string& f : entries) files[f].entry_durable = true;
    entries.clear();
  }
}

}  // namespace

Result<std::shared_ptr<rocksdb::FileSystem>> NewPowerLossJournalingFileSystem(
    std::string journal_path, std::shared_ptr<rocksdb::FileSystem> base) {
  int fd = ::open(journal_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Error::Internal("cannot open journal " + journal_path + ": " + std::strerror(errno));
  }
  if (!base) base = rocksdb::FileSystem::Default();
  return std::shared_ptr<rocksdb::FileSystem>(
      std::make_shared<JournalingFileSystem>(std::move(base), std::make_shared<Journal>(fd)));
}

Result<PowerLossEffect> SimulatePowerLoss(const std::string& journal_path) {
  std::ifstream in(journal_path);
  if (!in) return Error::Internal("cannot read journal " + journal_path);
  std::map<std::string, FileState> files;
  std::map<std::string, std::set<std::string>> pending;  // directory -> entries not yet durable
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof() && !line.empty()) break;  // a line cut short: never happens with write(2)
    std::istringstream ls(line);
    std::string op, a, b;
    ls >> op >> a;
    const std::string dir = std::filesystem::path(a).parent_path().string();
    if (op == "create") {
      files[a] = FileState{};
      pending[dir].insert(a);
    } else if (op == "sync") {
      uint64_t len = 0;
      ls >> len;
      files[a].synced = len;  // a file from before the journal began is durable anyway
      if (!pending[dir].contains(a)) files[a].entry_durable = true;
    } else if (op == "dirsync") {
      for (const std::string& f : pending[a]) files[f].entry_durable = true;
      pending[a].clear();
    } else if (op == "rename") {
      ls >> b;
      FileState moved = files.contains(a) ? files[a] : FileState{0, true};
      const bool replaces_durable =
          files.contains(b) ? files[b].entry_durable : std::filesystem::exists(b);
      files.erase(a);
      pending[dir].erase(a);
      // Onto a durable name: atomic and durable at once (see the header); else durable once
      // its directory is fsynced, unless the file's own entry already was.
      moved.entry_durable = moved.entry_durable || replaces_durable;
      if (replaces_durable)
        MakeAllEntriesDurable(files, pending);  // metadata reaches disk in order
      if (!moved.entry_durable) pending[std::filesystem::path(b).parent_path().string()].insert(b);
      files[b] = moved;
    } else if (op == "delete") {
      files.erase(a);
      pending[dir].erase(a);
      MakeAllEntriesDurable(files, pending);  // the delete is durable, so is all before it
    }
  }
  PowerLossEffect effect;
  for (const auto& [path, state] : files) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    const uint64_t size = std::filesystem::file_size(path, ec);
    if (!state.entry_durable) {
      std::filesystem::remove(path, ec);
      ++effect.files_removed;
      effect.bytes_dropped += size;
    } else if (size > state.synced) {
      std::filesystem::resize_file(path, state.synced, ec);
      ++effect.files_truncated;
      effect.bytes_dropped += size - state.synced;
    }
    if (ec) return Error::Internal("cannot apply power loss to " + path + ": " + ec.message());
  }
  return effect;
}

}  // namespace fdyno::kv::testing
