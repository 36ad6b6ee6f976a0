// DynamoDB's rules on a request's legacy (non-expression) and expression parameters, one place
// for every operation: the two kinds never mix, and ExpressionAttributeNames and
// ExpressionAttributeValues come only with an expression. Each operation lists its parameters
// in DynamoDB's order; the messages name them in that order.
// Pure; thread-safe.
#pragma once

#include <string_view>
#include <vector>

#include "base/result.h"

namespace fdyno::api {

class ParameterMix {
 public:
  // A legacy parameter (AttributesToGet, Expected, QueryFilter, ...), present or not.
  ParameterMix& Legacy(std::string_view name, bool present);
  // An expression parameter (ConditionExpression, ProjectionExpression, ...), present or not.
  ParameterMix& Expression(std::string_view name, bool present);

  bool mixed() const { return !legacy_.empty() && !expressions_.empty(); }
  // "Can not use both expression and non-expression parameters in the same request:
  // Non-expression parameters: {A, B} Expression parameters: {C}".
  Error MixedError() const;
  // The maps without any expression: "ExpressionAttributeNames can only be specified when
  // using expressions: X is null" (or "X and Y are null"), names before values.
  Status CheckAttributeMaps(bool has_names, bool has_values) const;
  // MixedError() when mixed(), then CheckAttributeMaps.
  Status Check(bool has_names, bool has_values) const;

 private:
  std::vector<std::string_view> legacy_;       // present legacy parameters
  std::vector<std::string_view> expressions_;  // present expression parameters
  std::vector<std::string_view> absent_;       // absent expression parameters
};

}  // namespace fdyno::api
