// Legacy parameters: conversion to trees, DynamoDB's validation messages, and evaluation of the
// converted trees by the same evaluator the expressions use.
#include "expr/legacy.h"

#include <gtest/gtest.h>

#include "expr/evaluate.h"
#include "model/test_values.h"

namespace fdyno::expr::legacy {
namespace {

using test::N;
using test::S;

using model::AttributeValue;

AttributeValue SS(std::vector<std::string> members) {
  AttributeValue v;
  v.v = model::StringSet{std::move(members)};
  return v;
}

ExpectedCondition WithValue(AttributeValue v) {
  ExpectedCondition e;
  e.value = std::move(v);
  return e;
}
ExpectedCondition WithExists(bool exists) {
  ExpectedCondition e;
  e.exists = exists;
  return e;
}

template <typename T>
std::string ErrorOf(const Result<T>& r) {
  return r.ok() ? "<ok>" : r.error().message;
}

TEST(Legacy, ComparisonOperatorNames) {
  for (const char* name : {"EQ", "NE", "LE", "LT", "GE", "GT", "NOT_NULL", "NULL", "CONTAINS",
                           "NOT_CONTAINS", "BEGINS_WITH", "IN", "BETWEEN"}) {
    auto op = ParseComparisonOperator(name);
    ASSERT_TRUE(op) << name;
    EXPECT_EQ(ComparisonOperatorName(*op), name);
  }
  EXPECT_FALSE(ParseComparisonOperator("eq"));
  EXPECT_FALSE(ParseComparisonOperator("NOTNULL"));
}

TEST(Legacy, ExpectedValueAndExists) {
  model::Item item = {{"a", S("x")}, {"n", N("5")}};
  auto eq = ConvertExpected({{"a", WithValue(S("x"))}}, ConditionalOperator::kAnd);
  ASSERT_TRUE(eq.ok()) << eq.error().message;
  EXPECT_TRUE(EvaluateCondition(*eq, item));
  EXPECT_FALSE(EvaluateCondition(*eq, {}));

  auto absent = ConvertExpected({{"b", WithExists(false)}}, ConditionalOperator::kAnd);
  ASSERT_TRUE(absent.ok());
  EXPECT_TRUE(EvaluateCondition(*absent, item));
  auto present_is_false = ConvertExpected({{"a", WithExists(false)}}, ConditionalOperator::kAnd);
  EXPECT_FALSE(EvaluateCondition(*present_is_false, item));

  auto both = ConvertExpected({{"a", WithValue(S("x"))}, {"n", WithValue(N("6"))}},
                              ConditionalOperator::kAnd);
  EXPECT_FALSE(EvaluateCondition(*both, item));
  auto either = ConvertExpected({{"a", WithValue(S("x"))}, {"n", WithValue(N("6"))}},
                                ConditionalOperator::kOr);
  EXPECT_TRUE(EvaluateCondition(*either, item));
}

TEST(Legacy, ExpectedWithComparisonOperator) {
  model::Item item = {{"a", S("prefix-1")}, {"n", N("5")}, {"s", SS({"x", "y"})}};
  struct Case {
    const char* attr;
    ComparisonOperator op;
    std::vector<AttributeValue> values;
    bool want;
  };
  const std::vector<Case> cases = {
      {"a", ComparisonOperator::kBeginsWith, {S("prefix")}, true},
      {"a", ComparisonOperator::kBeginsWith, {S("other")}, false},
      {"n", ComparisonOperator::kGt, {N("4")}, true},
      {"n", ComparisonOperator::kLe, {N("4")}, false},
      {"n", ComparisonOperator::kBetween, {N("5"), N("9")}, true},
      {"n", ComparisonOperator::kIn, {N("1"), N("5.0")}, true},
      {"n", ComparisonOperator::kNe, {S("5")}, true},
      {"z", ComparisonOperator::kNull, {}, true},
      {"z", ComparisonOperator::kNotNull, {}, false},
      {"s", ComparisonOperator::kContains, {S("y")}, true},
      {"s", ComparisonOperator::kNotContains, {S("y")}, false},
      {"a", ComparisonOperator::kNotContains, {S("zzz")}, true},
      // A missing attribute satisfies neither CONTAINS nor NOT_CONTAINS.
      {"z", ComparisonOperator::kNotContains, {S("zzz")}, false},
      {"z", ComparisonOperator::kContains, {S("zzz")}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.attr) + " " + std::string(ComparisonOperatorName(c.op)));
    ExpectedCondition e;
    e.op = c.op;
    e.value_list = c.values;
    auto cond = ConvertExpected({{c.attr, e}}, ConditionalOperator::kAnd);
    ASSERT_TRUE(cond.ok()) << cond.error().message;
    EXPECT_EQ(EvaluateCondition(*cond, item), c.want);
  }
  // Value may stand in for a one-element AttributeValueList.
  ExpectedCondition with_value;
  with_value.op = ComparisonOperator::kEq;
  with_value.value = N("5");
  auto cond = ConvertExpected({{"n", with_value}}, ConditionalOperator::kAnd);
  ASSERT_TRUE(cond.ok());
  EXPECT_TRUE(EvaluateCondition(*cond, item));
}

TEST(Legacy, ExpectedValidationMessages) {
  const std::string p = "One or more parameter values were invalid: ";
  ExpectedCondition e;
  e.op = ComparisonOperator::kEq;
  e.exists = true;
  EXPECT_EQ(ErrorOf(ConvertExpected({{"a", e}}, ConditionalOperator::kAnd)),
            p + "Exists and ComparisonOperator cannot be used together for Attribute: a");
  e = {};
  e.op = ComparisonOperator::kEq;
  e.value = S("x");
  e.value_list = std::vector<AttributeValue>{S("x")};
  EXPECT_EQ(ErrorOf(ConvertExpected({{"a", e}}, ConditionalOperator::kAnd)),
            p + "Value and AttributeValueList cannot be used together for Attribute: a");
  e = {};
  e.value_list = std::vector<AttributeValue>{S("x")};
  EXPECT_EQ(ErrorOf(ConvertExpected({{"a", e}}, ConditionalOperator::kAnd)),
            p + "AttributeValueList can only be used with a ComparisonOperator for Attribute: a");
  e = {};
  EXPECT_EQ(ErrorOf(ConvertExpected({{"a", e}}, ConditionalOperator::kAnd)),
            p + "Value must be provided when Exists is null for Attribute: a");
  e.exists = true;
  EXPECT_EQ(ErrorOf(ConvertExpected({{"a", e}}, ConditionalOperator::kAnd)),
            p + "Value must be provided when Exists is true for Attribute: a");
  e.exists = false;
  e.value = S("x");
  EXPECT_EQ(ErrorOf(ConvertExpected({{"a", e}}, ConditionalOperator::kAnd)),
            p + "Value cannot be used when Exists is false for Attribute: a");
  e = {};
  e.op = ComparisonOperator::kLt;
  EXPECT_EQ(ErrorOf(ConvertExpected({{"a", e}}, ConditionalOperator::kAnd)),
            p + "Value or AttributeValueList must be used with ComparisonOperator: LT for "
                "Attribute: a");
  e.op = ComparisonOperator::kNotNull;
  EXPECT_TRUE(ConvertExpected({{"a", e}}, ConditionalOperator::kAnd).ok());
  e = {};
  e.exists = true;
  e.value_list = std::vector<AttributeValue>{S("a")};
  EXPECT_EQ(ErrorOf(ConvertExpected({{"a", e}}, ConditionalOperator::kAnd)),
            p + "AttributeValueList can only be used with a ComparisonOperator for Attribute: a");
  e = {};
  e.op = ComparisonOperator::kBetween;
  e.value_list = std::vector<AttributeValue>{N("1")};
  EXPECT_EQ(ErrorOf(ConvertExpected({{"a", e}}, ConditionalOperator::kAnd)),
            p + "Invalid number of argument(s) for the BETWEEN ComparisonOperator");
  e.op = ComparisonOperator::kNull;
  EXPECT_EQ(ErrorOf(ConvertExpected({{"a", e}}, ConditionalOperator::kAnd)),
            p + "Invalid number of argument(s) for the NULL ComparisonOperator");
  e.op = ComparisonOperator::kIn;
  e.value_list = std::vector<AttributeValue>{};
  EXPECT_EQ(ErrorOf(ConvertExpected({{"a", e}}, ConditionalOperator::kAnd)),
            p + "Invalid number of argument(s) for the IN ComparisonOperator");
}

TEST(Legacy, FilterConditions) {
  const std::string p = "One or more parameter values were invalid: ";
  model::Item item = {{"n", N("5")}, {"s", S("hello")}};
  auto f = ConvertFilter({{"n", {ComparisonOperator::kGe, {N("5")}}},
                          {"s", {ComparisonOperator::kContains, {S("ell")}}}},
                         ConditionalOperator::kAnd);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_TRUE(EvaluateCondition(*f, item));
  EXPECT_EQ(
      ErrorOf(ConvertFilter({{"n", {ComparisonOperator::kEq, {}}}}, ConditionalOperator::kAnd)),
      p + "Invalid number of argument(s) for the EQ ComparisonOperator");
  EXPECT_EQ(ErrorOf(ConvertFilter({{"n", {ComparisonOperator::kGt, {SS({"a"})}}}},
                                  ConditionalOperator::kAnd)),
            p + "ComparisonOperator GT is not valid for SS AttributeValue type");
  EXPECT_EQ(ErrorOf(ConvertFilter({{"n", {ComparisonOperator::kIn, {AttributeValue::Bool(true)}}}},
                                  ConditionalOperator::kAnd)),
            p + "ComparisonOperator IN is not valid for BOOL AttributeValue type");
  EXPECT_EQ(ErrorOf(ConvertFilter({{"n", {ComparisonOperator::kContains, {SS({"a"})}}}},
                                  ConditionalOperator::kAnd)),
            p + "ComparisonOperator CONTAINS is not valid for SS AttributeValue type");
  EXPECT_TRUE(
      ConvertFilter({{"n", {ComparisonOperator::kNotContains, {AttributeValue::MakeNull()}}}},
                    ConditionalOperator::kAnd)
          .ok());
  EXPECT_EQ(
      ErrorOf(ConvertFilter(
          {{"n", {ComparisonOperator::kBetween, {AttributeValue::L({}), AttributeValue::L({})}}}},
          ConditionalOperator::kAnd)),
      p + "ComparisonOperator BETWEEN is not valid for L AttributeValue type");
  EXPECT_EQ(ErrorOf(ConvertFilter({{"n", {ComparisonOperator::kBeginsWith, {N("1")}}}},
                                  ConditionalOperator::kAnd)),
            p + "ComparisonOperator BEGINS_WITH is not valid for N AttributeValue type");
  // IN takes values of one type; BETWEEN's bounds in order.
  EXPECT_EQ(ErrorOf(ConvertFilter({{"n", {ComparisonOperator::kIn, {N("1"), S("1")}}}},
                                  ConditionalOperator::kAnd)),
            p + "AttributeValues inside AttributeValueList must be of same type");
  EXPECT_EQ(ErrorOf(ConvertFilter({{"n", {ComparisonOperator::kBetween, {N("10"), N("9")}}}},
                                  ConditionalOperator::kAnd)),
            "The BETWEEN condition was provided a range where the lower bound is greater than "
            "the upper bound");
  EXPECT_EQ(ErrorOf(ConvertFilter({{"s", {ComparisonOperator::kBetween, {S("b"), S("a")}}}},
                                  ConditionalOperator::kAnd)),
            "The BETWEEN condition was provided a range where the lower bound is greater than "
            "the upper bound");
  EXPECT_TRUE(ConvertFilter({{"n", {ComparisonOperator::kBetween, {N("9"), N("9")}}}},
                            ConditionalOperator::kAnd)
                  .ok());
}

TEST(Legacy, AttributesToGet) {
  auto p = ConvertAttributesToGet({"a", "b"});
  ASSERT_TRUE(p.ok());
  model::Item item = {{"a", N("1")}, {"b", N("2")}, {"c", N("3")}};
  model::Item want = {{"a", N("1")}, {"b", N("2")}};
  EXPECT_TRUE(Project(item, *p) == want);
  EXPECT_EQ(ErrorOf(ConvertAttributesToGet({"a", "b", "a"})),
            "One or more parameter values were invalid: Duplicate value in attribute name: a");
}

TEST(Legacy, AttributeUpdates) {
  using Action = AttributeUpdate::Action;
  model::Item item = {
      {"n", N("1")}, {"s", SS({"a", "b"})}, {"gone", S("x")}, {"l", AttributeValue::L({N("1")})}};
  auto u = ConvertAttributeUpdates({{"n", {Action::kAdd, N("2")}},
                                    {"s", {Action::kDelete, SS({"a"})}},
                                    {"gone", {Action::kDelete, std::nullopt}},
                                    {"p", {Action::kPut, S("new")}},
                                    {"l", {Action::kAdd, AttributeValue::L({N("2")})}},
                                    {"l2", {Action::kAdd, AttributeValue::L({N("3")})}}});
  ASSERT_TRUE(u.ok()) << u.error().message;
  auto r = ApplyUpdate(*u, item);
  ASSERT_TRUE(r.ok()) << r.error().message;
  model::Item want = {{"n", N("3")},
                      {"s", SS({"b"})},
                      {"p", S("new")},
                      {"l", AttributeValue::L({N("1"), N("2")})},
                      {"l2", AttributeValue::L({N("3")})}};
  EXPECT_TRUE(*r == want);
  EXPECT_EQ(UpdatedTopLevelAttributes(*u).size(), 6u);

  // Type errors at apply time use the legacy API's wording.
  for (const auto& [attr, update] : std::vector<std::pair<std::string, AttributeUpdate>>{
           {"s", {Action::kDelete, AttributeValue{model::NumberSet{{*model::Number::Parse("1")}}}}},
           {"s", {Action::kAdd, N("1")}},
           {"n", {Action::kAdd, SS({"x"})}},
           {"n", {Action::kAdd, AttributeValue::L({N("1")})}}}) {
    auto conv = ConvertAttributeUpdates({{attr, update}});
    ASSERT_TRUE(conv.ok()) << conv.error().message;
    EXPECT_EQ(ErrorOf(ApplyUpdate(*conv, item)), "Type mismatch for attribute to update") << attr;
  }

  const std::string p = "One or more parameter values were invalid: ";
  EXPECT_EQ(ErrorOf(ConvertAttributeUpdates({{"a", {Action::kPut, std::nullopt}}})),
            p + "Only DELETE action is allowed when no attribute value is specified");
  EXPECT_EQ(ErrorOf(ConvertAttributeUpdates({{"a", {Action::kDelete, S("x")}}})),
            p + "DELETE action with value is not supported for the type S");
  EXPECT_EQ(ErrorOf(ConvertAttributeUpdates({{"a", {Action::kAdd, AttributeValue::Bool(true)}}})),
            p + "ADD action is not supported for the type BOOL");
}

}  // namespace
}  // namespace fdyno::expr::legacy
