// Stage 2 of a PartiQL statement: syntax tree + the request's Parameters -> a bound statement
// whose expressions are the expr layer's resolved trees (expr/ast.h), so conditions, updates and
// projections are evaluated by expr/evaluate.h exactly as ConditionExpression,
// UpdateExpression and ProjectionExpression are.
//
// Binding needs no table: it makes every check DynamoDB makes before it looks the table up, with
// DynamoDB's messages (ValidationException):
//   * the number of `?` markers against Parameters ("Number of parameters in request and
//     statement don't match.");
//   * unsupported clauses and forms ("Unsupported clause: GROUP BY", "Aliasing is not supported",
//     "Only select from a single table or index is supported.", ...);
//   * the FROM / INTO / UPDATE target ("A path may contain at most 2 components in the FROM
//     clause", "Path component cannot be an empty string", "This operation is not supported on
//     an index", ...);
//   * literals ("Empty bags are not supported", "Tuple keys must be of type String. ...");
//   * the WHERE condition and SET/REMOVE actions ("WHERE clause must contain an expression that
//     resolves to a boolean", "Unsupported operator in Condition Expression. Operator: +", ...),
//     then the expr resolver's checks (operand counts and types, BETWEEN bounds, overlapping
//     paths) with their messages but without an "Invalid <Kind>Expression: " prefix, and the
//     ordering operators' operand types ("Incorrect operand type for operator or function;
//     operator or function: <, operand type: BOOL").
//
// The result owns its data; Bind is pure and thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "expr/ast.h"
#include "model/attribute_value.h"
#include "partiql/ast.h"

namespace fdyno::partiql {

using Parameters = std::vector<model::AttributeValue>;
using Returning = ast::Returning;

// One entry of a SELECT list: the document path read, and the attribute name it gets in the
// result. DynamoDB un-nests projections: `m.a.b` comes back as "b", `l[1]` as "l[1]".
struct OutputPath {
  expr::Path path;
  std::string name;
};

// An ORDER BY entry: the attribute named, or what stood there instead (an error at planning).
struct OrderKey {
  std::string name;
  std::string not_a_name;  // non-empty: DynamoDB's word for the expression that is not a name
  bool descending = false;
};

struct BoundSelect {
  std::string table;
  std::optional<std::string> index;  // FROM "table"."index"
  bool all_attributes = true;        // SELECT *
  std::vector<OutputPath> projection;
  expr::Projection projection_paths;  // the paths of `projection`, for expr::Project
  std::optional<expr::Condition> where;
  std::vector<OrderKey> order_by;
};

struct BoundInsert {
  std::string table;
  model::Item item;
  Returning returning = Returning::kNone;
};

struct BoundUpdate {
  std::string table;
  expr::Update update;
  expr::Condition where;
  Returning returning = Returning::kNone;
};

struct BoundDelete {
  std::string table;
  expr::Condition where;
  Returning returning = Returning::kNone;
};

struct BoundStatement {
  enum class Kind { kSelect, kInsert, kUpdate, kDelete, kExists };
  Kind kind = Kind::kSelect;
  BoundSelect select;  // kSelect, kExists (no projection)
  BoundInsert insert;
  BoundUpdate update;
  BoundDelete del;

  bool is_read() const { return kind == Kind::kSelect; }
  // The table the statement addresses.
  const std::string& table() const;
};

Result<BoundStatement> Bind(const ast::Statement& statement, const Parameters& parameters);

}  // namespace fdyno::partiql
