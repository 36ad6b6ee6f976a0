#include "kv/run.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "base/metrics.h"

namespace fdyno::kv {
namespace {

constexpr std::chrono::milliseconds kDefaultOperationTimeout{30'000};

struct RunMetrics {
  Counter& attempts = Metrics::Global().GetCounter("kv_transaction_attempts");
  Counter& conflicts = Metrics::Global().GetCounter("kv_conflicts");
  Counter& unknown_results = Metrics::Global().GetCounter("kv_unknown_results");
  Counter& too_old = Metrics::Global().GetCounter("kv_too_old");
  Counter& outcome_unknown = Metrics::Global().GetCounter("kv_outcome_unknown");
};

RunMetrics& GetMetrics() {
  static RunMetrics* metrics = new RunMetrics();
  return *metrics;
}

void CountError(int code) {
  auto& m = GetMetrics();
  if (code == kNotCommitted) m.conflicts.Add();
  if (code == kCommitUnknownResult) m.unknown_results.Add();
  if (code == kTransactionTooOld) m.too_old.Add();
}

Error OutcomeUnknown(std::string_view message, int attempts) {
  GetMetrics().outcome_unknown.Add();
  // Rare and worth an operator's attention: a client got an ambiguous answer.
  spdlog::warn("kv::Run: {} (after {} attempts)", message, attempts);
  Error e = Error::Internal(std::string(message));
  e.kv_code = kCommitUnknownResult;
  return e;
}

Error TimedOutBeforeCommit() {
  Error e = Error::Internal(std::string(kTimedOutBeforeCommitMessage));
  e.kv_code = kTransactionTimedOut;
  return e;
}

std::chrono::milliseconds Jittered(std::chrono::milliseconds backoff) {
  thread_local std::mt19937_64 rng(std::random_device{}());
  int64_t hi = std::max<int64_t>(backoff.count(), 1);
  return std::chrono::milliseconds(std::uniform_int_distribution<int64_t>(hi / 2, hi)(rng));
}

}  // namespace

std::chrono::milliseconds OperationTimeout() {
  const char* env = std::getenv("DYNODB_OPERATION_TIMEOUT");
  if (env == nullptr || *env == '\0') return kDefaultOperationTimeout;
  char* end = nullptr;
  double seconds = std::strtod(env, &end);
  // Reject garbage, non-positive and too long values alike.
  if (end == env || *end != '\0' || !(seconds > 0) ||
      seconds * 1000 > static_cast<double>(kMaxOperationTimeout.count())) {
    return kDefaultOperationTimeout;
  }
  return std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000)));
}

namespace {
thread_local int no_wait_scopes = 0;
}  // namespace

NoWaitScope::NoWaitScope() { ++no_wait_scopes; }
NoWaitScope::~NoWaitScope() { --no_wait_scopes; }
bool NoWaitScope::Active() { return no_wait_scopes > 0; }

bool IsOutcomeUnknown(const Error& error) {
  return error.type == ErrorType::kInternalServerError && error.kv_code == kCommitUnknownResult;
}

bool IsTimedOutBeforeCommit(const Error& error) {
  return error.type == ErrorType::kInternalServerError && error.kv_code == kTransactionTimedOut;
}

namespace internal {

Runner::Runner(Database& db, const RunOptions& options)
    : options_(options),
      clock_(options.clock ? options.clock : Clock::Real()),
      deadline_(options.deadline ? *options.deadline : clock_->Now() + OperationTimeout()),
      max_attempts_(std::max(options.max_attempts, 1)),
      backoff_(options.initial_backoff),
      tr_(db.CreateTransaction()) {}

// The run cannot go on: report what may have happened, never a rollback when a commit may
// have been applied.
Error Runner::GiveUpOnDeadline() const {
  if (attempt_.maybe_committed) return OutcomeUnknown(kOutcomeUnknownMessage, attempt_.number);
  return TimedOutBeforeCommit();
}

Error Runner::GiveUpWith(Error last, std::string_view unknown_message) const {
  if (attempt_.maybe_committed) return OutcomeUnknown(unknown_message, attempt_.number);
  return last;
}

bool Runner::Begin(Status* final) {
  auto remaining = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - clock_->Now());
  if (remaining.count() <= 0) {
    *final = GiveUpOnDeadline();
    return false;
  }
  tr_->SetTimeout(remaining);
  GetMetrics().attempts.Add();
  return true;
}

Runner::Next Runner::AfterBody(Status result, Status* final) {
  if (result.ok()) {
    if (!options_.read_only) return Next::kCommit;
    *final = Status::Ok();
    return Next::kDone;
  }
  failure_ = std::move(result).error();
  if (!failure_.is_kv()) {  // a domain error: the body decided
    *final = std::move(failure_);
    return Next::kDone;
  }
  if (failure_.kv_code == kTransactionTimedOut) {
    *final = GiveUpOnDeadline();
    return Next::kDone;
  }
  CountError(failure_.kv_code);
  if (!IsRetryable(failure_.kv_code)) {
    *final = GiveUpWith(std::move(failure_), kFailedOutcomeUnknownMessage);
    return Next::kDone;
  }
  return Next::kRetry;
}

Runner::Next Runner::AfterCommit(Status commit, Status* final) {
  if (commit.ok()) {
    *final = Status::Ok();
    return Next::kDone;
  }
  failure_ = std::move(commit).error();
  if (!failure_.is_kv()) {
    *final = GiveUpWith(std::move(failure_), kFailedOutcomeUnknownMessage);
    return Next::kDone;
  }
  CountError(failure_.kv_code);
  // The timeout fired with the commit in flight: it may have been applied.
  if (failure_.kv_code == kTransactionTimedOut) {
    *final = OutcomeUnknown(kOutcomeUnknownMessage, attempt_.number);
    return Next::kDone;
  }
  if (MaybeCommitted(failure_.kv_code)) attempt_.maybe_committed = true;
  if (!IsRetryable(failure_.kv_code)) {
    *final = GiveUpWith(std::move(failure_), kFailedOutcomeUnknownMessage);
    return Next::kDone;
  }
  return Next::kRetry;
}

bool Runner::PrepareRetry(Status* final) {
  // A retryable failure: back off, then run the body again on a fresh transaction state.
  if (attempt_.number >= max_attempts_ || NoWaitScope::Active()) {
    *final = GiveUpWith(std::move(failure_), kRetryLimitOutcomeUnknownMessage);
    return false;
  }
  auto pause = Jittered(backoff_);
  backoff_ = std::min(backoff_ * 2, options_.max_backoff);
  if (clock_->Now() + pause >= deadline_) {
    *final = GiveUpOnDeadline();
    return false;
  }
  if (pause.count() > 0) {
    if (options_.sleep) {
      options_.sleep(pause);
    } else {
      std::this_thread::sleep_for(pause);
    }
  }
  tr_->Reset();
  ++attempt_.number;
  return true;
}

Status Runner::Finish(const AttemptBody& body) {
  for (;;) {
    Status final;
    if (!Begin(&final)) return final;
    Next next = AfterBody(body(*tr_, attempt_), &final);
    if (next == Next::kCommit) next = AfterCommit(tr_->Commit(), &final);
    if (next == Next::kDone) return final;
    if (!PrepareRetry(&final)) return final;
  }
}

Status RunLoop(Database& db, const RunOptions& options, const AttemptBody& body) {
  Runner runner(db, options);
  return runner.Finish(body);
}

namespace {

// One asynchronous run: everything its continuations need, in one allocation that each of
// them holds by a single shared_ptr (small enough for std::function to store inline).
struct AsyncRun {
  AsyncRun(Database& db, const RunOptions& options, std::shared_ptr<AttemptBody> body,
           std::function<void(Status)> done, Blocking blocking, Resume resume)
      : runner(db, options),
        body(std::move(body)),
        done(std::move(done)),
        blocking(std::move(blocking)),
        resume(std::move(resume)) {}

  Runner runner;
  std::shared_ptr<AttemptBody> body;
  std::function<void(Status)> done;
  Blocking blocking;
  Resume resume;
  Status commit;  // the first attempt's commit result, once known
};

// The attempts after the first: like Run, on a thread that may wait.
void RetryBlocking(std::shared_ptr<AsyncRun> run) {
  // A copy, so that the task may free the run (and its members) while blocking runs it.
  Blocking blocking = run->blocking;
  blocking([run = std::move(run)] {
    Status final;
    if (run->runner.PrepareRetry(&final)) final = run->runner.Finish(*run->body);
    run->done(std::move(final));
  });
}

void AfterFirstCommit(std::shared_ptr<AsyncRun> run) {
  Status final;
  if (run->runner.AfterCommit(std::move(run->commit), &final) == Runner::Next::kDone) {
    return run->done(std::move(final));
  }
  RetryBlocking(std::move(run));
}

}  // namespace

void RunAsyncLoop(Database& db, const RunOptions& options, std::shared_ptr<AttemptBody> body,
                  std::function<void(Status)> done, Blocking blocking, Resume resume) {
  auto run = std::make_shared<AsyncRun>(db, options, std::move(body), std::move(done),
                                        std::move(blocking), std::move(resume));
  Runner& runner = run->runner;
  Status final;
  if (!runner.Begin(&final)) return run->done(std::move(final));
  Runner::Next next =
      runner.AfterBody((*run->body)(runner.transaction(), runner.attempt()), &final);
  if (next == Runner::Next::kDone) return run->done(std::move(final));
  if (next == Runner::Next::kRetry) return RetryBlocking(std::move(run));
  runner.transaction().CommitAsync([run = std::move(run)](Status commit) mutable {
    // The run is moved, not copied, into the continuation: what it holds is freed where the
    // continuation ends, on the caller's thread when there is a resume.
    run->commit = std::move(commit);
    if (!run->resume) return AfterFirstCommit(std::move(run));
    Resume resume = std::move(run->resume);  // the task may free the run while resume runs
    resume([run = std::move(run)]() mutable { AfterFirstCommit(std::move(run)); });
  });
}

}  // namespace internal
}  // namespace fdyno::kv
