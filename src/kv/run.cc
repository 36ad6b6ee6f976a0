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
  // Reject garbage, non-positive and absurd values (more than a day) alike.
  if (end == env || *end != '\0' || !(seconds > 0) || seconds > 86'400) {
    return kDefaultOperationTimeout;
  }
  return std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000)));
}

bool IsOutcomeUnknown(const Error& error) {
  return error.type == ErrorType::kInternalServerError && error.kv_code == kCommitUnknownResult;
}

bool IsTimedOutBeforeCommit(const Error& error) {
  return error.type == ErrorType::kInternalServerError && error.kv_code == kTransactionTimedOut;
}

namespace internal {

Status RunLoop(Database& db, const RunOptions& options, const AttemptBody& body) {
  Clock* clock = options.clock ? options.clock : Clock::Real();
  const auto deadline = options.deadline ? *options.deadline : clock->Now() + OperationTimeout();
  const int max_attempts = std::max(options.max_attempts, 1);
  auto& metrics = GetMetrics();

  std::unique_ptr<Transaction> tr = db.CreateTransaction();
  Attempt attempt;
  std::chrono::milliseconds backoff = options.initial_backoff;

  // The run cannot go on: report what may have happened, never a rollback when a commit may
  // have been applied.
  auto give_up_on_deadline = [&]() -> Error {
    if (attempt.maybe_committed) return OutcomeUnknown(kOutcomeUnknownMessage, attempt.number);
    return TimedOutBeforeCommit();
  };
  auto give_up_with = [&](Error last, std::string_view unknown_message) -> Error {
    if (attempt.maybe_committed) return OutcomeUnknown(unknown_message, attempt.number);
    return last;
  };

  for (;;) {
    auto remaining = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock->Now());
    if (remaining.count() <= 0) return give_up_on_deadline();
    tr->SetTimeout(remaining);
    metrics.attempts.Add();

    Error failure;
    Status result = body(*tr, attempt);
    if (!result.ok()) {
      failure = std::move(result).error();
      if (!failure.is_kv()) return failure;  // a domain error: the body decided
      if (failure.kv_code == kTransactionTimedOut) return give_up_on_deadline();
      CountError(failure.kv_code);
      if (!IsRetryable(failure.kv_code)) {
        return give_up_with(std::move(failure), kFailedOutcomeUnknownMessage);
      }
    } else {
      if (options.read_only) return {};
      Status commit = tr->Commit();
      if (commit.ok()) return {};
      failure = std::move(commit).error();
      if (!failure.is_kv()) return give_up_with(std::move(failure), kFailedOutcomeUnknownMessage);
      CountError(failure.kv_code);
      // The timeout fired with the commit in flight: it may have been applied.
      if (failure.kv_code == kTransactionTimedOut) {
        return OutcomeUnknown(kOutcomeUnknownMessage, attempt.number);
      }
      if (MaybeCommitted(failure.kv_code)) attempt.maybe_committed = true;
      if (!IsRetryable(failure.kv_code)) {
        return give_up_with(std::move(failure), kFailedOutcomeUnknownMessage);
      }
    }

    // A retryable failure: back off, then run the body again on a fresh transaction state.
    if (attempt.number >= max_attempts) {
      return give_up_with(std::move(failure), kRetryLimitOutcomeUnknownMessage);
    }
    auto pause = Jittered(backoff);
    backoff = std::min(backoff * 2, options.max_backoff);
    if (clock->Now() + pause >= deadline) return give_up_on_deadline();
    if (pause.count() > 0) {
      if (options.sleep) {
        options.sleep(pause);
      } else {
        std::this_thread::sleep_for(pause);
      }
    }
    tr->Reset();
    ++attempt.number;
  }
}

}  // namespace internal
}  // namespace fdyno::kv
