// Expression trees of the three stages. The shape of a tree (conditions, operands, update
// actions, projections) is shared; what differs is its leaves:
//
//   parsed::   paths whose elements may be "#name" placeholders, values that are ":value"
//              placeholders (produced by parser.h, no request data involved);
//   resolved   (fdyno::expr::Condition, Update, Projection): paths of plain attribute names
//              and list indexes, values that are AttributeValues (produced by resolver.h from
//              a parsed tree and one request's ExpressionAttributeNames/Values).
//
// evaluate.h only accepts resolved trees, so an unresolved placeholder can never reach the
// evaluator. Trees are plain values: copyable, no shared state, safe to read from many threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/attribute_value.h"

namespace fdyno::expr {

// Which request parameter an expression came from; names the expression in error messages.
// kSearchCondition: SearchVectors' SearchConditionExpression, parsed as a condition; the
// operation restricts its shape.
enum class ExpressionKind {
  kCondition,
  kFilter,
  kKeyCondition,
  kProjection,
  kUpdate,
  kSearchCondition
};

// "ConditionExpression", "FilterExpression", "KeyConditionExpression", "ProjectionExpression",
// "UpdateExpression", "SearchConditionExpression".
std::string_view KindName(ExpressionKind kind);

// Limits DynamoDB enforces on every expression.
inline constexpr size_t kMaxExpressionBytes = 4096;
inline constexpr size_t kMaxPathDepth = 32;    // elements in one document path
inline constexpr size_t kMaxOperators = 300;   // operators and functions in one expression
inline constexpr size_t kMaxInOperands = 100;  // values in the list of one IN

enum class Function {
  kAttributeExists,
  kAttributeNotExists,
  kAttributeType,
  kBeginsWith,
  kContains,
  kSize,
  kIfNotExists,  // update expressions only
  kListAppend,   // update expressions only
};
std::string_view FunctionName(Function f);

enum class CompareOp { kEq, kNe, kLt, kLe, kGt, kGe };
std::string_view CompareOpText(CompareOp op);  // "=", "<>", "<", "<=", ">", ">="

// ---- leaves ----------------------------------------------------------------------------------

namespace parsed {

struct PathElement {
  enum class Kind { kName, kNameRef, kIndex };
  Kind kind = Kind::kName;
  std::string text;    // kName: the name as written; kNameRef: "#placeholder"
  uint64_t index = 0;  // kIndex
};

struct Path {
  std::vector<PathElement> elements;  // elements[0] is a kName or kNameRef
};

struct ValueRef {
  std::string name;  // ":placeholder"
};

}  // namespace parsed

// A resolved document path element: an attribute/map key name, or a list index.
struct PathElement {
  std::variant<std::string, uint64_t> v;
  bool is_index() const { return v.index() == 1; }
  const std::string& name() const { return std::get<0>(v); }
  uint64_t index() const { return std::get<1>(v); }
  bool operator==(const PathElement&) const = default;
};

struct Path {
  std::vector<PathElement> elements;  // REQUIRES: non-empty, elements[0] is a name
  const std::string& root() const { return elements.front().name(); }
  bool operator==(const Path&) const = default;
};

// DynamoDB's rendering of a path in messages: "[a, b, [2]]".
std::string PathToString(const Path& path);

// ---- operands --------------------------------------------------------------------------------

template <typename P, typename V>
struct BasicOperand;

template <typename P, typename V>
struct BasicCall {
  Function function;
  std::vector<BasicOperand<P, V>> args;
};

template <typename P, typename V>
struct BasicOperand {
  std::variant<P, V, BasicCall<P, V>> v;
  bool is_path() const { return v.index() == 0; }
  bool is_value() const { return v.index() == 1; }
  bool is_call() const { return v.index() == 2; }
  const P& path() const { return std::get<0>(v); }
  const V& value() const { return std::get<1>(v); }
  const BasicCall<P, V>& call() const { return std::get<2>(v); }
};

// ---- conditions (ConditionExpression, FilterExpression, KeyConditionExpression) -------------

template <typename P, typename V>
struct BasicCondition {
  enum class Kind { kCompare, kBetween, kIn, kFunction, kAnd, kOr, kNot };
  Kind kind = Kind::kCompare;
  CompareOp op = CompareOp::kEq;               // kCompare
  std::vector<BasicOperand<P, V>> operands;    // kCompare: 2; kBetween: 3 (x, low, high);
                                               // kIn: 1 + list; kFunction: 1 (a call)
  std::vector<BasicCondition<P, V>> children;  // kAnd/kOr: 2; kNot: 1
};

// ---- update expressions ---------------------------------------------------------------------

template <typename P, typename V>
struct BasicSetValue {
  enum class Op { kValue, kPlus, kMinus };
  Op op = Op::kValue;
  std::vector<BasicOperand<P, V>> operands;  // 1 for kValue, 2 for kPlus/kMinus
};

template <typename P, typename V>
struct BasicUpdateAction {
  enum class Kind { kSet, kRemove, kAdd, kDelete };
  Kind kind = Kind::kSet;
  P path;
  BasicSetValue<P, V> set;  // kSet
  std::vector<V> value;     // kAdd/kDelete: exactly one
};

template <typename P, typename V>
struct BasicUpdate {
  std::vector<BasicUpdateAction<P, V>> actions;  // in the order written
  // Converted from the legacy AttributeUpdates: type errors use that API's wording.
  bool legacy = false;
};

// ---- the two instantiations ------------------------------------------------------------------

namespace parsed {
using Operand = BasicOperand<Path, ValueRef>;
using Call = BasicCall<Path, ValueRef>;
using Condition = BasicCondition<Path, ValueRef>;
using SetValue = BasicSetValue<Path, ValueRef>;
using UpdateAction = BasicUpdateAction<Path, ValueRef>;
using Update = BasicUpdate<Path, ValueRef>;
using Projection = std::vector<Path>;
}  // namespace parsed

using Operand = BasicOperand<Path, model::AttributeValue>;
using Call = BasicCall<Path, model::AttributeValue>;
using Condition = BasicCondition<Path, model::AttributeValue>;
using SetValue = BasicSetValue<Path, model::AttributeValue>;
using UpdateAction = BasicUpdateAction<Path, model::AttributeValue>;
using Update = BasicUpdate<Path, model::AttributeValue>;
using Projection = std::vector<Path>;

}  // namespace fdyno::expr
