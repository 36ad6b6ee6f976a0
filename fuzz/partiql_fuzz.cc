// libFuzzer target for the PartiQL layer. The first input byte picks the table schema and the
// operation the statement runs under (ExecuteStatement, a batch or a transaction); the rest is
// the statement text. Whatever parses is bound (with as many parameters as it has `?`, cycling
// through a fixed set of values) and planned, and the plan's condition, projection and update
// are evaluated against a fixed item, so the binder, the planner and the evaluation of what
// they produce are fuzzed too. Invariants: no crash, no sanitizer report, every error a
// ValidationException, and a read plan's access matches what it carries (a point read has a
// whole key, a Query a partition value), and a point-read template's plan is the full path's.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "expr/evaluate.h"
#include "partiql/bind.h"
#include "partiql/parser.h"
#include "partiql/plan.h"
#include "partiql/point_read.h"

namespace {

using fdyno::model::AttributeValue;
using fdyno::model::KeyAttribute;
using fdyno::model::ScalarType;
using fdyno::partiql::IndexSchema;
using fdyno::partiql::TableSchema;

void Require(bool ok) {
  if (!ok) std::abort();
}

void RequireValidation(const fdyno::Error& e) { Require(e.type == fdyno::ErrorType::kValidation); }

AttributeValue Num(const char* text) {
  return AttributeValue::N(*fdyno::model::Number::Parse(text));
}

struct Fixture {
  std::vector<AttributeValue> values;
  TableSchema tables[2];
  fdyno::model::Item item;

  Fixture() {
    fdyno::model::StringSet ss;
    ss.members = {"x", "y"};
    AttributeValue ssv;
    ssv.v = ss;
    values = {AttributeValue::S("a"),        Num("7"),
              AttributeValue::B("\x01"),     ssv,
              AttributeValue::L({Num("1")}), AttributeValue::Bool(true),
              AttributeValue::MakeNull(),    AttributeValue::S("")};
    tables[0].key_schema = {KeyAttribute{"pk", ScalarType::kS}, std::nullopt};
    tables[1].key_schema = {KeyAttribute{"pk", ScalarType::kS}, KeyAttribute{"sk", ScalarType::kN}};
    IndexSchema gsi;
    gsi.name = "gsi";
    gsi.global = true;
    gsi.key_schema = {KeyAttribute{"g", ScalarType::kS}, std::nullopt};
    gsi.projection = IndexSchema::Projection::kInclude;
    gsi.non_key_attributes = {"a"};
    IndexSchema lsi;
    lsi.name = "lsi";
    lsi.key_schema = {KeyAttribute{"pk", ScalarType::kS}, KeyAttribute{"l", ScalarType::kS}};
    lsi.projection = IndexSchema::Projection::kKeysOnly;
    tables[1].indexes = {gsi, lsi};
    item = {{"pk", AttributeValue::S("a")},
            {"sk", Num("7")},
            {"a", Num("1")},
            {"s", ssv},
            {"l", AttributeValue::L({Num("0"), AttributeValue::M({{"x", Num("1")}})})},
            {"m", AttributeValue::M({{"k", AttributeValue::L({})}, {"n", Num("2")}})}};
  }
};

void CheckRead(const fdyno::partiql::ReadPlan& r, const TableSchema& schema,
               const fdyno::model::Item& item) {
  using Access = fdyno::partiql::ReadPlan::Access;
  if (r.access == Access::kGet) {
    Require(r.key.count(schema.key_schema.hash.name) == 1);
    Require(!schema.key_schema.range || r.key.count(schema.key_schema.range->name) == 1);
  }
  if (r.filter) (void)fdyno::expr::EvaluateCondition(*r.filter, item);
  fdyno::model::Item out = fdyno::partiql::ProjectOutput(item, r);
  if (!r.all_attributes) Require(out.size() <= r.projection.size());
}

void CheckWrite(const fdyno::partiql::WritePlan& w, const TableSchema& schema,
                const fdyno::model::Item& item) {
  Require(w.key.count(schema.key_schema.hash.name) == 1);
  if (w.condition) (void)fdyno::expr::EvaluateCondition(*w.condition, item);
  if (w.kind == fdyno::partiql::WritePlan::Kind::kUpdate) {
    auto updated = fdyno::expr::ApplyUpdate(w.update, item);
    if (!updated.ok()) RequireValidation(updated.error());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Fixture fx;
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto parsed = fdyno::partiql::Parse(text);
  if (!parsed.ok()) return RequireValidation(parsed.error()), 0;
  fdyno::partiql::Parameters params;
  for (size_t i = 0; i < parsed->param_count; ++i) {
    params.push_back(fx.values[(i + data[0]) % fx.values.size()]);
  }
  auto bound = fdyno::partiql::Bind(*parsed, params);
  if (!bound.ok()) return RequireValidation(bound.error()), 0;
  TableSchema schema = fx.tables[data[0] & 1];
  schema.name = bound->table();
  fdyno::partiql::PlanOptions options;
  options.use = static_cast<fdyno::partiql::Use>((data[0] >> 1) % 3);
  options.consistent_read = (data[0] & 8) != 0;
  auto plan = fdyno::partiql::PlanStatement(*bound, schema, options);
  // The template's plan, when it gives one, is the plan of the full path.
  if (auto t = fdyno::partiql::PointReadTemplateOf(*parsed);
      t && options.use == fdyno::partiql::Use::kStatement) {
    if (auto fast = fdyno::partiql::Instantiate(*t, schema.key_schema, params)) {
      Require(plan.ok() && plan->is_read);
      Require(plan->read.access == fdyno::partiql::ReadPlan::Access::kGet);
      Require(plan->read.key == fast->key && !plan->read.filter);
      Require(plan->read.all_attributes == fast->all_attributes);
      Require(plan->read.projection_paths == fast->projection_paths);
    }
  }
  if (!plan.ok()) return RequireValidation(plan.error()), 0;
  if (plan->is_read) {
    CheckRead(plan->read, schema, fx.item);
  } else {
    CheckWrite(plan->write, schema, fx.item);
  }
  return 0;
}
