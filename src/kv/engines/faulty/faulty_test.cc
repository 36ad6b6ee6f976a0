#include "kv/engines/faulty/faulty.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <map>
#include <thread>

#include "kv/engines/embedded/embedded.h"
#include "kv/testing/memory_engine.h"

namespace fdyno::kv {
namespace {

class FaultyTest : public ::testing::Test {
 protected:
  FaultOptions Faults(uint64_t seed = 7) {
    FaultOptions f;
    f.seed = seed;
    f.clock = &clock_;
    f.sleep = [this](std::chrono::microseconds d) {
      clock_.Advance(std::chrono::ceil<std::chrono::milliseconds>(d));
    };
    return f;
  }

  std::optional<std::string> Read(const std::string& key) {
    auto tr = inner_->CreateTransaction();
    return tr->Get(key).value();
  }

  ManualClock clock_;
  std::unique_ptr<Database> inner_ = OpenMemoryEngine({&clock_});
};

TEST_F(FaultyTest, TransparentWithFaultsOff) {
  auto db = WrapFaulty(inner_.get(), Faults());
  auto tr = db->CreateTransaction();
  tr->Set("a", "1");
  tr->AtomicOp(MutationType::kAdd, "n", std::string("\x01", 1));
  ASSERT_TRUE(tr->Commit().ok());
  EXPECT_GT(tr->GetCommittedVersion().value(), 0);
  EXPECT_EQ(tr->GetVersionstamp().value().size(), 10u);
  auto t2 = db->CreateTransaction();
  EXPECT_EQ(t2->Get("a").value(), "1");
  auto range = t2->GetRange("a", "z");
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->kvs.size(), 2u);
  // A real conflict passes through unchanged.
  auto t3 = db->CreateTransaction();
  ASSERT_TRUE(t3->Get("a").ok());
  t3->Set("a", "3");
  t2->Set("a", "2");
  ASSERT_TRUE(t2->Commit().ok());
  EXPECT_EQ(t3->Commit().error().kv_code, kNotCommitted);
  auto c = db->counts();
  EXPECT_EQ(c.transactions, 3);
  EXPECT_EQ(c.commits_passed, 2);
  EXPECT_EQ(c.conflicts + c.unknown_applied + c.unknown_not_applied + c.too_old + c.latencies, 0);
}

TEST_F(FaultyTest, UnknownResultVariants) {
  FaultOptions f = Faults();
  f.unknown_applied = 0.5;
  f.unknown_not_applied = 0.5;
  auto db = WrapFaulty(inner_.get(), f);
  int applied = 0, not_applied = 0;
  for (int i = 0; i < 400; ++i) {
    auto tr = db->CreateTransaction();
    std::string key = "k" + std::to_string(i);
    tr->Set(key, "v");
    auto s = tr->Commit();
    ASSERT_FALSE(s.ok());
    ASSERT_EQ(s.error().kv_code, kCommitUnknownResult);
    (Read(key) ? applied : not_applied)++;
  }
  auto c = db->counts();
  EXPECT_EQ(c.unknown_applied, applied);
  EXPECT_EQ(c.unknown_not_applied, not_applied);
  EXPECT_GT(applied, 150);
  EXPECT_GT(not_applied, 150);
}

TEST_F(FaultyTest, ConflictTooOldAndTimeouts) {
  FaultOptions f = Faults();
  f.commit_conflict = 1.0;
  auto db = WrapFaulty(inner_.get(), f);
  auto tr = db->CreateTransaction();
  tr->Set("k", "v");
  EXPECT_EQ(tr->Commit().error().kv_code, kNotCommitted);
  EXPECT_EQ(Read("k"), std::nullopt);
  // A commit without writes is never faulted.
  tr->Reset();
  EXPECT_TRUE(tr->Commit().ok());

  f = Faults();
  f.read_too_old = 1.0;
  db->SetOptions(f);
  tr = db->CreateTransaction();
  EXPECT_EQ(tr->Get("k").error().kv_code, kTransactionTooOld);
  tr->Set("k", "v");
  EXPECT_EQ(tr->Commit().error().kv_code, kTransactionTooOld);  // poisoned until Reset

  f = Faults();
  f.read_timed_out = 1.0;
  db->SetOptions(f);
  tr = db->CreateTransaction();
  EXPECT_EQ(tr->GetRange("a", "b").error().kv_code, kTransactionTimedOut);

  // The emulated timeout follows the injected clock.
  db->SetOptions(Faults());
  tr = db->CreateTransaction();
  tr->SetTimeout(std::chrono::milliseconds(50));
  EXPECT_TRUE(tr->Get("k").ok());
  clock_.Advance(std::chrono::milliseconds(50));
  EXPECT_EQ(tr->Get("k").error().kv_code, kTransactionTimedOut);
  EXPECT_EQ(db->counts().too_old, 1);
  EXPECT_EQ(db->counts().read_timeouts, 1);
}

// The same seed and the same sequence of calls inject the same faults.
TEST_F(FaultyTest, DeterministicForASeed) {
  auto run = [&](uint64_t seed) {
    ManualClock clock;
    auto inner = OpenMemoryEngine({&clock});
    FaultOptions f = Faults(seed);
    f.clock = &clock;
    f.sleep = nullptr;
    f.commit_conflict = 0.2;
    f.unknown_applied = 0.2;
    f.unknown_not_applied = 0.2;
    f.read_too_old = 0.1;
    auto db = WrapFaulty(inner.get(), f);
    std::string trace;
    for (int i = 0; i < 300; ++i) {
      auto tr = db->CreateTransaction();
      auto g = tr->Get("x");
      trace += g.ok() ? "r" : std::to_string(g.error().kv_code);
      tr->Set("x", std::to_string(i));
      auto s = tr->Commit();
      trace += s.ok() ? "c" : std::to_string(s.error().kv_code);
    }
    return trace;
  };
  EXPECT_EQ(run(1), run(1));
  EXPECT_NE(run(1), run(2));
}
// The late variant: 1021 without the write visible, and the write lands just before the
// retry (after Reset) commits, so the retry read a state without it. A retry that reads a
// receipt the first attempt wrote conflicts (1020) and, run again, finds it: each operation
// applies once. One that reads no receipt applies again.
int LateRetries(FaultyDatabase& db, int operations, bool read_receipt, int* conflicts) {
  for (int i = 0; i < operations; ++i) {
    auto tr = db.CreateTransaction();
    const std::string receipt = "receipt/" + std::to_string(i);
    for (int attempt = 0; attempt < 50; ++attempt) {
      if (read_receipt && tr->Get(receipt).value().has_value()) break;  // replayed
      tr->Set(receipt, "done");
      tr->AtomicOp(MutationType::kAdd, "n", std::string("\x01\x00", 2));
      Status s = tr->Commit();
      if (s.ok()) break;
      *conflicts += s.error().kv_code == kNotCommitted;
      tr->Reset();
    }
  }
  auto check = db.CreateTransaction();
  std::string n = check->Get("n").value().value_or(std::string(2, '\0'));
  return static_cast<unsigned char>(n[0]) | (static_cast<unsigned char>(n[1]) << 8);
}

TEST_F(FaultyTest, ALateUnknownResultLandsBeforeTheRetryCommitsAndTheReceiptReadCatchesIt) {
  FaultOptions f = Faults();
  f.unknown_late = 0.5;
  auto db = WrapFaulty(inner_.get(), f);
  int conflicts = 0;
  EXPECT_EQ(LateRetries(*db, 300, /*read_receipt=*/true, &conflicts), 300);
  auto c = db->counts();
  EXPECT_GT(c.unknown_late, 100);
  EXPECT_GT(c.unknown_late_applied, 100) << "late commits landed";
  EXPECT_GT(conflicts, 50) << "retries conflicted with the late commits";
}

TEST_F(FaultyTest, ALateUnknownResultAppliesTwiceWhenTheRetryReadsNoReceipt) {
  FaultOptions f = Faults();
  f.unknown_late = 0.5;
  auto db = WrapFaulty(inner_.get(), f);
  int conflicts = 0;
  const int n = LateRetries(*db, 300, /*read_receipt=*/false, &conflicts);
  EXPECT_EQ(n, 300 + db->counts().unknown_late);
  EXPECT_EQ(conflicts, 0);
}

// Over an engine that commits asynchronously (the embedded engine's committer thread) the
// wrapper does too, and CommitAsync meets every commit fault: refusals answer at once on the
// calling thread without applying, applied faults answer from the engine's thread after the
// write is durable, and each outcome is counted exactly as Commit counts it.
TEST(FaultyAsyncTest, CommitAsyncInjectsEveryCommitFaultAroundTheInnerAsynchronousCommit) {
  std::string dir = ::testing::TempDir() + "faulty_async_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  auto inner = OpenEmbedded({.path = dir, .durability = Durability::kNone});
  ASSERT_TRUE(inner.ok()) << inner.error().message;
  ASSERT_TRUE((*inner)->CommitsAsynchronously());
  FaultOptions f;
  f.seed = 11;
  f.commit_conflict = 0.2;
  f.unknown_not_applied = 0.2;
  f.unknown_applied = 0.2;
  f.commit_timed_out = 0.2;
  auto db = WrapFaulty(inner->get(), f);
  ASSERT_TRUE(db->CommitsAsynchronously());

  const std::thread::id caller = std::this_thread::get_id();
  int refused_at_once = 0, answered_elsewhere = 0, applied = 0;
  std::map<int, int> outcomes;  // kv_code (0: success) -> count
  constexpr int kCommits = 500;
  for (int i = 0; i < kCommits; ++i) {
    std::string key = "k" + std::to_string(i);
    auto tr = db->CreateTransaction();
    tr->Set(key, "v");
    std::promise<std::pair<Status, std::thread::id>> answered;
    tr->CommitAsync([&](Status s) {
      answered.set_value({std::move(s), std::this_thread::get_id()});
    });
    auto [status, thread] = answered.get_future().get();
    int code = status.ok() ? 0 : status.error().kv_code;
    ++outcomes[code];
    auto check = (*inner)->CreateTransaction();
    bool present = check->Get(key).value().has_value();
    applied += present;
    if (thread == caller) {
      ++refused_at_once;
      EXPECT_FALSE(present) << "a refusal on the calling thread applied " << key;
      EXPECT_NE(code, 0);
    } else {
      ++answered_elsewhere;
      EXPECT_TRUE(present) << "an answer from the engine's thread did not apply " << key;
    }
    if (code == 0) {
      EXPECT_TRUE(present) << key;
    }
    if (code == kNotCommitted) {
      EXPECT_FALSE(present) << key;
    }
  }
  FaultCounts c = db->counts();
  EXPECT_EQ(c.conflicts, outcomes[kNotCommitted]);
  EXPECT_EQ(c.unknown_applied + c.unknown_not_applied, outcomes[kCommitUnknownResult]);
  EXPECT_EQ(c.commit_timeouts_applied + c.commit_timeouts_not_applied,
            outcomes[kTransactionTimedOut]);
  EXPECT_EQ(c.commits_passed, outcomes[0]);
  EXPECT_EQ(applied, c.commits_passed + c.unknown_applied + c.commit_timeouts_applied);
  EXPECT_EQ(refused_at_once, c.conflicts + c.unknown_not_applied + c.commit_timeouts_not_applied);
  EXPECT_GT(c.unknown_applied, 50);
  EXPECT_GT(c.unknown_not_applied, 50);
  EXPECT_GT(c.commit_timeouts_applied, 20);
  EXPECT_GT(c.commits_passed, 50);
  EXPECT_GT(answered_elsewhere, 200);
  db.reset();
  inner->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fdyno::kv
