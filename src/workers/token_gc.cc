#include "workers/token_gc.h"

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
      // Errors (an unavailable engine) are retried at the next interval; nothing is lost.
      periodic_(
          "fdyno-token-gc", options.interval, [this] { (void)RunPass(); },
          /*run_first=*/false) {
  if (options_.clock == nullptr) options_.clock = Clock::Real();
  if (options_.max_scan <= 0) options_.max_scan = 1;
}

TokenGc::~TokenGc() { Stop(); }

Result<TokenGc::Stats> TokenGc::RunPass() {
  const int64_t now_ms = options_.clock->WallMillis();
  kv::RunOptions run;
  run.clock = options_.clock;
  FDYNO_ASSIGN_OR_RETURN(store::TokenStore::GcPass pass,
                         kv::Run(*db_, run, [&](kv::Transaction& tx, const kv::Attempt&) {
                           return tokens_.CollectExpired(tx, cursor_, options_.max_scan, now_ms);
                         }));
  Stats stats;
  stats.scanned = pass.scanned;
  stats.deleted = pass.deleted;
  stats.malformed = pass.malformed;
  stats.wrapped = !pass.next.has_value();
  cursor_ = pass.next.value_or(std::string());
  Metrics& m = Metrics::Global();
  m.GetCounter("txn_token_gc_passes").Add();
  m.GetCounter("txn_token_gc_deleted").Add(stats.deleted);
  m.GetCounter("txn_token_gc_malformed").Add(stats.malformed);
  return stats;
}

void TokenGc::Start() { periodic_.Start(); }

void TokenGc::Stop() { periodic_.Stop(); }

Result<std::unique_ptr<TokenGc>> StartTokenGcFromEnv(kv::Database* db, Clock* clock) {
  FDYNO_ASSIGN_OR_RETURN(TokenGcOptions options, TokenGcOptionsFromEnv());
  options.clock = clock;
  if (options.interval.count() <= 0) return std::unique_ptr<TokenGc>();
  auto gc = std::make_unique<TokenGc>(db, store::TokenStore(store::layout::Tokens()), options);
  gc->Start();
  return gc;
}

}  // namespace fdyno::workers
