// Sanity tests of the in-memory test engine; the full contract suite runs elsewhere.
#include "kv/testing/memory_engine.h"

#include <gtest/gtest.h>

namespace fdyno::kv {
namespace {

class MemoryEngineTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  std::unique_ptr<Database> db_ = OpenMemoryEngine({&clock_});

  void Put(const std::string& k, const std::string& v) {
    auto tr = db_->CreateTransaction();
    tr->Set(k, v);
    ASSERT_TRUE(tr->Commit().ok());
  }
};

TEST_F(MemoryEngineTest, SnapshotAndReadYourWrites) {
  Put("a", "1");
  Put("c", "3");
  auto tr = db_->CreateTransaction();
  ASSERT_EQ(tr->Get("a").value(), "1");
  Put("b", "2");  // after the read version: invisible
  EXPECT_EQ(tr->Get("b").value(), std::nullopt);
  tr->Set("b", "x");
  tr->Clear("c");
  tr->ClearRange("a", "a\x01");
  auto r = tr->GetRange("a", "z");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->kvs.size(), 1u);
  EXPECT_EQ(r->kvs[0], (KeyValue{"b", "x"}));
  tr->Set("d", "4");
  auto rev = tr->GetRange("a", "z", {.limit = 1, .reverse = true});
  ASSERT_EQ(rev->kvs.size(), 1u);
  EXPECT_EQ(rev->kvs[0].key, "d");
  EXPECT_TRUE(rev->more);
}

TEST_F(MemoryEngineTest, ConflictsIncludingPhantoms) {
  auto t1 = db_->CreateTransaction();
  ASSERT_TRUE(t1->GetRange("p", "q").ok());
  t1->Set("x", "1");
  Put("p5", "new");  // a phantom inside the range t1 read
  auto s = t1->Commit();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kv_code, kNotCommitted);

  auto t2 = db_->CreateTransaction();
  ASSERT_TRUE(t2->GetRange("p", "q", {.snapshot = true}).ok());
  t2->Set("x", "1");
  Put("p6", "new");
  EXPECT_TRUE(t2->Commit().ok());  // snapshot reads do not conflict
}

TEST_F(MemoryEngineTest, AddVersionstampsAndTooOld) {
  auto tr = db_->CreateTransaction();
  tr->AtomicOp(MutationType::kAdd, "n", std::string("\x05\x00", 2));
  tr->AtomicOp(MutationType::kAdd, "n", std::string("\xFF\x00", 2));
  std::string key = std::string("log") + std::string(10, '\0') + std::string("\x03\x00\x00\x00", 4);
  tr->AtomicOp(MutationType::kSetVersionstampedKey, key, "v");
  ASSERT_TRUE(tr->Commit().ok());
  auto stamp = tr->GetVersionstamp();
  ASSERT_TRUE(stamp.ok());
  auto check = db_->CreateTransaction();
  EXPECT_EQ(check->Get("n").value(), std::string("\x04\x01", 2));
  EXPECT_EQ(check->Get("log" + *stamp).value(), "v");
  clock_.Advance(std::chrono::seconds(6));
  auto old = check->Get("n");
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().kv_code, kTransactionTooOld);
}

TEST_F(MemoryEngineTest, VersionstampedValueIsUnreadableUntilCommit) {
  auto tr = db_->CreateTransaction();
  tr->AtomicOp(MutationType::kSetVersionstampedValue, "k",
               std::string(10, '\0') + std::string("\x00\x00\x00\x00", 4));
  EXPECT_EQ(tr->Get("k").error().kv_code, 1036);
  EXPECT_EQ(tr->GetRange("a", "z").error().kv_code, 1036);
  ASSERT_TRUE(tr->Commit().ok());
  auto check = db_->CreateTransaction();
  EXPECT_EQ(check->Get("k").value(), tr->GetVersionstamp().value());
}

TEST_F(MemoryEngineTest, LimitsTimeoutAndCancel) {
  auto tr = db_->CreateTransaction();
  tr->Set("k", std::string(kMaxValueBytes + 1, 'v'));
  EXPECT_EQ(tr->Commit().error().kv_code, kValueTooLarge);
  tr->Reset();
  tr->SetTimeout(std::chrono::milliseconds(100));
  clock_.Advance(std::chrono::milliseconds(100));
  EXPECT_EQ(tr->Get("k").error().kv_code, kTransactionTimedOut);
  tr->Reset();
  tr->Cancel();
  EXPECT_EQ(tr->Get("k").error().kv_code, kTransactionCancelled);
}

}  // namespace
}  // namespace fdyno::kv
