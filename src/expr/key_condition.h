// KeyConditionExpression (and legacy KeyConditions) for Query: the restricted shape DynamoDB
// accepts, and the extraction of the partition-key value and sort-key range from a resolved
// condition.
//
// DynamoDB checks the shape before it looks the table up, so CheckKeyConditionShape() needs
// no schema; ExtractKeyCondition() then applies the key schema of the table or index queried.
// Messages are DynamoDB's (ValidationException), e.g. "Invalid operator used in
// KeyConditionExpression: OR", "KeyConditionExpressions must only contain one condition per
// key", "Query condition missed key schema element: pk", "Query key condition not supported".
// Pure and thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "expr/ast.h"
#include "model/attribute_value.h"

namespace fdyno::expr {

struct KeyRange {
  enum class Op { kEq, kLt, kLe, kGt, kGe, kBetween, kBeginsWith };
  std::string name;  // the sort key attribute
  Op op = Op::kEq;
  model::AttributeValue value;  // the bound (the lower bound for kBetween)
  model::AttributeValue high;   // kBetween only: the upper bound
};

struct KeyCondition {
  std::string hash_name;
  model::AttributeValue hash_value;
  std::optional<KeyRange> range;
};

// The operator that compares the other way round: `x op key` is `key Mirror(op) x`.
CompareOp Mirror(CompareOp op);

// The conditions DynamoDB allows in a KeyConditionExpression: one or two conditions joined by
// AND, each comparing one top-level attribute with values (=, <, <=, >, >=, BETWEEN,
// begins_with), at most one per attribute.
Status CheckKeyConditionShape(const Condition& condition);

// The key schema of the table or index queried, with the attribute types from its
// AttributeDefinitions.
struct KeySchema {
  std::string hash_name;
  model::Type hash_type = model::Type::kS;
  std::optional<std::string> range_name;  // absent without a sort key
  model::Type range_type = model::Type::kS;
};

// REQUIRES: CheckKeyConditionShape(condition).ok() (or legacy::CheckKeyConditions for a
// converted KeyConditions map).
Result<KeyCondition> ExtractKeyCondition(const Condition& condition, const KeySchema& schema);

}  // namespace fdyno::expr
