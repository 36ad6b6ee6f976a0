// The power-loss model itself (testing/power_loss.h): journals written by hand, files on disk,
// and what SimulatePowerLoss keeps of them.
#include "kv/engines/embedded/testing/power_loss.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fdyno::kv::testing {
namespace {

class PowerLossTest : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  void WriteFile(const std::string& name, size_t bytes) const {
    std::ofstream(Path(name), std::ios::binary) << std::string(bytes, 'x');
  }
  std::string Read(const std::string& name) const {
    std::ifstream in(Path(name), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // Writes the journal: each line's {} stands for this test's directory.
  void Journal(const std::vector<std::string>& lines) const {
    std::ofstream out(dir_ + "/journal");
    for (std::string line : lines) {
      for (size_t at; (at = line.find("{}")) != std::string::npos;) line.replace(at, 2, dir_);
      out << line << "\n";
    }
  }
  PowerLossEffect Simulate(PowerCutOptions options = {}) const {
    Result<PowerLossEffect> effect = SimulatePowerLoss(dir_ + "/journal", options);
    EXPECT_TRUE(effect.ok()) << effect.error().message;
    return effect.ok() ? *effect : PowerLossEffect{};
  }
  bool Exists(const std::string& name) const { return std::filesystem::exists(Path(name)); }
  uint64_t Size(const std::string& name) const { return std::filesystem::file_size(Path(name)); }

  std::string dir_ = ::testing::TempDir() + "/power_loss_" + std::to_string(::getpid());
};

TEST_F(PowerLossTest, ANewFileWhoseDirectoryWasNeverSyncedIsRemoved) {
  WriteFile("000001.log", 100);
  Journal({"create {}/000001.log", "sync {}/000001.log 100"});
  PowerLossEffect e = Simulate();
  EXPECT_FALSE(Exists("000001.log"));
  EXPECT_EQ(e.files_removed, 1);
}

TEST_F(PowerLossTest, AFileIsCutBackToItsLastSync) {
  WriteFile("000001.log", 100);
  Journal({"create {}/000001.log", "sync {}/000001.log 40", "dirsync {}"});
  PowerLossEffect e = Simulate();
  ASSERT_TRUE(Exists("000001.log"));
  EXPECT_EQ(Size("000001.log"), 40u);
  EXPECT_EQ(e.bytes_dropped, 60u);
}

// RocksDB's new MANIFEST: created and synced, CURRENT renamed onto it, the directory fsynced
// only after the rename. Killed before that fsync: a disk that kept the rename kept the
// MANIFEST's creation too (metadata is journaled in order).
TEST_F(PowerLossTest, ARenameOntoADurableNameKeepsEveryEarlierCreation) {
  WriteFile("CURRENT", 16);
  WriteFile("MANIFEST-000002", 50);
  WriteFile("000002.dbtmp", 16);
  Journal({"create {}/MANIFEST-000002", "sync {}/MANIFEST-000002 50", "create {}/000002.dbtmp",
           "sync {}/000002.dbtmp 16", "rename {}/000002.dbtmp {}/CURRENT"});
  Simulate();
  EXPECT_TRUE(Exists("CURRENT"));
  EXPECT_TRUE(Exists("MANIFEST-000002"));
  EXPECT_EQ(Size("MANIFEST-000002"), 50u);
}

TEST_F(PowerLossTest, ADeleteKeepsEveryEarlierCreation) {
  WriteFile("000003.sst", 10);
  Journal({"create {}/000003.sst", "sync {}/000003.sst 10", "delete {}/000001.sst"});
  Simulate();
  EXPECT_TRUE(Exists("000003.sst"));
}

TEST_F(PowerLossTest, ACreationAfterTheLastOrderedOperationIsStillRemoved) {
  WriteFile("CURRENT", 16);
  WriteFile("000002.dbtmp", 16);
  WriteFile("000004.log", 30);
  Journal({"create {}/000002.dbtmp", "sync {}/000002.dbtmp 16", "rename {}/000002.dbtmp {}/CURRENT",
           "create {}/000004.log", "sync {}/000004.log 30"});
  Simulate();
  EXPECT_TRUE(Exists("CURRENT"));
  EXPECT_FALSE(Exists("000004.log"));
}

// Torn tails: the synced bytes stay whole; of the rest a prefix ending on a 512-byte or 4 KiB
// boundary is kept and what follows is dropped, zeroed or garbled, for every seed.
TEST_F(PowerLossTest, ATornTailKeepsTheSyncedBytesAndAPrefixEndingOnASectorBoundary) {
  for (uint64_t seed = 0; seed < 40; ++seed) {
    for (Tail tail : {Tail::kTorn, Tail::kTornZeros, Tail::kTornGarbage}) {
      WriteFile("000001.log", 20000);
      Journal({"sync {}/000001.log 1000"});
      PowerLossEffect e = Simulate({.tail = tail, .seed = seed});
      const std::string after = Read("000001.log");
      SCOPED_TRACE(std::string(TailName(tail)) + " seed " + std::to_string(seed));
      ASSERT_GE(after.size(), 1000u);
      EXPECT_EQ(after.substr(0, 1000), std::string(1000, 'x'));
      const size_t kept = 20000 - e.bytes_dropped;
      EXPECT_TRUE(kept == 1000 || kept % 512 == 0) << kept;
      EXPECT_EQ(after.substr(0, kept), std::string(kept, 'x'));
      EXPECT_EQ(e.files_torn, 1);
      EXPECT_EQ(after.size(), tail == Tail::kTorn ? kept : 20000u);
      if (tail == Tail::kTornZeros) {
        EXPECT_EQ(after.substr(kept), std::string(20000 - kept, '\0'));
      }
      if (tail == Tail::kTornGarbage && kept < 20000) {
        EXPECT_NE(after.substr(kept), std::string(20000 - kept, 'x'));
      }
    }
  }
}

TEST_F(PowerLossTest, TheCutLandsInTheLastJournaledStageOrInRecoveryBeforeTheOpen) {
  Journal({"stage recovery", "stage manifest"});
  EXPECT_EQ(Simulate().stage, Stage::kRecovery);
  Journal({"stage recovery", "opened", "stage flush", "stage append"});
  EXPECT_EQ(Simulate().stage, Stage::kAppend);
  Journal({"opened", "stage flush", "cut compaction"});
  PowerLossEffect e = Simulate();
  EXPECT_EQ(e.stage, Stage::kCompaction);
  EXPECT_TRUE(e.self_cut);
}

TEST(StagePointTest, ParsesStageCountAndFlag) {
  Result<StagePoint> point = ParseStagePoint("log_delete:3:after", {"after"});
  ASSERT_TRUE(point.ok());
  EXPECT_EQ(point->stage, Stage::kLogDelete);
  EXPECT_EQ(point->nth, 3);
  EXPECT_EQ(point->flag, "after");
  point = ParseStagePoint("flush:12", {"after"});
  ASSERT_TRUE(point.ok());
  EXPECT_EQ(point->flag, "");
  for (const char* bad : {"flush", "flush:0", "flush:x", "flush:3:later", "nowhere:1", ":1"}) {
    EXPECT_FALSE(ParseStagePoint(bad, {"after"}).ok()) << bad;
  }
  EXPECT_FALSE(ParseStagePoint("flush:3:after", {"short"}).ok());
}

// The file system cuts the power itself: a child process appends to a log through it and is
// killed by SIGKILL right after its third log operation (the creation, then two appends); the
// journal names the cut and the unsynced appends are dropped.
TEST_F(PowerLossTest, ASelfCutKillsTheProcessAtTheNthOperationOfItsStage) {
  const std::string journal = dir_ + "/journal";
  const pid_t pid = ::fork();
  if (pid == 0) {
    auto fs = NewPowerLossFileSystem(journal, StagePoint{Stage::kAppend, 3, "after"});
    if (!fs.ok()) ::_exit(2);
    fs->opened();
    std::unique_ptr<rocksdb::FSWritableFile> file;
    rocksdb::IOOptions io;
    if (!fs->file_system->NewWritableFile(Path("000007.log"), {}, &file, nullptr).ok()) ::_exit(3);
    file->Append("synced", io, nullptr).PermitUncheckedError();  // operation 2
    file->Append("-lost", io, nullptr).PermitUncheckedError();   // operation 3: the cut
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  PowerLossEffect e = Simulate();
  EXPECT_TRUE(e.self_cut);
  EXPECT_EQ(e.stage, Stage::kAppend);
  EXPECT_FALSE(Exists("000007.log"));  // its directory was never fsynced
}

}  // namespace
}  // namespace fdyno::kv::testing
