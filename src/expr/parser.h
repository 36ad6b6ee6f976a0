// Stage 1 of the expression pipeline: text -> parsed tree (ast.h, namespace parsed).
//
// A hand-written recursive-descent parser for DynamoDB's expression languages. It needs no
// request data: placeholders stay unresolved ("#n", ":v") until resolver.h. It checks
// everything DynamoDB checks from the text alone, and reports it with DynamoDB's message,
// always as a ValidationException whose message starts "Invalid <Kind>Expression: ":
//
//   * the expression is empty, or longer than 4096 bytes;
//   * syntax: `Syntax error; token: "<tok>", near: "<prev tok ... next tok>"`, where the token
//     is the first one that cannot continue a valid expression ("<EOF>" at the end);
//   * redundant parentheses ("((a = :v))"), unknown function names, functions used where they
//     are not allowed, unescaped reserved words, paths deeper than 32 levels, more than 300
//     operators, more than 100 IN operands, an update section (SET/REMOVE/ADD/DELETE) used twice.
//
// Operator precedence is DynamoDB's: comparisons, then NOT, then AND, then OR. Keywords are
// case-insensitive; function names are not. Parsing is bounded: input is at most 4096 bytes,
// and nesting deeper than any valid expression can need (a valid expression has at most 300
// operators) stops with the error a full parse would report; the deepest accepted nesting uses
// under 1 MB of stack, so call it from threads with default-size (8 MB) stacks. Thread-safe
// (no shared state).
#pragma once

#include <string_view>

#include "base/result.h"
#include "expr/ast.h"

namespace fdyno::expr {

// ConditionExpression, FilterExpression or KeyConditionExpression (kind names the expression
// in messages). REQUIRES: kind is kCondition, kFilter, kKeyCondition or kSearchCondition.
Result<parsed::Condition> ParseCondition(std::string_view text, ExpressionKind kind);

// ProjectionExpression: one or more comma-separated document paths.
Result<parsed::Projection> ParseProjection(std::string_view text);

// UpdateExpression: SET / REMOVE / ADD / DELETE sections, each at most once, in any order.
Result<parsed::Update> ParseUpdate(std::string_view text);

}  // namespace fdyno::expr
