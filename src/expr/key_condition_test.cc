// KeyConditionExpression shape checks and key extraction.
#include "expr/key_condition.h"

#include <gtest/gtest.h>

#include "expr/legacy.h"
#include "expr/parser.h"
#include "expr/resolver.h"

namespace fdyno::expr {
namespace {

using model::AttributeValue;

const AttributeValues kValues = {{":s", AttributeValue::S("v")},
                                 {":t", AttributeValue::S("w")},
                                 {":n", AttributeValue::N(*model::Number::Parse("7"))}};

Result<Condition> Resolved(const std::string& text) {
  FDYNO_ASSIGN_OR_RETURN(parsed::Condition p, ParseCondition(text, ExpressionKind::kKeyCondition));
  ResolveContext ctx(nullptr, &kValues);
  return ctx.ResolveCondition(p, ExpressionKind::kKeyCondition);
}

std::string ShapeError(const std::string& text) {
  auto c = Resolved(text);
  if (!c.ok()) return "resolve: " + c.error().message;
  Status s = CheckKeyConditionShape(*c);
  return s.ok() ? "<ok>" : s.error().message;
}

TEST(KeyConditionShape, Messages) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"a = :s OR b = :s", "Invalid operator used in KeyConditionExpression: OR"},
      {"a = :s AND size(b) > :n OR a = :t", "Invalid operator used in KeyConditionExpression: OR"},
      {"NOT a = :s", "Invalid operator used in KeyConditionExpression: NOT"},
      {"a IN (:s, :t)", "Invalid operator used in KeyConditionExpression: IN"},
      {"a <> :s", "Invalid operator used in KeyConditionExpression: <>"},
      {"attribute_exists(a)", "Invalid operator used in KeyConditionExpression: attribute_exists"},
      {"contains(a, :s)", "Invalid operator used in KeyConditionExpression: contains"},
      {"attribute_type(a, :s)",
       "resolve: Invalid KeyConditionExpression: Invalid attribute type "
       "name found; type: v, valid types: {B,NULL,SS,BOOL,L,BS,N,NS,S,M}"},
      {":s BETWEEN a AND :t",
       "Invalid condition in KeyConditionExpression: BETWEEN operator must have the key attribute "
       "as its first operand"},
      {"begins_with(:s, a) AND b = :t",
       "Invalid condition in KeyConditionExpression: begins_with operator must have the key "
       "attribute as its first operand"},
      {"size(b) > :n AND a.b = :s", "KeyConditionExpressions cannot contain nested operations"},
      {"a BETWEEN size(b) AND size(c)", "KeyConditionExpressions cannot contain nested operations"},
      {"b > a.b",
       "Invalid condition in KeyConditionExpression: Multiple attribute names used in "
       "one condition"},
      {"a BETWEEN b AND size(a)",
       "Invalid condition in KeyConditionExpression: Multiple attribute names used in one "
       "condition"},
      {"begins_with(a, b)",
       "Invalid condition in KeyConditionExpression: Multiple attribute names "
       "used in one condition"},
      {"a.d > :s", "KeyConditionExpressions cannot have conditions on nested attributes"},
      {"b[0] = :s", "KeyConditionExpressions cannot have conditions on nested attributes"},
      {":s > :t AND a = :s",
       "Invalid condition in KeyConditionExpression: No key attribute "
       "specified"},
      {"b > :s AND b < :t AND c = :s",
       "KeyConditionExpressions must only contain one condition "
       "per key"},
      // Up to eight (a multi-attribute key's); a one-attribute key's limit of two is checked
      // against the schema (KeyConditionMultiAttribute below).
      {"a = :s AND b = :s AND c = :s", "<ok>"},
      {"a = :s", "<ok>"},
      {":s = a AND (begins_with(b, :t))", "<ok>"},
  };
  for (const Case& c : cases) EXPECT_EQ(ShapeError(c.text), c.error) << c.text;
}

TEST(KeyConditionExtract, HashAndRange) {
  KeySchema schema{"pk", model::Type::kS, "sk", model::Type::kN};
  auto c = Resolved(":s = pk AND :n <= sk");
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(CheckKeyConditionShape(*c).ok());
  auto k = ExtractKeyCondition(*c, schema);
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(k->hash_name, "pk");
  EXPECT_TRUE(k->hash_value == AttributeValue::S("v"));
  ASSERT_TRUE(k->range);
  EXPECT_EQ(k->range->name, "sk");
  EXPECT_EQ(k->range->op, KeyRange::Op::kGe);  // ":n <= sk" is "sk >= :n"
  EXPECT_TRUE(k->range->value == AttributeValue::N(*model::Number::Parse("7")));

  KeySchema strings{"pk", model::Type::kS, "sk", model::Type::kS};
  auto between = Resolved("pk = :s AND sk BETWEEN :s AND :t");
  ASSERT_TRUE(between.ok());
  auto kb = ExtractKeyCondition(*between, strings);
  ASSERT_TRUE(kb.ok()) << kb.error().message;
  EXPECT_EQ(kb->range->op, KeyRange::Op::kBetween);
  EXPECT_TRUE(kb->range->high == AttributeValue::S("w"));

  auto prefix = Resolved("begins_with(sk, :t) AND pk = :s");
  ASSERT_TRUE(prefix.ok());
  auto kp = ExtractKeyCondition(*prefix, strings);
  ASSERT_TRUE(kp.ok()) << kp.error().message;
  EXPECT_EQ(kp->range->op, KeyRange::Op::kBeginsWith);

  auto hash_only = Resolved("pk = :s");
  ASSERT_TRUE(hash_only.ok());
  auto kh = ExtractKeyCondition(*hash_only, strings);
  ASSERT_TRUE(kh.ok());
  EXPECT_FALSE(kh->range);
}

TEST(KeyConditionExtract, SchemaMessages) {
  KeySchema hash_only{"a", model::Type::kS, std::nullopt, model::Type::kS};
  KeySchema with_range{"c", model::Type::kS, "d", model::Type::kS};
  auto error = [](const std::string& text, const KeySchema& schema) {
    auto c = Resolved(text);
    if (!c.ok()) return c.error().message;
    auto k = ExtractKeyCondition(*c, schema);
    return k.ok() ? std::string("<ok>") : k.error().message;
  };
  EXPECT_EQ(error("z BETWEEN :s AND :t", hash_only),
            "Query condition missed key schema element: a");
  EXPECT_EQ(error("a > :s", hash_only), "Query key condition not supported");
  EXPECT_EQ(error("begins_with(a, :s)", hash_only), "Query key condition not supported");
  EXPECT_EQ(error("a = :s AND b = :s", hash_only), "Query key condition not supported");
  EXPECT_EQ(error("y = :s AND z = :s", hash_only), "Query key condition not supported");
  EXPECT_EQ(error("c = :s AND b = :s", with_range), "Query condition missed key schema element: d");
  EXPECT_EQ(error(":n > a", hash_only),
            "One or more parameter values were invalid: Condition parameter type does not match "
            "schema type");
}

TEST(KeyConditionLegacy, KeyConditions) {
  using legacy::ComparisonOperator;
  using legacy::FilterCondition;
  EXPECT_EQ(legacy::CheckKeyConditions({}).error().message,
            "Conditions can be of length 1 or 2 only");
  EXPECT_EQ(legacy::CheckKeyConditions({{"a", {ComparisonOperator::kNull, {}}},
                                        {"b", {ComparisonOperator::kNull, {}}},
                                        {"c", {ComparisonOperator::kNull, {}}}})
                .error()
                .message,
            "Conditions can be of length 1 or 2 only");
  EXPECT_EQ(legacy::CheckKeyConditions({{"a", {ComparisonOperator::kNe, {AttributeValue::S("x")}}}})
                .error()
                .message,
            "Attempted conditional constraint is not an indexable operation");
  std::map<std::string, FilterCondition> ok = {
      {"pk", {ComparisonOperator::kEq, {AttributeValue::S("p")}}},
      {"sk", {ComparisonOperator::kBeginsWith, {AttributeValue::S("x")}}}};
  ASSERT_TRUE(legacy::CheckKeyConditions(ok).ok());
  auto tree = legacy::ConvertFilter(ok, legacy::ConditionalOperator::kAnd);
  ASSERT_TRUE(tree.ok());
  auto k = ExtractKeyCondition(*tree, KeySchema{"pk", model::Type::kS, "sk", model::Type::kS});
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_TRUE(k->hash_value == AttributeValue::S("p"));
  EXPECT_EQ(k->range->op, KeyRange::Op::kBeginsWith);
}

// A multi-attribute key (t1 S, t2 N; r1 N, r2 S, r3 S): equality on every partition key
// attribute; the sort key attributes left to right, equality on all but the last constrained.
TEST(KeyConditionMultiAttribute, Extraction) {
  KeySchema schema{"t1", model::Type::kS, "r1", model::Type::kN};
  schema.more_hash = {{"t2", model::Type::kN}};
  schema.more_range = {{"r2", model::Type::kS}, {"r3", model::Type::kS}};
  auto extract = [&](const std::string& text) -> Result<KeyCondition> {
    FDYNO_ASSIGN_OR_RETURN(parsed::Condition p,
                           ParseCondition(text, ExpressionKind::kKeyCondition));
    const AttributeValues values = {{":s", AttributeValue::S("v")},
                                    {":t", AttributeValue::S("w")},
                                    {":n", AttributeValue::N(*model::Number::Parse("7"))},
                                    {":m", AttributeValue::N(*model::Number::Parse("9"))}};
    ResolveContext ctx(nullptr, &values);
    FDYNO_ASSIGN_OR_RETURN(Condition c, ctx.ResolveCondition(p, ExpressionKind::kKeyCondition));
    FDYNO_RETURN_IF_ERROR(CheckKeyConditionShape(c));
    return ExtractKeyCondition(c, schema);
  };
  auto k = extract("t2 = :n AND t1 = :s");
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(k->HashValues(),
            (std::vector<AttributeValue>{AttributeValue::S("v"),
                                         AttributeValue::N(*model::Number::Parse("7"))}));
  EXPECT_FALSE(k->range);
  k = extract("t1 = :s AND t2 = :n AND r1 = :m AND r2 = :s AND begins_with(r3, :t)");
  ASSERT_TRUE(k.ok()) << k.error().message;
  ASSERT_EQ(k->range_prefix.size(), 2u);
  EXPECT_TRUE(k->range_prefix[1] == AttributeValue::S("v"));
  EXPECT_EQ(k->range->name, "r3");
  EXPECT_EQ(k->range->op, KeyRange::Op::kBeginsWith);
  k = extract("t1 = :s AND t2 = :n AND r1 BETWEEN :n AND :m");
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_TRUE(k->range_prefix.empty());
  EXPECT_EQ(k->range->op, KeyRange::Op::kBetween);
  struct Bad {
    const char* text;
    const char* error;
  };
  const Bad bad[] = {
      {"t1 = :s", "Query condition missed key schema element: t2"},
      {"t1 = :s AND t2 > :n", "Query key condition not supported"},
      {"begins_with(t1, :s) AND t2 = :n", "Query key condition not supported"},
      {"t1 = :s AND t2 = :n AND r2 = :s",
       "RANGE key attributes r1 must have equality conditions specified in the query because a "
       "condition is present on key attribute r2"},
      {"t1 = :s AND t2 = :n AND r1 > :n AND r2 = :s",
       "RANGE key attributes r1 must have equality conditions specified in the query because a "
       "condition is present on key attribute r2"},
      {"t1 = :s AND t2 = :n AND r1 = :n AND r3 = :s",
       "RANGE key attributes r2 must have equality conditions specified in the query because a "
       "condition is present on key attribute r3"},
      {"t1 = :s AND t2 = :n AND r1 > :n AND r2 > :s AND r3 = :s",
       "RANGE key attributes r1 must have equality conditions specified in the query because a "
       "condition is present on key attribute r2"},
      {"t1 = :s AND t2 = :n AND x9 = :s", "Query condition missed key schema element: x9"},
      {"t1 = :s AND t2 = :s",
       "One or more parameter values were invalid: Condition parameter type does not match "
       "schema type"},
  };
  for (const Bad& b : bad) {
    auto r = extract(b.text);
    ASSERT_FALSE(r.ok()) << b.text;
    EXPECT_EQ(r.error().message, b.error) << b.text;
  }
  // More conditions than a key can have.
  EXPECT_EQ(ShapeError("a = :s AND b = :s AND c = :s AND d = :s AND e = :s AND f = :s AND "
                       "g = :s AND h = :s AND i = :s"),
            "Conditions can be of length 1 or 2 only");
}

// A one-attribute key still takes at most two conditions.
TEST(KeyConditionMultiAttribute, SingleAttributeKeysKeepTwoConditions) {
  auto c = Resolved("a = :s AND b = :t AND c = :s");
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(CheckKeyConditionShape(*c).ok());
  auto k = ExtractKeyCondition(*c, KeySchema{"a", model::Type::kS, "b", model::Type::kS});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.error().message, "Conditions can be of length 1 or 2 only");
}

}  // namespace
}  // namespace fdyno::expr
