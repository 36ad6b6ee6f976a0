// ResolveContext sharing across expressions, and the placeholder-map checks.
#include "expr/resolver.h"

#include <gtest/gtest.h>

#include <functional>

#include "expr/parser.h"

namespace fdyno::expr {
namespace {

TEST(ValidateAttributeMaps, KeysAndEmptiness) {
  EXPECT_TRUE(ValidateAttributeMaps(nullptr, nullptr).ok());
  AttributeNames names = {{"#a", "a"}, {"#B_9", "b"}};
  AttributeValues values = {{":v", model::AttributeValue::S("x")}};
  EXPECT_TRUE(ValidateAttributeMaps(&names, &values).ok());

  AttributeNames empty_names;
  EXPECT_EQ(ValidateAttributeMaps(&empty_names, nullptr).error().message,
            "ExpressionAttributeNames must not be empty");
  AttributeValues empty_values;
  EXPECT_EQ(ValidateAttributeMaps(nullptr, &empty_values).error().message,
            "ExpressionAttributeValues must not be empty");
  AttributeNames bad_names = {{"a", "a"}};
  EXPECT_EQ(ValidateAttributeMaps(&bad_names, nullptr).error().message,
            "ExpressionAttributeNames contains invalid key: Syntax error; key: \"a\"");
  for (const char* key : {"#", "#a-b", ":a"}) {
    AttributeNames n = {{key, "x"}};
    EXPECT_FALSE(ValidateAttributeMaps(&n, nullptr).ok()) << key;
  }
  AttributeValues bad_values = {{"b", model::AttributeValue::S("x")}};
  EXPECT_EQ(ValidateAttributeMaps(nullptr, &bad_values).error().message,
            "ExpressionAttributeValues contains invalid key: Syntax error; key: \"b\"");
}

TEST(ResolveContext, SharedUsageAcrossExpressions) {
  AttributeNames names = {{"#k", "pk"}, {"#s", "status"}};
  AttributeValues values = {{":k", model::AttributeValue::S("p")},
                            {":s", model::AttributeValue::S("on")}};
  ResolveContext ctx(&names, &values);
  auto key = ParseCondition("#k = :k", ExpressionKind::kKeyCondition);
  ASSERT_TRUE(key.ok());
  ASSERT_TRUE(ctx.ResolveCondition(*key, ExpressionKind::kKeyCondition).ok());
  // Only the key condition so far: #s and :s are unused.
  EXPECT_EQ(ctx.CheckUnused().error().message,
            "Value provided in ExpressionAttributeNames unused in expressions: keys: {#s}");
  auto filter = ParseCondition("#s = :s", ExpressionKind::kFilter);
  ASSERT_TRUE(filter.ok());
  auto resolved = ctx.ResolveCondition(*filter, ExpressionKind::kFilter);
  ASSERT_TRUE(resolved.ok());
  EXPECT_TRUE(ctx.CheckUnused().ok());
  // The resolved tree carries the substituted name and value.
  EXPECT_EQ(resolved->operands[0].path().root(), "status");
  EXPECT_EQ(std::get<std::string>(resolved->operands[1].value().v), "on");
}

TEST(ResolveContext, ErrorsNameTheExpressionKind) {
  ResolveContext ctx(nullptr, nullptr);
  auto p = ParseProjection("#missing");
  ASSERT_TRUE(p.ok());
  auto r = ctx.ResolveProjection(*p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kValidation);
  EXPECT_EQ(r.error().message,
            "Invalid ProjectionExpression: An expression attribute name used in the document path "
            "is not defined; attribute name: #missing");
}

// CheckCondition on the resolved form of a condition answers what ResolveCondition answers on
// the parsed form, for conditions of every check (and the same "no error" for valid ones).
TEST(ResolveContext, CheckConditionMatchesResolveCondition) {
  AttributeValues values = {{":s", model::AttributeValue::S("x")},
                            {":n", model::AttributeValue::N(*model::Number::Parse("5"))},
                            {":m", model::AttributeValue::N(*model::Number::Parse("1"))},
                            {":t", model::AttributeValue::S("STRING")}};
  const char* cases[] = {
      "a = :s AND b < :n",
      "begins_with(a, :s, :s)",
      "begins_with(a, :n)",
      "attribute_exists(:s)",
      "attribute_type(a, :t)",
      "a = a",
      "NOT (a BETWEEN :n AND :m) OR size(l) > :n",
      "contains(a, a) AND size(:n) > :m",
  };
  for (const char* text : cases) {
    SCOPED_TRACE(text);
    auto parsed = ParseCondition(text, ExpressionKind::kCondition);
    ASSERT_TRUE(parsed.ok());
    ResolveContext resolver(nullptr, &values);
    auto resolved = resolver.ResolveCondition(*parsed, ExpressionKind::kCondition);
    // The same tree with its values in place, as a caller that binds values itself builds it.
    std::function<Operand(const parsed::Operand&)> op = [&](const parsed::Operand& o) {
      if (o.is_path()) {
        Path p;
        for (const auto& e : o.path().elements) p.elements.push_back(PathElement{e.text});
        return Operand{p};
      }
      if (o.is_value()) return Operand{values.at(o.value().name)};
      Call c;
      c.function = o.call().function;
      for (const auto& a : o.call().args) c.args.push_back(op(a));
      return Operand{c};
    };
    std::function<Condition(const parsed::Condition&)> cond = [&](const parsed::Condition& c) {
      Condition out;
      out.kind = static_cast<Condition::Kind>(c.kind);
      out.op = c.op;
      for (const auto& o : c.operands) out.operands.push_back(op(o));
      for (const auto& ch : c.children) out.children.push_back(cond(ch));
      return out;
    };
    const Condition tree = cond(*parsed);
    ResolveContext checker(nullptr, nullptr);
    Status checked = checker.CheckCondition(tree, ExpressionKind::kCondition);
    ASSERT_EQ(checked.ok(), resolved.ok());
    if (!resolved.ok()) {
      EXPECT_EQ(checked.error().message, resolved.error().message);
    }
    ResolveContext bare(nullptr, nullptr);
    bare.OmitExpressionNames();
    Status bare_checked = bare.CheckCondition(tree, ExpressionKind::kCondition);
    if (!resolved.ok()) {
      EXPECT_EQ("Invalid ConditionExpression: " + bare_checked.error().message,
                resolved.error().message);
    }
  }
}
}  // namespace
}  // namespace fdyno::expr
