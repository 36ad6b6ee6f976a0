#include "partiql/testing_plan_text.h"

#include "expr/testing_json.h"

namespace fdyno::partiql::testing {
namespace {

std::string PathText(const expr::Path& p) {
  std::string out;
  for (const expr::PathElement& e : p.elements) {
    if (e.is_index()) {
      out += "[" + std::to_string(e.index()) + "]";
    } else {
      if (!out.empty()) out += ".";
      out += e.name();
    }
  }
  return out;
}

std::string OperandText(const expr::Operand& o) {
  if (o.is_path()) return PathText(o.path());
  if (o.is_value()) return expr::testing::ValueToJson(o.value());
  const expr::Call& call = o.call();
  std::string out = std::string(expr::FunctionName(call.function)) + "(";
  for (size_t i = 0; i < call.args.size(); ++i) {
    if (i > 0) out += ", ";
    out += OperandText(call.args[i]);
  }
  return out + ")";
}

std::string KeyText(const model::Item& key) { return expr::testing::ItemToJson(key); }

std::string RangeText(const expr::KeyRange& r) {
  using Op = expr::KeyRange::Op;
  std::string v = expr::testing::ValueToJson(r.value);
  switch (r.op) {
    case Op::kEq:
      return r.name + " = " + v;
    case Op::kLt:
      return r.name + " < " + v;
    case Op::kLe:
      return r.name + " <= " + v;
    case Op::kGt:
      return r.name + " > " + v;
    case Op::kGe:
      return r.name + " >= " + v;
    case Op::kBetween:
      return r.name + " BETWEEN " + v + " AND " + expr::testing::ValueToJson(r.high);
    case Op::kBeginsWith:
      return "begins_with(" + r.name + ", " + v + ")";
  }
  return "?";
}

std::string ReadText(const ReadPlan& r) {
  std::string out;
  switch (r.access) {
    case ReadPlan::Access::kGet:
      out = "get key=" + KeyText(r.key);
      break;
    case ReadPlan::Access::kQuery:
      out = "query";
      if (r.index) out += " index=" + r.index->name;
      out += " partition=" + r.key_condition.hash_name + "=" +
             expr::testing::ValueToJson(r.key_condition.hash_value);
      if (r.key_condition.range) out += " range=(" + RangeText(*r.key_condition.range) + ")";
      if (!r.forward) out += " desc";
      break;
    case ReadPlan::Access::kScan:
      out = "scan";
      if (r.index) out += " index=" + r.index->name;
      break;
  }
  if (r.filter) out += " filter=" + ConditionText(*r.filter);
  out += " select=";
  if (r.all_attributes) {
    out += "*";
  } else {
    for (size_t i = 0; i < r.projection.size(); ++i) {
      if (i > 0) out += ",";
      const OutputPath& p = r.projection[i];
      std::string path = PathText(p.path);
      out += p.name == path ? p.name : p.name + "<-" + path;
    }
  }
  if (r.fetch_base) out += " fetch_base";
  return out;
}

std::string UpdateText(const expr::Update& u) {
  std::string out;
  for (const expr::UpdateAction& a : u.actions) {
    if (!out.empty()) out += ", ";
    std::string path = PathText(a.path);
    switch (a.kind) {
      case expr::UpdateAction::Kind::kSet: {
        out += "SET " + path + " = " + OperandText(a.set.operands[0]);
        if (a.set.op != expr::SetValue::Op::kValue) {
          out += a.set.op == expr::SetValue::Op::kPlus ? " + " : " - ";
          out += OperandText(a.set.operands[1]);
        }
        break;
      }
      case expr::UpdateAction::Kind::kRemove:
        out += "REMOVE " + path;
        break;
      case expr::UpdateAction::Kind::kAdd:
        out += "ADD " + path + " " + expr::testing::ValueToJson(a.value[0]);
        break;
      case expr::UpdateAction::Kind::kDelete:
        out += "DELETE " + path + " " + expr::testing::ValueToJson(a.value[0]);
        break;
    }
  }
  return out;
}

std::string ReturningName(Returning r) {
  switch (r) {
    case Returning::kNone:
      return "NONE";
    case Returning::kAllOld:
      return "ALL_OLD";
    case Returning::kAllNew:
      return "ALL_NEW";
    case Returning::kModifiedOld:
      return "MODIFIED_OLD";
    case Returning::kModifiedNew:
      return "MODIFIED_NEW";
  }
  return "?";
}

std::string WriteText(const WritePlan& w) {
  std::string out;
  switch (w.kind) {
    case WritePlan::Kind::kInsert:
      out = "insert";
      break;
    case WritePlan::Kind::kUpdate:
      out = "update";
      break;
    case WritePlan::Kind::kDelete:
      out = "delete";
      break;
    case WritePlan::Kind::kCheck:
      out = "check";
      break;
  }
  out += " key=" + KeyText(w.key);
  if (w.kind == WritePlan::Kind::kInsert) out += " item=" + KeyText(w.item);
  if (w.kind == WritePlan::Kind::kUpdate) out += " actions=" + UpdateText(w.update);
  if (w.condition) out += " condition=" + ConditionText(*w.condition);
  if (w.on_false == WritePlan::OnFalse::kDuplicateItem) out += " on_false=DuplicateItem";
  if (w.returning != Returning::kNone) out += " returning=" + ReturningName(w.returning);
  return out;
}

}  // namespace

std::string ConditionText(const expr::Condition& c) {
  using K = expr::Condition::Kind;
  switch (c.kind) {
    case K::kAnd:
      return "(" + ConditionText(c.children[0]) + " AND " + ConditionText(c.children[1]) + ")";
    case K::kOr:
      return "(" + ConditionText(c.children[0]) + " OR " + ConditionText(c.children[1]) + ")";
    case K::kNot:
      return "NOT " + ConditionText(c.children[0]);
    case K::kCompare:
      return "(" + OperandText(c.operands[0]) + " " + std::string(expr::CompareOpText(c.op)) + " " +
             OperandText(c.operands[1]) + ")";
    case K::kBetween:
      return "(" + OperandText(c.operands[0]) + " BETWEEN " + OperandText(c.operands[1]) + " AND " +
             OperandText(c.operands[2]) + ")";
    case K::kIn: {
      std::string out = "(" + OperandText(c.operands[0]) + " IN (";
      for (size_t i = 1; i < c.operands.size(); ++i) {
        if (i > 1) out += ", ";
        out += OperandText(c.operands[i]);
      }
      return out + "))";
    }
    case K::kFunction:
      return OperandText(c.operands[0]);
  }
  return "?";
}

std::string PlanText(const Plan& plan) {
  return plan.is_read ? ReadText(plan.read) : WriteText(plan.write);
}

}  // namespace fdyno::partiql::testing
