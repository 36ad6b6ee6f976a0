#include "store/tokens.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "store/layout.h"

namespace fdyno::store {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

class TokensTest : public ::testing::Test {
 protected:
  TokenRecord Record(std::string request, int64_t created = kNow) {
    TokenRecord r;
    r.fingerprint = Sha256(request);
    r.created_ms = created;
    r.result = "result of " + request;
    return r;
  }
  Fingerprinter Of(std::string request) {
    return [request](uint32_t algorithm) -> Result<std::string> {
      if (algorithm != kFingerprintSha256CanonicalV1) return Error::Internal("unknown algorithm");
      return Sha256(request);
    };
  }
  Status Put(const TokenKey& key, const TokenRecord& r) {
    return kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      store_.Write(tx, key, r);
      return Status::Ok();
    });
  }
  // Plants raw bytes as the record's head value.
  Status PutRaw(const TokenKey& key, std::string value) {
    return kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      tx.Set(store_.KeyOf(key), value);
      return Status::Ok();
    });
  }
  Result<TokenLookup> Check(const TokenKey& key, std::string request, int64_t now = kNow,
                            uint32_t contract = kTokenContractTransactWriteItemsV1) {
    return kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
      return store_.Check(tx, key, contract, Of(request), now);
    });
  }
  std::string Head(std::string payload) {
    std::string v(1, static_cast<char>(kTokenFormatV1));
    v += std::string("\0\0\0\1", 4);
    return v + payload;
  }

  std::unique_ptr<kv::Database> db_ = kv::OpenMemoryEngine();
  TokenStore store_{layout::Tokens()};
  TokenKey key_{"123456789012", "TransactWriteItems", "tok-1"};
};

TEST_F(TokensTest, Sha256KnownVector) {
  std::string d = Sha256("abc");
  ASSERT_EQ(d.size(), 32u);
  EXPECT_EQ(static_cast<uint8_t>(d[0]), 0xba);
  EXPECT_EQ(static_cast<uint8_t>(d[31]), 0xad);
}

TEST_F(TokensTest, KeyIsScopedByAccountOperationAndToken) {
  EXPECT_NE(store_.KeyOf({"a", "TransactWriteItems", "t"}),
            store_.KeyOf({"b", "TransactWriteItems", "t"}));
  EXPECT_NE(store_.KeyOf({"a", "TransactWriteItems", "t"}), store_.KeyOf({"a", "Other", "t"}));
  EXPECT_TRUE(layout::Tokens().Contains(store_.KeyOf(key_)));
}

TEST_F(TokensTest, AbsentReplayMismatch) {
  auto r = Check(key_, "req");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, TokenState::kAbsent);
  ASSERT_TRUE(Put(key_, Record("req")).ok());
  r = Check(key_, "req");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->state, TokenState::kReplay);
  EXPECT_EQ(r->record->result, "result of req");
  r = Check(key_, "other");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, TokenState::kMismatch);
  // Another account's token of the same name is independent.
  r = Check({"999999999999", "TransactWriteItems", "tok-1"}, "other");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, TokenState::kAbsent);
}

TEST_F(TokensTest, ExpiresAfterTenMinutesWhetherOrNotCollected) {
  ASSERT_TRUE(Put(key_, Record("req")).ok());
  auto r = Check(key_, "other", kNow + kTokenLifetime.count() - 1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, TokenState::kMismatch);
  r = Check(key_, "other", kNow + kTokenLifetime.count());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, TokenState::kAbsent);
  EXPECT_TRUE(r->expired_record);
  // The expired record may be replaced by the new request's.
  ASSERT_TRUE(Put(key_, Record("other", kNow + kTokenLifetime.count())).ok());
  r = Check(key_, "other", kNow + kTokenLifetime.count() + 1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, TokenState::kReplay);
}

TEST_F(TokensTest, LargeResultsAreChunkedAndReplaceCleanly) {
  TokenRecord big = Record("big");
  big.result = std::string(250'000, 'x');
  big.result[123'456] = 'y';
  ASSERT_TRUE(Put(key_, big).ok());
  auto read =
      kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) { return store_.Read(tx, key_); });
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ(**read, big);
  // A smaller record replaces every chunk of the larger one.
  TokenRecord small = Record("small", kNow + kTokenLifetime.count());
  ASSERT_TRUE(Put(key_, small).ok());
  auto range = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
    auto [b, e] = layout::Tokens().Range();
    return tx.GetRange(b, e);
  });
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->kvs.size(), 1u);
}

TEST_F(TokensTest, ContractVersionMismatchIsRejectedNotReplayed) {
  // A contract this build does not know yet (one past the newest).
  constexpr uint32_t kNext = kTokenContractExecuteTransactionV1 + 1;
  TokenOptions options;
  options.max_known_contract = kNext;
  TokenStore v2(layout::Tokens(), options);
  TokenRecord rec = Record("req");
  rec.contract_version = kNext;
  ASSERT_TRUE(kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                v2.Write(tx, key_, rec);
                return Status::Ok();
              }).ok());
  // This process does not know that contract: the record fails closed.
  auto r = Check(key_, "req");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kInternalServerError);
  // A process that knows it, asked with contract 1, has no bridge: mismatch, never replay.
  auto r2 = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
    return v2.Check(tx, key_, kTokenContractTransactWriteItemsV1, Of("req"), kNow);
  });
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->state, TokenState::kMismatch);
}

TEST_F(TokensTest, UnknownFingerprintAlgorithmFailsClosed) {
  TokenRecord rec = Record("req");
  rec.fingerprint_algorithm = 7;  // valid shape, algorithm this process does not retain
  ASSERT_TRUE(Put(key_, rec).ok());
  auto r = Check(key_, "req");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kInternalServerError);
}

TEST_F(TokensTest, MalformedWeakAndUnknownVersionRecordsFailClosed) {
  auto expect_closed = [&](const std::string& what, std::string value) {
    ASSERT_TRUE(PutRaw(key_, value).ok());
    for (int64_t now : {kNow, kNow + 100 * kTokenLifetime.count()}) {
      auto r = Check(key_, "req", now);
      ASSERT_FALSE(r.ok()) << what;
      EXPECT_EQ(r.error().type, ErrorType::kInternalServerError) << what;
      EXPECT_NE(r.error().message.find("not executed"), std::string::npos) << what;
    }
  };
  TokenRecord good = Record("req");
  std::string payload = EncodeTokenPayloadV1(good);
  expect_closed("empty", "");
  expect_closed("unknown format", std::string(1, '\x09') + Head(payload).substr(1));
  expect_closed("truncated", Head(payload.substr(0, payload.size() - 1)));
  expect_closed("trailing", Head(payload + "z"));
  expect_closed("zero chunks", std::string(1, '\x01') + std::string(4, '\0') + payload);
  expect_closed("missing chunk", std::string(1, '\x01') + std::string("\0\0\0\2", 4) + payload);
  TokenRecord weak = good;
  weak.fingerprint_algorithm = kFingerprintWeak;
  expect_closed("weak algorithm", Head(EncodeTokenPayloadV1(weak)));
  weak = good;
  weak.fingerprint = weak.fingerprint.substr(0, 8);
  expect_closed("short digest", Head(EncodeTokenPayloadV1(weak)));
  TokenRecord bad = good;
  bad.created_ms = 0;
  expect_closed("no timestamp", Head(EncodeTokenPayloadV1(bad)));
  bad = good;
  bad.contract_version = 99;
  expect_closed("unknown contract", Head(EncodeTokenPayloadV1(bad)));
  bad = good;
  bad.result_schema = 2;
  expect_closed("unknown result schema", Head(EncodeTokenPayloadV1(bad)));
  // Sanity: the well-formed head written the same way is accepted.
  ASSERT_TRUE(PutRaw(key_, Head(payload)).ok());
  auto ok = Check(key_, "req");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->state, TokenState::kReplay);
}

TEST_F(TokensTest, GcClearsOnlyExpiredValidRecordsInBoundedPasses) {
  for (int i = 0; i < 10; ++i) {
    TokenKey k{"acct", "TransactWriteItems", "t" + std::to_string(i)};
    ASSERT_TRUE(Put(k, Record("r", i < 6 ? kNow : kNow + kTokenLifetime.count())).ok());
  }
  TokenRecord big = Record("big");
  big.result = std::string(200'000, 'b');
  ASSERT_TRUE(Put({"acct", "TransactWriteItems", "t-big"}, big).ok());
  ASSERT_TRUE(PutRaw({"acct", "TransactWriteItems", "t-bad"}, "garbage").ok());
  const int64_t now = kNow + kTokenLifetime.count() + 1;
  std::string cursor;
  int passes = 0;
  TokenStore::GcPass total;
  while (true) {
    auto pass = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
      return store_.CollectExpired(tx, cursor, 3, now);
    });
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    ++passes;
    total.deleted += pass->deleted;
    total.malformed += pass->malformed;
    if (!pass->next) break;
    cursor = *pass->next;
    ASSERT_LT(passes, 20);
  }
  EXPECT_GT(passes, 3);
  EXPECT_EQ(total.deleted, 7);  // t0..t5 and t-big
  EXPECT_EQ(total.malformed, 1);
  auto range = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
    auto [b, e] = layout::Tokens().Range();
    return tx.GetRange(b, e);
  });
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->kvs.size(), 5u);  // t6..t9 and the malformed record
}

}  // namespace
}  // namespace fdyno::store
