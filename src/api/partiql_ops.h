// PartiQL operations: ExecuteStatement and BatchExecuteStatement (src/partiql parses, binds
// and plans each statement). ExecuteTransaction lives with TransactWriteItems (transact_ops.h).
//
// SELECT runs in one read-only transaction on the machinery of the item operations: a point
// read through store::ReadItem as GetItem does, a Query or a Scan page through the page reader
// of Query and Scan (query_pages.h), with Limit, the 1 MB page, ConsistentRead and
// ReturnConsumedCapacity as there. A page that ends early answers a NextToken: base64 of
// {"v":1, "h": <hash of the account, statement and parameters>, "t": <issue time, ms>,
// "k": <the key to resume after>}; a token is accepted for the same account, statement and
// parameters for one hour ("NextToken does not match request", "Given NextToken has already
// expired", "Invalid NextToken" otherwise).
//
// INSERT, UPDATE and DELETE are parsed, bound and validated here, then handed to the
// PartiqlWriter of the options (the mutation path, item_ops.h MakePartiqlWriter); without one
// they are refused.
//
// BatchExecuteStatement: up to 25 statements, all reads (point reads naming the whole key) or
// all writes, run one by one; each statement's outcome, or its error with DynamoDB's
// BatchStatementError code, is its element of Responses.
//
// Thread-safety: handlers are thread-safe (state is per request).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "api/capacity.h"
#include "api/json_util.h"
#include "api/operation.h"
#include "api/query_ops.h"
#include "api/services.h"
#include "model/attribute_value.h"
#include "partiql/bind.h"
#include "partiql/plan.h"
#include "store/catalog.h"

namespace fdyno::api {

// One statement of a BatchExecuteStatement or ExecuteTransaction request.
struct StatementMember {
  std::string statement;
  partiql::Parameters parameters;
  bool has_parameters = false;
  bool consistent_read = false;
  bool return_old_on_condition_failure = false;  // ReturnValuesOnConditionCheckFailure ALL_OLD
};

// Decodes the request's list of statements at `path` ("statements", "transactStatements"),
// of 1 to `max_length` elements, into `out`: deserialization errors are returned, constraint
// violations added to `errors` with the model's paths, the list's own (present, its length)
// before its elements' ("statements.1.member.statement").
Status DecodeStatementList(const rapidjson::Value* list, std::string_view path, size_t max_length,
                           ConstraintErrors& errors, std::vector<StatementMember>& out);

// The description of a table the planner works on.
partiql::TableSchema SchemaOf(const store::TableInfo& table);

// One write statement for the mutation path.
struct PartiqlWriteRequest {
  const partiql::BoundStatement* statement = nullptr;  // kInsert, kUpdate or kDelete
  // Plans the statement on the table as the write's transaction finds it (validation errors
  // of the plan are the statement's answer).
  std::function<Result<partiql::WritePlan>(const store::TableInfo&)> plan;
  bool return_old_on_condition_failure = false;  // ReturnValuesOnConditionCheckFailure ALL_OLD
  ReturnConsumedCapacity return_consumed_capacity = ReturnConsumedCapacity::kNone;
};

struct PartiqlWriteOutcome {
  // What RETURNING asked for; nullopt or empty: ExecuteStatement answers "Items": [].
  std::optional<model::Item> returned;
  ConsumedCapacity consumed;  // rendered when ReturnConsumedCapacity asks for it
};

// Applies one write statement (see partiql::WritePlan for what it must do): finds the table,
// plans through request.plan, reads the item, checks the plan's condition, writes, all in one
// kv transaction of the mutation path; errors are the statement's answer.
using PartiqlWriter =
    std::function<Result<PartiqlWriteOutcome>(const RequestContext&, const PartiqlWriteRequest&)>;

struct PartiqlOptions {
  QueryOptions pages;   // page bounds of SELECT's Query and Scan reads
  PartiqlWriter write;  // null: INSERT, UPDATE and DELETE are refused
};

// Registers ExecuteStatement. `services` must outlive the registry's handlers.
void RegisterPartiqlOperations(OperationRegistry& registry, const Services& services,
                               PartiqlOptions options = {});

}  // namespace fdyno::api
