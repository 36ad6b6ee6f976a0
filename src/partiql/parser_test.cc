// Unit tests of the lexer, the parser's tree shapes and the statement cache; the behaviour of
// whole statements is in the case files (partiql_cases_test.cc).
#include "partiql/parser.h"

#include <gtest/gtest.h>

#include <string>

#include "partiql/bind.h"
#include "partiql/lexer.h"
#include "partiql/plan.h"
#include "partiql/statement_cache.h"

namespace fdyno::partiql {
namespace {

using EK = ast::Expr::Kind;

std::vector<Token> Tokens(std::string_view text) {
  auto t = Lex(text);
  EXPECT_TRUE(t.ok()) << text;
  return t.ok() ? *t : std::vector<Token>{};
}

TEST(Lexer, WordsKeywordsAndQuotes) {
  auto t = Tokens(R"(SeLeCt "a""b" FROM tbl WHERE x = 'it''s' -- trailing
                     AND y <> 1.5e-3 /* block */ AND z != ?)");
  ASSERT_EQ(t.size(), 17u);
  EXPECT_TRUE(t[0].IsKeyword("select"));
  EXPECT_EQ(t[1].type, Tok::kQuotedIdent);
  EXPECT_EQ(t[1].text, "a\"b");
  EXPECT_EQ(t[3].type, Tok::kIdent);
  EXPECT_EQ(t[3].text, "tbl");
  EXPECT_EQ(t[7].type, Tok::kString);
  EXPECT_EQ(t[7].text, "it's");
  EXPECT_TRUE(t[10].IsOp("<>"));
  EXPECT_EQ(t[11].text, "1.5e-3");
  EXPECT_TRUE(t[14].IsOp("!="));
  EXPECT_EQ(t[15].type, Tok::kQuestion);
  EXPECT_EQ(Tokens("x").back().type, Tok::kEof);
}

TEST(Lexer, BagsAndPunctuation) {
  auto t = Tokens("<<1, 2>> [a] {'k': v} .5 ;");
  std::vector<Tok> want = {Tok::kLBag,   Tok::kNumber,   Tok::kComma,     Tok::kNumber,
                           Tok::kRBag,   Tok::kLBracket, Tok::kIdent,     Tok::kRBracket,
                           Tok::kLBrace, Tok::kString,   Tok::kColon,     Tok::kIdent,
                           Tok::kRBrace, Tok::kNumber,   Tok::kSemicolon, Tok::kEof};
  ASSERT_EQ(t.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(t[i].type, want[i]) << i;
}

TEST(Lexer, ErrorsHaveNoDetail) {
  for (const char* bad : {"'open", "\"open", "/* open", "a # b", "`ion`", "1e", "12abc"}) {
    auto t = Lex(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.error().type, ErrorType::kValidation);
    EXPECT_EQ(t.error().message, "Statement wasn't well formed, can't be processed: ") << bad;
  }
}

TEST(Keywords, PartiqlReservedWords) {
  for (const char* kw : {"select", "size", "value", "user", "missing", "returning", "pad"}) {
    EXPECT_TRUE(IsKeyword(kw)) << kw;
  }
  for (const char* word : {"data", "status", "begins_with", "contains", "name", "SELECT"}) {
    EXPECT_FALSE(IsKeyword(word)) << word;
  }
}

TEST(Parser, ParametersAreNumberedInTextOrder) {
  auto st = Parse("SELECT * FROM t1x WHERE a = ? AND (b BETWEEN ? AND ?) OR c IN [?]");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->param_count, 4u);
  // OR at the top: AND binds tighter.
  const ast::Expr& where = *st->select.where;
  ASSERT_EQ(where.kind, EK::kOr);
  const ast::Expr& between = where.children[0].children[1];
  ASSERT_EQ(between.kind, EK::kBetween);
  EXPECT_EQ(between.children[1].param, 1u);
  EXPECT_EQ(between.children[2].param, 2u);
  EXPECT_EQ(where.children[1].children[1].children[0].param, 3u);
}

TEST(Parser, SignsFoldIntoNumbers) {
  auto st = Parse("SELECT * FROM tbl WHERE a = -5 AND b = +2.5 AND c = -d");
  ASSERT_TRUE(st.ok());
  const ast::Expr& w = *st->select.where;
  EXPECT_EQ(w.children[0].children[0].children[1].text, "-5");
  EXPECT_EQ(w.children[0].children[1].children[1].text, "2.5");
  const ast::Expr& neg = w.children[1].children[1];
  EXPECT_EQ(neg.kind, EK::kUnary);
  EXPECT_EQ(neg.op, "-");
}

TEST(Parser, PathsAndTargets) {
  auto st = Parse(R"(SELECT m.x[2]."y z" FROM "tbl"."idx" WHERE a = 1)");
  ASSERT_TRUE(st.ok());
  const ast::Expr& p = st->select.items[0].expr;
  ASSERT_EQ(p.kind, EK::kPath);
  ASSERT_EQ(p.children.size(), 4u);
  EXPECT_EQ(p.children[1].kind, EK::kPathName);
  EXPECT_EQ(p.children[2].kind, EK::kPathIndex);
  EXPECT_EQ(p.children[2].text, "2");
  EXPECT_EQ(p.children[3].text, "y z");
  ASSERT_EQ(st->select.from.components.size(), 2u);
  EXPECT_EQ(st->select.from.components[1].name, "idx");
}

TEST(StatementCache, ReusesParsedStatements) {
  StatementCache cache(2);
  auto a = cache.Prepare("SELECT * FROM tbl");
  auto b = cache.Prepare("SELECT * FROM tbl");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  // Errors are answered again, never cached as trees.
  EXPECT_FALSE(cache.Prepare("SELECT").ok());
  EXPECT_FALSE(cache.Prepare("SELECT").ok());
  // A statement past the size bound is parsed each time.
  std::string long_text = "SELECT * FROM tbl WHERE a = '" + std::string(2000, 'x') + "'";
  auto l1 = cache.Prepare(long_text);
  auto l2 = cache.Prepare(long_text);
  ASSERT_TRUE(l1.ok() && l2.ok());
  EXPECT_NE(l1->get(), l2->get());
  // At capacity the cache starts over: the first statement is parsed anew.
  ASSERT_TRUE(cache.Prepare("SELECT a FROM tbl").ok());
  ASSERT_TRUE(cache.Prepare("SELECT b FROM tbl").ok());
  auto again = cache.Prepare("SELECT * FROM tbl");
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->get(), a->get());
}

TEST(Bind, ParametersBecomeValuesOfTheTree) {
  auto st = Parse("SELECT x FROM tbl WHERE pk = ? AND n < ?");
  ASSERT_TRUE(st.ok());
  Parameters params = {model::AttributeValue::S("k"),
                       model::AttributeValue::N(*model::Number::Parse("3"))};
  auto bound = Bind(*st, params);
  ASSERT_TRUE(bound.ok());
  const expr::Condition& w = *bound->select.where;
  ASSERT_EQ(w.kind, expr::Condition::Kind::kAnd);
  EXPECT_TRUE(w.children[0].operands[1].value() == params[0]);
  EXPECT_TRUE(w.children[1].operands[1].value() == params[1]);
}

}  // namespace
}  // namespace fdyno::partiql
