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
#include <vector>

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
  // A multi-attribute key: the values of the further partition key attributes, in key order.
  std::vector<model::AttributeValue> more_hash_values = {};
  // A multi-attribute key: the values the sort key attributes before range->name are equal to,
  // in key order (the sort key is constrained left to right).
  std::vector<model::AttributeValue> range_prefix = {};
  std::optional<KeyRange> range;

  // Every partition key value in key order.
  std::vector<model::AttributeValue> HashValues() const;
};

// The operator that compares the other way round: `x op key` is `key Mirror(op) x`.
CompareOp Mirror(CompareOp op);

// The conditions DynamoDB allows in a KeyConditionExpression: one or two conditions (up to
// eight for a multi-attribute key, checked against the schema later) joined by AND, each comparing
// one top-level attribute with values (=, <, <=, >, >=, BETWEEN, begins_with), at most one per
// attribute.
Status CheckKeyConditionShape(const Condition& condition);

// The key schema of the table or index queried, with the attribute types from its
// AttributeDefinitions.
struct KeySchema {
  std::string hash_name;
  model::Type hash_type = model::Type::kS;
  std::optional<std::string> range_name;  // absent without a sort key
  model::Type range_type = model::Type::kS;
  // A multi-attribute key (global secondary indexes): the further partition and sort key
  // attributes in key order. Then every partition key attribute needs an equality condition,
  // and the sort key attributes are constrained left to right, with equality on all but the
  // last constrained one.
  struct Attribute {
    std::string name;
    model::Type type = model::Type::kS;
  };
  std::vector<Attribute> more_hash = {};
  std::vector<Attribute> more_range = {};
};

// REQUIRES: CheckKeyConditionShape(condition).ok() (or legacy::CheckKeyConditions for a
// converted KeyConditions map).
Result<KeyCondition> ExtractKeyCondition(const Condition& condition, const KeySchema& schema);

}  // namespace fdyno::expr
