// kv::Run: the one retry runner. Every transaction in fdyno runs through it.
//
//   Result<Item> item = kv::Run(db, options, [&](kv::Transaction& tr, const kv::Attempt& a)
//                                                -> Result<Item> { ... });
//
// The body may run more than once. It must allocate its outputs inside itself (attempt-local
// state) and perform no side effect outside the transaction; only the value returned by the
// attempt that finished is returned. Each attempt gets the same Transaction, Reset.
//
// Outcomes:
// * body returns a non-kv (domain) error: returned at once, nothing committed by that attempt.
//   (If Attempt::maybe_committed was set, an earlier attempt may have committed: the body
//   decides, typically by reading its receipt first.)
// * body or commit fails with a retryable kv error (kv::IsRetryable: 1007, 1020, 1021, ...):
//   the body runs again after a jittered exponential backoff, until the deadline or the retry
//   limit. A commit that failed with a maybe-committed error (1021) sets
//   Attempt::maybe_committed for every later attempt, so that a body can look for the receipt
//   its earlier attempt may have written.
// * a non-retryable kv error: returned at once (as an Error of type kKv with its code).
// * the deadline passes before a commit was attempted: InternalServerError "Request timed out
//   before the transaction committed" (IsTimedOutBeforeCommit); nothing was committed.
// * the deadline passes while a commit is in flight (commit returned 1031, or returned 1021
//   with no time left to retry), or the runner gives up in any other way (deadline, retry
//   limit, non-retryable kv error) after an attempt whose commit may have been applied:
//   InternalServerError with kv_code 1021 (IsOutcomeUnknown) and kOutcomeUnknownMessage
//   (kRetryLimitOutcomeUnknownMessage at the retry limit, kFailedOutcomeUnknownMessage after a
//   non-retryable error). Never a rollback: the transaction
//   may have committed. Counted in kv_outcome_unknown and logged as a warning.
// * retry limit reached with nothing maybe-committed: the last kv error.
//
// Metrics (Metrics::Global()): kv_transaction_attempts (every attempt), kv_conflicts (1020),
// kv_unknown_results (1021), kv_too_old (1007), kv_outcome_unknown (terminal, as above).
// * success: the body's value. In read_only mode the body's reads are returned without any
//   commit (the reads still share one snapshot).
//
// Thread-safety: Run may be called from any number of threads; each call uses its own
// transaction.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "base/clock.h"
#include "base/result.h"
#include "kv/kv.h"

namespace fdyno::kv {

// What the body knows about the attempt it runs in.
struct Attempt {
  int number = 1;                // 1 for the first attempt
  bool maybe_committed = false;  // an earlier attempt's commit may have been applied
};

using SleepFunction = std::function<void(std::chrono::milliseconds)>;

struct RunOptions {
  // The whole operation's deadline on `clock`. Unset: clock->Now() + OperationTimeout().
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Attempts at most (the first included). >= 1.
  int max_attempts = 50;
  // Never commit: the body only reads.
  bool read_only = false;
  // Null: Clock::Real(). Tests inject a ManualClock.
  Clock* clock = nullptr;
  // Sleeps between attempts. Null: std::this_thread::sleep_for. Tests advance a ManualClock.
  SleepFunction sleep;
  // Backoff before attempt n+1 is a random duration in [b/2, b], b = min(initial * 2^(n-1),
  // max) (FoundationDB's defaults), and never past the deadline.
  std::chrono::milliseconds initial_backoff{10};
  std::chrono::milliseconds max_backoff{1000};
};

// While one is alive on a thread, every kv::Run on that thread (not RunAsync, whose retries
// already leave the calling thread) makes its attempts without waiting: a retryable failure
// that would back off ends the run at once with that kv error (an Error of type kKv), as the
// retry limit does. For a thread that must never sleep, a network thread's event loop: its
// caller runs the operation again from the start on a thread that may wait. Only for runs
// with nothing to undo (read-only); a write's run still ends as described above (outcome
// unknown when a commit may have been applied). Scopes nest.
class NoWaitScope {
 public:
  NoWaitScope();
  ~NoWaitScope();
  NoWaitScope(const NoWaitScope&) = delete;
  NoWaitScope& operator=(const NoWaitScope&) = delete;
  // Whether one is alive on the calling thread.
  static bool Active();
};

// The longest whole-operation budget. An operation's retries look for the receipt its earlier
// attempt may have written, so receipts must outlive every operation: their lifetime
// (store/receipts.h, 10 minutes) is asserted to be at least twice this.
inline constexpr std::chrono::milliseconds kMaxOperationTimeout{5 * 60 * 1000};

// The default whole-operation budget: DYNODB_OPERATION_TIMEOUT seconds (a positive number,
// fractions allowed, at most kMaxOperationTimeout) or 30 s when unset or invalid. Read on
// every call.
std::chrono::milliseconds OperationTimeout();

inline constexpr std::string_view kOutcomeUnknownMessage =
    "Request timed out; the transaction outcome may be unknown";
inline constexpr std::string_view kRetryLimitOutcomeUnknownMessage =
    "Transaction retry limit reached; the transaction outcome may be unknown";
inline constexpr std::string_view kFailedOutcomeUnknownMessage =
    "The transaction failed after an attempt whose commit outcome is unknown; the transaction "
    "outcome may be unknown";
inline constexpr std::string_view kTimedOutBeforeCommitMessage =
    "Request timed out before the transaction committed";

// The run ended after a commit that may have been applied: InternalServerError, kv_code 1021.
bool IsOutcomeUnknown(const Error& error);
// The deadline passed before any commit was attempted: InternalServerError, kv_code 1031.
bool IsTimedOutBeforeCommit(const Error& error);

// Runs a task on a thread that may block (a worker pool), now or later, never inline on an
// engine's commit thread.
using Blocking = std::function<void(std::function<void()>)>;
// Runs a task later on a chosen thread (a network thread's event loop); must not block.
using Resume = std::function<void(std::function<void()>)>;

namespace internal {

using AttemptBody = std::function<Status(Transaction&, const Attempt&)>;

// One run's state across its attempts: the steps of Run, so that an attempt's commit can
// finish on another thread. Used by one thread at a time.
class Runner {
 public:
  Runner(Database& db, const RunOptions& options);
  Transaction& transaction() { return *tr_; }
  const Attempt& attempt() const { return attempt_; }

  enum class Next { kCommit, kRetry, kDone };
  // Before an attempt: false (with the run's outcome in *final) when no time is left.
  bool Begin(Status* final);
  // After the body returned `result`: commit, retry, or done with *final.
  Next AfterBody(Status result, Status* final);
  // After the commit returned `commit`: retry, or done with *final.
  Next AfterCommit(Status commit, Status* final);
  // Backs off and resets for the next attempt; false (with *final) when the run must stop.
  bool PrepareRetry(Status* final);
  // Runs attempts (Begin, body, Commit, PrepareRetry) until the run is decided.
  Status Finish(const AttemptBody& body);

 private:
  Error GiveUpOnDeadline() const;
  Error GiveUpWith(Error last, std::string_view unknown_message) const;

  const RunOptions options_;
  Clock* const clock_;
  const std::chrono::steady_clock::time_point deadline_;
  const int max_attempts_;
  std::chrono::milliseconds backoff_;
  std::unique_ptr<Transaction> tr_;
  Attempt attempt_;
  Error failure_;  // the last retryable failure
};

Status RunLoop(Database& db, const RunOptions& options, const AttemptBody& body);
void RunAsyncLoop(Database& db, const RunOptions& options, std::shared_ptr<AttemptBody> body,
                  std::function<void(Status)> done, Blocking blocking, Resume resume);

template <typename R>
struct ResultTraits;
template <typename T>
struct ResultTraits<Result<T>> {
  using Value = T;
};

}  // namespace internal

// Runs body(Transaction&, const Attempt&) -> Result<T> (or Status) as described above.
template <typename Body>
auto Run(Database& db, const RunOptions& options, Body&& body)
    -> std::invoke_result_t<Body&, Transaction&, const Attempt&> {
  using R = std::invoke_result_t<Body&, Transaction&, const Attempt&>;
  if constexpr (std::is_same_v<R, Status>) {
    return internal::RunLoop(db, options, std::ref(body));  // no copy of the body
  } else {
    using T = typename internal::ResultTraits<R>::Value;
    std::optional<T> out;
    Status status =
        internal::RunLoop(db, options, [&](Transaction& tr, const Attempt& attempt) -> Status {
          out.reset();
          R r = body(tr, attempt);
          if (!r.ok()) return std::move(r).error();
          out.emplace(std::move(r).value());
          return {};
        });
    if (!status.ok()) return std::move(status).error();
    return std::move(*out);
  }
}

template <typename Body>
auto Run(Database& db, Body&& body) {
  return Run(db, RunOptions{}, std::forward<Body>(body));
}

// RunAsync: Run without waiting for a commit. The first attempt's body runs on the calling
// thread and commits with Transaction::CommitAsync; `done` gets what Run would have returned.
// When that attempt decides the run (success, a domain error, no time left), done runs on the
// engine's commit thread or, if the outcome is known before any commit, on the calling
// thread before RunAsync returns. When it must be retried, the remaining attempts run as in
// Run inside a task handed to `blocking`, which then calls done. The body must own what it
// uses (it may run after RunAsync returns). With `resume`, everything after the first
// attempt's commit (deciding on it, done, freeing the run) is handed to resume: the engine's
// commit thread only hands it over, and the caller's own thread does the work and frees what
// it allocated. Without it, done must be short: it may run on the commit thread.
template <typename Body, typename Done>
void RunAsync(Database& db, const RunOptions& options, Body body, Done done, Blocking blocking,
              Resume resume = {}) {
  using R = std::invoke_result_t<Body&, Transaction&, const Attempt&>;
  using T = typename internal::ResultTraits<R>::Value;
  auto out = std::make_shared<std::optional<T>>();
  auto attempt = std::make_shared<internal::AttemptBody>(
      [out, body = std::move(body)](Transaction& tr, const Attempt& a) mutable -> Status {
        out->reset();
        R r = body(tr, a);
        if (!r.ok()) return std::move(r).error();
        out->emplace(std::move(r).value());
        return {};
      });
  internal::RunAsyncLoop(
      db, options, std::move(attempt),
      [out, done = std::move(done)](Status status) mutable {
        if (status.ok()) {
          done(R(std::move(**out)));
        } else {
          Error error = std::move(status).error();
          done(R(std::move(error)));
        }
      },
      std::move(blocking), std::move(resume));
}

}  // namespace fdyno::kv
