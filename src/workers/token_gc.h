// Token garbage collection: an optional background worker that removes expired
// ClientRequestToken records (store/tokens.h) so their storage stays bounded.
//
// Expiry never depends on it: a record older than its lifetime is treated as absent by every
// request whether or not it was collected. Each pass is one kv transaction that examines at
// most max_scan keys of the token subspace, resuming where the previous pass stopped and
// starting over after the end; records that fail closed (malformed, weak, unknown version)
// are never deleted, only counted, so an operator can inspect them.
//
// A pass too large for the engine (2101 transaction_too_large: its clears and conflict ranges
// pass 10 MB) commits nothing; the pass is tried again at once with half as many keys, down to
// one, and the smaller batch is kept until the end of the round (the next round starts at
// max_scan again). The first shrink is logged as a warning, later ones at debug.
//
// Several processes: one lease (store/leases.h, unit ("token_gc")) held across passes, and the
// cursor stored in the database (layout::Leases() + ("token_gc_cursor", token subspace prefix)),
// so that one process collects at a time, each record is examined once per round, and when the
// holder dies another process takes over where it stopped once the lease expires. The lease
// lasts options.lease.duration or three intervals, whichever is longer, so that it does not
// lapse between its holder's passes; that is the takeover bound.
//
// Configuration (TokenGcOptionsFromEnv):
//   DYNODB_TXN_TOKEN_GC_INTERVAL  time between passes: a number of seconds ("30", "0.5") or a
//                                 duration with a unit ("500ms", "30s", "5m", "1h"); unset or
//                                 0 disables the worker.
//   DYNODB_TXN_TOKEN_GC_MAX_SCAN  keys examined per pass, a positive integer (default 1000).
//
// Metrics: txn_token_gc_passes, txn_token_gc_deleted, txn_token_gc_malformed (exposed as
// fdyno_txn_token_gc_*_total). Lifecycle lines: one at start, one per pass that removed or
// found something (debug otherwise), a rate-limited warning per failed pass.
//
// Thread-safety: Start/Stop from one owner thread; RunPass is not to be called concurrently
// with the background thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/log_limiter.h"
#include "base/result.h"
#include "kv/kv.h"
#include "store/leases.h"
#include "store/tokens.h"
#include "workers/periodic.h"

namespace fdyno::workers {

struct TokenGcOptions {
  std::chrono::milliseconds interval{0};  // 0: disabled
  int max_scan = 1000;
  Clock* clock = nullptr;     // null: Clock::Real() (wall time decides expiry)
  store::LeaseOptions lease;  // who collects; its duration is raised to 3 intervals
};

// Reads the two environment variables. A malformed value is an error naming the variable.
Result<TokenGcOptions> TokenGcOptionsFromEnv();
// "30", "0.5", "500ms", "30s", "5m", "1h" -> milliseconds; nullopt when malformed or negative.
std::optional<std::chrono::milliseconds> ParseGcDuration(std::string_view text);

class TokenGc {
 public:
  struct Stats {
    int64_t scanned = 0;
    int64_t deleted = 0;
    int64_t malformed = 0;
    bool wrapped = false;    // this pass reached the end of the token subspace
    bool elsewhere = false;  // another owner holds the GC's lease: nothing was done
    int max_scan = 0;        // keys the committed transaction was allowed to examine
  };

  // `db` must outlive the worker.
  TokenGc(kv::Database* db, store::TokenStore tokens, TokenGcOptions options);
  ~TokenGc();  // stops the thread
  TokenGc(const TokenGc&) = delete;
  TokenGc& operator=(const TokenGc&) = delete;

  // One bounded pass (one committed transaction through kv::Run), under the GC's lease; a
  // transaction too large for the engine is tried again with half the keys (see above).
  Result<Stats> RunPass();

  // Starts the background thread (no-op when the interval is 0 or already started).
  void Start();
  // Stops it and waits for the current pass to finish.
  void Stop();

 private:
  // One pass, and its lifecycle line (or a rate-limited warning when it failed).
  void RunPassAndLog();
  // One transaction examining at most `max_scan` keys.
  Result<Stats> RunTransaction(int max_scan);

  kv::Database* db_;
  store::TokenStore tokens_;
  TokenGcOptions options_;
  int max_scan_ = 1;            // this round's batch: options_.max_scan, or less after a 2101
  bool shrink_logged_ = false;  // the first shrink is a warning, later ones debug
  LogLimiter error_log_{std::chrono::seconds(60)};
  Periodic periodic_;  // last: stopped before the rest is destroyed
};

// Wiring for main: reads the environment and, when an interval is set, returns a started
// worker over the database-wide token subspace (null when disabled). A malformed variable is
// an error the caller reports at start-up.
// `clock` (null: Clock::Real()) decides expiry and must outlive the worker.
// `lease`: who collects (its clock: `clock` when null).
Result<std::unique_ptr<TokenGc>> StartTokenGcFromEnv(kv::Database* db, Clock* clock = nullptr,
                                                     store::LeaseOptions lease = {});

// The keys of the GC's lease and of its cursor over `tokens`.
std::string TokenGcLeaseKey();
std::string TokenGcCursorKey(const store::TokenStore& tokens);

}  // namespace fdyno::workers
