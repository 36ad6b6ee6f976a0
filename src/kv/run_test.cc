#include "kv/run.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "base/metrics.h"
#include "kv/engines/faulty/faulty.h"
#include "kv/testing/memory_engine.h"

namespace fdyno::kv {
namespace {

using std::chrono::milliseconds;

int64_t CounterValue(const char* name) { return Metrics::Global().GetCounter(name).value(); }

class RunTest : public ::testing::Test {
 protected:
  RunTest() : inner_(OpenMemoryEngine({&clock_})) {}

  // Options on the manual clock: sleeping advances it, and sleeps are recorded.
  RunOptions Options(milliseconds budget = milliseconds(30'000)) {
    RunOptions o;
    o.clock = &clock_;
    o.deadline = clock_.Now() + budget;
    o.sleep = [this](milliseconds d) {
      sleeps_.push_back(d);
      clock_.Advance(d);
    };
    return o;
  }

  FaultOptions Faults() {
    FaultOptions f;
    f.seed = 42;
    f.clock = &clock_;
    f.sleep = [this](std::chrono::microseconds d) {
      clock_.Advance(std::chrono::ceil<milliseconds>(d));
    };
    return f;
  }

  std::optional<std::string> Read(Database& db, const std::string& key) {
    auto tr = db.CreateTransaction();
    auto v = tr->Get(key);
    EXPECT_TRUE(v.ok());
    return v.ok() ? *v : std::nullopt;
  }

  int64_t ReadInt(Database& db, const std::string& key) {
    auto v = Read(db, key);
    return v ? std::stoll(*v) : 0;
  }

  // A read-modify-write increment of a decimal counter: not idempotent on its own.
  static Status Increment(Transaction& tr, const std::string& key) {
    FDYNO_ASSIGN_OR_RETURN(auto v, tr.Get(key));
    int64_t n = v ? std::stoll(*v) : 0;
    tr.Set(key, std::to_string(n + 1));
    return {};
  }

  // An increment of "n" made idempotent by a receipt: it writes receipt/op1 with the effect,
  // and an attempt whose predecessor may have committed replays the receipt if it is there.
  static Result<std::string> IncrementWithReceipt(Transaction& tr, const Attempt& a) {
    if (a.maybe_committed) {
      FDYNO_ASSIGN_OR_RETURN(auto receipt, tr.Get("receipt/op1"));
      if (receipt) return "replayed " + *receipt;
    }
    FDYNO_RETURN_IF_ERROR(Increment(tr, "n"));
    tr.Set("receipt/op1", "ok");
    return std::string("applied");
  }

  ManualClock clock_;
  std::unique_ptr<Database> inner_;
  std::vector<milliseconds> sleeps_;
};

// A mutable, move-only body runs in place: its state after the run is the caller's.
TEST_F(RunTest, BodyIsNotCopied) {
  auto owned = std::make_unique<int>(0);
  auto body = [owned = std::move(owned)](Transaction& tr, const Attempt&) mutable -> Status {
    ++*owned;
    tr.Set("k", std::to_string(*owned));
    return {};
  };
  ASSERT_TRUE(kv::Run(*inner_, Options(), body).ok());
  EXPECT_EQ(Read(*inner_, "k"), "1");
  ASSERT_TRUE(kv::Run(*inner_, Options(), body).ok());
  EXPECT_EQ(Read(*inner_, "k"), "2");
}

TEST_F(RunTest, CommitsAndReturnsTheValue) {
  int64_t attempts_before = CounterValue("kv_transaction_attempts");
  Result<std::string> r = kv::Run(*inner_, Options(), [&](Transaction& tr, const Attempt& a) {
    EXPECT_EQ(a.number, 1);
    EXPECT_FALSE(a.maybe_committed);
    tr.Set("k", "v");
    return Result<std::string>("done");
  });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "done");
  EXPECT_EQ(Read(*inner_, "k"), "v");
  EXPECT_EQ(CounterValue("kv_transaction_attempts") - attempts_before, 1);
  EXPECT_TRUE(sleeps_.empty());
}

TEST_F(RunTest, StatusBodiesWork) {
  Status s = kv::Run(*inner_, Options(), [&](Transaction& tr, const Attempt&) -> Status {
    tr.Set("k", "v");
    return {};
  });
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(Read(*inner_, "k"), "v");
}

// A real conflict (another transaction writes what the body read) makes the body run again
// on a new snapshot; the result holds only the last attempt's state.
TEST_F(RunTest, RetriesARealConflictWithAttemptLocalState) {
  int calls = 0;
  int64_t conflicts_before = CounterValue("kv_conflicts");
  Result<std::vector<std::string>> r =
      kv::Run(*inner_, Options(),
              [&](Transaction& tr, const Attempt& a) -> Result<std::vector<std::string>> {
                ++calls;
                EXPECT_EQ(a.number, calls);
                std::vector<std::string> seen;  // attempt-local
                FDYNO_ASSIGN_OR_RETURN(auto v, tr.Get("counter"));
                seen.push_back(v.value_or("none"));
                if (a.number == 1) {
                  // Someone else commits a write to the key this attempt read.
                  auto other = inner_->CreateTransaction();
                  other->Set("counter", "7");
                  EXPECT_TRUE(other->Commit().ok());
                }
                tr.Set("counter", std::to_string(seen.size()));
                return seen;
              });
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(*r, std::vector<std::string>{"7"});
  EXPECT_EQ(Read(*inner_, "counter"), "1");
  EXPECT_EQ(CounterValue("kv_conflicts") - conflicts_before, 1);
  ASSERT_EQ(sleeps_.size(), 1u);
  EXPECT_GE(sleeps_[0], milliseconds(5));
  EXPECT_LE(sleeps_[0], milliseconds(10));
}

// Injected conflicts: every result comes from exactly one attempt, however many ran.
TEST_F(RunTest, AttemptLocalStateUnderInjectedConflicts) {
  FaultOptions f = Faults();
  f.commit_conflict = 0.6;
  auto db = WrapFaulty(inner_.get(), f);
  int max_attempts_seen = 0;
  for (int i = 0; i < 200; ++i) {
    Result<std::vector<int>> r =
        kv::Run(*db, Options(), [&](Transaction& tr, const Attempt& a) -> Result<std::vector<int>> {
          std::vector<int> out;
          max_attempts_seen = std::max(max_attempts_seen, a.number);
          FDYNO_RETURN_IF_ERROR(Increment(tr, "n"));
          out.push_back(a.number);
          return out;
        });
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->size(), 1u);
  }
  EXPECT_EQ(ReadInt(*inner_, "n"), 200);  // conflicts applied nothing
  EXPECT_GE(db->counts().conflicts, 100);
  EXPECT_GE(max_attempts_seen, 3);
}

TEST_F(RunTest, RetryLimitReturnsTheLastKvError) {
  FaultOptions f = Faults();
  f.commit_conflict = 1.0;
  auto db = WrapFaulty(inner_.get(), f);
  RunOptions o = Options();
  o.max_attempts = 4;
  int calls = 0;
  Status s = kv::Run(*db, o, [&](Transaction& tr, const Attempt&) -> Status {
    ++calls;
    tr.Set("k", "v");
    return {};
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(calls, 4);
  EXPECT_TRUE(s.error().is_kv());
  EXPECT_EQ(s.error().kv_code, kNotCommitted);
  EXPECT_FALSE(IsOutcomeUnknown(s.error()));
  EXPECT_EQ(Read(*inner_, "k"), std::nullopt);
  // Exponential backoff with jitter: each pause in [b/2, b], b = 10, 20, 40 ms.
  ASSERT_EQ(sleeps_.size(), 3u);
  for (size_t i = 0; i < sleeps_.size(); ++i) {
    int64_t b = 10 << i;
    EXPECT_GE(sleeps_[i].count(), b / 2);
    EXPECT_LE(sleeps_[i].count(), b);
  }
}

TEST_F(RunTest, BackoffIsCappedAndTheDeadlineEndsTheRun) {
  FaultOptions f = Faults();
  f.commit_conflict = 1.0;
  auto db = WrapFaulty(inner_.get(), f);
  RunOptions o = Options(milliseconds(5'000));
  o.max_attempts = 1'000'000;
  o.max_backoff = milliseconds(200);
  auto start = clock_.Now();
  int calls = 0;
  Status s = kv::Run(*db, o, [&](Transaction& tr, const Attempt&) -> Status {
    ++calls;
    tr.Set("k", "v");
    return {};
  });
  ASSERT_FALSE(s.ok());
  // Conflicts applied nothing, so the deadline is reported as a safe, not-committed timeout.
  EXPECT_TRUE(IsTimedOutBeforeCommit(s.error()));
  EXPECT_FALSE(IsOutcomeUnknown(s.error()));
  EXPECT_EQ(s.error().type, ErrorType::kInternalServerError);
  EXPECT_EQ(s.error().message, "Request timed out before the transaction committed");
  EXPECT_LE(clock_.Now() - start, milliseconds(5'000));
  EXPECT_GT(calls, 20);
  for (auto d : sleeps_) EXPECT_LE(d, milliseconds(200));
  EXPECT_EQ(Read(*inner_, "k"), std::nullopt);
}

// The remaining budget is passed down as the transaction timeout: a read after the deadline
// fails with 1031 in the engine, and the runner reports a timeout before commit.
TEST_F(RunTest, RemainingBudgetIsTheTransactionTimeout) {
  int calls = 0;
  Status s = kv::Run(*inner_, Options(milliseconds(1'000)),
                     [&](Transaction& tr, const Attempt&) -> Status {
                       ++calls;
                       clock_.Advance(milliseconds(1'000));
                       auto v = tr.Get("k");
                       if (!v.ok()) return std::move(v).error();
                       tr.Set("k", "v");
                       return {};
                     });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(IsTimedOutBeforeCommit(s.error())) << s.error().message;
  EXPECT_EQ(Read(*inner_, "k"), std::nullopt);
}

// Each attempt gets only what is left of the one budget, not a fresh one.
TEST_F(RunTest, LaterAttemptsGetTheRemainingBudget) {
  int calls = 0;
  Status s = kv::Run(*inner_, Options(milliseconds(1'000)),
                     [&](Transaction& tr, const Attempt& a) -> Status {
                       ++calls;
                       auto v = tr.Get("k");
                       if (!v.ok()) return std::move(v).error();
                       if (a.number == 1) {
                         clock_.Advance(milliseconds(600));
                         auto other = inner_->CreateTransaction();
                         other->Set("k", "other");  // conflicts with this attempt's read
                         EXPECT_TRUE(other->Commit().ok());
                       } else {
                         // 400 ms into attempt 2: past the ~390 ms that were left.
                         clock_.Advance(milliseconds(400));
                         auto again = tr.Get("k");
                         if (!again.ok()) return std::move(again).error();
                       }
                       tr.Set("k", "mine");
                       return {};
                     });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(IsTimedOutBeforeCommit(s.error())) << s.error().message;
  EXPECT_EQ(Read(*inner_, "k"), "other");
}

TEST_F(RunTest, DeadlineAlreadyPassed) {
  int calls = 0;
  Status s =
      kv::Run(*inner_, Options(milliseconds(0)), [&](Transaction&, const Attempt&) -> Status {
        ++calls;
        return {};
      });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(calls, 0);
  EXPECT_TRUE(IsTimedOutBeforeCommit(s.error()));
}

// Latency injected into a read pushes past the deadline: timed out before commit.
TEST_F(RunTest, DeadlineDuringReadsIsNotCommitted) {
  FaultOptions f = Faults();
  f.latency = 1.0;
  f.max_latency = std::chrono::hours(1);
  auto db = WrapFaulty(inner_.get(), f);
  Status s = kv::Run(*db, Options(milliseconds(1'000)),
                     [&](Transaction& tr, const Attempt&) -> Status { return Increment(tr, "k"); });
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(IsTimedOutBeforeCommit(s.error())) << s.error().message;
  EXPECT_EQ(Read(*inner_, "k"), std::nullopt);
}

// Latency injected at commit pushes past the deadline while the commit is in flight: the
// outcome is unknown, whether the delay came before or after the commit applied.
TEST_F(RunTest, DeadlineWhileCommitInFlightIsOutcomeUnknown) {
  FaultOptions f = Faults();
  f.latency = 1.0;
  f.max_latency = std::chrono::seconds(2);
  auto db = WrapFaulty(inner_.get(), f);
  int64_t unknown_before = CounterValue("kv_outcome_unknown");
  int unknown = 0;
  for (int i = 0; i < 60; ++i) {
    std::string key = "k" + std::to_string(i);
    Status s =
        kv::Run(*db, Options(milliseconds(1'000)), [&](Transaction& tr, const Attempt&) -> Status {
          tr.Set(key, "v");  // no reads: the only delays are around the commit
          return {};
        });
    if (s.ok()) {
      EXPECT_EQ(Read(*inner_, key), "v");
      continue;
    }
    ++unknown;
    EXPECT_TRUE(IsOutcomeUnknown(s.error()));
    EXPECT_EQ(s.error().type, ErrorType::kInternalServerError);
    EXPECT_EQ(s.error().kv_code, kCommitUnknownResult);
    EXPECT_EQ(s.error().message, "Request timed out; the transaction outcome may be unknown");
  }
  auto c = db->counts();
  // Both sides of the race happened: delayed before the commit, and after it applied.
  EXPECT_GT(c.commit_timeouts_applied, 0);
  EXPECT_GT(c.commit_timeouts_not_applied, 0);
  EXPECT_EQ(c.commit_timeouts_applied + c.commit_timeouts_not_applied, unknown);
  EXPECT_EQ(CounterValue("kv_outcome_unknown") - unknown_before, unknown);
}

TEST_F(RunTest, InjectedCommitTimeoutIsOutcomeUnknown) {
  FaultOptions f = Faults();
  f.commit_timed_out = 1.0;
  auto db = WrapFaulty(inner_.get(), f);
  Status s = kv::Run(*db, Options(), [&](Transaction& tr, const Attempt&) -> Status {
    tr.Set("k", "v");
    return {};
  });
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(IsOutcomeUnknown(s.error()));
}

// 1021 after the commit applied: retried with maybe_committed set; a body that checks its
// receipt applies the increment exactly once.
TEST_F(RunTest, UnknownResultAppliedWithReceiptAppliesOnce) {
  FaultOptions f = Faults();
  f.unknown_applied = 1.0;
  auto db = WrapFaulty(inner_.get(), f);
  int64_t unknown_before = CounterValue("kv_unknown_results");
  std::vector<Attempt> attempts;
  Result<std::string> r =
      kv::Run(*db, Options(), [&](Transaction& tr, const Attempt& a) -> Result<std::string> {
        attempts.push_back(a);
        return IncrementWithReceipt(tr, a);
      });
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "replayed ok");
  EXPECT_EQ(ReadInt(*inner_, "n"), 1);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_FALSE(attempts[0].maybe_committed);
  EXPECT_TRUE(attempts[1].maybe_committed);
  EXPECT_EQ(attempts[1].number, 2);
  EXPECT_EQ(db->counts().unknown_applied, 1);
  EXPECT_EQ(CounterValue("kv_unknown_results") - unknown_before, 1);
}

// 1021 without applying: the receipt is absent, so the retry applies the effect; once.
TEST_F(RunTest, UnknownResultNotAppliedWithReceiptAppliesOnce) {
  FaultOptions f = Faults();
  f.unknown_not_applied = 0.5;
  auto db = WrapFaulty(inner_.get(), f);
  for (int i = 0; i < 50; ++i) {
    std::string receipt_key = "receipt/" + std::to_string(i);
    Result<bool> r =
        kv::Run(*db, Options(), [&](Transaction& tr, const Attempt& a) -> Result<bool> {
          if (a.maybe_committed) {
            FDYNO_ASSIGN_OR_RETURN(auto receipt, tr.Get(receipt_key));
            if (receipt) return true;
          }
          FDYNO_RETURN_IF_ERROR(Increment(tr, "n"));
          tr.Set(receipt_key, "ok");
          return false;
        });
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_FALSE(*r);  // never replayed: nothing was applied by a 1021
  }
  EXPECT_EQ(ReadInt(*inner_, "n"), 50);
  EXPECT_GE(db->counts().unknown_not_applied, 15);
}

// A blind (receipt-less) increment hit by 1021-applied until the retry limit: applied twice,
// and the runner says the outcome is unknown, never that it rolled back.
TEST_F(RunTest, UnknownResultAtRetryLimitIsOutcomeUnknown) {
  FaultOptions f = Faults();
  f.unknown_applied = 1.0;
  auto db = WrapFaulty(inner_.get(), f);
  RunOptions o = Options();
  o.max_attempts = 2;
  Status s = kv::Run(*db, o, [&](Transaction& tr, const Attempt&) { return Increment(tr, "n"); });
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(IsOutcomeUnknown(s.error()));
  EXPECT_EQ(s.error().message,
            "Transaction retry limit reached; the transaction outcome may be unknown");
  EXPECT_EQ(ReadInt(*inner_, "n"), 2);
}

// 1021 without applying, until the deadline: still reported as unknown (the runner cannot know
// it did not apply), with the exact message.
TEST_F(RunTest, UnknownResultNotAppliedAtDeadlineIsOutcomeUnknown) {
  FaultOptions f = Faults();
  f.unknown_not_applied = 1.0;
  auto db = WrapFaulty(inner_.get(), f);
  RunOptions o = Options(milliseconds(3'000));
  o.max_attempts = 1'000'000;
  Status s = kv::Run(*db, o, [&](Transaction& tr, const Attempt&) { return Increment(tr, "n"); });
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(IsOutcomeUnknown(s.error()));
  EXPECT_FALSE(IsTimedOutBeforeCommit(s.error()));
  EXPECT_EQ(s.error().message, "Request timed out; the transaction outcome may be unknown");
  EXPECT_EQ(ReadInt(*inner_, "n"), 0);
}

// After a 1021, a later conflict and then the deadline: still unknown, never a rollback.
TEST_F(RunTest, MaybeCommittedIsStickyAcrossLaterAttempts) {
  FaultOptions f = Faults();
  f.unknown_applied = 1.0;
  auto db = WrapFaulty(inner_.get(), f);
  RunOptions o = Options(milliseconds(2'000));
  o.max_attempts = 1'000'000;
  std::vector<Attempt> attempts;
  Status s = kv::Run(*db, o, [&](Transaction& tr, const Attempt& a) -> Status {
    attempts.push_back(a);
    if (a.number == 2)
      db->SetOptions([&] {
        FaultOptions g = Faults();
        g.commit_conflict = 1.0;
        return g;
      }());
    return Increment(tr, "n");
  });
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(IsOutcomeUnknown(s.error()));
  ASSERT_GE(attempts.size(), 3u);
  for (size_t i = 1; i < attempts.size(); ++i) EXPECT_TRUE(attempts[i].maybe_committed);
}

// A non-retryable kv error after a 1021: still unknown, never a clean failure.
TEST_F(RunTest, NonRetryableErrorAfterUnknownResultIsOutcomeUnknown) {
  FaultOptions f = Faults();
  f.unknown_applied = 1.0;
  auto db = WrapFaulty(inner_.get(), f);
  Status s = kv::Run(*db, Options(), [&](Transaction& tr, const Attempt& a) -> Status {
    if (a.number == 2) return KvError(kTransactionCancelled);
    return Increment(tr, "n");
  });
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(IsOutcomeUnknown(s.error()));
  EXPECT_EQ(s.error().message, kFailedOutcomeUnknownMessage);
  EXPECT_EQ(ReadInt(*inner_, "n"), 1);
}

TEST_F(RunTest, ReadOnlyNeverCommits) {
  FaultOptions f = Faults();
  f.unknown_applied = 1.0;  // any commit would report 1021
  auto db = WrapFaulty(inner_.get(), f);
  RunOptions o = Options();
  o.read_only = true;
  Result<std::optional<std::string>> r =
      kv::Run(*db, o, [&](Transaction& tr, const Attempt&) -> Result<std::optional<std::string>> {
        FDYNO_ASSIGN_OR_RETURN(auto v, tr.Get("k"));
        tr.Set("k", "written by a read-only body");  // discarded: never committed
        return v;
      });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, std::nullopt);
  EXPECT_EQ(Read(*inner_, "k"), std::nullopt);
  EXPECT_EQ(db->counts().unknown_applied, 0);
  EXPECT_EQ(db->counts().commits_passed, 0);
}

TEST_F(RunTest, ReadOnlyRetriesTooOldReads) {
  FaultOptions f = Faults();
  f.read_too_old = 0.5;
  auto db = WrapFaulty(inner_.get(), f);
  int64_t too_old_before = CounterValue("kv_too_old");
  RunOptions o = Options();
  o.read_only = true;
  for (int i = 0; i < 20; ++i) {
    Result<int> r = kv::Run(*db, o, [&](Transaction& tr, const Attempt&) -> Result<int> {
      int n = 0;
      for (int k = 0; k < 3; ++k) {
        FDYNO_ASSIGN_OR_RETURN(auto v, tr.Get("k" + std::to_string(k)));
        n += v ? 1 : 0;
      }
      return n;
    });
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  EXPECT_GT(db->counts().too_old, 10);
  EXPECT_EQ(CounterValue("kv_too_old") - too_old_before, db->counts().too_old);
}

TEST_F(RunTest, NoWaitScopeEndsARetryableRunWithoutSleeping) {
  FaultOptions f = Faults();
  f.read_too_old = 1;
  auto db = WrapFaulty(inner_.get(), f);
  RunOptions o = Options();
  o.read_only = true;
  auto read = [&](Transaction& tr, const Attempt&) -> Result<int> {
    FDYNO_ASSIGN_OR_RETURN(auto v, tr.Get("k"));
    return v ? 1 : 0;
  };
  {
    NoWaitScope outer;
    NoWaitScope inner;  // scopes nest
  }
  EXPECT_FALSE(NoWaitScope::Active());
  {
    NoWaitScope scope;
    EXPECT_TRUE(NoWaitScope::Active());
    Result<int> r = kv::Run(*db, o, read);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.error().is_kv());
    EXPECT_EQ(r.error().kv_code, kTransactionTooOld);
    EXPECT_TRUE(sleeps_.empty());
    EXPECT_EQ(db->counts().too_old, 1);
  }
  // Without the scope the same run backs off and retries until its deadline.
  o.deadline = clock_.Now() + milliseconds(500);
  Result<int> r = kv::Run(*db, o, read);
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(sleeps_.empty());
  EXPECT_GT(db->counts().too_old, 2);
}

TEST_F(RunTest, DomainErrorsReturnAtOnce) {
  int calls = 0;
  Status s = kv::Run(*inner_, Options(), [&](Transaction& tr, const Attempt&) -> Status {
    ++calls;
    tr.Set("k", "v");
    return Error::ConditionalCheckFailed();
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(s.error().type, ErrorType::kConditionalCheckFailed);
  EXPECT_EQ(Read(*inner_, "k"), std::nullopt);
  EXPECT_TRUE(sleeps_.empty());
}

TEST_F(RunTest, NonRetryableKvErrorsReturnAtOnce) {
  int calls = 0;
  // From the body.
  Status s = kv::Run(*inner_, Options(), [&](Transaction&, const Attempt&) -> Status {
    ++calls;
    return KvError(kTransactionCancelled);
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(s.error().kv_code, kTransactionCancelled);
  // From the commit: a key over FoundationDB's limit.
  calls = 0;
  s = kv::Run(*inner_, Options(), [&](Transaction& tr, const Attempt&) -> Status {
    ++calls;
    tr.Set(std::string(kMaxKeyBytes + 1, 'k'), "v");
    return {};
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(s.error().is_kv());
  EXPECT_EQ(s.error().kv_code, kKeyTooLarge);
  EXPECT_TRUE(sleeps_.empty());
}

TEST_F(RunTest, OutcomeUnknownPredicates) {
  Error plain = Error::Internal("Request timed out; the transaction outcome may be unknown");
  EXPECT_FALSE(IsOutcomeUnknown(plain));  // the code, not the message, decides
  EXPECT_FALSE(IsOutcomeUnknown(KvError(kCommitUnknownResult)));  // a raw engine error
  EXPECT_FALSE(IsTimedOutBeforeCommit(KvError(kTransactionTimedOut)));
}

TEST(OperationTimeoutTest, ReadsTheEnvironment) {
  unsetenv("DYNODB_OPERATION_TIMEOUT");
  EXPECT_EQ(OperationTimeout(), milliseconds(30'000));
  setenv("DYNODB_OPERATION_TIMEOUT", "5", 1);
  EXPECT_EQ(OperationTimeout(), milliseconds(5'000));
  setenv("DYNODB_OPERATION_TIMEOUT", "0.25", 1);
  EXPECT_EQ(OperationTimeout(), milliseconds(250));
  setenv("DYNODB_OPERATION_TIMEOUT", "300", 1);  // kMaxOperationTimeout
  EXPECT_EQ(OperationTimeout(), milliseconds(300'000));
  // Longer than receipts live (a late retry could apply twice): not accepted.
  for (const char* bad : {"", "abc", "-3", "0", "5s", "nan", "1e9", "300.5", "86400"}) {
    setenv("DYNODB_OPERATION_TIMEOUT", bad, 1);
    EXPECT_EQ(OperationTimeout(), milliseconds(30'000)) << bad;
  }
  unsetenv("DYNODB_OPERATION_TIMEOUT");
}

// Without an explicit deadline the budget comes from the environment.
TEST(OperationTimeoutTest, DefaultDeadlineUsesTheEnvironment) {
  ManualClock clock;
  auto db = OpenMemoryEngine({&clock});
  setenv("DYNODB_OPERATION_TIMEOUT", "2", 1);
  RunOptions o;
  o.clock = &clock;
  o.sleep = [&](milliseconds d) { clock.Advance(d); };
  auto start = clock.Now();
  FaultOptions f;
  f.commit_conflict = 1.0;
  f.clock = &clock;
  auto faulty = WrapFaulty(db.get(), f);
  o.max_attempts = 1'000'000;
  Status s = kv::Run(*faulty, o, [&](Transaction& tr, const Attempt&) -> Status {
    tr.Set("k", "v");
    return {};
  });
  unsetenv("DYNODB_OPERATION_TIMEOUT");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(IsTimedOutBeforeCommit(s.error()));
  EXPECT_LE(clock.Now() - start, milliseconds(2'000));
  EXPECT_GE(clock.Now() - start, milliseconds(1'000));
}

}  // namespace
}  // namespace fdyno::kv

namespace fdyno::kv {
namespace {

// RunAsync with a Blocking that keeps its tasks, so a test sees when the run leaves the
// calling thread and runs the rest itself.
class RunAsyncTest : public RunTest {
 protected:
  Blocking Keep() {
    return [this](std::function<void()> task) { blocked_.push_back(std::move(task)); };
  }
  void RunBlocked() {
    while (!blocked_.empty()) {
      auto task = std::move(blocked_.front());
      blocked_.erase(blocked_.begin());
      task();
    }
  }
  std::vector<std::function<void()>> blocked_;
};

TEST_F(RunAsyncTest, CommitsAndAnswersOnce) {
  std::vector<Result<std::string>> answers;
  kv::RunAsync(
      *inner_, Options(),
      [](Transaction& tr, const Attempt&) -> Result<std::string> {
        FDYNO_RETURN_IF_ERROR(Increment(tr, "n"));
        return std::string("done");
      },
      [&](Result<std::string> r) { answers.push_back(std::move(r)); }, Keep());
  ASSERT_EQ(answers.size(), 1u);
  ASSERT_TRUE(answers[0].ok()) << answers[0].error().message;
  EXPECT_EQ(*answers[0], "done");
  EXPECT_TRUE(blocked_.empty());
  EXPECT_EQ(ReadInt(*inner_, "n"), 1);
}

TEST_F(RunAsyncTest, DomainErrorAndDeadlineAnswerWithoutCommitting) {
  std::vector<Result<std::string>> answers;
  auto record = [&](Result<std::string> r) { answers.push_back(std::move(r)); };
  kv::RunAsync(
      *inner_, Options(),
      [](Transaction& tr, const Attempt&) -> Result<std::string> {
        FDYNO_RETURN_IF_ERROR(Increment(tr, "n"));
        return Error::Validation("no");
      },
      record, Keep());
  kv::RunAsync(
      *inner_, Options(milliseconds(0)),
      [](Transaction&, const Attempt&) -> Result<std::string> { return std::string("1"); }, record,
      Keep());
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].error().message, "no");
  EXPECT_TRUE(IsTimedOutBeforeCommit(answers[1].error()));
  EXPECT_TRUE(blocked_.empty());
  EXPECT_EQ(ReadInt(*inner_, "n"), 0);
}

// With resume, what follows the commit is handed to resume: no answer until it runs.
TEST_F(RunAsyncTest, ResumeRunsWhatFollowsTheCommit) {
  std::vector<std::function<void()>> resumed;
  std::vector<Result<std::string>> answers;
  kv::RunAsync(
      *inner_, Options(),
      [](Transaction& tr, const Attempt&) -> Result<std::string> {
        FDYNO_RETURN_IF_ERROR(Increment(tr, "n"));
        return std::string("done");
      },
      [&](Result<std::string> r) { answers.push_back(std::move(r)); }, Keep(),
      [&](std::function<void()> task) { resumed.push_back(std::move(task)); });
  EXPECT_TRUE(answers.empty());
  ASSERT_EQ(resumed.size(), 1u);
  EXPECT_EQ(ReadInt(*inner_, "n"), 1);  // committed; only the answer waits
  resumed[0]();
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(*answers[0], "done");
  EXPECT_TRUE(blocked_.empty());
}

// A commit that failed with 1021 after applying: the retry runs on the blocking thread, finds
// the receipt and replays it; the effect is applied once.
TEST_F(RunAsyncTest, UnknownResultIsRetriedOnTheBlockingThreadAndAppliesOnce) {
  FaultOptions f = Faults();
  f.unknown_applied = 1.0;
  auto db = WrapFaulty(inner_.get(), f);
  auto attempts = std::make_shared<std::vector<Attempt>>();
  std::vector<Result<std::string>> answers;
  kv::RunAsync(
      *db, Options(),
      [attempts](Transaction& tr, const Attempt& a) -> Result<std::string> {
        attempts->push_back(a);
        return IncrementWithReceipt(tr, a);
      },
      [&](Result<std::string> r) { answers.push_back(std::move(r)); }, Keep());
  EXPECT_TRUE(answers.empty());  // the first attempt's outcome was unknown: retried later
  ASSERT_EQ(blocked_.size(), 1u);
  RunBlocked();
  ASSERT_EQ(answers.size(), 1u);
  ASSERT_TRUE(answers[0].ok()) << answers[0].error().message;
  EXPECT_EQ(*answers[0], "replayed ok");
  EXPECT_EQ(ReadInt(*inner_, "n"), 1);
  ASSERT_EQ(attempts->size(), 2u);
  EXPECT_FALSE((*attempts)[0].maybe_committed);
  EXPECT_TRUE((*attempts)[1].maybe_committed);
  EXPECT_EQ((*attempts)[1].number, 2);
  EXPECT_EQ(sleeps_.size(), 1u);  // backed off once, on the blocking thread
}

// Conflicts at every commit: the retries and the retry limit behave as in Run.
TEST_F(RunAsyncTest, RetryLimitAfterConflictsIsTheLastKvError) {
  FaultOptions f = Faults();
  f.commit_conflict = 1.0;
  auto db = WrapFaulty(inner_.get(), f);
  RunOptions o = Options();
  o.max_attempts = 3;
  int runs = 0;
  std::vector<Result<std::string>> answers;
  kv::RunAsync(
      *db, o,
      [&runs](Transaction& tr, const Attempt&) -> Result<std::string> {
        ++runs;
        FDYNO_RETURN_IF_ERROR(Increment(tr, "n"));
        return std::string("7");
      },
      [&](Result<std::string> r) { answers.push_back(std::move(r)); }, Keep());
  RunBlocked();
  ASSERT_EQ(answers.size(), 1u);
  ASSERT_FALSE(answers[0].ok());
  EXPECT_EQ(answers[0].error().kv_code, kNotCommitted);
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(ReadInt(*inner_, "n"), 0);
}

}  // namespace
}  // namespace fdyno::kv
