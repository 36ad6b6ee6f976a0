// Cutting a power cut's damaged MANIFEST tail (manifest_tail.h), on MANIFESTs RocksDB wrote.
#include "kv/engines/embedded/manifest_tail.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "kv/engines/embedded/embedded.h"
#include "kv/engines/embedded/engine.h"

namespace fdyno::kv::embedded {
namespace {

class ManifestTailTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "fdyno_mt_XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    rocks_ = dir_ + "/" + kRocksSubdir;
    auto db = OpenEmbedded({.path = dir_});
    ASSERT_TRUE(db.ok()) << db.error().message;
    for (int i = 0; i < 20; ++i) {
      auto txn = (*db)->CreateTransaction();
      txn->Set("k" + std::to_string(i), "v");
      ASSERT_TRUE(txn->Commit().ok());
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Manifest() const {
    std::ifstream in(rocks_ + "/CURRENT");
    std::string name;
    in >> name;
    return rocks_ + "/" + name;
  }
  std::string Bytes() const {
    std::ifstream in(Manifest(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void Write(const std::string& bytes) const {
    std::ofstream(Manifest(), std::ios::binary | std::ios::trunc) << bytes;
  }
  bool OpensWithEveryKey() const {
    auto db = OpenEmbedded({.path = dir_});
    if (!db.ok()) return false;
    auto txn = (*db)->CreateTransaction();
    for (int i = 0; i < 20; ++i) {
      auto v = txn->Get("k" + std::to_string(i));
      if (!v.ok() || !v->has_value()) return false;
    }
    return true;
  }

  std::string dir_, rocks_;
};

TEST_F(ManifestTailTest, AManifestRocksDbWroteIsWholeToTheLastByte) {
  const std::string bytes = Bytes();
  ASSERT_GT(bytes.size(), 0u);
  const ManifestScan scan = ScanManifest(bytes);
  EXPECT_EQ(scan.whole_end, bytes.size());
  EXPECT_FALSE(scan.records_after_damage);
  Result<bool> cut = CutDamagedManifestTail(rocks_, dir_);
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  EXPECT_FALSE(*cut);
}

// Random bytes after the last record (a file system that kept the length, not the data): RocksDB
// alone refuses to open; the engine cuts them off, keeps them aside and opens with every key.
TEST_F(ManifestTailTest, GarbageAfterTheLastRecordIsCutAndTheDatabaseOpens) {
  const std::string whole = Bytes();
  const std::string name = std::filesystem::path(Manifest()).filename().string();
  std::mt19937 rng(7);
  std::string garbage(3000, '\0');
  for (char& c : garbage) c = static_cast<char>(rng());
  garbage[4] = 100, garbage[5] = 0, garbage[6] = 1;  // a full record's header, a wrong checksum
  Write(whole + garbage);
  rocksdb::DB* raw = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::Status s = rocksdb::DB::Open(
      rocksdb::DBOptions(), rocks_,
      {{rocksdb::kDefaultColumnFamilyName, {}}, {kMetaColumnFamily, {}}}, &handles, &raw);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  for (rocksdb::ColumnFamilyHandle* h : handles) delete h;
  delete raw;
  ASSERT_TRUE(OpensWithEveryKey());
  const std::string kept =
      dir_ + "/damaged-manifest-tails/" + name + "." + std::to_string(whole.size());
  EXPECT_EQ(std::filesystem::file_size(kept), garbage.size());
}

// A record cut in its middle and zeros to the file's length (the size reached the disk, the data
// did not): scanned as whole up to the record before.
TEST_F(ManifestTailTest, AZeroFilledTornRecordEndsTheWholePart) {
  const std::string whole = Bytes();
  const ManifestScan before = ScanManifest(whole.substr(0, whole.size() - 1));
  ASSERT_LT(before.whole_end, whole.size());
  std::string torn = whole;
  std::fill(torn.begin() + static_cast<long>(before.whole_end) + 9, torn.end(), '\0');
  const ManifestScan scan = ScanManifest(torn);
  EXPECT_EQ(scan.whole_end, before.whole_end);
  EXPECT_FALSE(scan.records_after_damage);
}

// Damage followed by a valid record a block later is not a torn tail: nothing is cut and the
// open fails as RocksDB says.
TEST_F(ManifestTailTest, DamageFollowedByAValidRecordIsLeftAlone) {
  const std::string whole = Bytes();
  ASSERT_LT(whole.size(), 32768u);
  const std::string damaged = whole + std::string(32768 - whole.size(), '\xff') + whole;
  Write(damaged);
  const ManifestScan scan = ScanManifest(damaged);
  EXPECT_EQ(scan.whole_end, whole.size());
  EXPECT_TRUE(scan.records_after_damage);
  EXPECT_FALSE(CutDamagedManifestTail(rocks_, dir_).ok());
  EXPECT_EQ(Bytes(), damaged);
  EXPECT_FALSE(OpenEmbedded({.path = dir_}).ok());
}

}  // namespace
}  // namespace fdyno::kv::embedded
