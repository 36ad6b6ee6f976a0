// The embedded engine on a disk that fills up and frees again (testing/full_disk.h): the write
// that meets the full disk answers commit_unknown_result (the engine's own 1021: RocksDB may
// have written part of it), writes while the disk stays full fail without hanging, reads keep
// working, writes resume once space returns (the engine closes and reopens RocksDB: it never
// writes again to one whose write failed), and a reopen finds every acknowledged commit and
// nothing of the refused ones. Also when the failure leaves a fatal background error.
#include "kv/engines/embedded/testing/full_disk.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <string>
#include <thread>

#include "kv/engines/embedded/embedded.h"
#include "kv/engines/embedded/engine.h"

namespace fdyno::kv {
namespace {

class FullDiskTest : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::remove_all(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Database> Open() {
    auto db = OpenEmbedded({.path = dir_,
                            .durability = Durability::kFsync,
                            .file_system = testing::NewFullDiskFileSystem(space_)});
    EXPECT_TRUE(db.ok()) << db.error().message;
    return db.ok() ? std::move(db).value() : nullptr;
  }

  static Status Put(Database& db, const std::string& key, bool async = false) {
    auto tr = db.CreateTransaction();
    tr->Set(key, "v");
    if (!async) return tr->Commit();
    std::promise<Status> answered;
    tr->CommitAsync([&](Status s) { answered.set_value(std::move(s)); });
    return answered.get_future().get();
  }

  // Writes "after" until it succeeds (at most 30 s), each refusal an io_error; the refusals.
  static int PutUntilAccepted(Database& db) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    Status after = Put(db, "after");
    int refused = 0;
    while (!after.ok() && std::chrono::steady_clock::now() < deadline) {
      EXPECT_EQ(after.error().kv_code, kIoError) << after.error().message;
      ++refused;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      after = Put(db, "after");
    }
    EXPECT_TRUE(after.ok()) << after.error().message;
    return refused;
  }

  // Closes the database and opens it again: each of `kept` is there, none of `absent`.
  void ReopenAndExpect(std::unique_ptr<Database>& db, std::initializer_list<const char*> kept,
                       std::initializer_list<const char*> absent) {
    db.reset();
    db = Open();
    ASSERT_TRUE(db);
    for (const char* key : kept) EXPECT_EQ(Get(*db, key), "v") << key;
    for (const char* key : absent) EXPECT_EQ(Get(*db, key), std::nullopt) << key;
  }

  static std::optional<std::string> Get(Database& db, const std::string& key) {
    auto tr = db.CreateTransaction();
    auto v = tr->Get(key);
    EXPECT_TRUE(v.ok()) << v.error().message;
    return v.ok() ? *v : std::nullopt;
  }

  std::string dir_ = ::testing::TempDir() + "/full_disk_" + std::to_string(::getpid());
  std::shared_ptr<testing::DiskSpace> space_ = std::make_shared<testing::DiskSpace>();
};

TEST_F(FullDiskTest, AFullDiskAnswersUnknownResultThenErrorsAndWritesResumeWhenSpaceReturns) {
  auto db = Open();
  ASSERT_TRUE(db);
  ASSERT_TRUE(Put(*db, "before").ok());

  space_->full = true;
  Status first = Put(*db, "refused1");
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().kv_code, kCommitUnknownResult) << first.error().message;
  for (bool async : {false, true}) {
    Status later = Put(*db, async ? "refused_async" : "refused2", async);
    ASSERT_FALSE(later.ok()) << "a write succeeded on a full disk";
  }
  EXPECT_GT(space_->refused_writes.load(), 0);
  EXPECT_EQ(Get(*db, "before"), "v");  // reads keep working

  // Space returns. The engine reopens RocksDB once the disk has room (it looks every second);
  // until then writes are refused before anything is written (io_error).
  space_->full = false;
  std::printf("writes resumed after %d refused attempts\n", PutUntilAccepted(*db));
  ASSERT_TRUE(Put(*db, "after_async", /*async=*/true).ok());
  EXPECT_EQ(Get(*db, "after"), "v");
  EXPECT_EQ(Get(*db, "refused2"), std::nullopt);

  ASSERT_NO_FATAL_FAILURE(ReopenAndExpect(db, {"before", "after", "after_async"},
                                          {"refused1", "refused2", "refused_async"}));
  ASSERT_TRUE(Put(*db, "reopened").ok());
}

// A disk that is full when RocksDB switches to a new write-ahead log (here: a flush) leaves it
// in a fatal background error, which DB::Resume cannot clear. Once space returns the engine
// closes and reopens RocksDB by itself: writes resume, a transaction that read the old RocksDB
// answers transaction_too_old (retryable), and nothing acknowledged is lost.
TEST_F(FullDiskTest, AFatalErrorOnAFullDiskReopensRocksDBOnceSpaceReturns) {
  auto db = Open();
  ASSERT_TRUE(db);
  auto* engine = static_cast<embedded::EmbeddedDatabase*>(db.get());
  ASSERT_TRUE(Put(*db, "before").ok());
  auto reader = db->CreateTransaction();
  ASSERT_TRUE(reader->Get("before").ok());  // holds a view of the RocksDB that is reopened

  space_->full = true;
  rocksdb::Status flushed = engine->db()->Flush(rocksdb::FlushOptions());
  ASSERT_FALSE(flushed.ok());
  ASSERT_GE(engine->db()->Resume().severity(), rocksdb::Status::Severity::kFatalError)
      << "the full disk did not leave RocksDB in a fatal error";
  EXPECT_FALSE(Put(*db, "refused").ok());
  EXPECT_EQ(Get(*db, "before"), "v");  // reads keep working

  // Space returns. The reopen waits for the reader to let go of the old RocksDB, whose reads
  // now answer transaction_too_old.
  space_->full = false;
  auto resumed = std::async(std::launch::async, [&] { return PutUntilAccepted(*db); });
  Result<std::optional<std::string>> stale = reader->Get("before");
  while (stale.ok()) {
    ASSERT_EQ(resumed.wait_for(std::chrono::milliseconds(10)), std::future_status::timeout)
        << "writes resumed while a reader still held the old RocksDB";
    stale = reader->Get("before");
  }
  EXPECT_EQ(stale.error().kv_code, kTransactionTooOld) << stale.error().message;
  reader.reset();
  std::printf("writes resumed after %d refused attempts\n", resumed.get());
  EXPECT_EQ(Get(*db, "before"), "v");
  EXPECT_EQ(Get(*db, "after"), "v");
  ASSERT_TRUE(Put(*db, "after_async", /*async=*/true).ok());

  ASSERT_NO_FATAL_FAILURE(ReopenAndExpect(db, {"before", "after", "after_async"}, {"refused"}));
}

// A write whose log append fails while every memtable is empty (here right after a flush; in
// the server, after the flush or log switch that the failed write itself began). DB::Resume
// then has nothing to flush, so RocksDB 7.8.3 keeps the log whose writer failed, and the next
// write to it aborts on RocksDB's assertion. The engine reopens RocksDB instead: writes resume
// once space returns, and nothing acknowledged is lost.
TEST_F(FullDiskTest, ALogAppendFailingWhileEveryMemtableIsEmptyResumesByAReopen) {
  auto db = Open();
  ASSERT_TRUE(db);
  auto* engine = static_cast<embedded::EmbeddedDatabase*>(db.get());
  ASSERT_TRUE(Put(*db, "before").ok());
  ASSERT_TRUE(engine->db()->Flush(rocksdb::FlushOptions(), {engine->data(), engine->meta()}).ok());

  space_->full = true;
  EXPECT_FALSE(Put(*db, "refused").ok());
  space_->full = false;
  std::printf("writes resumed after %d refused attempts\n", PutUntilAccepted(*db));
  ASSERT_TRUE(Put(*db, "after2").ok());
  EXPECT_EQ(Get(*db, "before"), "v");
  EXPECT_EQ(Get(*db, "after"), "v");

  ASSERT_NO_FATAL_FAILURE(ReopenAndExpect(db, {"before", "after", "after2"}, {"refused"}));
}

// A reopen that finishes while nothing is written (the committer finishes it as it polls, once
// the last reader lets go): the next write goes through at once, without another reopen.
TEST_F(FullDiskTest, AReopenFinishedWhileNothingIsWrittenLetsTheNextWriteThrough) {
  auto db = Open();
  ASSERT_TRUE(db);
  auto* engine = static_cast<embedded::EmbeddedDatabase*>(db.get());
  ASSERT_TRUE(Put(*db, "before").ok());
  auto reader = db->CreateTransaction();
  ASSERT_TRUE(reader->Get("before").ok());  // holds a view of the RocksDB that is reopened

  space_->full = true;
  EXPECT_FALSE(Put(*db, "refused").ok());
  space_->full = false;
  // This write begins the reopen, which waits for the reader: refused.
  EXPECT_FALSE(Put(*db, "refused_while_reopening").ok());
  EXPECT_FALSE(reader->Get("before").ok());
  reader.reset();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (engine->CurrentView() == nullptr && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_NE(engine->CurrentView(), nullptr) << "the reopen never finished";
  ASSERT_TRUE(Put(*db, "after").ok()) << "the first write after the reopen was refused";
  EXPECT_EQ(Get(*db, "before"), "v");
}

// A disk that stays full for longer than RocksDB's info log waits between flushes (5 s, while
// RocksDB keeps logging that it has no space): had RocksDB written its own LOG file, the failed
// flush of that file's writer would make its next line abort the process (rocks_logger.h). The
// engine logs through fdyno's log, so the server outlives the full disk and writes resume.
TEST_F(FullDiskTest, ADiskFullForLongerThanRocksDBsLogFlushDoesNotStopTheEngine) {
  auto db = Open();
  ASSERT_TRUE(db);
  ASSERT_TRUE(Put(*db, "before").ok());
  space_->full = true;
  EXPECT_FALSE(Put(*db, "refused").ok());
  for (int i = 0; i < 12; ++i) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    EXPECT_FALSE(Put(*db, "refused_later").ok());
  }
  space_->full = false;
  PutUntilAccepted(*db);
  EXPECT_EQ(Get(*db, "before"), "v");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/rocksdb/LOG"));
}

}  // namespace
}  // namespace fdyno::kv
