// Fault rules for applications (docs/testing-your-application.md): requests that match a rule
// lose their answer after the write committed, answer that the outcome is unknown (after a
// commit or without one), are throttled, meet a transaction conflict, find their token's
// transaction still in progress, fail with a server error, or are delayed. An application's
// retry and idempotency logic is then tested against the failures DynamoDB really has.
//
// A rule file is JSON: {"rules": [RULE, ...]}. A rule matches by operation(s), table(s),
// account(s) and optionally key attribute values; among the requests it matches it fires on every
// Nth ("every"), with a probability drawn from its own seeded generator ("probability", "seed"),
// and at most a number of times ("times"). Rules are tried in file order: a rule whose filters
// match counts the request; the first that fires acts, and the rules after it never see that
// request. Whether and how a rule fires is decided once, before the request runs.
//
// Every firing is logged (request id, rule, action) and counted in
// fdyno_faults_injected_total{rule,action}.
//
// Thread-safety: every method of FaultInjector may be called from any thread.
#pragma once

#include <rapidjson/document.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/metrics.h"
#include "base/result.h"

namespace fdyno::http {

enum class FaultAction {
  kLoseResponse,           // "lose-response-after-commit"
  kUnknownOutcome,         // "unknown-outcome"
  kThrottle,               // "throttle"
  kTransactionConflict,    // "transaction-conflict"
  kTransactionInProgress,  // "transaction-in-progress"
  kError,                  // "error"
  kLatency,                // "latency"
};
std::string_view FaultActionName(FaultAction action);

// How an answer is lost (lose-response-after-commit's "mode").
enum class LoseMode { kReset, kClose, kDelay };
// unknown-outcome's "committed": whether the write runs before the answer says it may not have.
enum class Committed { kYes, kNo, kRandom };

struct FaultRule {
  std::string name;
  std::vector<std::string> operations;  // empty: any
  std::vector<std::string> tables;      // empty: any
  std::vector<std::string> accounts;    // empty: any
  // Attribute name -> its value as DynamoDB JSON ({"S":"a"}), as written in the rule; a request
  // matches when one of its items or keys has every one of them (compared as JSON).
  std::vector<std::pair<std::string, std::string>> key;
  double probability = 1.0;
  uint64_t seed = 0;
  uint64_t every = 1;
  std::optional<uint64_t> times;
  FaultAction action = FaultAction::kError;
  LoseMode mode = LoseMode::kReset;
  std::chrono::milliseconds delay{0};  // kDelay's hold, latency's delay, the in-progress hold
  Committed committed = Committed::kYes;
  ErrorType error = ErrorType::kInternalServerError;  // throttle and error
  bool after_commit = false;  // latency: between the commit and the answer (else before)
};

// Parses a rule file. Errors are ValidationExceptions naming the rule and field.
Result<std::vector<FaultRule>> ParseFaultRules(std::string_view json);

// What the connection does with an answer once it is ready.
struct ResponseFault {
  enum class Drop { kNone, kReset, kClose };
  Drop drop = Drop::kNone;
  std::chrono::milliseconds hold{0};  // before sending (or dropping) it
};

// A request as the rules see it.
struct FaultRequest {
  std::string_view operation;
  std::string_view account;
  std::string_view request_id;
  const rapidjson::Value* body = nullptr;  // the parsed JSON object
};

class FaultInjector;

// What one request suffers, decided before it runs. Movable; releases what it holds (an
// in-progress token) when destroyed.
struct FaultDecision {
  FaultDecision() = default;
  FaultDecision(FaultDecision&&) noexcept;
  FaultDecision& operator=(FaultDecision&&) noexcept;
  ~FaultDecision();

  std::chrono::milliseconds delay_before{0};  // sleep this long first
  std::optional<Error> instead;               // answer this without running the request
  bool unknown_after = false;                 // run it, then answer that the outcome may be unknown
  ResponseFault response;

 private:
  friend class FaultInjector;
  FaultInjector* holder_ = nullptr;  // releases held_token_ on destruction
  std::string held_token_;
};

class FaultInjector {
 public:
  // Counts in `metrics` (null: Metrics::Global()).
  explicit FaultInjector(Metrics* metrics = nullptr);
  FaultInjector(const FaultInjector&) = delete;
  FaultInjector& operator=(const FaultInjector&) = delete;

  // Replaces every rule (their counters start again) with the file's; on error nothing changes.
  Status Replace(std::string_view json);
  void Clear();
  // The rules and, per rule, how many requests it matched and how often it fired, as JSON.
  std::string Describe() const;
  // Whether any rule is set (or a token is held): requests consult Decide only then.
  bool active() const { return active_.load(std::memory_order_relaxed); }

  // What `request` suffers; nullopt when no rule fires.
  std::optional<FaultDecision> Decide(const FaultRequest& request);

 private:
  friend struct FaultDecision;
  struct Live {
    FaultRule rule;
    std::mt19937_64 random;
    uint64_t matched = 0;
    uint64_t fired = 0;
    Counter* counter = nullptr;
  };
  bool Fires(Live& live);
  FaultDecision Act(Live& live, const FaultRequest& request, std::string_view token);
  void Release(const std::string& token);
  void UpdateActive();

  Metrics* metrics_;
  mutable std::mutex mu_;
  std::vector<Live> rules_;
  std::set<std::string> held_tokens_;  // account + '\n' + token of transactions held in flight
  std::atomic<bool> active_{false};
};

}  // namespace fdyno::http
