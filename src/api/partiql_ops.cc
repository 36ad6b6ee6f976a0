#include "api/partiql_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/capacity_governor.h"
#include "api/item_keys.h"
#include "api/json_util.h"
#include "api/key_insights.h"
#include "api/query_pages.h"
#include "api/request_model.h"
#include "api/table_arn.h"
#include "expr/evaluate.h"
#include "kv/run.h"
#include "model/base64.h"
#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/json.h"
#include "model/key_codec.h"
#include "model/stored_json.h"
#include "partiql/parser.h"
#include "partiql/statement_cache.h"
#include "store/items.h"
#include "store/ttl.h"

namespace fdyno::api {
namespace {

using model::AttributeValue;
using model::Item;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// How long a NextToken stays valid.
constexpr int64_t kTokenLifetimeMs = 60 * 60 * 1000;
constexpr size_t kMaxNextTokenBytes = 32768;

// ---- the request ---------------------------------------------------------------------------

struct StatementRequest {
  std::string statement;
  partiql::Parameters parameters;
  bool consistent_read = false;
  std::optional<std::string> next_token;
  int64_t limit = 0;  // 0: none
  ReturnConsumedCapacity return_consumed_capacity = ReturnConsumedCapacity::kNone;
  bool return_old_on_condition_failure = false;
};

using request::Check;
using request::Read;
using request::Rule;
using Value = rapidjson::Value;

// The members of ExecuteStatement and of one statement of BatchExecuteStatement and
// ExecuteTransaction.
struct StatementMembers {
  const Value* statement = nullptr;
  const Value* parameters = nullptr;
  const Value* consistent_read = nullptr;
  const Value* next_token = nullptr;
  const Value* rcc = nullptr;
  const Value* limit = nullptr;
  const Value* rvocf = nullptr;
};
using M = StatementMembers;

constexpr Read<M> kStatement{"Statement", &M::statement, JsonShape::kString};
constexpr Read<M> kParameters{
    "Parameters", &M::parameters, JsonShape::kList, {}, request::AttributeValueElements};
constexpr Read<M> kConsistentRead{"ConsistentRead", &M::consistent_read, JsonShape::kBoolean};
constexpr Read<M> kReturnOnFailure{"ReturnValuesOnConditionCheckFailure", &M::rvocf,
                                   JsonShape::kString};
constexpr Read<M> kExecuteStatementReads[] = {
    kStatement,
    kParameters,
    kConsistentRead,
    {"NextToken", &M::next_token, JsonShape::kString},
    {"ReturnConsumedCapacity", &M::rcc, JsonShape::kString},
    {"Limit", &M::limit, JsonShape::kInteger},
    kReturnOnFailure};
// BatchStatementRequest and ParameterizedStatement.
constexpr Read<M> kListedStatementReads[] = {kStatement, kParameters, kConsistentRead,
                                             kReturnOnFailure};

constexpr std::array<Check<M>, 4> kStatementChecks = {
    request::NotNull(&M::statement, "statement"),
    request::Bound(&M::statement, "statement", Rule::kMinLength, 1),
    request::Bound(&M::statement, "statement", Rule::kMaxLength, partiql::kMaxStatementBytes),
    request::NotEmptyListQuoted(&M::parameters, "parameters")};
constexpr Check<M> kReturnOnFailureCheck =
    request::Enum(&M::rvocf, "returnValuesOnConditionCheckFailure",
                  request::kReturnValuesOnConditionCheckFailure);
constexpr auto kExecuteStatementChecks = request::Join(
    kStatementChecks,
    std::array{request::Bound(&M::next_token, "nextToken", Rule::kMinLength, 1),
               request::Bound(&M::next_token, "nextToken", Rule::kMaxLength, kMaxNextTokenBytes),
               request::Enum(&M::rcc, "returnConsumedCapacity", request::kReturnConsumedCapacity),
               request::Bound(&M::limit, "limit", Rule::kMinValue, 1), kReturnOnFailureCheck});
constexpr auto kListedStatementChecks =
    request::Join(kStatementChecks, std::array{kReturnOnFailureCheck});

Result<partiql::Parameters> DecodeParameters(const Value* params) {
  partiql::Parameters out;
  if (params == nullptr) return out;
  for (const auto& v : params->GetArray()) {
    FDYNO_ASSIGN_OR_RETURN(AttributeValue value, model::DecodeAttributeValue(v));
    out.push_back(std::move(value));
  }
  return out;
}

Result<StatementRequest> DecodeRequest(const Value& body) {
  StatementMembers m;
  FDYNO_RETURN_IF_ERROR(request::ReadMembers<M>(body, kExecuteStatementReads, m));
  FDYNO_RETURN_IF_ERROR(request::CheckMembers<M>(kExecuteStatementChecks, m));
  StatementRequest r;
  r.statement = std::string(AsStringView(*m.statement));
  FDYNO_ASSIGN_OR_RETURN(r.parameters, DecodeParameters(m.parameters));
  r.consistent_read = request::Flag(m.consistent_read).value_or(false);
  if (m.next_token) r.next_token = std::string(AsStringView(*m.next_token));
  r.limit = request::Number(m.limit).value_or(0);
  FDYNO_ASSIGN_OR_RETURN(r.return_consumed_capacity,
                         ParseReturnConsumedCapacity(request::Text(m.rcc)));
  r.return_old_on_condition_failure = request::Text(m.rvocf) == "ALL_OLD";
  return r;
}

// ---- NextToken -----------------------------------------------------------------------------

// FNV-1a over the account, the statement and the parameters: what a token belongs to.
uint64_t RequestHash(const RequestContext& ctx, const StatementRequest& r) {
  uint64_t h = 14695981039346656037ull;
  auto mix = [&h](std::string_view bytes) {
    for (unsigned char c : bytes) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;  // a separator no text contains
    h *= 1099511628211ull;
  };
  mix(ctx.account_id);
  mix(r.statement);
  for (const AttributeValue& v : r.parameters) mix(model::AttributeValueToJson(v));
  return h;
}

std::string HashText(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string EncodeToken(uint64_t hash, int64_t issued_ms, const Item& key) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("v");
  w.Int(1);
  w.Key("h");
  std::string h = HashText(hash);
  w.String(h.data(), static_cast<rapidjson::SizeType>(h.size()));
  w.Key("t");
  w.Int64(issued_ms);
  w.Key("k");
  model::WriteItem(w, key);
  w.EndObject();
  return model::Base64Encode(std::string_view(buffer.GetString(), buffer.GetSize()));
}

// The key a NextToken resumes after.
Result<Item> DecodeToken(const RequestContext& ctx, Clock& clock, const StatementRequest& r,
                         const std::string& token) {
  const Error invalid = Error::Validation("Invalid NextToken");
  std::optional<std::string> json = model::Base64Decode(token);
  if (!json) return invalid;
  rapidjson::Document doc;
  doc.Parse(json->data(), json->size());
  if (doc.HasParseError() || !doc.IsObject()) return invalid;
  const rapidjson::Value* v = Member(doc, "v");
  const rapidjson::Value* h = Member(doc, "h");
  const rapidjson::Value* t = Member(doc, "t");
  const rapidjson::Value* k = Member(doc, "k");
  if (!v || !v->IsInt() || v->GetInt() != 1 || !h || !h->IsString() || !t || !t->IsInt64() || !k ||
      !k->IsObject()) {
    return invalid;
  }
  Result<Item> key = model::DecodeItem(*k);
  if (!key.ok()) return invalid;
  if (AsStringView(*h) != HashText(RequestHash(ctx, r))) {
    return Error::Validation("NextToken does not match request");
  }
  // "t" is whatever the client sent: no subtraction of it, which could overflow.
  if (t->GetInt64() <= clock.WallMillis() - kTokenLifetimeMs) {
    return Error::Validation("Given NextToken has already expired");
  }
  return std::move(key).value();
}

// ---- planning ------------------------------------------------------------------------------

partiql::IndexSchema IndexSchemaOf(const store::SecondaryIndex& i, bool global) {
  partiql::IndexSchema out;
  out.name = i.name;
  out.global = global;
  out.key_schema = i.key_schema;
  switch (i.projection.type) {
    case store::ProjectionType::kAll:
      out.projection = partiql::IndexSchema::Projection::kAll;
      break;
    case store::ProjectionType::kKeysOnly:
      out.projection = partiql::IndexSchema::Projection::kKeysOnly;
      break;
    case store::ProjectionType::kInclude:
      out.projection = partiql::IndexSchema::Projection::kInclude;
      break;
  }
  out.non_key_attributes = i.projection.non_key_attributes;
  out.readable = i.status == store::IndexStatus::kActive && !i.backfilling;
  return out;
}

// ---- reading -------------------------------------------------------------------------------

struct ReadServices {
  kv::Database* db = nullptr;
  store::Catalog* catalog = nullptr;
  Clock* clock = nullptr;
  PartiqlOptions options;
  mutable partiql::StatementCache statements;
  CapacityGovernor* capacity = nullptr;  // --enforce-capacity (Services::capacity)
  KeyInsights* insights = nullptr;       // Contributor Insights (Services::insights)
};

// What a SELECT read: the items (JSON objects joined by commas) and what to render after.
struct ReadResult {
  rapidjson::StringBuffer items{nullptr, 4 << 10};
  std::optional<Item> last_key;
  ConsumedCapacity consumed;
  // --enforce-capacity: the table read and its partition (empty: none), to charge.
  std::shared_ptr<const store::TableInfo> charged;
  std::string partition;
  // Contributor Insights: the table, the index read (empty: the table) and the keys read.
  std::shared_ptr<const store::TableInfo> counted;
  std::string counted_index;
  std::vector<Item> read_keys;
};

// --enforce-capacity: whether `plan` may read `table` now (a point read or a Query of the
// table: its partition too); remembers what to charge in `out`.
Status AdmitRead(const ReadServices& s, const RequestContext& ctx,
                 const std::shared_ptr<const store::TableInfo>& table,
                 const partiql::ReadPlan& plan, ReadResult& out) {
  if (s.capacity == nullptr) return Status::Ok();
  if (plan.access == partiql::ReadPlan::Access::kGet &&
      plan.key.contains(table->key_schema.hash.name)) {
    out.partition = PartitionOf(*table, plan.key);
  } else if (plan.access == partiql::ReadPlan::Access::kQuery && plan.index == nullptr) {
    out.partition = model::EncodeKeyValue(plan.key_condition.hash_value);
  }
  const std::string index = plan.index ? plan.index->name : "";
  Status admitted = s.capacity->Admit(ctx.region, *table, Draw::Read(out.partition, index));
  if (!admitted.ok() && plan.access == partiql::ReadPlan::Access::kGet) {
    CountThrottle(s.insights, *table, "", plan.key);
  } else if (!admitted.ok() && plan.access == partiql::ReadPlan::Access::kQuery) {
    CountThrottle(s.insights, *table, index,
                  Item{{plan.key_condition.hash_name, plan.key_condition.hash_value}});
  }
  FDYNO_RETURN_IF_ERROR(admitted);
  out.charged = table;
  return Status::Ok();
}

// Debits what a SELECT read (--enforce-capacity).
void ChargeRead(const ReadServices& s, const ReadResult& read) {
  if (s.capacity != nullptr && read.charged) {
    s.capacity->Charge(*read.charged, read.consumed, read.partition);
  }
  if (read.counted) {
    for (const Item& key : read.read_keys) {
      CountAccess(s.insights, *read.counted, read.counted_index, key);
    }
  }
}

// A point read: GetItem's read, then the statement's filter and projection.
// An item whose TTL has expired (at `now_ms`) is hidden, as GetItem hides it.
Status ReadPoint(kv::Transaction& tx, const store::TableInfo& table, const partiql::ReadPlan& plan,
                 bool consistent, int64_t now_ms, ReadResult& out) {
  FDYNO_RETURN_IF_ERROR(ValidateKey(table.key_schema, plan.key));
  FDYNO_ASSIGN_OR_RETURN(std::optional<store::StoredItem> stored,
                         store::ReadItem(tx, StorageKey(table, plan.key)));
  if (stored) {
    FDYNO_ASSIGN_OR_RETURN(bool expired, store::StoredItemExpired(table, stored->image, now_ms));
    if (expired) stored.reset();
  }
  uint64_t size = 0;
  if (stored) {
    if (out.counted) out.read_keys.push_back(plan.key);
    if (!plan.filter && plan.all_attributes) {
      // Straight from the stored bytes, as GetItem does.
      FDYNO_ASSIGN_OR_RETURN(size, model::WriteStoredItemJson(stored->image, out.items));
    } else {
      FDYNO_ASSIGN_OR_RETURN(Item item, model::DecodeStoredItem(stored->image));
      size = model::ItemSize(item);
      if (!plan.filter || expr::EvaluateCondition(*plan.filter, item)) {
        Writer w(out.items);
        model::WriteItem(w, partiql::ProjectOutput(item, plan));
      }
    }
  }
  out.consumed.table_units = ReadUnits(size, consistent);
  return Status::Ok();
}

// A Query or Scan page of the table or index.
Status ReadPages(const ReadServices& s, kv::Transaction& tx,
                 std::shared_ptr<const store::TableInfo> table, const partiql::ReadPlan& plan,
                 const StatementRequest& r, const std::optional<Item>& start, ReadResult& out,
                 InlineBound* bound) {
  const store::SecondaryIndex* index = plan.index ? table->FindIndex(plan.index->name) : nullptr;
  PageTarget t = MakePageTarget(std::move(table), index);
  const bool query = plan.access == partiql::ReadPlan::Access::kQuery;
  std::string begin, end;
  if (query) {
    FDYNO_ASSIGN_OR_RETURN(auto range, QueryRange(t, plan.key_condition));
    std::tie(begin, end) = std::move(range);
  } else {
    std::tie(begin, end) = t.subspace.Range();
  }
  const bool forward = !query || plan.forward;
  if (start) {
    FDYNO_RETURN_IF_ERROR(ValidateStartKey(*t.table, t.index, *start, query));
    std::string entry = StartKeyEntry(t, *start);
    if (query && !plan.key_condition.range) {
      FDYNO_RETURN_IF_ERROR(CheckStartKeyInPartition(t, plan.key_condition, *start));
    } else if (query) {
      FDYNO_RETURN_IF_ERROR(
          CheckStartKeyInRange(begin, end, entry, forward, plan.key_condition.range->op));
    }
    if (forward) {
      begin = std::max(begin, store::ItemRangeEnd(entry));
    } else {
      end = std::min(end, entry);
    }
  }
  PageSpec spec;
  spec.limit = r.limit;
  spec.forward = forward;
  spec.fetch_base = plan.fetch_base;
  spec.filter = plan.filter ? &*plan.filter : nullptr;
  spec.now_ms = s.clock->WallMillis();
  spec.keep_read_keys = out.counted != nullptr;
  if (!plan.all_attributes) {
    spec.output = [&plan](const Item& item) { return partiql::ProjectOutput(item, plan); };
  }
  PageOutput page;
  FDYNO_RETURN_IF_ERROR(ReadRange(s.options.pages, tx, spec, t, begin, end, page, bound));
  out.items = std::move(page.items);
  out.last_key = std::move(page.last_key);
  out.read_keys = std::move(page.read_keys);
  AddPageReadUnits(page, r.consistent_read, out.consumed);
  return Status::Ok();
}

// One request, decoded and parsed, and bound unless its point-read template serves it.
struct StatementJob {
  StatementRequest r;
  std::shared_ptr<const partiql::PreparedStatement> prepared;
  std::optional<partiql::BoundStatement> bound;  // unset: prepared->point_read serves the read

  bool is_read() const { return !bound || bound->is_read(); }
  const std::string& table() const { return bound ? bound->table() : prepared->point_read->table; }
};

// The table a statement names, as a transaction sees it, and the statement's plan on it.
struct Planned {
  std::shared_ptr<const store::TableInfo> table;
  partiql::TableSchema schema;
  partiql::Plan plan;  // may point into `schema`
};

Result<std::unique_ptr<const Planned>> PlanOn(const ReadServices& s, kv::Transaction& tx,
                                              store::TableScope scope, const StatementJob& job,
                                              bool consistent_read = false) {
  auto out = std::make_unique<Planned>();
  FDYNO_ASSIGN_OR_RETURN(out->table, FindActiveTable(*s.catalog, tx, scope, job.table()));
  if (!job.bound) {
    std::optional<partiql::ReadPlan> point =
        partiql::Instantiate(*job.prepared->point_read, out->table->key_schema, job.r.parameters);
    if (point) {
      out->plan.read = std::move(*point);
      return std::unique_ptr<const Planned>(std::move(out));
    }
  }
  // Binding cannot fail here when the template was taken: its statement bound with stand-ins,
  // and no check of a key equality looks at the value.
  std::optional<partiql::BoundStatement> bound;
  if (!job.bound) {
    FDYNO_ASSIGN_OR_RETURN(bound, partiql::Bind(job.prepared->tree, job.r.parameters));
  }
  out->schema = SchemaOf(*out->table);
  partiql::PlanOptions options;
  options.consistent_read = consistent_read;
  FDYNO_ASSIGN_OR_RETURN(
      out->plan, partiql::PlanStatement(job.bound ? *job.bound : *bound, out->schema, options));
  return std::unique_ptr<const Planned>(std::move(out));
}

// Reads and renders a SELECT. With `inline_bound`: gives up past inline_bound->bytes of a page
// (a point read is never bounded: it reads one item, as GetItem does on the network thread).
Result<std::string> RunSelect(const ReadServices& s, const RequestContext& ctx,
                              const StatementJob& job, InlineBound* inline_bound) {
  const StatementRequest& r = job.r;
  std::optional<Item> start;
  if (r.next_token) {
    FDYNO_ASSIGN_OR_RETURN(start, DecodeToken(ctx, *s.clock, r, *r.next_token));
  }
  FDYNO_ASSIGN_OR_RETURN(
      std::shared_ptr<ReadResult> result,
      kv::Run(*s.db, PageRunOptions(ctx, s.clock, inline_bound),
              [&](kv::Transaction& tx, const kv::Attempt&) -> Result<std::shared_ptr<ReadResult>> {
                FDYNO_ASSIGN_OR_RETURN(std::unique_ptr<const Planned> p,
                                       PlanOn(s, tx, CallerScope(ctx), job, r.consistent_read));
                auto out = std::make_shared<ReadResult>();
                out->consumed.table_name = p->table->name;
                const partiql::ReadPlan& plan = p->plan.read;
                if (s.insights != nullptr && p->table->CountsKeyAccesses()) {
                  out->counted = p->table;
                  if (plan.index) out->counted_index = plan.index->name;
                }
                FDYNO_RETURN_IF_ERROR(AdmitRead(s, ctx, p->table, plan, *out));
                if (plan.access == partiql::ReadPlan::Access::kGet) {
                  FDYNO_RETURN_IF_ERROR(ReadPoint(tx, *p->table, plan, r.consistent_read,
                                                  s.clock->WallMillis(), *out));
                } else {
                  FDYNO_RETURN_IF_ERROR(
                      ReadPages(s, tx, p->table, plan, r, start, *out, inline_bound));
                }
                return out;
              }));
  ChargeRead(s, *result);
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("Items");
  w.StartArray();
  if (result->items.GetSize() > 0) {
    w.RawValue(result->items.GetString(), result->items.GetSize(), rapidjson::kObjectType);
  }
  w.EndArray();
  if (result->last_key) {
    std::string token = EncodeToken(RequestHash(ctx, r), s.clock->WallMillis(), *result->last_key);
    w.Key("NextToken");
    w.String(token.data(), static_cast<rapidjson::SizeType>(token.size()));
  }
  WriteConsumedCapacity(w, r.return_consumed_capacity, result->consumed);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

// ---- writing -------------------------------------------------------------------------------

// The answer to a write statement when no PartiqlWriter is configured.
constexpr std::string_view kWritesRefused =
    "Unsupported operation: PartiQL INSERT, UPDATE and DELETE are not executed by this server";

Result<std::string> RunWrite(const ReadServices& s, const RequestContext& ctx,
                             const StatementJob& job) {
  const StatementRequest& r = job.r;
  const partiql::BoundStatement& bound = *job.bound;
  if (!s.options.write) {
    // Everything that can be checked without the mutation path is, so a statement answers its
    // validation error; a valid one is refused.
    FDYNO_RETURN_IF_ERROR(kv::Run(*s.db, PageRunOptions(ctx, s.clock, nullptr),
                                  [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                                    FDYNO_ASSIGN_OR_RETURN(std::unique_ptr<const Planned> p,
                                                           PlanOn(s, tx, CallerScope(ctx), job));
                                    return Status::Ok();
                                  }));
    return Error::Validation(std::string(kWritesRefused));
  }
  PartiqlWriteRequest w;
  w.statement = &bound;
  w.plan = [&bound](const store::TableInfo& table) -> Result<partiql::WritePlan> {
    FDYNO_ASSIGN_OR_RETURN(partiql::Plan plan,
                           partiql::PlanStatement(bound, SchemaOf(table), partiql::PlanOptions{}));
    return std::move(plan.write);
  };
  w.return_old_on_condition_failure = r.return_old_on_condition_failure;
  w.return_consumed_capacity = r.return_consumed_capacity;
  FDYNO_ASSIGN_OR_RETURN(PartiqlWriteOutcome outcome, s.options.write(ctx, w));
  rapidjson::StringBuffer buffer;
  Writer out(buffer);
  out.StartObject();
  out.Key("Items");
  out.StartArray();
  if (outcome.returned && !outcome.returned->empty()) model::WriteItem(out, *outcome.returned);
  out.EndArray();
  WriteConsumedCapacity(out, r.return_consumed_capacity, outcome.consumed);
  out.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

Result<std::shared_ptr<const StatementJob>> Prepare(const ReadServices& s,
                                                    const rapidjson::Value& body) {
  auto job = std::make_shared<StatementJob>();
  FDYNO_ASSIGN_OR_RETURN(job->r, DecodeRequest(body));
  FDYNO_ASSIGN_OR_RETURN(job->prepared, s.statements.Prepare(job->r.statement));
  const partiql::ast::Statement& tree = job->prepared->tree;
  if (tree.kind == partiql::ast::Statement::Kind::kExists) {
    return Error::Validation("EXISTS can only be used in ExecuteTransaction write requests.");
  }
  const auto& point = job->prepared->point_read;
  if (!point || point->param_count != job->r.parameters.size()) {
    FDYNO_ASSIGN_OR_RETURN(job->bound, partiql::Bind(tree, job->r.parameters));
  }
  return std::shared_ptr<const StatementJob>(std::move(job));
}

Result<std::string> Execute(const ReadServices& s, const StatementJob& job,
                            const RequestContext& ctx, InlineBound* bound) {
  if (job.is_read()) return RunSelect(s, ctx, job, bound);
  return RunWrite(s, ctx, job);
}

// The asynchronous form, for a network thread: a SELECT whose page stays within
// inline_page_bytes (or a point read) is read and answered right there, as GetItem is; a larger
// page, an attempt that meets a retryable engine error, or a write is run again, whole, on
// ctx.blocking (a worker). Reads have no effect, so nothing of an abandoned try shows.
void ExecuteStatementAsync(std::shared_ptr<const ReadServices> s, const RequestContext& ctx,
                           const rapidjson::Value& body, Respond respond) {
  Result<std::shared_ptr<const StatementJob>> prepared = Prepare(*s, body);
  if (!prepared.ok()) return respond(std::move(prepared).error());
  std::shared_ptr<const StatementJob> job = std::move(prepared).value();
  if (!ctx.blocking) return respond(Execute(*s, *job, ctx, nullptr));
  if (job->is_read() && s->options.pages.inline_page_bytes > 0) {
    InlineBound bound{s->options.pages.inline_page_bytes};
    Result<std::string> page = RunSelect(*s, ctx, *job, &bound);
    if (page.ok() || !(bound.exceeded || page.error().is_kv())) return respond(std::move(page));
  }
  ctx.blocking(
      [s, job, ctx, respond = std::move(respond)] { respond(Execute(*s, *job, ctx, nullptr)); });
}

// ---- BatchExecuteStatement ---------------------------------------------------------------

constexpr size_t kMaxBatchStatements = 25;

struct BatchRequest {
  std::vector<StatementRequest> statements;
  ReturnConsumedCapacity return_consumed_capacity = ReturnConsumedCapacity::kNone;
};

Result<BatchRequest> DecodeBatchRequest(const rapidjson::Value& body) {
  FDYNO_RETURN_IF_ERROR(RequireObjectBody(body));
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* statements, GetList(body, "Statements"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> rcc,
                         GetString(body, "ReturnConsumedCapacity"));
  BatchRequest r;
  ConstraintErrors errors;
  std::vector<StatementMember> members;
  FDYNO_RETURN_IF_ERROR(
      DecodeStatementList(statements, "statements", kMaxBatchStatements, errors, members));
  for (StatementMember& m : members) {
    StatementRequest& out = r.statements.emplace_back();
    out.statement = std::move(m.statement);
    out.parameters = std::move(m.parameters);
    out.consistent_read = m.consistent_read;
    out.return_old_on_condition_failure = m.return_old_on_condition_failure;
  }
  if (rcc) errors.Enum("returnConsumedCapacity", *rcc, request::kReturnConsumedCapacity);
  FDYNO_RETURN_IF_ERROR(errors.ToStatus());
  FDYNO_ASSIGN_OR_RETURN(r.return_consumed_capacity, ParseReturnConsumedCapacity(rcc));
  return r;
}

// The Code of a statement's Error in a batch response (BatchStatementErrorCodeEnum).
std::string_view BatchErrorCode(const Error& e) {
  switch (e.type) {
    case ErrorType::kConditionalCheckFailed:
      return "ConditionalCheckFailed";
    case ErrorType::kDuplicateItem:
      return "DuplicateItem";
    case ErrorType::kItemCollectionSizeLimitExceeded:
      return "ItemCollectionSizeLimitExceeded";
    case ErrorType::kResourceNotFound:
      return "ResourceNotFound";
    case ErrorType::kValidation:
      return "ValidationError";
    case ErrorType::kTransactionConflict:
      return "TransactionConflict";
    case ErrorType::kProvisionedThroughputExceeded:
      return "ProvisionedThroughputExceeded";
    case ErrorType::kRequestLimitExceeded:
      return "RequestLimitExceeded";
    case ErrorType::kThrottling:
      return "ThrottlingError";
    case ErrorType::kAccessDenied:
      return "AccessDenied";
    default:
      return "InternalServerError";
  }
}

// What one statement of a batch answered.
struct BatchAnswer {
  std::optional<Error> error;
  std::string table;      // empty for a member rejected before it ran (no TableName)
  std::string item_json;  // a read's item, or a write's RETURNING item, as a JSON object
  ConsumedCapacity consumed;
};

// A batch SELECT: a point read of the whole key (partiql::Use::kBatch), as GetItem.
BatchAnswer BatchRead(const ReadServices& s, const RequestContext& ctx, const StatementJob& job) {
  BatchAnswer a;
  Result<std::shared_ptr<ReadResult>> read =
      kv::Run(*s.db, PageRunOptions(ctx, s.clock, nullptr),
              [&](kv::Transaction& tx, const kv::Attempt&) -> Result<std::shared_ptr<ReadResult>> {
                FDYNO_ASSIGN_OR_RETURN(
                    auto table, FindActiveTable(*s.catalog, tx, CallerScope(ctx), job.table()));
                partiql::TableSchema schema = SchemaOf(*table);
                partiql::PlanOptions options;
                options.use = partiql::Use::kBatch;
                options.consistent_read = job.r.consistent_read;
                FDYNO_ASSIGN_OR_RETURN(partiql::Plan plan,
                                       partiql::PlanStatement(*job.bound, schema, options));
                a.table = job.table();  // planned: the member runs
                auto out = std::make_shared<ReadResult>();
                out->consumed.table_name = table->name;
                FDYNO_RETURN_IF_ERROR(AdmitRead(s, ctx, table, plan.read, *out));
                FDYNO_RETURN_IF_ERROR(ReadPoint(tx, *table, plan.read, job.r.consistent_read,
                                                s.clock->WallMillis(), *out));
                return out;
              });
  if (!read.ok()) {
    a.error = std::move(read).error();
    return a;
  }
  ChargeRead(s, **read);
  a.consumed = (*read)->consumed;
  a.item_json.assign((*read)->items.GetString(), (*read)->items.GetSize());
  return a;
}

// A batch INSERT, UPDATE or DELETE: the statement's own write, as ExecuteStatement runs it.
BatchAnswer BatchWrite(const ReadServices& s, const RequestContext& ctx, const StatementJob& job) {
  BatchAnswer a;
  if (!s.options.write) {
    a.error = Error::Validation(std::string(kWritesRefused));
    return a;
  }
  const partiql::BoundStatement& bound = *job.bound;
  PartiqlWriteRequest w;
  w.statement = &bound;
  w.plan = [&bound, &a, &job](const store::TableInfo& table) -> Result<partiql::WritePlan> {
    partiql::PlanOptions options;
    options.use = partiql::Use::kBatch;
    FDYNO_ASSIGN_OR_RETURN(partiql::Plan plan,
                           partiql::PlanStatement(bound, SchemaOf(table), options));
    a.table = job.table();  // planned: the member runs
    return std::move(plan.write);
  };
  w.return_old_on_condition_failure = job.r.return_old_on_condition_failure;
  Result<PartiqlWriteOutcome> outcome = s.options.write(ctx, w);
  if (!outcome.ok()) {
    a.error = std::move(outcome).error();
  } else {
    a.consumed = outcome->consumed;
    // RETURNING: the member's item, as ExecuteStatement returns it.
    if (outcome->returned && !outcome->returned->empty())
      a.item_json = ItemJson(*outcome->returned);
  }
  return a;
}

void WriteBatchAnswer(Writer& w, const BatchAnswer& a) {
  w.StartObject();
  if (a.error) {
    w.Key("Error");
    w.StartObject();
    const std::string_view code = BatchErrorCode(*a.error);
    w.Key("Code");
    w.String(code.data(), static_cast<rapidjson::SizeType>(code.size()));
    w.Key("Message");
    w.String(a.error->message.data(), static_cast<rapidjson::SizeType>(a.error->message.size()));
    if (!a.error->item_json.empty()) {
      w.Key("Item");
      w.RawValue(a.error->item_json.data(), a.error->item_json.size(), rapidjson::kObjectType);
    }
    w.EndObject();
  }
  if (!a.table.empty()) {
    w.Key("TableName");
    w.String(a.table.data(), static_cast<rapidjson::SizeType>(a.table.size()));
  }
  if (!a.item_json.empty()) {
    w.Key("Item");
    w.RawValue(a.item_json.data(), a.item_json.size(), rapidjson::kObjectType);
  }
  w.EndObject();
}

// ConsumedCapacity of a batch: one entry per table, in order of first use.
void WriteBatchCapacity(Writer& w, ReturnConsumedCapacity mode,
                        const std::vector<BatchAnswer>& answers) {
  if (mode == ReturnConsumedCapacity::kNone) return;
  std::vector<ConsumedCapacity> tables;
  for (const BatchAnswer& a : answers) {
    if (a.consumed.table_name.empty()) continue;
    auto it = std::find_if(tables.begin(), tables.end(), [&](const ConsumedCapacity& c) {
      return c.table_name == a.consumed.table_name;
    });
    if (it == tables.end()) {
      tables.push_back(a.consumed);
    } else {
      it->table_units += a.consumed.table_units;
      it->AddIndexUnits(a.consumed);
    }
  }
  w.Key("ConsumedCapacity");
  w.StartArray();
  for (const ConsumedCapacity& c : tables) WriteConsumedCapacityObject(w, mode, c);
  w.EndArray();
}

// Every statement is parsed and bound first (its error is its answer); the batch must then be
// all reads or all writes. Statements run one by one, each in its own transaction: a batch is
// not atomic, as in DynamoDB.
Result<std::string> BatchExecuteStatementOp(const ReadServices& s, const RequestContext& ctx,
                                            const rapidjson::Value& body) {
  FDYNO_ASSIGN_OR_RETURN(BatchRequest r, DecodeBatchRequest(body));
  const size_t n = r.statements.size();
  std::vector<StatementJob> jobs(n);
  std::vector<BatchAnswer> answers(n);
  bool reads = false, writes = false;
  for (size_t i = 0; i < n; ++i) {
    StatementJob& job = jobs[i];
    job.r = std::move(r.statements[i]);
    Result<std::shared_ptr<const partiql::PreparedStatement>> prepared =
        s.statements.Prepare(job.r.statement);
    Status st = prepared.ok() ? Status::Ok() : Status(prepared.error());
    if (st.ok()) {
      job.prepared = std::move(prepared).value();
      Result<partiql::BoundStatement> bound = partiql::Bind(job.prepared->tree, job.r.parameters);
      if (bound.ok()) {
        job.bound = std::move(bound).value();
      } else {
        st = bound.error();
      }
    }
    if (!st.ok()) {
      answers[i].error = st.error();
      continue;
    }
    (job.bound->is_read() ? reads : writes) = true;
  }
  if (reads && writes) {
    return Error::Validation("Batch must contain only reads or only writes");
  }
  for (size_t i = 0; i < n; ++i) {
    if (answers[i].error) continue;
    answers[i] =
        jobs[i].bound->is_read() ? BatchRead(s, ctx, jobs[i]) : BatchWrite(s, ctx, jobs[i]);
  }
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("Responses");
  w.StartArray();
  for (const BatchAnswer& a : answers) WriteBatchAnswer(w, a);
  w.EndArray();
  WriteBatchCapacity(w, r.return_consumed_capacity, answers);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace

namespace {

// Element `index` of the list `list`.
Status DecodeStatementMember(const rapidjson::Value& v, std::string_view list, size_t index,
                             ConstraintErrors& errors, StatementMember& out) {
  FDYNO_RETURN_IF_ERROR(RequireObjectBody(v));
  StatementMembers m;
  FDYNO_RETURN_IF_ERROR(request::ReadRows<M>(v, kListedStatementReads, m));
  request::CheckMembers<M>(errors, kListedStatementChecks, m, MemberPath(list, index));
  if (m.statement) out.statement = std::string(AsStringView(*m.statement));
  out.has_parameters = m.parameters != nullptr;
  FDYNO_ASSIGN_OR_RETURN(out.parameters, DecodeParameters(m.parameters));
  out.consistent_read = request::Flag(m.consistent_read).value_or(false);
  out.return_old_on_condition_failure = request::Text(m.rvocf) == "ALL_OLD";
  return Status::Ok();
}

}  // namespace

Status DecodeStatementList(const rapidjson::Value* list, std::string_view path, size_t max_length,
                           ConstraintErrors& errors, std::vector<StatementMember>& out) {
  errors.NotNull(path, list != nullptr);
  if (list == nullptr) return Status::Ok();
  const auto elements = list->GetArray();
  if (elements.Empty()) {
    errors.AddWithoutValue(path, "Member must have length greater than or equal to 1");
  } else if (elements.Size() > max_length) {
    errors.AddWithoutValue(
        path, "Member must have length less than or equal to " + std::to_string(max_length));
  }
  out.resize(elements.Size());
  for (size_t i = 0; i < elements.Size(); ++i) {
    FDYNO_RETURN_IF_ERROR(DecodeStatementMember(elements[i], path, i, errors, out[i]));
  }
  return Status::Ok();
}

partiql::TableSchema SchemaOf(const store::TableInfo& table) {
  partiql::TableSchema out;
  out.name = table.name;
  out.key_schema = table.key_schema;
  out.indexes.reserve(table.local_indexes.size() + table.global_indexes.size());
  for (const store::SecondaryIndex& i : table.local_indexes) {
    out.indexes.push_back(IndexSchemaOf(i, false));
  }
  for (const store::SecondaryIndex& i : table.global_indexes) {
    out.indexes.push_back(IndexSchemaOf(i, true));
  }
  return out;
}

void RegisterPartiqlOperations(OperationRegistry& registry, const Services& services,
                               PartiqlOptions options) {
  auto s = std::make_shared<ReadServices>();
  s->db = services.db;
  s->catalog = services.catalog;
  s->clock = services.clock != nullptr ? services.clock : Clock::Real();
  s->options = std::move(options);
  s->capacity = services.capacity;
  s->insights = services.insights;
  registry.Register(
      "ExecuteStatement",
      [s](const RequestContext& ctx, const rapidjson::Value& body) -> Result<std::string> {
        FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const StatementJob> job, Prepare(*s, body));
        return Execute(*s, *job, ctx, nullptr);
      });
  registry.Register("BatchExecuteStatement", Bind(s, &BatchExecuteStatementOp));
  registry.RegisterAsync("ExecuteStatement", [s](const RequestContext& ctx,
                                                 const rapidjson::Value& body, Respond respond) {
    ExecuteStatementAsync(s, ctx, body, std::move(respond));
  });
}

}  // namespace fdyno::api
