#include "kv/engines/faulty/faulty.h"

#include <random>
#include <thread>
#include <vector>

namespace fdyno::kv {
namespace {

struct AtomicCounts {
  std::atomic<int64_t> transactions{0};
  std::atomic<int64_t> commits_passed{0};
  std::atomic<int64_t> conflicts{0};
  std::atomic<int64_t> too_old{0};
  std::atomic<int64_t> read_timeouts{0};
  std::atomic<int64_t> commit_timeouts_applied{0};
  std::atomic<int64_t> commit_timeouts_not_applied{0};
  std::atomic<int64_t> unknown_applied{0};
  std::atomic<int64_t> unknown_not_applied{0};
  std::atomic<int64_t> unknown_late{0};
  std::atomic<int64_t> unknown_late_applied{0};
  std::atomic<int64_t> latencies{0};
};

// SplitMix64: derives well-spread per-transaction seeds from (seed, counter).
uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

class FaultyTransaction : public Transaction {
 public:
  FaultyTransaction(Database* inner_db, std::unique_ptr<Transaction> inner, FaultOptions options,
                    uint64_t seed, AtomicCounts* counts)
      : inner_db_(inner_db),
        inner_(std::move(inner)),
        options_(std::move(options)),
        clock_(options_.clock ? options_.clock : Clock::Real()),
        rng_(seed),
        counts_(counts),
        start_(clock_->Now()) {}

  Result<int64_t> GetReadVersion() override {
    FDYNO_RETURN_IF_ERROR(BeforeRead());
    return inner_->GetReadVersion();
  }
  void SetReadVersion(int64_t version) override { inner_->SetReadVersion(version); }

  Result<std::optional<std::string>> Get(std::string_view key, bool snapshot) override {
    FDYNO_RETURN_IF_ERROR(BeforeRead());
    return inner_->Get(key, snapshot);
  }
  Result<RangeResult> GetRange(std::string_view begin, std::string_view end,
                               const RangeOptions& options) override {
    FDYNO_RETURN_IF_ERROR(BeforeRead());
    return inner_->GetRange(begin, end, options);
  }

  void Set(std::string_view key, std::string_view value) override {
    has_writes_ = true;
    inner_->Set(key, value);
  }
  void Clear(std::string_view key) override {
    has_writes_ = true;
    inner_->Clear(key);
  }
  void ClearRange(std::string_view begin, std::string_view end) override {
    has_writes_ = true;
    inner_->ClearRange(begin, end);
  }
  void AtomicOp(MutationType type, std::string_view key, std::string_view param) override {
    has_writes_ = true;
    inner_->AtomicOp(type, key, param);
  }
  Status AddConflictRange(std::string_view begin, std::string_view end,
                          ConflictRangeType type) override {
    if (type == ConflictRangeType::kWrite) has_writes_ = true;
    return inner_->AddConflictRange(begin, end, type);
  }

  void SetTimeout(std::chrono::milliseconds timeout) override {
    timeout_ = timeout;
    inner_->SetTimeout(timeout);
  }

  Status Commit() override {
    if (late_) {
      CountLate(late_->Commit());
      late_.reset();
    }
    // A commit without writes is trivially successful in FoundationDB: nothing to inject.
    if (!has_writes_) return inner_->Commit();
    CommitPlan plan = PlanCommit();
    if (plan.late) return DeferLate();
    if (!plan.refusal.ok()) return plan.refusal;
    return AfterInnerCommit(plan, inner_->Commit());
  }

  // The same faults around the inner engine's own asynchronous commit, so that a caller on
  // the asynchronous path (kv::RunAsync) meets them where they really arrive: a refusal at
  // once on the calling thread, the rest on whichever thread the inner engine answers.
  void CommitAsync(std::function<void(Status)> done) override {
    if (late_) {
      // The late commit first; this one once it has answered (on the inner engine's thread).
      // Kept, not destroyed: its own callback is still running when this one goes on.
      Transaction* late = landed_.emplace_back(std::move(late_)).get();
      late->CommitAsync([this, done = std::move(done)](Status s) mutable {
        CountLate(s);
        CommitAsync(std::move(done));
      });
      return;
    }
    if (!has_writes_) return inner_->CommitAsync(std::move(done));
    CommitPlan plan = PlanCommit();
    if (plan.late) return done(DeferLate());
    if (!plan.refusal.ok()) return done(plan.refusal);
    inner_->CommitAsync([this, plan, done = std::move(done)](Status s) {
      done(AfterInnerCommit(plan, std::move(s)));
    });
  }

  Result<int64_t> GetCommittedVersion() override { return inner_->GetCommittedVersion(); }
  Result<std::string> GetVersionstamp() override { return inner_->GetVersionstamp(); }

  void Reset() override {
    inner_->Reset();
    poisoned_ = 0;
    has_writes_ = false;
    start_ = clock_->Now();
  }
  void Cancel() override { inner_->Cancel(); }

 private:
  double Uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }
  bool Draw(double p) { return p > 0 && Uniform() < p; }

  void MaybeDelay() {
    if (!Draw(options_.latency)) return;
    auto us = std::chrono::microseconds(std::uniform_int_distribution<int64_t>(
        0, std::max<int64_t>(options_.max_latency.count(), 0))(rng_));
    counts_->latencies.fetch_add(1, std::memory_order_relaxed);
    if (options_.sleep) {
      options_.sleep(us);
    } else {
      std::this_thread::sleep_for(us);
    }
  }

  // What a commit with writes meets, drawn before the inner commit runs: a refusal returned
  // without applying anything, or the inner commit followed by `error_after_apply` (0: none)
  // in place of its success.
  struct CommitPlan {
    Status refusal;
    int error_after_apply = 0;
    bool late = false;  // answer 1021 and commit this attempt before the retry's commit
  };

  // Keeps this attempt's inner transaction to commit later and answers 1021; the retry (after
  // Reset) runs on a fresh inner transaction with the same timeout.
  Status DeferLate() {
    counts_->unknown_late.fetch_add(1, std::memory_order_relaxed);
    late_ = std::move(inner_);
    inner_ = inner_db_->CreateTransaction();
    if (timeout_.count() > 0) inner_->SetTimeout(timeout_);
    return KvError(kCommitUnknownResult);
  }
  void CountLate(const Status& s) {
    if (s.ok()) counts_->unknown_late_applied.fetch_add(1, std::memory_order_relaxed);
  }

  CommitPlan PlanCommit() {
    if (poisoned_ != 0) return {KvError(poisoned_)};
    MaybeDelay();
    if (TimedOut()) {
      counts_->commit_timeouts_not_applied.fetch_add(1, std::memory_order_relaxed);
      return {KvError(kTransactionTimedOut)};
    }
    // One draw picks at most one commit fault, so the probabilities add up.
    double roll = Uniform();
    double edge = options_.commit_conflict;
    if (roll < edge) {
      counts_->conflicts.fetch_add(1, std::memory_order_relaxed);
      return {KvError(kNotCommitted)};
    }
    if (roll < (edge += options_.unknown_not_applied)) {
      counts_->unknown_not_applied.fetch_add(1, std::memory_order_relaxed);
      return {KvError(kCommitUnknownResult)};
    }
    if (roll < (edge += options_.unknown_applied)) return {{}, kCommitUnknownResult};
    if (roll < (edge += options_.unknown_late)) return {{}, 0, /*late=*/true};
    if (roll < (edge += options_.commit_timed_out)) {
      if (Uniform() < 0.5) {
        counts_->commit_timeouts_not_applied.fetch_add(1, std::memory_order_relaxed);
        return {KvError(kTransactionTimedOut)};
      }
      return {{}, kTransactionTimedOut};
    }
    return {};
  }

  // What the caller sees once the inner commit answered `inner`.
  Status AfterInnerCommit(const CommitPlan& plan, Status inner) {
    if (!inner.ok()) return inner;
    if (plan.error_after_apply == kCommitUnknownResult) {
      counts_->unknown_applied.fetch_add(1, std::memory_order_relaxed);
      return KvError(kCommitUnknownResult);
    }
    if (plan.error_after_apply == kTransactionTimedOut) {
      counts_->commit_timeouts_applied.fetch_add(1, std::memory_order_relaxed);
      return KvError(kTransactionTimedOut);
    }
    // Latency after the commit applied: a timeout that fires now races a successful commit.
    MaybeDelay();
    if (TimedOut()) {
      counts_->commit_timeouts_applied.fetch_add(1, std::memory_order_relaxed);
      return KvError(kTransactionTimedOut);
    }
    counts_->commits_passed.fetch_add(1, std::memory_order_relaxed);
    return {};
  }

  bool TimedOut() const { return timeout_.count() > 0 && clock_->Now() - start_ >= timeout_; }

  Status BeforeRead() {
    if (poisoned_ != 0) return KvError(poisoned_);
    MaybeDelay();
    if (TimedOut()) return KvError(kTransactionTimedOut);
    if (Draw(options_.read_too_old)) {
      counts_->too_old.fetch_add(1, std::memory_order_relaxed);
      poisoned_ = kTransactionTooOld;
      return KvError(kTransactionTooOld);
    }
    if (Draw(options_.read_timed_out)) {
      counts_->read_timeouts.fetch_add(1, std::memory_order_relaxed);
      return KvError(kTransactionTimedOut);
    }
    return {};
  }

  Database* inner_db_;
  std::unique_ptr<Transaction> inner_;
  // An attempt answered 1021, committed just before the next commit of this transaction (never,
  // if the caller gives up on it: as if the 1021 had not applied).
  std::unique_ptr<Transaction> late_;
  // Late attempts committed asynchronously, released with this transaction.
  std::vector<std::unique_ptr<Transaction>> landed_;
  FaultOptions options_;
  Clock* clock_;
  std::mt19937_64 rng_;
  AtomicCounts* counts_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::milliseconds timeout_{0};
  int poisoned_ = 0;
  bool has_writes_ = false;
};

class FaultyDatabaseImpl : public FaultyDatabase {
 public:
  FaultyDatabaseImpl(Database* inner, std::shared_ptr<Database> owned, const FaultOptions& options)
      : inner_(inner), owned_(std::move(owned)), options_(options) {}

  bool CommitsAsynchronously() const override { return inner_->CommitsAsynchronously(); }

  std::unique_ptr<Transaction> CreateTransaction() override {
    FaultOptions options;
    {
      std::lock_guard<std::mutex> l(mu_);
      options = options_;
    }
    uint64_t n = counts_.transactions.fetch_add(1, std::memory_order_relaxed);
    return std::make_unique<FaultyTransaction>(inner_, inner_->CreateTransaction(),
                                               std::move(options), Mix(options.seed ^ Mix(n)),
                                               &counts_);
  }

  // The inner engine's snapshot, with the faults a snapshot can meet: latency and timeouts,
  // never 1007 (it does not age out).
  std::unique_ptr<Transaction> CreateSnapshotTransaction() override {
    std::unique_ptr<Transaction> inner = inner_->CreateSnapshotTransaction();
    if (!inner) return nullptr;
    FaultOptions options;
    {
      std::lock_guard<std::mutex> l(mu_);
      options = options_;
    }
    options.read_too_old = 0;
    uint64_t n = counts_.transactions.fetch_add(1, std::memory_order_relaxed);
    return std::make_unique<FaultyTransaction>(inner_, std::move(inner), std::move(options),
                                               Mix(options.seed ^ Mix(n)), &counts_);
  }

  void SetOptions(const FaultOptions& options) override {
    std::lock_guard<std::mutex> l(mu_);
    uint64_t seed = options_.seed;
    options_ = options;
    options_.seed = seed;
  }

  FaultCounts counts() const override {
    FaultCounts c;
    c.transactions = counts_.transactions.load();
    c.commits_passed = counts_.commits_passed.load();
    c.conflicts = counts_.conflicts.load();
    c.too_old = counts_.too_old.load();
    c.read_timeouts = counts_.read_timeouts.load();
    c.commit_timeouts_applied = counts_.commit_timeouts_applied.load();
    c.commit_timeouts_not_applied = counts_.commit_timeouts_not_applied.load();
    c.unknown_applied = counts_.unknown_applied.load();
    c.unknown_not_applied = counts_.unknown_not_applied.load();
    c.unknown_late = counts_.unknown_late.load();
    c.unknown_late_applied = counts_.unknown_late_applied.load();
    c.latencies = counts_.latencies.load();
    return c;
  }

 private:
  Database* inner_;
  std::shared_ptr<Database> owned_;
  mutable std::mutex mu_;
  FaultOptions options_;
  AtomicCounts counts_;
};

}  // namespace

std::unique_ptr<FaultyDatabase> WrapFaulty(Database* inner, const FaultOptions& options) {
  return std::make_unique<FaultyDatabaseImpl>(inner, nullptr, options);
}

std::unique_ptr<FaultyDatabase> WrapFaulty(std::shared_ptr<Database> inner,
                                           const FaultOptions& options) {
  Database* raw = inner.get();
  return std::make_unique<FaultyDatabaseImpl>(raw, std::move(inner), options);
}

}  // namespace fdyno::kv
