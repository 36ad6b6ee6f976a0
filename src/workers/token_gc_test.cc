#include "workers/token_gc.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "base/metrics.h"
#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "store/layout.h"
#include "workers/pausing_database_testing.h"

namespace fdyno::workers {
namespace {

TEST(TokenGcTest, ParsesDurations) {
  EXPECT_EQ(ParseGcDuration("30"), std::chrono::milliseconds(30'000));
  EXPECT_EQ(ParseGcDuration("0.5"), std::chrono::milliseconds(500));
  EXPECT_EQ(ParseGcDuration("250ms"), std::chrono::milliseconds(250));
  EXPECT_EQ(ParseGcDuration("5m"), std::chrono::milliseconds(300'000));
  EXPECT_EQ(ParseGcDuration("1h"), std::chrono::milliseconds(3'600'000));
  EXPECT_EQ(ParseGcDuration("0"), std::chrono::milliseconds(0));
  EXPECT_FALSE(ParseGcDuration(""));
  EXPECT_FALSE(ParseGcDuration("-1"));
  EXPECT_FALSE(ParseGcDuration("5d"));
  EXPECT_FALSE(ParseGcDuration("x"));
  EXPECT_FALSE(ParseGcDuration("s"));
}

TEST(TokenGcTest, OptionsFromEnv) {
  setenv("DYNODB_TXN_TOKEN_GC_INTERVAL", "2s", 1);
  setenv("DYNODB_TXN_TOKEN_GC_MAX_SCAN", "17", 1);
  auto o = TokenGcOptionsFromEnv();
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->interval, std::chrono::milliseconds(2000));
  EXPECT_EQ(o->max_scan, 17);
  setenv("DYNODB_TXN_TOKEN_GC_MAX_SCAN", "0", 1);
  EXPECT_FALSE(TokenGcOptionsFromEnv().ok());
  setenv("DYNODB_TXN_TOKEN_GC_MAX_SCAN", "10", 1);
  setenv("DYNODB_TXN_TOKEN_GC_INTERVAL", "soon", 1);
  EXPECT_FALSE(TokenGcOptionsFromEnv().ok());
  unsetenv("DYNODB_TXN_TOKEN_GC_INTERVAL");
  unsetenv("DYNODB_TXN_TOKEN_GC_MAX_SCAN");
  o = TokenGcOptionsFromEnv();
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->interval.count(), 0);
  EXPECT_EQ(o->max_scan, 1000);
}

// 20 expired records, 5 live ones and a malformed one (26 keys).
void WriteTokens(kv::Database& db, const store::TokenStore& tokens, const Clock& clock) {
  ASSERT_TRUE(kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                for (int i = 0; i < 25; ++i) {
                  store::TokenRecord r;
                  r.fingerprint = store::Sha256("x");
                  r.created_ms = clock.WallMillis() - (i < 20 ? store::kTokenLifetime.count() : 0);
                  tokens.Write(tx, {"a", "TransactWriteItems", "t" + std::to_string(i)}, r);
                }
                tx.Set(tokens.KeyOf({"a", "TransactWriteItems", "zz-bad"}), "\x07junk");
                return Status::Ok();
              }).ok());
}

TEST(TokenGcTest, BoundedPassesRemoveExpiredAndKeepMalformed) {
  ManualClock clock;
  auto db = kv::OpenMemoryEngine();
  store::TokenStore tokens(store::layout::Tokens());
  ASSERT_NO_FATAL_FAILURE(WriteTokens(*db, tokens, clock));
  TokenGcOptions options;
  options.max_scan = 4;
  options.clock = &clock;
  TokenGc gc(db.get(), tokens, options);
  int64_t deleted = 0, malformed = 0;
  int passes = 0;
  while (true) {
    auto stats = gc.RunPass();
    ASSERT_TRUE(stats.ok()) << stats.error().message;
    EXPECT_LE(stats->scanned, 4);
    deleted += stats->deleted;
    malformed += stats->malformed;
    ++passes;
    if (stats->wrapped) break;
    ASSERT_LT(passes, 50);
  }
  EXPECT_EQ(deleted, 20);
  EXPECT_EQ(malformed, 1);
  EXPECT_GE(passes, 7);
  auto left = kv::Run(*db, [&](kv::Transaction& tx, const kv::Attempt&) {
    auto [b, e] = store::layout::Tokens().Range();
    return tx.GetRange(b, e);
  });
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(left->kvs.size(), 6u);  // five live records and the malformed one
}

// A pass whose clears do not fit in one engine transaction (2101) is tried again with half as
// many keys, so that the GC keeps going instead of failing the same pass forever; a new round
// starts at the full batch again.
TEST(TokenGcTest, APassTooLargeForTheEngineHalvesItsBatch) {
  ManualClock clock;
  kv::MemoryEngineOptions engine;
  engine.max_transaction_bytes = 4'000;  // a few dozen record clears, not 60
  auto db = kv::OpenMemoryEngine(engine);
  store::TokenStore tokens(store::layout::Tokens());
  for (int i = 0; i < 60; ++i) {
    ASSERT_TRUE(kv::Run(*db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                  store::TokenRecord r;
                  r.fingerprint = store::Sha256("x");
                  r.created_ms = clock.WallMillis() - store::kTokenLifetime.count();
                  tokens.Write(tx, {"a", "TransactWriteItems", "token-" + std::to_string(i)}, r);
                  return Status::Ok();
                }).ok());
  }
  TokenGcOptions options;
  options.max_scan = 1000;
  options.clock = &clock;
  TokenGc gc(db.get(), tokens, options);
  int64_t deleted = 0;
  int passes = 0, smallest = options.max_scan;
  while (true) {
    auto stats = gc.RunPass();
    ASSERT_TRUE(stats.ok()) << stats.error().message;
    deleted += stats->deleted;
    smallest = std::min(smallest, stats->max_scan);
    ++passes;
    if (stats->wrapped) break;
    ASSERT_LT(passes, 200);
  }
  std::cout << "60 expired records under a 4,000-byte transaction limit: " << passes
            << " passes of at most " << smallest << " records\n";
  EXPECT_EQ(deleted, 60);
  EXPECT_LT(smallest, 60);
  EXPECT_GT(passes, 1);
  // The next round starts at the full batch: nothing is left, so it fits.
  auto next = gc.RunPass();
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(next->max_scan, 1000);
  EXPECT_TRUE(next->wrapped);
}

TEST(TokenGcTest, BackgroundThreadRunsPassesUntilStopped) {
  auto db = kv::OpenMemoryEngine();
  TokenGcOptions options;
  options.interval = std::chrono::milliseconds(1);
  TokenGc gc(db.get(), store::TokenStore(store::layout::Tokens()), options);
  Counter& passes = Metrics::Global().GetCounter("txn_token_gc_passes");
  const int64_t before = passes.value();
  gc.Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (passes.value() < before + 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  gc.Stop();
  EXPECT_GE(passes.value(), before + 3) << "the background thread ran no passes";
  const int64_t stopped = passes.value();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // 20 intervals
  EXPECT_EQ(passes.value(), stopped) << "passes after Stop";
  TokenGcOptions off;
  TokenGc disabled(db.get(), store::TokenStore(store::layout::Tokens()), off);
  disabled.Start();  // interval 0: no thread
  disabled.Stop();
  unsetenv("DYNODB_TXN_TOKEN_GC_INTERVAL");
  auto none = StartTokenGcFromEnv(db.get());
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->get(), nullptr);
  setenv("DYNODB_TXN_TOKEN_GC_INTERVAL", "1ms", 1);
  auto started = StartTokenGcFromEnv(db.get());
  unsetenv("DYNODB_TXN_TOKEN_GC_INTERVAL");
  ASSERT_TRUE(started.ok());
  ASSERT_NE(started->get(), nullptr);
  (*started)->Stop();
}

// One of several processes over one database: its own lease clock and view of the database.
struct GcOwner {
  GcOwner(kv::Database* inner, ManualClock* expiry_clock, std::string name) : db(inner) {
    TokenGcOptions options;
    options.max_scan = 4;
    options.clock = expiry_clock;
    options.lease.owner = std::move(name);
    options.lease.clock = &lease_clock;
    gc = std::make_unique<TokenGc>(&db, store::TokenStore(store::layout::Tokens()), options);
  }
  TokenGc::Stats Pass() {
    auto stats = gc->RunPass();
    EXPECT_TRUE(stats.ok());
    if (!stats.ok()) return {};
    scanned += stats->scanned;
    deleted += stats->deleted;
    return *stats;
  }
  ManualClock lease_clock;
  testing::PausingDatabase db;
  std::unique_ptr<TokenGc> gc;
  int64_t scanned = 0, deleted = 0;
};

TEST(TokenGcTest, OneOwnerCollectsAndAnotherTakesOverWhereItStopped) {
  ManualClock clock;
  auto db = kv::OpenMemoryEngine();
  WriteTokens(*db, store::TokenStore(store::layout::Tokens()), clock);
  GcOwner a(db.get(), &clock, "a"), b(db.get(), &clock, "b");
  for (int pass = 0; pass < 3; ++pass) {
    EXPECT_FALSE(a.Pass().elsewhere);
    EXPECT_TRUE(b.Pass().elsewhere);
  }
  EXPECT_EQ(a.scanned, 12);
  EXPECT_EQ(b.db.commits(), 0);
  // a stops (a dead process); b takes over after the lease and resumes at a's cursor.
  b.lease_clock.Advance(std::chrono::milliseconds(10'000));
  for (int pass = 0; !b.Pass().wrapped; ++pass) ASSERT_LT(pass, 20);
  EXPECT_EQ(a.scanned + b.scanned, 26);  // every record examined once in the round
  EXPECT_EQ(a.deleted + b.deleted, 20);
  EXPECT_TRUE(a.Pass().elsewhere);
}

TEST(TokenGcTest, StaleCollectorResumingAfterItsLeaseWasTakenCommitsNothing) {
  ManualClock clock;
  auto db = kv::OpenMemoryEngine();
  WriteTokens(*db, store::TokenStore(store::layout::Tokens()), clock);
  GcOwner a(db.get(), &clock, "a"), b(db.get(), &clock, "b");
  ASSERT_FALSE(a.Pass().elsewhere);
  a.db.PauseBeforeNextCommit([&] {
    b.lease_clock.Advance(std::chrono::milliseconds(10'000));
    EXPECT_FALSE(b.Pass().elsewhere);
  });
  EXPECT_TRUE(a.Pass().elsewhere);
  EXPECT_EQ(a.db.commits(), 1);
  for (int pass = 0; !b.Pass().wrapped; ++pass) ASSERT_LT(pass, 20);
  EXPECT_EQ(a.scanned + b.scanned, 26);
  EXPECT_EQ(a.deleted + b.deleted, 20);
}

TEST(TokenGcTest, LeaseOutlastsThreeIntervals) {
  ManualClock clock;
  auto db = kv::OpenMemoryEngine();
  TokenGcOptions options;
  options.interval = std::chrono::minutes(1);
  options.clock = &clock;
  options.lease.owner = "a";
  options.lease.clock = &clock;
  TokenGc gc(db.get(), store::TokenStore(store::layout::Tokens()), options);
  ASSERT_TRUE(gc.RunPass().ok());
  auto lease = kv::Run(*db, [&](kv::Transaction& tx, const kv::Attempt&) {
    return store::ReadLease(tx, TokenGcLeaseKey());
  });
  ASSERT_TRUE(lease.ok() && *lease);
  EXPECT_EQ((*lease)->expiry_ms, clock.WallMillis() + 180'000);
}

}  // namespace
}  // namespace fdyno::workers
