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

// A list index is a 32-bit integer: a larger one is a syntax error (a 26-digit one too, which
// must not overflow while it is read).
TEST(Parser, ListIndexTooLargeForANumberIsASyntaxError) {
  auto r = ParseProjection("a[2147483647]");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].elements[1].index, 2147483647u);
  EXPECT_FALSE(ParseProjection("a[2147483648]").ok());
  auto huge = ParseProjection("a[99999999999999999999999999]");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().type, ErrorType::kValidation);
}

}  // namespace
}  // namespace fdyno::expr

namespace fdyno::expr {
namespace {

// Seeded round trip: random condition trees are printed with only the parentheses that
// precedence requires, parsed back, and compared node by node. This pins down precedence
// (NOT > AND > OR), left associativity and operand parsing. Replay a failure with the seed.
class RandomConditions {
 public:
  explicit RandomConditions(uint64_t seed) : state_(seed * 2654435761u + 1) {}

  uint64_t Next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }
  size_t Below(size_t n) { return Next() % n; }

  parsed::Operand RandomOperand(bool allow_size) {
    size_t k = Below(allow_size ? 4 : 3);
    if (k == 0) return parsed::Operand{parsed::ValueRef{":v" + std::to_string(Below(5))}};
    if (k == 3) {
      parsed::Call call;
      call.function = Function::kSize;
      call.args.push_back(parsed::Operand{RandomPath()});
      return parsed::Operand{std::move(call)};
    }
    return parsed::Operand{RandomPath()};
  }

  parsed::Path RandomPath() {
    static const char* kNames[] = {"a", "b", "c1", "d_e", "#n", "#m"};
    parsed::Path p;
    size_t depth = 1 + Below(3);
    for (size_t i = 0; i < depth; ++i) {
      if (i > 0 && Below(3) == 0) {
        p.elements.push_back({parsed::PathElement::Kind::kIndex, {}, Below(20)});
        continue;
      }
      std::string n = kNames[Below(6)];
      auto kind =
          n[0] == '#' ? parsed::PathElement::Kind::kNameRef : parsed::PathElement::Kind::kName;
      p.elements.push_back({kind, n, 0});
    }
    return p;
  }

  parsed::Condition Random(int depth) {
    parsed::Condition c;
    size_t k = depth <= 0 ? 3 + Below(4) : Below(7);
    switch (k) {
      case 0:
      case 1:
        c.kind = k == 0 ? parsed::Condition::Kind::kAnd : parsed::Condition::Kind::kOr;
        c.children.push_back(Random(depth - 1));
        c.children.push_back(Random(depth - 1));
        break;
      case 2:
        c.kind = parsed::Condition::Kind::kNot;
        c.children.push_back(Random(depth - 1));
        break;
      case 3:
        c.kind = parsed::Condition::Kind::kCompare;
        c.op = static_cast<CompareOp>(Below(6));
        c.operands.push_back(RandomOperand(true));
        c.operands.push_back(RandomOperand(true));
        break;
      case 4:
        c.kind = parsed::Condition::Kind::kBetween;
        for (int i = 0; i < 3; ++i) c.operands.push_back(RandomOperand(true));
        break;
      case 5: {
        c.kind = parsed::Condition::Kind::kIn;
        size_t n = 2 + Below(4);
        for (size_t i = 0; i < n; ++i) c.operands.push_back(RandomOperand(true));
        break;
      }
      default: {
        c.kind = parsed::Condition::Kind::kFunction;
        parsed::Call call;
        call.function = Below(2) ? Function::kAttributeExists : Function::kBeginsWith;
        call.args.push_back(parsed::Operand{RandomPath()});
        if (call.function == Function::kBeginsWith) call.args.push_back(RandomOperand(false));
        c.operands.push_back(parsed::Operand{std::move(call)});
      }
    }
    return c;
  }

 private:
  uint64_t state_;
};

std::string PrintPath(const parsed::Path& p) {
  std::string out;
  for (size_t i = 0; i < p.elements.size(); ++i) {
    const auto& e = p.elements[i];
    if (e.kind == parsed::PathElement::Kind::kIndex) {
      out += "[" + std::to_string(e.index) + "]";
    } else {
      out += (i ? "." : "") + e.text;
    }
  }
  return out;
}

std::string PrintOperand(const parsed::Operand& o) {
  if (o.is_value()) return o.value().name;
  if (o.is_path()) return PrintPath(o.path());
  std::string out = std::string(FunctionName(o.call().function)) + "(";
  for (size_t i = 0; i < o.call().args.size(); ++i) {
    out += (i ? ", " : "") + PrintOperand(o.call().args[i]);
  }
  return out + ")";
}

int Precedence(const parsed::Condition& c) {
  switch (c.kind) {
    case parsed::Condition::Kind::kOr:
      return 1;
    case parsed::Condition::Kind::kAnd:
      return 2;
    case parsed::Condition::Kind::kNot:
      return 3;
    default:
      return 4;
  }
}

std::string Print(const parsed::Condition& c) {
  auto wrap = [](const parsed::Condition& child, bool parens) {
    return parens ? "(" + Print(child) + ")" : Print(child);
  };
  using K = parsed::Condition::Kind;
  switch (c.kind) {
    case K::kOr:
    case K::kAnd: {
      int p = Precedence(c);
      // Left-associative: a right child of the same operator needs parentheses.
      return wrap(c.children[0], Precedence(c.children[0]) < p) +
             (c.kind == K::kOr ? " OR " : " AND ") +
             wrap(c.children[1], Precedence(c.children[1]) <= p);
    }
    case K::kNot:
      return "NOT " + wrap(c.children[0], Precedence(c.children[0]) < 3);
    case K::kCompare:
      return PrintOperand(c.operands[0]) + " " + std::string(CompareOpText(c.op)) + " " +
             PrintOperand(c.operands[1]);
    case K::kBetween:
      return PrintOperand(c.operands[0]) + " BETWEEN " + PrintOperand(c.operands[1]) + " AND " +
             PrintOperand(c.operands[2]);
    case K::kIn: {
      std::string out = PrintOperand(c.operands[0]) + " IN (";
      for (size_t i = 1; i < c.operands.size(); ++i) {
        out += (i > 1 ? ", " : "") + PrintOperand(c.operands[i]);
      }
      return out + ")";
    }
    case K::kFunction:
      return PrintOperand(c.operands[0]);
  }
  return "?";
}

bool SameOperand(const parsed::Operand& a, const parsed::Operand& b) {
  if (a.v.index() != b.v.index()) return false;
  if (a.is_value()) return a.value().name == b.value().name;
  if (a.is_path()) {
    const auto& x = a.path().elements;
    const auto& y = b.path().elements;
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i].kind != y[i].kind || x[i].text != y[i].text || x[i].index != y[i].index) {
        return false;
      }
    }
    return true;
  }
  if (a.call().function != b.call().function || a.call().args.size() != b.call().args.size()) {
    return false;
  }
  for (size_t i = 0; i < a.call().args.size(); ++i) {
    if (!SameOperand(a.call().args[i], b.call().args[i])) return false;
  }
  return true;
}

bool SameTree(const parsed::Condition& a, const parsed::Condition& b) {
  if (a.kind != b.kind || a.operands.size() != b.operands.size() ||
      a.children.size() != b.children.size()) {
    return false;
  }
  if (a.kind == parsed::Condition::Kind::kCompare && a.op != b.op) return false;
  for (size_t i = 0; i < a.operands.size(); ++i) {
    if (!SameOperand(a.operands[i], b.operands[i])) return false;
  }
  for (size_t i = 0; i < a.children.size(); ++i) {
    if (!SameTree(a.children[i], b.children[i])) return false;
  }
  return true;
}

TEST(ParserProperty, RandomConditionsRoundTrip) {
  const uint64_t base_seed = 20261130;
  for (uint64_t i = 0; i < 2000; ++i) {
    uint64_t seed = base_seed + i;
    RandomConditions gen(seed);
    parsed::Condition tree = gen.Random(4);
    std::string text = Print(tree);
    if (text.size() > kMaxExpressionBytes) continue;
    auto parsed = ParseCondition(text, ExpressionKind::kCondition);
    ASSERT_TRUE(parsed.ok()) << "seed " << seed << ": " << text << "\n" << parsed.error().message;
    ASSERT_TRUE(SameTree(*parsed, tree)) << "seed " << seed << ": " << text;
  }
}

}  // namespace
}  // namespace fdyno::expr

namespace fdyno::expr {
namespace {

// Nesting deeper than any valid expression allows stops early, with the error a full parse
// would give, so a 4 KB expression cannot exhaust a thread's stack.
TEST(ParserLimits, DeepNestingOfEveryKind) {
  auto repeat = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  const std::string parens =
      "Invalid ConditionExpression: The expression has redundant parentheses;";
  const std::string ops =
      "Invalid ConditionExpression: The expression contains too many operators; operator count: "
      "301";
  auto cond_error = [](const std::string& text) {
    auto r = ParseCondition(text, ExpressionKind::kCondition);
    return r.ok() ? std::string("<ok>") : r.error().message;
  };
  EXPECT_EQ(cond_error(repeat("(", 2000) + "a=b" + repeat(")", 2000)), parens);
  EXPECT_EQ(cond_error("a = " + repeat("(", 2000) + "b" + repeat(")", 2000)), parens);
  EXPECT_EQ(cond_error(repeat("NOT ", 1000) + "a=b"), ops);
  EXPECT_EQ(cond_error(repeat("size(", 680) + "a" + repeat(")", 680) + " > b"), ops);
  // Left-nested groups: the operators after the cut-off point count too.
  EXPECT_EQ(cond_error(repeat("(", 350) + "a=b" + repeat(") AND a=b", 350)), ops);
  auto u = ParseUpdate("SET a = " + repeat("(", 2000) + "b" + repeat(")", 2000));
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.error().message,
            "Invalid UpdateExpression: The expression has redundant parentheses;");
  // 200 nested function calls (as deep as 4 KB allows) are within the parser's depth limit.
  auto f = ParseUpdate("SET a = " + repeat("if_not_exists(", 200) + "b" + repeat(", c)", 200));
  EXPECT_TRUE(f.ok()) << f.error().message;
}

}  // namespace
}  // namespace fdyno::expr
