// Parser limits and properties that are awkward to write as case files (long inputs).
#include "expr/parser.h"

#include <gtest/gtest.h>

#include <string>

#include "expr/reserved_words.h"

namespace fdyno::expr {
namespace {

std::string ErrorOf(const Result<parsed::Condition>& r) { return r.ok() ? "" : r.error().message; }

TEST(ReservedWords, FullListCaseInsensitive) {
  EXPECT_EQ(ReservedWordCount(), 573u);
  EXPECT_TRUE(IsReservedWord("ABORT"));
  EXPECT_TRUE(IsReservedWord("zone"));
  EXPECT_TRUE(IsReservedWord("Status"));
  EXPECT_TRUE(IsReservedWord("FLATTERN"));  // sic, as DynamoDB lists it
  EXPECT_FALSE(IsReservedWord("statuses"));
  EXPECT_FALSE(IsReservedWord("pk"));
  EXPECT_FALSE(IsReservedWord(""));
}

TEST(ParserLimits, ExpressionSize) {
  std::string ok = "a = :v";
  ok += std::string(4096 - ok.size(), ' ');
  EXPECT_TRUE(ParseCondition(ok, ExpressionKind::kCondition).ok());
  std::string too_long = ok + " ";
  EXPECT_EQ(ErrorOf(ParseCondition(too_long, ExpressionKind::kFilter)),
            "Invalid FilterExpression: Expression size has exceeded the maximum allowed size; "
            "expression size: 4097");
  auto u = ParseUpdate("SET a = :v" + std::string(5000, ' '));
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.error().message,
            "Invalid UpdateExpression: Expression size has exceeded the maximum allowed size; "
            "expression size: 5010");
  EXPECT_EQ(u.error().type, ErrorType::kValidation);
}

TEST(ParserLimits, OperatorCount) {
  // 150 comparisons joined by 149 ANDs: 299 operators.
  auto chain = [](int comparisons) {
    std::string s;
    for (int i = 0; i < comparisons; ++i) s += (i ? " AND a<b" : "a<b");
    return s;
  };
  EXPECT_TRUE(ParseCondition(chain(150), ExpressionKind::kCondition).ok());
  EXPECT_EQ(ErrorOf(ParseCondition(chain(150) + " OR a<b", ExpressionKind::kCondition)),
            "Invalid ConditionExpression: The expression contains too many operators; operator "
            "count: 301");
  EXPECT_EQ(ErrorOf(ParseCondition(chain(151), ExpressionKind::kCondition)),
            "Invalid ConditionExpression: The expression contains too many operators; operator "
            "count: 301");
  // Exactly 300: 150 comparisons, 149 ANDs and one NOT.
  EXPECT_TRUE(ParseCondition("NOT " + chain(150), ExpressionKind::kCondition).ok());
}

TEST(ParserLimits, InOperands) {
  auto in_list = [](int n) {
    std::string s = "a IN (";
    for (int i = 0; i < n; ++i) s += (i ? ", :v" : ":v") + std::to_string(i);
    return s + ")";
  };
  auto ok = ParseCondition(in_list(100), ExpressionKind::kFilter);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->operands.size(), 101u);
  EXPECT_EQ(ErrorOf(ParseCondition(in_list(101), ExpressionKind::kFilter)),
            "Invalid FilterExpression: The IN operator is provided with too many operands; "
            "number of operands: 101");
}

TEST(ParserLimits, PathDepth) {
  auto path = [](int depth) {
    std::string s = "a";
    for (int i = 1; i < depth; ++i) s += (i % 2 ? ".b" : "[0]");
    return s;
  };
  EXPECT_TRUE(ParseProjection(path(32)).ok());
  auto deep = ParseProjection(path(33));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().message,
            "Invalid ProjectionExpression: The document path has too many nesting levels; "
            "nesting levels: 33");
}

TEST(Parser, DeepParenthesesAreBounded) {
  // 2000 nested groups fit in 4 KB; they are redundant, and parsing them must not crash.
  std::string s = std::string(2000, '(') + "a=b" + std::string(2000, ')');
  EXPECT_EQ(ErrorOf(ParseCondition(s, ExpressionKind::kCondition)),
            "Invalid ConditionExpression: The expression has redundant parentheses;");
  std::string nots;
  for (int i = 0; i < 1000; ++i) nots += "NOT ";
  EXPECT_EQ(ErrorOf(ParseCondition(nots + "a=b", ExpressionKind::kCondition)),
            "Invalid ConditionExpression: The expression contains too many operators; operator "
            "count: 301");
}

TEST(Parser, TreeShape) {
  auto r = ParseCondition("a.b[3] = :v OR NOT attribute_exists(#n) AND c BETWEEN :x AND :y",
                          ExpressionKind::kCondition);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->kind, parsed::Condition::Kind::kOr);
  const parsed::Condition& cmp = r->children[0];
  ASSERT_EQ(cmp.kind, parsed::Condition::Kind::kCompare);
  const parsed::Path& p = cmp.operands[0].path();
  ASSERT_EQ(p.elements.size(), 3u);
  EXPECT_EQ(p.elements[0].text, "a");
  EXPECT_EQ(p.elements[1].text, "b");
  EXPECT_EQ(p.elements[2].kind, parsed::PathElement::Kind::kIndex);
  EXPECT_EQ(p.elements[2].index, 3u);
  EXPECT_EQ(cmp.operands[1].value().name, ":v");
  const parsed::Condition& conj = r->children[1];
  ASSERT_EQ(conj.kind, parsed::Condition::Kind::kAnd);
  EXPECT_EQ(conj.children[0].kind, parsed::Condition::Kind::kNot);
  EXPECT_EQ(conj.children[1].kind, parsed::Condition::Kind::kBetween);

  auto u = ParseUpdate("set a = if_not_exists(a, :z) + :one remove b[2] add c :s delete d :t");
  ASSERT_TRUE(u.ok()) << u.error().message;
  ASSERT_EQ(u->actions.size(), 4u);
  EXPECT_EQ(u->actions[0].kind, parsed::UpdateAction::Kind::kSet);
  EXPECT_EQ(u->actions[0].set.op, parsed::SetValue::Op::kPlus);
  EXPECT_EQ(u->actions[0].set.operands[0].call().function, Function::kIfNotExists);
  EXPECT_EQ(u->actions[1].kind, parsed::UpdateAction::Kind::kRemove);
  EXPECT_EQ(u->actions[2].kind, parsed::UpdateAction::Kind::kAdd);
  EXPECT_EQ(u->actions[3].kind, parsed::UpdateAction::Kind::kDelete);
  EXPECT_EQ(u->actions[3].value[0].name, ":t");
}

TEST(Parser, ParenthesizedSetValues) {
  EXPECT_TRUE(ParseUpdate("SET a = (b + :c)").ok());
  EXPECT_TRUE(ParseUpdate("SET a = (b) + (:c)").ok());
  EXPECT_TRUE(ParseUpdate("SET a = list_append((b), :c)").ok());
  EXPECT_FALSE(ParseUpdate("SET a = (b + :c").ok());
}

TEST(Parser, HugeListIndexSaturates) {
  auto r = ParseProjection("a[99999999999999999999999999]");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].elements[1].index, UINT64_MAX);
}

}  // namespace
}  // namespace fdyno::expr
