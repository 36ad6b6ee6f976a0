// Runs the data-driven PartiQL cases in src/partiql/testdata/*.txt through the whole layer
// (parse -> bind -> plan, then optionally the plan's condition or projection on an item).
//
// Case file format (one key per line, "key: value"; '#' starts a comment line):
//
//   === name of the case
//   statement: SELECT * FROM "t" WHERE pk = ?
//   params: [{"S": "x"}]                  the request's Parameters (DynamoDB JSON list)
//   schema: composite                     the table's key schema (see Schemas() below);
//                                         default composite
//   use: statement | batch | transaction  which operation runs it; default statement
//   consistent: true                      ConsistentRead
//   plan: <plan text>                     testing_plan_text.h's form of the plan
//   error: <exact message>                the first error of any stage
//   item: {"pk": {"S": "x"}}              an item for the two checks below
//   matches: true | false                 the read's filter (none: true) or the write's
//                                         condition, evaluated on `item`
//   output: {item JSON}                   the SELECT's result item for `item`
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "expr/evaluate.h"
#include "expr/testing_cases.h"
#include "expr/testing_json.h"
#include "partiql/bind.h"
#include "partiql/parser.h"
#include "partiql/plan.h"
#include "partiql/testing_plan_text.h"

namespace fdyno::partiql {
namespace {

using expr::testing::Case;

model::KeyAttribute Key(std::string name, model::ScalarType type = model::ScalarType::kS) {
  return model::KeyAttribute{std::move(name), type};
}

IndexSchema Index(std::string name, bool global, model::KeySchema ks,
                  IndexSchema::Projection projection, std::vector<std::string> include = {}) {
  IndexSchema i;
  i.name = std::move(name);
  i.global = global;
  i.key_schema = std::move(ks);
  i.projection = projection;
  i.non_key_attributes = std::move(include);
  return i;
}

// The key schemas a case can name.
std::map<std::string, TableSchema> Schemas() {
  using P = IndexSchema::Projection;
  std::map<std::string, TableSchema> out;
  out["hash"].key_schema = {Key("pk"), std::nullopt};
  out["composite"].key_schema = {Key("pk"), Key("sk")};
  out["numeric"].key_schema = {Key("pk", model::ScalarType::kN), Key("sk", model::ScalarType::kN)};
  TableSchema& indexed = out["indexed"];
  indexed.key_schema = {Key("pk"), Key("sk")};
  indexed.indexes = {
      Index("gsi-all", true, {Key("gsiPk"), std::nullopt}, P::kAll),
      Index("gsi-keys", true, {Key("gsiPk2"), std::nullopt}, P::kKeysOnly),
      Index("gsi-inc", true, {Key("gsiPk2"), std::nullopt}, P::kInclude, {"projattr"}),
      Index("gsi-range", true, {Key("gpk"), Key("gsk", model::ScalarType::kN)}, P::kAll),
      Index("lsi-keys", false, {Key("pk"), Key("lsiSk2")}, P::kKeysOnly),
      Index("lsi-all", false, {Key("pk"), Key("lsiSk")}, P::kAll),
  };
  IndexSchema filling = Index("gsi-filling", true, {Key("fpk"), std::nullopt}, P::kAll);
  filling.readable = false;
  indexed.indexes.push_back(filling);
  return out;
}

std::optional<Parameters> ParseParams(const std::string& json, std::string* error) {
  auto wrapped = expr::testing::ParseItemJson("{\"p\": {\"L\": " + json + "}}", error);
  if (!wrapped) return std::nullopt;
  return std::get<model::List>(wrapped->at("p").v);
}

struct Outcome {
  std::optional<std::string> error;
  std::optional<Plan> plan;
};

void CheckCase(const Case& c) {
  auto field = [&](const std::string& k) -> const std::string* {
    auto it = c.fields.find(k);
    return it == c.fields.end() ? nullptr : &it->second;
  };
  ASSERT_TRUE(field("statement")) << "a case needs a statement";
  ASSERT_NE(field("plan") != nullptr || field("matches") || field("output"),
            field("error") != nullptr)
      << "a case needs an error or an expectation on its plan";
  std::string err;
  Parameters params;
  if (const std::string* p = field("params")) {
    auto parsed = ParseParams(*p, &err);
    ASSERT_TRUE(parsed) << "params: " << err;
    params = std::move(*parsed);
  }
  static const std::map<std::string, TableSchema> kSchemas = Schemas();
  std::string schema_name = field("schema") ? *field("schema") : "composite";
  ASSERT_TRUE(kSchemas.count(schema_name)) << "unknown schema " << schema_name;
  TableSchema schema = kSchemas.at(schema_name);
  PlanOptions options;
  if (const std::string* u = field("use")) {
    options.use = *u == "batch"         ? Use::kBatch
                  : *u == "transaction" ? Use::kTransaction
                                        : Use::kStatement;
  }
  options.consistent_read = field("consistent") && *field("consistent") == "true";

  Outcome o;
  auto parsed = Parse(*field("statement"));
  if (!parsed.ok()) {
    o.error = parsed.error().message;
  } else {
    auto bound = Bind(*parsed, params);
    if (!bound.ok()) {
      o.error = bound.error().message;
    } else {
      schema.name = bound->table();
      auto plan = PlanStatement(*bound, schema, options);
      if (!plan.ok()) {
        o.error = plan.error().message;
      } else {
        o.plan = std::move(*plan);
      }
    }
  }
  if (const std::string* want = field("error")) {
    EXPECT_EQ(o.error.value_or("<no error>"), *want)
        << (o.plan ? "plan: " + testing::PlanText(*o.plan) : "");
    return;
  }
  ASSERT_FALSE(o.error) << "unexpected error: " << *o.error;
  if (const std::string* want = field("plan")) {
    EXPECT_EQ(testing::PlanText(*o.plan), *want);
  }
  model::Item item;
  if (const std::string* i = field("item")) {
    auto parsed_item = expr::testing::ParseItemJson(*i, &err);
    ASSERT_TRUE(parsed_item) << "item: " << err;
    item = std::move(*parsed_item);
  }
  if (const std::string* want = field("matches")) {
    const std::optional<expr::Condition>& cond =
        o.plan->is_read ? o.plan->read.filter : o.plan->write.condition;
    bool matches = !cond || expr::EvaluateCondition(*cond, item);
    EXPECT_EQ(matches ? "true" : "false", *want);
  }
  if (const std::string* want = field("output")) {
    ASSERT_TRUE(o.plan->is_read) << "output needs a SELECT";
    auto expected = expr::testing::ParseItemJson(*want, &err);
    ASSERT_TRUE(expected) << "output: " << err;
    EXPECT_EQ(expr::testing::ItemToJson(ProjectOutput(item, o.plan->read)),
              expr::testing::ItemToJson(*expected));
  }
}

TEST(PartiqlCases, AllCaseFiles) {
  std::filesystem::path dir = FDYNO_PARTIQL_TESTDATA;
  std::vector<std::filesystem::path> files = expr::testing::CaseFiles(dir);
  ASSERT_FALSE(files.empty()) << "no case files in " << dir;
  size_t total = 0;
  for (const auto& path : files) {
    std::vector<std::string> problems;
    std::vector<Case> cases = expr::testing::ReadCases(path, &problems);
    for (const std::string& p : problems) ADD_FAILURE() << p;
    for (const Case& c : cases) {
      ++total;
      SCOPED_TRACE(c.file + ":" + std::to_string(c.line) + ": " + c.name);
      CheckCase(c);
    }
  }
  std::cout << "partiql cases run: " << total << "\n";
}

}  // namespace
}  // namespace fdyno::partiql
