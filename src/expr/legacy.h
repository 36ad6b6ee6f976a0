// DynamoDB's legacy (pre-expression) parameters, converted to the same resolved trees as the
// expressions (ast.h), so one evaluator serves both:
//
//   Expected + ConditionalOperator                 -> Condition  (PutItem/UpdateItem/DeleteItem)
//   QueryFilter / ScanFilter / KeyConditions
//     + ConditionalOperator                        -> Condition  (Query/Scan)
//   AttributesToGet                                -> Projection (GetItem/Query/Scan/Batch*)
//   AttributeUpdates                               -> Update     (UpdateItem)
//
// Inputs are already-decoded model values (the JSON layer checked the shapes and the
// enumerations); these functions make DynamoDB's semantic checks, with its messages
// ("One or more parameter values were invalid: ..."), and return ValidationExceptions.
// Thread-safe; pure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "expr/ast.h"
#include "model/attribute_value.h"

namespace fdyno::expr::legacy {

enum class ComparisonOperator {
  kEq,
  kNe,
  kLe,
  kLt,
  kGe,
  kGt,
  kNotNull,
  kNull,
  kContains,
  kNotContains,
  kBeginsWith,
  kIn,
  kBetween,
};

// "EQ" -> kEq, ...; nullopt for anything else.
std::optional<ComparisonOperator> ParseComparisonOperator(std::string_view text);
std::string_view ComparisonOperatorName(ComparisonOperator op);

enum class ConditionalOperator { kAnd, kOr };

// One entry of QueryFilter, ScanFilter or KeyConditions.
struct FilterCondition {
  ComparisonOperator op = ComparisonOperator::kEq;
  std::vector<model::AttributeValue> values;  // AttributeValueList
};

// One entry of Expected: either Value/Exists, or ComparisonOperator with Value or
// AttributeValueList.
struct ExpectedCondition {
  std::optional<model::AttributeValue> value;                    // Value
  std::optional<bool> exists;                                    // Exists
  std::optional<ComparisonOperator> op;                          // ComparisonOperator
  std::optional<std::vector<model::AttributeValue>> value_list;  // AttributeValueList
};

// One entry of AttributeUpdates.
struct AttributeUpdate {
  enum class Action { kPut, kAdd, kDelete };
  Action action = Action::kPut;                // PUT when the request omits Action
  std::optional<model::AttributeValue> value;  // Value
};

// Expected (attribute name -> condition) combined with ConditionalOperator (AND when absent).
// REQUIRES: !expected.empty().
Result<Condition> ConvertExpected(const std::map<std::string, ExpectedCondition>& expected,
                                  ConditionalOperator conditional_operator);

// QueryFilter / ScanFilter / KeyConditions. REQUIRES: !conditions.empty().
Result<Condition> ConvertFilter(const std::map<std::string, FilterCondition>& conditions,
                                ConditionalOperator conditional_operator);

// KeyConditions, after ConvertFilter() accepted it: one or two conditions
// ("Conditions can be of length 1 or 2 only"), each with an operator a key can use (EQ, LE, LT,
// GE, GT, BEGINS_WITH, BETWEEN; else "Attempted conditional constraint is not an indexable
// operation"). The converted tree then goes through ExtractKeyCondition (key_condition.h).
Status CheckKeyConditions(const std::map<std::string, FilterCondition>& conditions);

// AttributesToGet: top-level attribute names. Rejects duplicates.
Result<Projection> ConvertAttributesToGet(const std::vector<std::string>& attributes);

// AttributeUpdates: PUT -> SET, DELETE without a value -> REMOVE, DELETE with a set -> DELETE,
// ADD of a number or set -> ADD, ADD of a list -> appended to the existing list (or set when
// absent), as the legacy API defines.
Result<Update> ConvertAttributeUpdates(const std::map<std::string, AttributeUpdate>& updates);

}  // namespace fdyno::expr::legacy
