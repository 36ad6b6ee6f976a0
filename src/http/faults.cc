#include "http/faults.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "api/cancellation.h"
#include "api/json_util.h"
#include "kv/run.h"
#include "partiql/parser.h"

namespace fdyno::http {
namespace {

using Value = rapidjson::Value;

constexpr size_t kMaxRules = 100;
constexpr size_t kMaxNameBytes = 64;
constexpr int64_t kMaxDelayMs = 300'000;  // the longest operation timeout
// How long transaction-in-progress holds a transaction when the rule gives no delay_ms.
constexpr int64_t kDefaultHoldMs = 2'000;

constexpr std::string_view kActionNames[] = {
    "lose-response-after-commit", "unknown-outcome", "throttle", "transaction-conflict",
    "transaction-in-progress",    "error",           "latency"};

// DynamoDB's messages for the errors a rule may answer.
constexpr std::string_view kProvisionedMessage =
    "The level of configured provisioned throughput for the table was exceeded. Consider "
    "increasing your provisioning level with the UpdateTable API.";
constexpr std::string_view kThrottlingMessage = "Rate of requests exceeds the allowed throughput.";
constexpr std::string_view kRequestLimitMessage =
    "Throughput exceeds the current throughput limit for your account. Please contact AWS "
    "Support at https://aws.amazon.com/support request a limit increase";
constexpr std::string_view kConflictMessage = "Transaction is ongoing for the item";
constexpr std::string_view kInProgressMessage =
    "The transaction with the given request token is already in progress.";
constexpr std::string_view kInternalMessage = "Internal server error";
constexpr std::string_view kUnavailableMessage = "Service Unavailable";

// Operations that meet a conflict as TransactionConflictException, and those that meet it as a
// cancelled transaction.
constexpr std::string_view kSingleWrites[] = {"PutItem", "UpdateItem", "DeleteItem",
                                              "ExecuteStatement"};
constexpr std::string_view kTransactions[] = {"TransactWriteItems", "TransactGetItems",
                                              "ExecuteTransaction"};
// Operations whose ClientRequestToken a transaction-in-progress rule holds.
constexpr std::string_view kTokened[] = {"TransactWriteItems", "ExecuteTransaction"};

template <size_t N>
bool In(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

bool Has(const std::vector<std::string>& names, std::string_view name) {
  return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
}

std::string_view View(const Value& v) { return api::AsStringView(v); }

std::string Compact(const Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  v.Accept(w);
  return {buffer.GetString(), buffer.GetSize()};
}

// The member `name` of `object` (null when absent, JSON null, or `object` is no object).
const Value* Member(const Value& object, std::string_view name) {
  return object.IsObject() ? api::Member(object, name) : nullptr;
}

// ---- the rule file ---------------------------------------------------------------------------

// Reads one rule's fields, naming the rule in every error.
class RuleReader {
 public:
  RuleReader(const Value& object, size_t index) : object_(object), index_(index) {}

  Error Bad(std::string_view what) const {
    return Error::Validation("fault rule " + std::to_string(index_ + 1) +
                             (name_.empty() ? "" : " (\"" + name_ + "\")") + ": " +
                             std::string(what));
  }
  void set_name(std::string name) { name_ = std::move(name); }

  Result<std::optional<std::string>> String(std::string_view field) const {
    const Value* v = Member(object_, field);
    if (v == nullptr) return std::optional<std::string>();
    if (!v->IsString()) return Bad(std::string(field) + " must be a string");
    return std::optional<std::string>(std::string(View(*v)));
  }
  Result<std::vector<std::string>> Strings(std::string_view field) const {
    std::vector<std::string> out;
    const Value* v = Member(object_, field);
    if (v == nullptr) return out;
    if (!v->IsArray() || v->Empty()) {
      return Bad(std::string(field) + " must be a non-empty list of strings");
    }
    for (const Value& e : v->GetArray()) {
      if (!e.IsString()) return Bad(std::string(field) + " must be a list of strings");
      out.emplace_back(View(e));
    }
    return out;
  }
  Result<std::optional<uint64_t>> Count(std::string_view field, uint64_t min) const {
    const Value* v = Member(object_, field);
    if (v == nullptr) return std::optional<uint64_t>();
    if (!v->IsUint64() || v->GetUint64() < min) {
      return Bad(std::string(field) + " must be an integer of at least " + std::to_string(min));
    }
    return std::optional<uint64_t>(v->GetUint64());
  }

 private:
  const Value& object_;
  size_t index_;
  std::string name_;
};

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
           c == ':';
  });
}

constexpr std::string_view kFields[] = {
    "name",  "operations", "tables", "accounts", "key",       "probability", "seed", "every",
    "times", "action",     "mode",   "delay_ms", "committed", "error",       "when"};

Status ReadFilters(const RuleReader& r, const Value& object, FaultRule& rule) {
  FDYNO_ASSIGN_OR_RETURN(rule.operations, r.Strings("operations"));
  FDYNO_ASSIGN_OR_RETURN(rule.tables, r.Strings("tables"));
  FDYNO_ASSIGN_OR_RETURN(rule.accounts, r.Strings("accounts"));
  if (const Value* key = Member(object, "key")) {
    if (!key->IsObject() || key->MemberCount() == 0) {
      return r.Bad(
          "key must be an object of attribute names and values ({\"id\": {\"S\": "
          "\"a\"}})");
    }
    for (const auto& m : key->GetObject()) {
      if (!m.value.IsObject() || m.value.MemberCount() != 1) {
        return r.Bad("key's " + std::string(View(m.name)) +
                     " must be one DynamoDB attribute value ({\"S\": \"a\"})");
      }
      rule.key.emplace_back(std::string(View(m.name)), Compact(m.value));
    }
  }
  return {};
}

Status ReadTrigger(const RuleReader& r, const Value& object, FaultRule& rule) {
  if (const Value* p = Member(object, "probability")) {
    if (!p->IsNumber() || !(p->GetDouble() > 0) || p->GetDouble() > 1) {
      return r.Bad("probability must be a number above 0 and at most 1");
    }
    rule.probability = p->GetDouble();
  }
  FDYNO_ASSIGN_OR_RETURN(std::optional<uint64_t> seed, r.Count("seed", 0));
  rule.seed = seed.value_or(0);
  FDYNO_ASSIGN_OR_RETURN(std::optional<uint64_t> every, r.Count("every", 1));
  rule.every = every.value_or(1);
  FDYNO_ASSIGN_OR_RETURN(rule.times, r.Count("times", 0));
  FDYNO_ASSIGN_OR_RETURN(std::optional<uint64_t> delay, r.Count("delay_ms", 0));
  if (delay.value_or(0) > static_cast<uint64_t>(kMaxDelayMs)) {
    return r.Bad("delay_ms must be at most " + std::to_string(kMaxDelayMs));
  }
  rule.delay = std::chrono::milliseconds(static_cast<int64_t>(delay.value_or(0)));
  return {};
}

Result<ErrorType> ReadError(const RuleReader& r, std::optional<std::string> name,
                            std::initializer_list<ErrorType> allowed) {
  if (!name) return *allowed.begin();
  std::string list;
  for (ErrorType type : allowed) {
    if (WireType(type) == *name) return type;
    list += (list.empty() ? "" : ", ") + std::string(WireType(type));
  }
  return r.Bad("error must be one of " + list);
}

Status ReadLoseResponse(const RuleReader& r, FaultRule& rule) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> mode, r.String("mode"));
  if (!mode || *mode == "reset") {
    rule.mode = LoseMode::kReset;
  } else if (*mode == "close") {
    rule.mode = LoseMode::kClose;
  } else if (*mode == "delay") {
    rule.mode = LoseMode::kDelay;
    if (rule.delay.count() == 0) return r.Bad("mode delay needs delay_ms");
  } else {
    return r.Bad("mode must be reset, close or delay");
  }
  return {};
}

Status ReadCommitted(const RuleReader& r, const Value& object, FaultRule& rule) {
  const Value* c = Member(object, "committed");
  if (c == nullptr || c->IsTrue()) {
    rule.committed = Committed::kYes;
  } else if (c->IsFalse()) {
    rule.committed = Committed::kNo;
  } else if (c->IsString() && View(*c) == "random") {
    rule.committed = Committed::kRandom;
  } else {
    return r.Bad("committed must be true, false or \"random\"");
  }
  return {};
}

Status ReadOperationsFor(const RuleReader& r, FaultRule& rule) {
  if (rule.action == FaultAction::kTransactionConflict) {
    for (const std::string& op : rule.operations) {
      if (!In(kSingleWrites, op) && !In(kTransactions, op)) {
        return r.Bad(
            "transaction-conflict applies to PutItem, UpdateItem, DeleteItem, "
            "ExecuteStatement, TransactWriteItems, TransactGetItems and "
            "ExecuteTransaction, not " +
            op);
      }
    }
  }
  if (rule.action == FaultAction::kTransactionInProgress) {
    for (const std::string& op : rule.operations) {
      if (!In(kTokened, op)) {
        return r.Bad(
            "transaction-in-progress applies to TransactWriteItems and "
            "ExecuteTransaction, not " +
            op);
      }
    }
  }
  return {};
}

Status ReadAction(const RuleReader& r, const Value& object, FaultRule& rule) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> action, r.String("action"));
  if (!action) return r.Bad("action is required");
  auto it = std::find(std::begin(kActionNames), std::end(kActionNames), *action);
  if (it == std::end(kActionNames)) return r.Bad("unknown action " + *action);
  rule.action = static_cast<FaultAction>(it - std::begin(kActionNames));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> error, r.String("error"));
  switch (rule.action) {
    case FaultAction::kLoseResponse:
      return ReadLoseResponse(r, rule);
    case FaultAction::kUnknownOutcome:
      return ReadCommitted(r, object, rule);
    case FaultAction::kThrottle: {
      FDYNO_ASSIGN_OR_RETURN(
          rule.error, ReadError(r, error,
                                {ErrorType::kProvisionedThroughputExceeded, ErrorType::kThrottling,
                                 ErrorType::kRequestLimitExceeded}));
      return {};
    }
    case FaultAction::kError: {
      FDYNO_ASSIGN_OR_RETURN(
          rule.error,
          ReadError(r, error, {ErrorType::kInternalServerError, ErrorType::kServiceUnavailable}));
      return {};
    }
    case FaultAction::kLatency: {
      if (rule.delay.count() == 0) return r.Bad("latency needs delay_ms");
      FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> when, r.String("when"));
      if (when && *when != "before" && *when != "after") {
        return r.Bad("when must be before or after");
      }
      rule.after_commit = when && *when == "after";
      return {};
    }
    case FaultAction::kTransactionInProgress:
      if (rule.delay.count() == 0) rule.delay = std::chrono::milliseconds(kDefaultHoldMs);
      return ReadOperationsFor(r, rule);
    case FaultAction::kTransactionConflict:
      return ReadOperationsFor(r, rule);
  }
  return {};
}

Result<FaultRule> ReadRule(const Value& object, size_t index) {
  RuleReader r(object, index);
  if (!object.IsObject()) return r.Bad("a rule must be an object");
  FaultRule rule;
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> name, r.String("name"));
  rule.name = name.value_or("rule-" + std::to_string(index + 1));
  if (!ValidName(rule.name)) {
    return r.Bad("name must be 1 to 64 letters, digits or -_.:");
  }
  r.set_name(rule.name);
  for (const auto& m : object.GetObject()) {
    if (!In(kFields, View(m.name))) return r.Bad("unknown field " + std::string(View(m.name)));
  }
  FDYNO_RETURN_IF_ERROR(ReadFilters(r, object, rule));
  FDYNO_RETURN_IF_ERROR(ReadTrigger(r, object, rule));
  FDYNO_RETURN_IF_ERROR(ReadAction(r, object, rule));
  return rule;
}

// ---- what a request names --------------------------------------------------------------------

// The table a PartiQL statement reads or writes; empty when it does not parse.
std::string StatementTable(const Value* statement) {
  if (statement == nullptr || !statement->IsString()) return {};
  Result<partiql::ast::Statement> parsed = partiql::Parse(View(*statement));
  if (!parsed.ok()) return {};
  const partiql::ast::Target* target = nullptr;
  switch (parsed->kind) {
    case partiql::ast::Statement::Kind::kSelect:
    case partiql::ast::Statement::Kind::kExists:
      target = &parsed->select.from;
      break;
    case partiql::ast::Statement::Kind::kInsert:
      target = &parsed->insert.into;
      break;
    case partiql::ast::Statement::Kind::kUpdate:
      target = &parsed->update.table;
      break;
    case partiql::ast::Statement::Kind::kDelete:
      target = &parsed->del.from;
      break;
  }
  if (target == nullptr || target->components.empty()) return {};
  return target->components.front().name;
}

// Every table `body` names: TableName, the batches' RequestItems, the transactions' actions,
// the tables of PartiQL statements.
std::vector<std::string> TablesOf(const Value& body) {
  std::vector<std::string> tables;
  auto add = [&](const Value* v) {
    if (v != nullptr && v->IsString()) tables.emplace_back(View(*v));
  };
  add(Member(body, "TableName"));
  if (const Value* items = Member(body, "RequestItems"); items && items->IsObject()) {
    for (const auto& m : items->GetObject()) tables.emplace_back(View(m.name));
  }
  if (const Value* actions = Member(body, "TransactItems"); actions && actions->IsArray()) {
    for (const Value& action : actions->GetArray()) {
      if (!action.IsObject()) continue;
      for (const auto& kind : action.GetObject()) add(Member(kind.value, "TableName"));
    }
  }
  if (std::string t = StatementTable(Member(body, "Statement")); !t.empty()) tables.push_back(t);
  for (std::string_view list : {"Statements", "TransactStatements"}) {
    const Value* statements = Member(body, list);
    if (statements == nullptr || !statements->IsArray()) continue;
    for (const Value& s : statements->GetArray()) {
      if (std::string t = StatementTable(Member(s, "Statement")); !t.empty()) tables.push_back(t);
    }
  }
  return tables;
}

// An item or key of a request, with the index of its transaction action (0 outside one).
struct KeyOf {
  const Value* attributes;
  size_t action;
};

void AddItemAndKey(const Value& holder, size_t action, std::vector<KeyOf>& out) {
  for (std::string_view field : {"Key", "Item"}) {
    if (const Value* v = Member(holder, field); v && v->IsObject()) out.push_back({v, action});
  }
}

// The items and keys `body` carries: Key and Item, each BatchWriteItem request, each
// BatchGetItem key, each transaction action's.
std::vector<KeyOf> KeysOf(const Value& body) {
  std::vector<KeyOf> out;
  AddItemAndKey(body, 0, out);
  if (const Value* items = Member(body, "RequestItems"); items && items->IsObject()) {
    for (const auto& table : items->GetObject()) {
      if (table.value.IsArray()) {  // BatchWriteItem
        for (const Value& request : table.value.GetArray()) {
          if (const Value* put = Member(request, "PutRequest")) AddItemAndKey(*put, 0, out);
          if (const Value* del = Member(request, "DeleteRequest")) AddItemAndKey(*del, 0, out);
        }
      } else if (const Value* keys = Member(table.value, "Keys"); keys && keys->IsArray()) {
        for (const Value& key : keys->GetArray()) {
          if (key.IsObject()) out.push_back({&key, 0});
        }
      }
    }
  }
  if (const Value* actions = Member(body, "TransactItems"); actions && actions->IsArray()) {
    for (size_t i = 0; i < actions->Size(); ++i) {
      const Value& action = (*actions)[static_cast<rapidjson::SizeType>(i)];
      if (!action.IsObject()) continue;
      for (const auto& kind : action.GetObject()) AddItemAndKey(kind.value, i, out);
    }
  }
  return out;
}

// The first item or key of `body` that has every attribute of `key`.
std::optional<KeyOf> FindKey(const std::vector<std::pair<std::string, std::string>>& key,
                             const Value& body) {
  for (const KeyOf& candidate : KeysOf(body)) {
    bool all = std::all_of(key.begin(), key.end(), [&](const auto& attribute) {
      const Value* v = Member(*candidate.attributes, attribute.first);
      return v != nullptr && Compact(*v) == attribute.second;
    });
    if (all) return candidate;
  }
  return std::nullopt;
}

size_t ActionCount(const Value& body) {
  for (std::string_view list : {"TransactItems", "TransactStatements"}) {
    if (const Value* v = Member(body, list); v && v->IsArray()) return v->Size();
  }
  return 0;
}

// The ClientRequestToken of a tokened transaction, or "".
std::string_view TokenOf(const FaultRequest& request) {
  if (!In(kTokened, request.operation)) return {};
  const Value* token = Member(*request.body, "ClientRequestToken");
  return token != nullptr && token->IsString() ? View(*token) : std::string_view();
}

Error Conflict(const FaultRule& rule, const FaultRequest& request) {
  if (!In(kTransactions, request.operation)) {
    return Error::Make(ErrorType::kTransactionConflict, std::string(kConflictMessage));
  }
  const size_t n = std::max<size_t>(ActionCount(*request.body), 1);
  size_t conflicted = 0;
  if (!rule.key.empty()) {
    if (std::optional<KeyOf> found = FindKey(rule.key, *request.body)) conflicted = found->action;
  }
  std::vector<api::CancellationReason> reasons(n);
  reasons[std::min(conflicted, n - 1)] = {"TransactionConflict", std::string(kConflictMessage),
                                          std::nullopt};
  return api::TransactionCanceled(reasons);
}

std::string_view MessageOf(ErrorType type) {
  switch (type) {
    case ErrorType::kProvisionedThroughputExceeded:
      return kProvisionedMessage;
    case ErrorType::kThrottling:
      return kThrottlingMessage;
    case ErrorType::kRequestLimitExceeded:
      return kRequestLimitMessage;
    case ErrorType::kServiceUnavailable:
      return kUnavailableMessage;
    default:
      return kInternalMessage;
  }
}

}  // namespace

std::string_view FaultActionName(FaultAction action) {
  return kActionNames[static_cast<size_t>(action)];
}

Result<std::vector<FaultRule>> ParseFaultRules(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return Error::Validation("fault rules: not a JSON object ({\"rules\": [...]})");
  }
  const Value* rules = Member(doc, "rules");
  if (rules == nullptr || !rules->IsArray()) {
    return Error::Validation("fault rules: \"rules\" must be a list");
  }
  if (rules->Size() > kMaxRules) {
    return Error::Validation("fault rules: at most " + std::to_string(kMaxRules) + " rules");
  }
  std::vector<FaultRule> out;
  for (size_t i = 0; i < rules->Size(); ++i) {
    FDYNO_ASSIGN_OR_RETURN(FaultRule rule,
                           ReadRule((*rules)[static_cast<rapidjson::SizeType>(i)], i));
    for (const FaultRule& earlier : out) {
      if (earlier.name == rule.name) {
        return Error::Validation("fault rules: two rules are named " + rule.name);
      }
    }
    out.push_back(std::move(rule));
  }
  return out;
}

// ---- FaultDecision -------------------------------------------------------------------------

FaultDecision::FaultDecision(FaultDecision&& other) noexcept { *this = std::move(other); }

FaultDecision& FaultDecision::operator=(FaultDecision&& other) noexcept {
  if (this == &other) return *this;
  if (holder_ != nullptr) holder_->Release(held_token_);
  delay_before = other.delay_before;
  instead = std::move(other.instead);
  unknown_after = other.unknown_after;
  response = other.response;
  holder_ = std::exchange(other.holder_, nullptr);
  held_token_ = std::move(other.held_token_);
  return *this;
}

FaultDecision::~FaultDecision() {
  if (holder_ != nullptr) holder_->Release(held_token_);
}

// ---- FaultInjector ---------------------------------------------------------------------------

FaultInjector::FaultInjector(Metrics* metrics)
    : metrics_(metrics != nullptr ? metrics : &Metrics::Global()) {
  metrics_->Describe("fdyno_faults_injected_total",
                     "Faults injected by fault rules (--faults, /faults), by rule and action.");
}

Status FaultInjector::Replace(std::string_view json) {
  FDYNO_ASSIGN_OR_RETURN(std::vector<FaultRule> rules, ParseFaultRules(json));
  std::vector<Live> live;
  live.reserve(rules.size());
  for (FaultRule& rule : rules) {
    Counter* counter = &metrics_->GetCounter(
        "fdyno_faults_injected_total",
        {{"rule", rule.name}, {"action", std::string(FaultActionName(rule.action))}});
    std::mt19937_64 random(rule.seed);
    live.push_back({std::move(rule), random, 0, 0, counter});
  }
  std::lock_guard lock(mu_);
  rules_ = std::move(live);
  UpdateActive();
  return {};
}

void FaultInjector::Clear() {
  std::lock_guard lock(mu_);
  rules_.clear();
  UpdateActive();
}

void FaultInjector::UpdateActive() {
  active_.store(!rules_.empty() || !held_tokens_.empty(), std::memory_order_relaxed);
}

std::string FaultInjector::Describe() const {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  auto str = [&](std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  };
  std::lock_guard lock(mu_);
  w.StartObject();
  w.Key("rules");
  w.StartArray();
  for (const Live& live : rules_) {
    w.StartObject();
    w.Key("name");
    str(live.rule.name);
    w.Key("action");
    str(FaultActionName(live.rule.action));
    w.Key("matched");
    w.Uint64(live.matched);
    w.Key("fired");
    w.Uint64(live.fired);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

bool FaultInjector::Fires(Live& live) {
  ++live.matched;
  if (live.matched % live.rule.every != 0) return false;
  if (live.rule.times && live.fired >= *live.rule.times) return false;
  if (live.rule.probability < 1 &&
      std::uniform_real_distribution<double>(0, 1)(live.random) >= live.rule.probability) {
    return false;
  }
  ++live.fired;
  return true;
}

FaultDecision FaultInjector::Act(Live& live, const FaultRequest& request, std::string_view token) {
  const FaultRule& rule = live.rule;
  live.counter->Add();
  spdlog::info("fault injected: request {} rule {} action {}", request.request_id, rule.name,
               FaultActionName(rule.action));
  FaultDecision d;
  switch (rule.action) {
    case FaultAction::kLoseResponse:
      if (rule.mode == LoseMode::kDelay) {
        d.response.hold = rule.delay;
      } else {
        d.response.drop = rule.mode == LoseMode::kReset ? ResponseFault::Drop::kReset
                                                        : ResponseFault::Drop::kClose;
      }
      break;
    case FaultAction::kUnknownOutcome: {
      bool committed = rule.committed == Committed::kYes ||
                       (rule.committed == Committed::kRandom && (live.random() & 1) == 1);
      if (committed) {
        d.unknown_after = true;
      } else {
        d.instead = Error::Internal(std::string(kv::kOutcomeUnknownMessage));
      }
      break;
    }
    case FaultAction::kThrottle:
    case FaultAction::kError:
      d.instead = Error::Make(rule.error, std::string(MessageOf(rule.error)));
      break;
    case FaultAction::kTransactionConflict:
      d.instead = Conflict(rule, request);
      break;
    case FaultAction::kTransactionInProgress:
      d.delay_before = rule.delay;
      d.held_token_ = std::string(request.account) + '\n' + std::string(request.operation) + '\n' +
                      std::string(token);
      held_tokens_.insert(d.held_token_);
      d.holder_ = this;
      UpdateActive();
      break;
    case FaultAction::kLatency:
      (rule.after_commit ? d.response.hold : d.delay_before) = rule.delay;
      break;
  }
  return d;
}

std::optional<FaultDecision> FaultInjector::Decide(const FaultRequest& request) {
  std::optional<std::vector<std::string>> tables;  // looked up once, when a rule asks
  std::lock_guard lock(mu_);
  const std::string_view token = TokenOf(request);
  if (!token.empty() && !held_tokens_.empty() &&
      held_tokens_.count(std::string(request.account) + '\n' + std::string(request.operation) +
                         '\n' + std::string(token)) > 0) {
    spdlog::info("fault injected: request {} finds its token's transaction held in flight",
                 request.request_id);
    FaultDecision d;
    d.instead = Error::Make(ErrorType::kTransactionInProgress, std::string(kInProgressMessage));
    return d;
  }
  for (Live& live : rules_) {
    const FaultRule& rule = live.rule;
    if (!Has(rule.operations, request.operation) || !Has(rule.accounts, request.account)) {
      continue;
    }
    if (rule.action == FaultAction::kTransactionInProgress && token.empty()) continue;
    if (rule.action == FaultAction::kTransactionConflict && !In(kSingleWrites, request.operation) &&
        !In(kTransactions, request.operation)) {
      continue;
    }
    if (!rule.tables.empty()) {
      if (!tables) tables = TablesOf(*request.body);
      bool any = std::any_of(tables->begin(), tables->end(),
                             [&](const std::string& t) { return Has(rule.tables, t); });
      if (!any) continue;
    }
    if (!rule.key.empty() && !FindKey(rule.key, *request.body)) continue;
    if (Fires(live)) return Act(live, request, token);
  }
  return std::nullopt;
}

void FaultInjector::Release(const std::string& token) {
  std::lock_guard lock(mu_);
  held_tokens_.erase(token);
  UpdateActive();
}

}  // namespace fdyno::http
