#include "workers/token_gc.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <utility>

#include "base/metrics.h"
#include "kv/run.h"
#include "store/layout.h"

namespace fdyno::workers {

std::optional<std::chrono::milliseconds> ParseGcDuration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  size_t unit_at = text.size();
  while (unit_at > 0 && std::isalpha(static_cast<unsigned char>(text[unit_at - 1]))) --unit_at;
  std::string number(text.substr(0, unit_at));
  std::string_view unit = text.substr(unit_at);
  if (number.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !(v >= 0) || v > 1e12) return std::nullopt;
  double ms_per_unit;
  if (unit.empty() || unit == "s") {
    ms_per_unit = 1000;
  } else if (unit == "ms") {
    ms_per_unit = 1;
  } else if (unit == "m") {
    ms_per_unit = 60'000;
  } else if (unit == "h") {
    ms_per_unit = 3'600'000;
  } else {
    return std::nullopt;
  }
  return std::chrono::milliseconds(static_cast<int64_t>(v * ms_per_unit));
}

Result<TokenGcOptions> TokenGcOptionsFromEnv() {
  TokenGcOptions options;
  if (const char* interval = std::getenv("DYNODB_TXN_TOKEN_GC_INTERVAL");
      interval != nullptr && *interval != '\0') {
    auto d = ParseGcDuration(interval);
    if (!d) {
      return Error::Validation(std::string("DYNODB_TXN_TOKEN_GC_INTERVAL: not a duration: ") +
                               interval);
    }
    options.interval = *d;
  }
  if (const char* scan = std::getenv("DYNODB_TXN_TOKEN_GC_MAX_SCAN");
      scan != nullptr && *scan != '\0') {
    char* end = nullptr;
    long long v = std::strtoll(scan, &end, 10);
    if (*end != '\0' || v <= 0 || v > 1'000'000) {
      return Error::Validation(
          std::string("DYNODB_TXN_TOKEN_GC_MAX_SCAN: not a positive integer up to 1000000: ") +
          scan);
    }
    options.max_scan = static_cast<int>(v);
  }
  return options;
}

TokenGc::TokenGc(kv::Database* db, store::TokenStore tokens, TokenGcOptions options)
    : db_(db),
      tokens_(std::move(tokens)),
      options_(options),
      periodic_(
          "fdyno-token-gc", options.interval, [this] { RunPassAndLog(); },
          /*run_first=*/false) {
  if (options_.clock == nullptr) options_.clock = Clock::Real();
  if (options_.max_scan <= 0) options_.max_scan = 1;
  max_scan_ = options_.max_scan;
  options_.lease.duration = std::max(options_.lease.duration, 3 * options_.interval);
  Metrics& m = Metrics::Global();
  m.Describe("txn_token_gc_passes", "Passes of the ClientRequestToken record GC.");
  m.Describe("txn_token_gc_deleted", "Expired ClientRequestToken records the GC removed.");
  m.Describe("txn_token_gc_malformed",
             "ClientRequestToken records the GC found malformed and kept (fail closed).");
}

void TokenGc::RunPassAndLog() {
  // Errors (an unavailable engine) are retried at the next interval; nothing is lost.
  Result<Stats> pass = RunPass();
  if (!pass.ok()) {
    if (auto left_out = error_log_.Allow()) {
      spdlog::warn("token GC pass failed: {} (retried in {} ms; {} such errors not logged)",
                   pass.error().message, options_.interval.count(), *left_out);
    }
    return;
  }
  if (pass->elsewhere) {
    spdlog::debug("token GC pass: another process holds the GC's lease");
    return;
  }
  // A pass that removed or found something is worth a line; an idle one is not.
  const auto level =
      pass->deleted + pass->malformed > 0 ? spdlog::level::info : spdlog::level::debug;
  spdlog::log(level,
              "token GC pass: {} record(s) examined, {} expired removed, {} malformed kept{}",
              pass->scanned, pass->deleted, pass->malformed,
              pass->wrapped ? ", end of the token records reached" : "");
}

TokenGc::~TokenGc() { Stop(); }

namespace {

// The pass did not fit in one engine transaction; one with fewer keys may.
bool TooLargeForOneTransaction(const Error& error) {
  return error.is_kv() && error.kv_code == kv::kTransactionTooLarge;
}

}  // namespace

Result<TokenGc::Stats> TokenGc::RunPass() {
  while (true) {
    Result<Stats> pass = RunTransaction(max_scan_);
    if (!pass.ok() && TooLargeForOneTransaction(pass.error()) && max_scan_ > 1) {
      const int before = max_scan_;
      max_scan_ = std::max(max_scan_ / 2, 1);
      const auto level = shrink_logged_ ? spdlog::level::debug : spdlog::level::warn;
      spdlog::log(level,
                  "token GC: a pass of {} record(s) is too large for one transaction ({}); "
                  "passes examine at most {} until the end of this round",
                  before, pass.error().message, max_scan_);
      shrink_logged_ = true;
      continue;
    }
    // A new round starts at full size: what was too large may have been collected.
    if (pass.ok() && pass->wrapped) max_scan_ = options_.max_scan;
    return pass;
  }
}

Result<TokenGc::Stats> TokenGc::RunTransaction(int max_scan) {
  const int64_t now_ms = options_.clock->WallMillis();
  kv::RunOptions run;
  run.clock = options_.clock;
  const std::string cursor_key = TokenGcCursorKey(tokens_);
  FDYNO_ASSIGN_OR_RETURN(
      Stats stats,
      kv::Run(*db_, run, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Stats> {
        Stats out;
        out.max_scan = max_scan;
        // The fence: this pass commits only while this owner holds the GC's lease.
        FDYNO_ASSIGN_OR_RETURN(bool held, store::TakeLease(tx, TokenGcLeaseKey(), options_.lease));
        if (!held) {
          out.elsewhere = true;
          return out;
        }
        FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> cursor, tx.Get(cursor_key));
        FDYNO_ASSIGN_OR_RETURN(store::TokenStore::GcPass pass,
                               tokens_.CollectExpired(tx, cursor.value_or(""), max_scan, now_ms));
        out.scanned = pass.scanned;
        out.deleted = pass.deleted;
        out.malformed = pass.malformed;
        out.wrapped = !pass.next.has_value();
        if (pass.next) {
          tx.Set(cursor_key, *pass.next);
        } else {
          tx.Clear(cursor_key);
        }
        return out;
      }));
  if (stats.elsewhere) return stats;
  Metrics& m = Metrics::Global();
  m.GetCounter("txn_token_gc_passes").Add();
  m.GetCounter("txn_token_gc_deleted").Add(stats.deleted);
  m.GetCounter("txn_token_gc_malformed").Add(stats.malformed);
  return stats;
}

void TokenGc::Start() { periodic_.Start(); }

void TokenGc::Stop() { periodic_.Stop(); }

std::string TokenGcLeaseKey() { return store::LeaseKey(kv::Tuple{"token_gc"}); }

std::string TokenGcCursorKey(const store::TokenStore& tokens) {
  return store::layout::Leases().Pack(
      kv::Tuple{"token_gc_cursor", kv::Bytes{tokens.subspace().key()}});
}

Result<std::unique_ptr<TokenGc>> StartTokenGcFromEnv(kv::Database* db, Clock* clock,
                                                     store::LeaseOptions lease) {
  FDYNO_ASSIGN_OR_RETURN(TokenGcOptions options, TokenGcOptionsFromEnv());
  options.clock = clock;
  if (lease.clock == nullptr) lease.clock = clock;
  options.lease = std::move(lease);
  if (options.interval.count() <= 0) return std::unique_ptr<TokenGc>();
  auto gc = std::make_unique<TokenGc>(db, store::TokenStore(store::layout::Tokens()), options);
  gc->Start();
  spdlog::info("token GC every {} ms, at most {} record(s) a pass", options.interval.count(),
               options.max_scan);
  return gc;
}

}  // namespace fdyno::workers
