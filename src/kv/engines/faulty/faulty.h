// The fault-injecting engine: wraps any engine and, driven by a seed, injects the failures a
// FoundationDB client sees, so that every claim about retries, receipts and idempotency can be
// tested:
//
// * 1020 not_committed at commit (nothing applied),
// * 1007 transaction_too_old on a read; later reads and the commit of that transaction fail
//   the same way until Reset, as with a real expired read version,
// * 1031 transaction_timed_out on a read, or at commit either before or after the inner
//   commit applied (a timeout racing a commit is ambiguous),
// * latency before reads and before or after the inner commit,
// * 1021 commit_unknown_result in both variants: the inner commit really applied, or not;
//   and a third that FoundationDB documents: the commit lands late, after the retry has taken
//   its read version. The wrapper keeps that attempt's inner transaction and commits it just
//   before the retry's own commit, so the retry read a state without it and must conflict on
//   whatever it read that the late commit wrote (its receipt or token record), or apply twice.
//
// CommitAsync meets the same faults as Commit, around the inner engine's own CommitAsync: a
// refusal (1020, 1021 not applied, 1031 before applying) answers at once on the calling
// thread, everything else when the inner commit answers. The wrapper commits asynchronously
// exactly when its inner engine does (Database::CommitsAsynchronously).
//
// It also honours SetTimeout on its own clock (FaultOptions::clock), so that a test with a
// ManualClock and injected latency sees 1031 exactly when the deadline passes.
//
// Determinism: each transaction draws from its own RNG seeded from (seed, creation counter), so
// a single-threaded run is reproducible from the seed. With every probability 0 the wrapper is
// transparent.
//
// Thread-safety: the Database is thread-safe (counters are atomic); a Transaction is used by
// one thread at a time. The inner database must outlive the wrapper when passed as a pointer.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "base/clock.h"
#include "kv/kv.h"

namespace fdyno::kv {

struct FaultOptions {
  uint64_t seed = 0;
  // Probabilities in [0, 1], each drawn independently where it applies.
  double commit_conflict = 0;      // commit: 1020 without applying
  double read_too_old = 0;         // read: 1007
  double read_timed_out = 0;       // read: 1031
  double commit_timed_out = 0;     // commit: 1031; half of these after applying
  double unknown_applied = 0;      // commit: applied, then 1021
  double unknown_not_applied = 0;  // commit: 1021 without applying
  double unknown_late = 0;         // commit: 1021; applied later, just before the retry's commit
  double latency = 0;              // read or commit: delayed by up to max_latency
  std::chrono::microseconds max_latency{2000};
  // Sleeps for injected latency. Null: std::this_thread::sleep_for. Tests with a ManualClock
  // pass a function that advances it.
  std::function<void(std::chrono::microseconds)> sleep;
  // Drives the emulated SetTimeout. Null: Clock::Real().
  Clock* clock = nullptr;
};

// What was injected so far.
struct FaultCounts {
  int64_t transactions = 0;
  int64_t commits_passed = 0;  // commits forwarded to the inner engine and reported as-is
  int64_t conflicts = 0;
  int64_t too_old = 0;
  int64_t read_timeouts = 0;
  int64_t commit_timeouts_applied = 0;
  int64_t commit_timeouts_not_applied = 0;
  int64_t unknown_applied = 0;
  int64_t unknown_not_applied = 0;
  int64_t unknown_late = 0;          // late commits answered 1021
  int64_t unknown_late_applied = 0;  // of them, committed before the retry's commit
  int64_t latencies = 0;
};

class FaultyDatabase : public Database {
 public:
  ~FaultyDatabase() override = default;
  // Replaces the fault probabilities for transactions created from now on (e.g. to load data
  // with faults off). The seed and counters are kept.
  virtual void SetOptions(const FaultOptions& options) = 0;
  virtual FaultCounts counts() const = 0;
};

// Wraps `inner`, which is not owned and must outlive the result.
std::unique_ptr<FaultyDatabase> WrapFaulty(Database* inner, const FaultOptions& options);
// Wraps `inner`, sharing its ownership.
std::unique_ptr<FaultyDatabase> WrapFaulty(std::shared_ptr<Database> inner,
                                           const FaultOptions& options);

}  // namespace fdyno::kv
