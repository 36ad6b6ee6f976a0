// Runs the data-driven expression cases in src/expr/testdata/*.txt through the whole pipeline
// (parse -> resolve with one shared context -> unused check -> evaluate).
//
// Case file format (one key per line, "key: value"; '#' starts a comment line):
//
//   === name of the case
//   condition: <ConditionExpression>       (also: filter, keycondition, projection, update)
//   names: {"#n": "name"}                  ExpressionAttributeNames (JSON)
//   values: {":v": {"S": "x"}}             ExpressionAttributeValues (DynamoDB JSON)
//   item: {"a": {"N": "1"}}                the stored item (absent: no item)
//   expect: true | false | {item JSON}     condition result, or the updated/projected item
//   error: <exact message>                 the first error of any stage
//
// With an update and a condition, a false condition is the error
// "The conditional request failed"; otherwise the update's new item is compared.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "expr/evaluate.h"
#include "expr/parser.h"
#include "expr/resolver.h"
#include "expr/testing_cases.h"
#include "expr/testing_json.h"

namespace fdyno::expr {
namespace {

using testing::Case;

// The outcome of running a case: an error message, a truth value, or an item.
struct Outcome {
  std::optional<std::string> error;
  std::optional<bool> truth;
  std::optional<model::Item> item;
};

Outcome RunCase(const Case& c) {
  Outcome out;
  auto field = [&](const std::string& k) -> const std::string* {
    auto it = c.fields.find(k);
    return it == c.fields.end() ? nullptr : &it->second;
  };
  std::string err;
  std::optional<AttributeNames> names;
  std::optional<AttributeValues> values;
  model::Item item;
  if (const std::string* f = field("names")) {
    names = testing::ParseStringMapJson(*f, &err);
    EXPECT_TRUE(names) << "names: " << err;
  }
  if (const std::string* f = field("values")) {
    values = testing::ParseItemJson(*f, &err);
    EXPECT_TRUE(values) << "values: " << err;
  }
  if (const std::string* f = field("item")) {
    auto i = testing::ParseItemJson(*f, &err);
    EXPECT_TRUE(i) << "item: " << err;
    if (i) item = std::move(*i);
  }
  auto fail = [&](const Error& e) {
    out.error = e.message;
    return out;
  };

  // Stage 1: parse, in the order DynamoDB validates an UpdateItem/Query request's parameters.
  std::optional<parsed::Update> p_update;
  std::vector<std::pair<ExpressionKind, parsed::Condition>> p_conditions;
  std::optional<parsed::Projection> p_projection;
  if (const std::string* f = field("update")) {
    auto r = ParseUpdate(*f);
    if (!r.ok()) return fail(r.error());
    p_update = std::move(*r);
  }
  const std::pair<const char*, ExpressionKind> kConditionKinds[] = {
      {"condition", ExpressionKind::kCondition},
      {"keycondition", ExpressionKind::kKeyCondition},
      {"filter", ExpressionKind::kFilter}};
  for (const auto& [key, kind] : kConditionKinds) {
    if (const std::string* f = field(key)) {
      auto r = ParseCondition(*f, kind);
      if (!r.ok()) return fail(r.error());
      p_conditions.emplace_back(kind, std::move(*r));
    }
  }
  if (const std::string* f = field("projection")) {
    auto r = ParseProjection(*f);
    if (!r.ok()) return fail(r.error());
    p_projection = std::move(*r);
  }

  // Stage 2: resolve through one context, then the unused check.
  ResolveContext ctx(names ? &*names : nullptr, values ? &*values : nullptr);
  std::optional<Update> update;
  std::vector<Condition> conditions;
  std::optional<Projection> projection;
  if (p_update) {
    auto r = ctx.ResolveUpdate(*p_update);
    if (!r.ok()) return fail(r.error());
    update = std::move(*r);
  }
  for (const auto& [kind, tree] : p_conditions) {
    auto r = ctx.ResolveCondition(tree, kind);
    if (!r.ok()) return fail(r.error());
    conditions.push_back(std::move(*r));
  }
  if (p_projection) {
    auto r = ctx.ResolveProjection(*p_projection);
    if (!r.ok()) return fail(r.error());
    projection = std::move(*r);
  }
  if (Status s = ctx.CheckUnused(); !s.ok()) return fail(s.error());

  // Stage 3: evaluate.
  bool truth = true;
  for (const Condition& cond : conditions) truth = truth && EvaluateCondition(cond, item);
  if (update) {
    if (!truth) {
      out.error = "The conditional request failed";
      return out;
    }
    auto r = ApplyUpdate(*update, item);
    if (!r.ok()) return fail(r.error());
    out.item = std::move(*r);
    return out;
  }
  if (projection) {
    out.item = Project(item, *projection);
    return out;
  }
  out.truth = truth;
  return out;
}

void CheckCase(const Case& c) {
  bool has_error = c.fields.count("error") > 0;
  bool has_expect = c.fields.count("expect") > 0;
  ASSERT_NE(has_error, has_expect) << "a case needs exactly one of expect/error";
  Outcome o = RunCase(c);
  if (has_error) {
    EXPECT_EQ(o.error.value_or("<no error>"), c.fields.at("error"));
    return;
  }
  ASSERT_FALSE(o.error) << "unexpected error: " << *o.error;
  const std::string& expect = c.fields.at("expect");
  if (expect == "true" || expect == "false") {
    ASSERT_TRUE(o.truth) << "case produced an item, expected a truth value";
    EXPECT_EQ(*o.truth, expect == "true");
    return;
  }
  std::string err;
  auto want = testing::ParseItemJson(expect, &err);
  ASSERT_TRUE(want) << "expect: " << err;
  ASSERT_TRUE(o.item) << "case produced a truth value, expected an item";
  EXPECT_EQ(testing::ItemToJson(*o.item), testing::ItemToJson(*want));
  // Sets compare as sets; the JSON above also checks member order.
  EXPECT_TRUE(*o.item == *want);
}

TEST(ExprCases, AllCaseFiles) {
  std::filesystem::path dir = FDYNO_EXPR_TESTDATA;
  std::vector<std::filesystem::path> files = testing::CaseFiles(dir);
  ASSERT_FALSE(files.empty()) << "no case files in " << dir;
  size_t total = 0;
  for (const auto& path : files) {
    std::vector<std::string> problems;
    std::vector<Case> cases = testing::ReadCases(path, &problems);
    for (const std::string& p : problems) ADD_FAILURE() << p;
    for (const Case& c : cases) {
      ++total;
      SCOPED_TRACE(c.file + ":" + std::to_string(c.line) + ": " + c.name);
      CheckCase(c);
    }
  }
  std::cout << "expression cases run: " << total << "\n";
}

}  // namespace
}  // namespace fdyno::expr
