#include "store/receipts.h"

#include <gtest/gtest.h>

#include <thread>

#include "kv/testing/memory_engine.h"
#include "store/layout.h"

namespace fdyno::store {
namespace {

class ReceiptsTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  std::unique_ptr<kv::Database> db_ = kv::OpenMemoryEngine({&clock_});
  ReceiptStore store_{layout::Receipts()};

  Receipt WriteAndRead(const OperationId& id, const ReceiptResult& result, int format = 0) {
    {
      auto tx = db_->CreateTransaction();
      if (format == 0) {
        store_.Write(*tx, id, result);
      } else {
        store_.WriteFormat(*tx, id, result, static_cast<uint8_t>(format));
      }
      EXPECT_TRUE(tx->Commit().ok());
    }
    auto tx = db_->CreateTransaction();
    auto r = store_.Read(*tx, id);
    EXPECT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r->has_value());
    return **r;
  }
  size_t Keys() {
    auto tx = db_->CreateTransaction();
    auto [b, e] = layout::Receipts().Range();
    auto r = tx->GetRange(b, e);
    EXPECT_TRUE(r.ok());
    return r->kvs.size();
  }
};

TEST_F(ReceiptsTest, AbsentReceiptIsNullopt) {
  auto tx = db_->CreateTransaction();
  auto r = store_.Read(*tx, OperationId::New(clock_));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
}

TEST_F(ReceiptsTest, IdsAreUnique) {
  OperationId a = OperationId::New(clock_), b = OperationId::New(clock_);
  EXPECT_EQ(a.nonce.size(), 16u);
  EXPECT_NE(a, b);
}

// Nonces, and so receipt keys within a bucket, grow in the order ids are allocated (the
// embedded engine's memtable inserts such keys next to the previous one), across threads too.
TEST_F(ReceiptsTest, NoncesGrowInAllocationOrder) {
  std::vector<std::string> nonces;
  for (int i = 0; i < 100; ++i) nonces.push_back(OperationId::New(clock_).nonce);
  std::thread([&] { nonces.push_back(OperationId::New(clock_).nonce); }).join();
  nonces.push_back(OperationId::New(clock_).nonce);
  for (size_t i = 1; i < nonces.size(); ++i) EXPECT_LT(nonces[i - 1], nonces[i]) << i;
}

TEST_F(ReceiptsTest, SmallPutAndDeleteAreInlineV2) {
  ReceiptResult put{ReceiptKind::kPutItem, std::string("old image"), 120, 80, ""};
  Receipt r = WriteAndRead(OperationId::New(clock_), put);
  EXPECT_EQ(r.format_version, 2);
  EXPECT_EQ(r.result, put);
  EXPECT_EQ(r.created_ms, clock_.WallMillis());
  ReceiptResult del{ReceiptKind::kDeleteItem, std::nullopt, 10, 0, ""};
  EXPECT_EQ(WriteAndRead(OperationId::New(clock_), del).result, del);
  EXPECT_EQ(Keys(), 2u);
}

TEST_F(ReceiptsTest, UpdatesAndLargeResultsAreChunkedV1) {
  ReceiptResult upd{ReceiptKind::kUpdateItem, std::string("new"), 1, 2, "x"};
  Receipt r = WriteAndRead(OperationId::New(clock_), upd);
  EXPECT_EQ(r.format_version, 1);
  EXPECT_EQ(r.result, upd);

  std::string big(400'000, 'z');
  big[12345] = 'q';
  ReceiptResult large{ReceiptKind::kPutItem, big, 400'000, 5, ""};
  Receipt l = WriteAndRead(OperationId::New(clock_), large);
  EXPECT_EQ(l.format_version, 1);
  EXPECT_EQ(l.result, large);
}

TEST_F(ReceiptsTest, ReaderAcceptsBothFormatsForAnyKind) {
  ReceiptResult put{ReceiptKind::kPutItem, std::nullopt, 3, 4, "extra"};
  EXPECT_EQ(WriteAndRead(OperationId::New(clock_), put, 1).result, put);
  EXPECT_EQ(WriteAndRead(OperationId::New(clock_), put, 2).result, put);
}

TEST_F(ReceiptsTest, UnknownVersionFailsClosed) {
  OperationId id = OperationId::New(clock_);
  WriteAndRead(id, ReceiptResult{});
  {
    auto tx = db_->CreateTransaction();
    auto [b, e] = layout::Receipts().Range();
    auto range = tx->GetRange(b, e);
    ASSERT_EQ(range->kvs.size(), 1u);
    std::string v = range->kvs[0].value;
    v[0] = 3;
    tx->Set(range->kvs[0].key, v);
    ASSERT_TRUE(tx->Commit().ok());
  }
  auto tx = db_->CreateTransaction();
  auto r = store_.Read(*tx, id);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kInternalServerError);
  EXPECT_NE(r.error().message.find("unknown format version 3"), std::string::npos);
}

TEST_F(ReceiptsTest, TruncatedAndMissingChunksFailClosed) {
  OperationId id = OperationId::New(clock_);
  WriteAndRead(id, ReceiptResult{ReceiptKind::kUpdateItem, std::string(200'000, 'a'), 0, 0, ""});
  {
    auto tx = db_->CreateTransaction();
    auto [b, e] = layout::Receipts().Range();
    auto range = tx->GetRange(b, e);
    ASSERT_EQ(range->kvs.size(), 4u);  // header + 3 chunks
    tx->Clear(range->kvs[2].key);
    ASSERT_TRUE(tx->Commit().ok());
  }
  auto tx = db_->CreateTransaction();
  EXPECT_FALSE(store_.Read(*tx, id).ok());
  EXPECT_FALSE(DecodeReceiptResult(ReceiptKind::kPutItem, "\x01").ok());
  std::string good = EncodeReceiptResult(ReceiptResult{});
  EXPECT_TRUE(DecodeReceiptResult(ReceiptKind::kPutItem, good).ok());
  EXPECT_FALSE(DecodeReceiptResult(ReceiptKind::kPutItem, good + "x").ok());
}

TEST_F(ReceiptsTest, ExpiredBucketsAreClearedWithOneRangeAndLiveOnesKept) {
  // The store's default ReceiptOptions: a 10 min ttl in 1 min buckets.
  OperationId old_id = OperationId::New(clock_);
  WriteAndRead(old_id, ReceiptResult{});
  clock_.Advance(std::chrono::minutes(5));
  OperationId mid_id = OperationId::New(clock_);
  WriteAndRead(mid_id, ReceiptResult{});
  EXPECT_FALSE(store_.Expired(old_id.created_ms, clock_.WallMillis()));

  clock_.Advance(std::chrono::minutes(6));  // old: 11 min, mid: 6 min
  EXPECT_TRUE(store_.Expired(old_id.created_ms, clock_.WallMillis()));
  EXPECT_FALSE(store_.Expired(mid_id.created_ms, clock_.WallMillis()));
  {
    auto tx = db_->CreateTransaction();
    EXPECT_TRUE(store_.ClearExpired(*tx, clock_.WallMillis()));
    // Once per bucket boundary: the second call in the same bucket buffers nothing.
    EXPECT_FALSE(store_.ClearExpired(*tx, clock_.WallMillis()));
    ASSERT_TRUE(tx->Commit().ok());
  }
  auto tx = db_->CreateTransaction();
  EXPECT_FALSE(store_.Read(*tx, old_id)->has_value());
  EXPECT_TRUE(store_.Read(*tx, mid_id)->has_value());
  EXPECT_EQ(Keys(), 1u);
}

TEST_F(ReceiptsTest, StorageStaysBoundedUnderSteadyWrites) {
  // One receipt every 10 s for 2 hours, each writer clearing expired buckets: the store never
  // holds more than ttl + 2 buckets worth of receipts.
  size_t max_keys = 0;
  for (int i = 0; i < 720; ++i) {
    clock_.Advance(std::chrono::seconds(10));
    auto tx = db_->CreateTransaction();
    store_.ClearExpired(*tx, clock_.WallMillis());
    store_.Write(*tx, OperationId::New(clock_), ReceiptResult{});
    ASSERT_TRUE(tx->Commit().ok());
    max_keys = std::max(max_keys, Keys());
  }
  EXPECT_LE(max_keys, size_t{(10 + 2) * 6});
}

}  // namespace
}  // namespace fdyno::store
