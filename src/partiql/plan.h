// Stage 3 of a PartiQL statement: bound statement + the table's key schema -> a plan of store
// operations. The planner knows schemas only as plain values (TableSchema), so this layer stays
// below store; the api layer builds a TableSchema from the catalog's TableInfo.
//
// Reads (SELECT):
//   * a WHERE whose top-level AND pins every key attribute of the table with `=` is a point read
//     (kGet) of that key; the rest of the WHERE filters the item;
//   * one that pins the partition key of the table (or of the index read) with `=` is a Query
//     (kQuery): the partition, an optional sort-key condition (=, <, <=, >, >=, BETWEEN,
//     begins_with) and the rest as a filter; ORDER BY the sort key DESC reads backwards;
//   * anything else is a Scan (kScan) of the table or index with the whole WHERE as a filter.
//     A key condition DynamoDB would not push down (OR, IN, NOT, <> on a key, a second
//     condition on one key) leaves the WHERE to the filter, so results never depend on the plan.
//
// Writes (INSERT, UPDATE, DELETE, and EXISTS inside ExecuteTransaction) become one WritePlan on
// one item: its key, what to write, and the condition the current item must meet. See
// WritePlan for the contract of the mutation path that executes it.
//
// Errors are DynamoDB's ValidationExceptions ("Where clause does not contain a mandatory
// equality on all key attributes", "The table does not have the specified index", "Variable
// reference sk2 in ORDER BY clause must be part of the primary key", ...). Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "expr/ast.h"
#include "expr/key_condition.h"
#include "model/attribute_value.h"
#include "model/key_schema.h"
#include "partiql/bind.h"

namespace fdyno::partiql {

// What the planner needs to know about a secondary index.
struct IndexSchema {
  enum class Projection { kAll, kKeysOnly, kInclude };
  std::string name;
  bool global = false;
  model::KeySchema key_schema;
  Projection projection = Projection::kAll;
  std::vector<std::string> non_key_attributes;  // kInclude
  bool readable = true;  // false while a global index is being created or backfilled
};

// What the planner needs to know about a table.
struct TableSchema {
  std::string name;
  model::KeySchema key_schema;
  std::vector<IndexSchema> indexes;

  const IndexSchema* FindIndex(std::string_view name) const;
};

// The request parameters that shape a plan.
enum class Use {
  kStatement,    // ExecuteStatement
  kBatch,        // a member of BatchExecuteStatement: reads must name the whole key
  kTransaction,  // a member of ExecuteTransaction: reads must name the whole key, no index,
                 // no RETURNING
};

struct PlanOptions {
  Use use = Use::kStatement;
  bool consistent_read = false;
};

struct ReadPlan {
  enum class Access { kGet, kQuery, kScan };
  Access access = Access::kScan;
  std::string table;
  const IndexSchema* index = nullptr;  // points into the TableSchema given to PlanStatement
  model::Item key;                     // kGet: the item's primary key
  expr::KeyCondition key_condition;    // kQuery: the partition and the sort-key range
  bool forward = true;                 // kQuery: false reads the sort key descending
  std::optional<expr::Condition> filter;
  bool all_attributes = true;          // SELECT * (of the index's projection when reading one)
  std::vector<OutputPath> projection;  // otherwise: the attributes returned, un-nested
  expr::Projection projection_paths;   // the same paths, for expr::Project
  // Reading a local secondary index whose projection lacks an attribute of the SELECT list:
  // each entry's base item is read too (and charged to the table).
  bool fetch_base = false;
};

// One write on one item, for the mutation path (store) to apply inside a kv transaction:
//
//   1. read the current item at `key` in `table` (absent: an empty item);
//   2. evaluate `condition` (when set) against it with expr::EvaluateCondition; when false,
//      fail with `on_false`: DuplicateItemException "Duplicate primary key exists in table" for
//      kInsert, else ConditionalCheckFailedException "The conditional request failed" (with the
//      current item when ReturnValuesOnConditionCheckFailure is ALL_OLD);
//   3. kInsert: put `item`; kUpdate: put expr::ApplyUpdate(update, current); kDelete: delete;
//      kCheck: write nothing;
//   4. answer `returning` from the old/new image: kAllOld / kAllNew the whole image,
//      kModifiedOld / kModifiedNew expr::Project(image, expr::UpdatedPaths(update)); an absent
//      or empty result is no item (ExecuteStatement's Items is then []).
//
// The planner has already checked the statement's shape, the key's presence and types, that
// UPDATE changes no key attribute and that an INSERT item is within the size limit. The
// mutation path checks what PutItem, UpdateItem and DeleteItem check on the values (empty or
// oversized key values, the updated item's size, index key types) and does what they do
// (indexes, streams, item counts, receipts), so a PartiQL write behaves as the item operation.
struct WritePlan {
  enum class Kind { kInsert, kUpdate, kDelete, kCheck };
  enum class OnFalse { kConditionalCheckFailed, kDuplicateItem };
  Kind kind = Kind::kInsert;
  std::string table;
  model::Item key;
  model::Item item;     // kInsert
  expr::Update update;  // kUpdate
  // INSERT: attribute_not_exists(<partition key>). UPDATE: attribute_exists(<partition key>)
  // AND the rest of the WHERE. DELETE: attribute_not_exists(<partition key>) OR the rest of the
  // WHERE (a missing item is deleted silently), or none. EXISTS: the rest of the WHERE.
  std::optional<expr::Condition> condition;
  OnFalse on_false = OnFalse::kConditionalCheckFailed;
  Returning returning = Returning::kNone;
};

struct Plan {
  bool is_read = true;
  ReadPlan read;
  WritePlan write;
};

// A SELECT's result item: `item` itself for SELECT *, else the value of each projected path
// under its output name, as DynamoDB un-nests projections ({"m": {"a": 1}} read through `m.a`
// is {"a": 1}). Paths the item lacks are left out.
model::Item ProjectOutput(const model::Item& item, const ReadPlan& plan);

// REQUIRES: schema.name == statement.table(). The returned plan may point into `schema`.
Result<Plan> PlanStatement(const BoundStatement& statement, const TableSchema& schema,
                           const PlanOptions& options);

}  // namespace fdyno::partiql
