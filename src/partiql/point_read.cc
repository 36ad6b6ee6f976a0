#include "partiql/point_read.h"

#include <utility>

#include "model/number.h"

namespace fdyno::partiql {
namespace {

using EK = ast::Expr::Kind;

void Conjuncts(const ast::Expr& e, std::vector<const ast::Expr*>& out) {
  if (e.kind == EK::kAnd) {
    Conjuncts(e.children[0], out);
    Conjuncts(e.children[1], out);
  } else {
    out.push_back(&e);
  }
}

// `name = ?` or `name = literal` (either way round) as a key of the template.
std::optional<PointReadTemplate::Key> KeyOf(const ast::Expr& leaf) {
  if (leaf.kind != EK::kCompare || leaf.op != "=") return std::nullopt;
  const ast::Expr* name = &leaf.children[0];
  const ast::Expr* value = &leaf.children[1];
  if (name->kind != EK::kName) std::swap(name, value);
  if (name->kind != EK::kName || name->text.empty()) return std::nullopt;
  PointReadTemplate::Key key;
  key.name = name->text;
  if (value->kind == EK::kParam) {
    key.param = value->param;
  } else if (value->kind == EK::kString) {
    key.literal = model::AttributeValue::S(value->text);
  } else if (value->kind == EK::kNumber) {
    Result<model::Number> n = model::Number::Parse(value->text);
    if (!n.ok()) return std::nullopt;
    key.literal = model::AttributeValue::N(std::move(n).value());
  } else {
    return std::nullopt;
  }
  return key;
}

bool IsEmptyKeyValue(const model::AttributeValue& v) {
  if (v.type() == model::Type::kS) return std::get<std::string>(v.v).empty();
  if (v.type() == model::Type::kB) return std::get<model::Binary>(v.v).bytes.empty();
  return false;
}

}  // namespace

std::optional<PointReadTemplate> PointReadTemplateOf(const ast::Statement& st) {
  if (st.kind != ast::Statement::Kind::kSelect) return std::nullopt;
  const ast::Select& s = st.select;
  if (!s.where || !s.order_by.empty()) return std::nullopt;
  PointReadTemplate t;
  t.param_count = st.param_count;
  std::vector<const ast::Expr*> leaves;
  Conjuncts(*s.where, leaves);
  for (const ast::Expr* leaf : leaves) {
    std::optional<PointReadTemplate::Key> key = KeyOf(*leaf);
    if (!key) return std::nullopt;
    for (const PointReadTemplate::Key& k : t.keys) {
      if (k.name == key->name) return std::nullopt;
    }
    t.keys.push_back(std::move(*key));
  }
  // Everything else of the statement (the FROM, the projection, the clauses) is checked by
  // binding it once with stand-in parameters: the WHERE's checks do not depend on the values
  // of equalities, and the rest does not look at them.
  Parameters stand_ins(st.param_count, model::AttributeValue::S("x"));
  Result<BoundStatement> bound = Bind(st, stand_ins);
  if (!bound.ok() || bound->select.index) return std::nullopt;
  t.table = bound->select.table;
  t.all_attributes = bound->select.all_attributes;
  t.projection = std::move(bound->select.projection);
  t.projection_paths = std::move(bound->select.projection_paths);
  return t;
}

std::optional<ReadPlan> Instantiate(const PointReadTemplate& t, const model::KeySchema& ks,
                                    const Parameters& parameters) {
  if (parameters.size() != t.param_count || t.keys.size() != (ks.range ? 2u : 1u)) {
    return std::nullopt;
  }
  ReadPlan plan;
  plan.access = ReadPlan::Access::kGet;
  plan.table = t.table;
  for (const PointReadTemplate::Key& k : t.keys) {
    const model::KeyAttribute* attr = k.name == ks.hash.name                 ? &ks.hash
                                      : ks.range && k.name == ks.range->name ? &*ks.range
                                                                             : nullptr;
    if (attr == nullptr) return std::nullopt;
    const model::AttributeValue& v = k.param ? parameters[*k.param] : k.literal;
    if (v.type() != model::ToType(attr->type) || IsEmptyKeyValue(v)) return std::nullopt;
    plan.key.emplace(k.name, v);
  }
  plan.all_attributes = t.all_attributes;
  plan.projection = t.projection;
  plan.projection_paths = t.projection_paths;
  return plan;
}

}  // namespace fdyno::partiql
