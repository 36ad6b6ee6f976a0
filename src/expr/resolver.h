// Stage 2 of the expression pipeline: parsed tree + one request's ExpressionAttributeNames and
// ExpressionAttributeValues -> resolved tree (ast.h), ready for evaluate.h.
//
// One request may carry several expressions (UpdateItem: ConditionExpression and
// UpdateExpression; Query: KeyConditionExpression, FilterExpression, ProjectionExpression) that
// share one ExpressionAttributeNames/Values pair. Resolve them all through one ResolveContext,
// then call CheckUnused() once: DynamoDB rejects a name or value that no expression used.
//
// Besides substitution, resolving performs the checks DynamoDB makes once placeholders are
// known, with DynamoDB's messages ("Invalid <Kind>Expression: ..."):
//   * undefined "#name" / ":value" placeholders;
//   * the number of operands of each function, functions that need a document path;
//   * operand types where they are known before reading the item (begins_with, size,
//     attribute_type, BETWEEN bounds, + and -, list_append, ADD, DELETE);
//   * identical operands ("The first operand must be distinct ...");
//   * overlapping or conflicting document paths in UpdateExpression and ProjectionExpression.
//
// A ResolveContext refers to the names and values maps it was given (they must outlive it) and
// is not thread-safe; the resolved trees it returns own their data.
#pragma once

#include <map>
#include <set>
#include <string>

#include "base/result.h"
#include "expr/ast.h"
#include "model/attribute_value.h"

namespace fdyno::expr {

using AttributeNames = std::map<std::string, std::string>;  // "#n" -> attribute name
using AttributeValues = model::Map;                         // ":v" -> value

// Checks the keys of ExpressionAttributeNames ("#" then letters, digits, '_') and
// ExpressionAttributeValues (":" likewise) and that a map that is present is not empty, with
// DynamoDB's messages ("ExpressionAttributeNames must not be empty",
// "ExpressionAttributeValues contains invalid key: Syntax error; key: \"a\""). Either map may
// be null (absent). Whether the maps may appear at all (only with expressions) is the
// operation's check.
Status ValidateAttributeMaps(const AttributeNames* names, const AttributeValues* values);

// Whether an ordering comparison (<, <=, >, >=, BETWEEN) takes a value of type `t`: numbers,
// strings and binaries only. Another is DynamoDB's "Incorrect operand type" validation error,
// not a comparison that fails.
bool Orderable(model::Type t);

class ResolveContext {
 public:
  // Either map may be null when the request did not carry it.
  ResolveContext(const AttributeNames* names, const AttributeValues* values)
      : names_(names), values_(values) {}
  // The context of a request's expressions, once its maps pass ValidateAttributeMaps (called
  // after the expressions parse: syntax errors come first).
  static Result<ResolveContext> ForRequest(const AttributeNames* names,
                                           const AttributeValues* values);

  // REQUIRES: kind is kCondition, kFilter, kKeyCondition or kSearchCondition.
  Result<Condition> ResolveCondition(const parsed::Condition& tree, ExpressionKind kind);
  Result<Projection> ResolveProjection(const parsed::Projection& tree);
  Result<Update> ResolveUpdate(const parsed::Update& tree);

  // PartiQL statements: the checks report the bare message, without the "Invalid
  // <Kind>Expression: " that names a request parameter (a statement has no such parameter).
  void OmitExpressionNames() { omit_expression_names_ = true; }

  // The checks ResolveCondition makes once placeholders are substituted (operand counts and
  // types of functions, distinct operands, BETWEEN bounds), on a tree built with its values
  // already in place (PartiQL binds parameters and literals directly). Same messages, in the
  // same order, as ResolveCondition on the equivalent parsed tree.
  // REQUIRES: kind is kCondition, kFilter or kKeyCondition.
  Status CheckCondition(const Condition& tree, ExpressionKind kind);

  // After every expression of the request was resolved: an error naming the names (first) or
  // values that no expression used, e.g.
  // "Value provided in ExpressionAttributeValues unused in expressions: keys: {:a, :b}".
  Status CheckUnused() const;

 private:
  friend class Resolver;
  const AttributeNames* names_;
  const AttributeValues* values_;
  std::set<std::string> used_names_;
  std::set<std::string> used_values_;
  bool omit_expression_names_ = false;
};

}  // namespace fdyno::expr
