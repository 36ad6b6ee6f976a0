#include "store/backups.h"

#include <gtest/gtest.h>

#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "store/layout.h"

namespace fdyno::store {
namespace {

BackupInfo Sample() {
  BackupInfo b;
  b.region = "eu-west-1";
  b.id = "01700000000123-0a1b2c3d";
  b.name = "nightly";
  b.type = BackupType::kSystem;
  b.status = BackupStatus::kAvailable;
  b.created_ms = 1'700'000'000'123;
  b.table_name = "orders";
  b.table_id = 7;
  b.table_uuid = "2f0b8c1e-0000-4000-8000-000000000001";
  b.table_created_ms = 1'600'000'000'000;
  b.table_item_count = 12;
  b.progress = {"owner-1", 1'700'000'000'999, std::string("\x03\x00\xff", 3), 3, 12, 4096};
  return b;
}

TEST(BackupsTest, RecordsRoundTripAndFailClosed) {
  const BackupInfo b = Sample();
  const std::string bytes = EncodeBackupInfo(b);
  Result<BackupInfo> back = DecodeBackupInfo(bytes);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, b);
  std::string unknown = bytes;
  unknown[0] = 2;
  EXPECT_EQ(DecodeBackupInfo(unknown).error().type, ErrorType::kInternalServerError);
  EXPECT_FALSE(DecodeBackupInfo(bytes.substr(0, bytes.size() - 1)).ok());
  EXPECT_FALSE(DecodeBackupInfo("").ok());

  RestoreJob job{42, "copy", b.id, 9, 4, 17, 1000, "111111111111", "eu-west-1"};
  Result<RestoreJob> job_back = DecodeRestoreJob(EncodeRestoreJob(job));
  ASSERT_TRUE(job_back.ok());
  EXPECT_EQ(*job_back, job);
  std::string bad = EncodeRestoreJob(job);
  bad[0] = 9;
  EXPECT_FALSE(DecodeRestoreJob(bad).ok());
}

// The stored bytes are docs/format/backups.md's, member for member (a change would strand the
// records of existing data directories).
TEST(BackupsTest, RecordsKeepTheirDocumentedBytes) {
  BackupInfo b = Sample();
  b.account = "000000000001";
  EXPECT_EQ(EncodeBackupInfo(b),
            "\x01{\"account\":\"000000000001\",\"region\":\"eu-west-1\",\"id\":\"01700000000123-"
            "0a1b2c3d\",\"name\":"
            "\"nightly\",\"type\":\"SYSTEM\",\"status\":\"AVAILABLE\",\"created_ms\":"
            "1700000000123,\"table_name\":\"orders\",\"table_id\":7,\"table_uuid\":"
            "\"2f0b8c1e-0000-4000-8000-000000000001\",\"table_created_ms\":1600000000000,"
            "\"table_item_count\":12,\"owner\":\"owner-1\",\"heartbeat_ms\":1700000000999,"
            "\"next_key\":\"0300ff\",\"chunks\":3,\"items\":12,\"bytes\":4096}");
  RestoreJob job{42, "copy", b.id, 9, 4, 17, 1000, "000000000001", "eu-west-1"};
  EXPECT_EQ(EncodeRestoreJob(job),
            "\x01{\"table_id\":42,\"account\":\"000000000001\",\"region\":\"eu-west-1\","
            "\"table_name\":\"copy\","
            "\"backup_id\":\"01700000000123-0a1b2c3d\",\"chunks\":9,\"next_chunk\":4,"
            "\"next_item\":17,\"items\":1000}");
  // A member this binary does not know (a newer binary's) fails closed.
  std::string newer = EncodeBackupInfo(b);
  newer.insert(newer.size() - 1, ",\"future\":1");
  EXPECT_FALSE(DecodeBackupInfo(newer).ok());
}

// Backups and restore jobs belong to their table's account; those written before accounts
// (no "account" member) are the shared account's.
TEST(BackupsTest, RecordsKeepTheirAccountAndOlderOnesAreTheSharedAccounts) {
  BackupInfo b = Sample();
  b.account = "222222222222";
  EXPECT_EQ(DecodeBackupInfo(EncodeBackupInfo(b))->account, "222222222222");
  RestoreJob job{42, "copy", b.id, 9, 4, 17, 1000, "222222222222", "eu-west-1"};
  EXPECT_EQ(*DecodeRestoreJob(EncodeRestoreJob(job)), job);

  auto without_account = [](std::string bytes) {
    const std::string member = "\"account\":\"222222222222\"";
    const size_t at = bytes.find(member);
    EXPECT_NE(at, std::string::npos) << bytes;
    bytes.erase(at, member.size());
    if (bytes[at] == ',') {
      bytes.erase(at, 1);
    } else {
      bytes.erase(at - 1, 1);  // the last member: the comma before it
    }
    return bytes;
  };
  Result<BackupInfo> older = DecodeBackupInfo(without_account(EncodeBackupInfo(b)));
  ASSERT_TRUE(older.ok()) << older.error().message;
  EXPECT_EQ(older->account, kSharedAccount);
  Result<RestoreJob> older_job = DecodeRestoreJob(without_account(EncodeRestoreJob(job)));
  ASSERT_TRUE(older_job.ok()) << older_job.error().message;
  EXPECT_EQ(older_job->account, kSharedAccount);
  EXPECT_EQ(older_job->table_name, "copy");
}

TEST(BackupsTest, IdsHaveTheArnShapeAndSortByTime) {
  const std::string a = NewBackupId(1'700'000'000'123);
  EXPECT_TRUE(IsBackupId(a)) << a;
  EXPECT_EQ(a.substr(0, 15), "01700000000123-");
  EXPECT_LT(a, NewBackupId(1'700'000'000'124));
  EXPECT_FALSE(IsBackupId("01700000000123-0A1B2C3D"));
  EXPECT_FALSE(IsBackupId("1700000000123-0a1b2c3d"));
  EXPECT_FALSE(IsBackupId("01700000000123_0a1b2c3d"));
}

TEST(BackupsTest, ChunksKeepItemsOfAnySizeInOrder) {
  std::unique_ptr<kv::Database> db = kv::OpenMemoryEngine();
  ChunkBuilder chunk;
  std::vector<std::string> images = {"a", std::string(250'000, 'x'), "", std::string(90'000, 'y')};
  for (const std::string& image : images) chunk.Add(image);
  EXPECT_GT(chunk.Parts().size(), 3u);  // split over several engine values
  ASSERT_TRUE(kv::Run(*db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                WriteChunk(tx, "01700000000123-0a1b2c3d", 0, chunk);
                return Status::Ok();
              }).ok());
  auto read = kv::Run(*db, [&](kv::Transaction& tx, const kv::Attempt&) {
    return ReadChunk(tx, "01700000000123-0a1b2c3d", 0);
  });
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_TRUE(*read);
  EXPECT_EQ(**read, images);
  auto absent = kv::Run(*db, [&](kv::Transaction& tx, const kv::Attempt&) {
    return ReadChunk(tx, "01700000000123-0a1b2c3d", 1);
  });
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(*absent);
  // A missing part fails closed.
  ASSERT_TRUE(kv::Run(*db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                tx.Clear(ChunkPartKey("01700000000123-0a1b2c3d", 0, 1));
                return Status::Ok();
              }).ok());
  auto broken = kv::Run(*db, [&](kv::Transaction& tx, const kv::Attempt&) {
    return ReadChunk(tx, "01700000000123-0a1b2c3d", 0);
  });
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().type, ErrorType::kInternalServerError);
}

TEST(BackupsTest, DeletingABackupPurgesItsChunksInBoundedSteps) {
  std::unique_ptr<kv::Database> db = kv::OpenMemoryEngine();
  const BackupInfo b = Sample();
  ASSERT_TRUE(kv::Run(*db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                WriteBackup(tx, b);
                for (int c = 0; c < 10; ++c) {
                  ChunkBuilder chunk;
                  chunk.Add("item" + std::to_string(c));
                  WriteChunk(tx, b.id, c, chunk);
                }
                DeleteBackupRecord(tx, b.id);
                return Status::Ok();
              }).ok());
  int steps = 0;
  for (bool done = false; !done; ++steps) {
    auto r = kv::Run(*db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<bool> {
      FDYNO_ASSIGN_OR_RETURN(std::vector<std::string> pending, PendingBackupPurges(tx));
      EXPECT_EQ(pending, std::vector<std::string>{b.id});
      return PurgeBackupChunks(tx, b.id, 3);
    });
    ASSERT_TRUE(r.ok());
    done = *r;
    ASSERT_LT(steps, 10);
  }
  EXPECT_EQ(steps, 5);  // 10 keys, 3 at a time, then the step that finds none
  auto left = kv::Run(*db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<size_t> {
    auto [begin, end] = layout::Backups().Range();
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult r, tx.GetRange(begin, end));
    return r.kvs.size();
  });
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(*left, 0u);
}

}  // namespace
}  // namespace fdyno::store
