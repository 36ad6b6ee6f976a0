// The power-loss model itself (testing/power_loss.h): journals written by hand, files on disk,
// and what SimulatePowerLoss keeps of them.
#include "kv/engines/embedded/testing/power_loss.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
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
  // Writes the journal: each line's {} stands for this test's directory.
  void Journal(const std::vector<std::string>& lines) const {
    std::ofstream out(dir_ + "/journal");
    for (std::string line : lines) {
      for (size_t at; (at = line.find("{}")) != std::string::npos;) line.replace(at, 2, dir_);
      out << line << "\n";
    }
  }
  PowerLossEffect Simulate() const {
    Result<PowerLossEffect> effect = SimulatePowerLoss(dir_ + "/journal");
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

}  // namespace
}  // namespace fdyno::kv::testing
