// The point-read template gives the plan Bind and PlanStatement give, or nothing.
#include "partiql/point_read.h"

#include <gtest/gtest.h>

#include "model/test_values.h"
#include "partiql/parser.h"
#include "partiql/testing_plan_text.h"

namespace fdyno::partiql {
namespace {

using test::N;

using model::AttributeValue;

TableSchema Composite() {
  TableSchema s;
  s.name = "tbl";
  s.key_schema = {{"pk", model::ScalarType::kS}, {{"sk", model::ScalarType::kN}}};
  return s;
}

std::optional<PointReadTemplate> TemplateOf(std::string_view text) {
  auto parsed = Parse(text);
  EXPECT_TRUE(parsed.ok()) << text;
  return parsed.ok() ? PointReadTemplateOf(*parsed) : std::nullopt;
}

// The full path's plan text, or its error.
std::string FullPlan(std::string_view text, const TableSchema& schema, const Parameters& params) {
  auto parsed = Parse(text);
  auto bound = Bind(*parsed, params);
  if (!bound.ok()) return bound.error().message;
  auto plan = PlanStatement(*bound, schema, {});
  if (!plan.ok()) return plan.error().message;
  return testing::PlanText(*plan);
}

TEST(PointRead, TemplatesOfPointReadShapes) {
  for (const char* text : {
           R"(SELECT * FROM "tbl" WHERE pk = ? AND sk = ?)",
           R"(SELECT a, m.b FROM tbl WHERE ? = sk AND "pk" = 'x')",
           R"(SELECT * FROM "tbl" WHERE pk = 'x')",
       }) {
    EXPECT_TRUE(TemplateOf(text)) << text;
  }
  for (const char* text : {
           R"(SELECT * FROM "tbl" WHERE pk = ? OR sk = ?)",
           R"(SELECT * FROM "tbl" WHERE pk = ? AND pk = ?)",
           R"(SELECT * FROM "tbl" WHERE pk = ? AND sk > ?)",
           R"(SELECT * FROM "tbl" WHERE pk = ? ORDER BY sk)",
           R"(SELECT * FROM "tbl"."idx" WHERE pk = ?)",
           R"(SELECT * FROM "tbl")",
           R"(SELECT a, a FROM "tbl" WHERE pk = ?)",
           R"(SELECT * FROM "tbl" WHERE pk = [1])",
           R"(SELECT * FROM "tbl" WHERE pk.x = 1)",
           R"(DELETE FROM "tbl" WHERE pk = ?)",
       }) {
    EXPECT_FALSE(TemplateOf(text)) << text;
  }
}

TEST(PointRead, InstantiateGivesTheFullPathsPlan) {
  const TableSchema schema = Composite();
  struct Case {
    const char* text;
    Parameters params;
  };
  const Case cases[] = {
      {R"(SELECT * FROM "tbl" WHERE pk = ? AND sk = ?)", {AttributeValue::S("a"), N("7")}},
      {R"(SELECT a, m.b, l[2] FROM tbl WHERE ? = sk AND "pk" = 'x')", {N("1.50")}},
      {R"(SELECT * FROM tbl WHERE sk = 3 AND pk = ?)", {AttributeValue::S("k")}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto t = TemplateOf(c.text);
    ASSERT_TRUE(t);
    auto plan = Instantiate(*t, schema.key_schema, c.params);
    ASSERT_TRUE(plan);
    Plan wrapped;
    wrapped.read = std::move(*plan);
    EXPECT_EQ(testing::PlanText(wrapped), FullPlan(c.text, schema, c.params));
  }
}

TEST(PointRead, AnythingElseTakesTheFullPath) {
  const TableSchema schema = Composite();
  auto t = TemplateOf(R"(SELECT * FROM "tbl" WHERE pk = ? AND sk = ?)");
  ASSERT_TRUE(t);
  // Wrong types, an empty key value, the wrong number of parameters: no plan here, and the
  // full path answers DynamoDB's error.
  const Parameters wrong_type = {AttributeValue::S("a"), AttributeValue::S("7")};
  EXPECT_FALSE(Instantiate(*t, schema.key_schema, wrong_type));
  EXPECT_EQ(FullPlan(R"(SELECT * FROM "tbl" WHERE pk = ? AND sk = ?)", schema, wrong_type),
            "Key attribute's data type should match its data type in table's schema: Key sk");
  EXPECT_FALSE(Instantiate(*t, schema.key_schema, {AttributeValue::S(""), N("1")}));
  EXPECT_FALSE(Instantiate(*t, schema.key_schema, {AttributeValue::S("a")}));
  // Names that are not the table's key: a filter of a Query or a Scan on the full path.
  TableSchema other = schema;
  other.key_schema.range->name = "other";
  EXPECT_FALSE(Instantiate(*t, other.key_schema, {AttributeValue::S("a"), N("1")}));
  TableSchema hash_only = schema;
  hash_only.key_schema.range.reset();
  EXPECT_FALSE(Instantiate(*t, hash_only.key_schema, {AttributeValue::S("a"), N("1")}));
}

}  // namespace
}  // namespace fdyno::partiql
