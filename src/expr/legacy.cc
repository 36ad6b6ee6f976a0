#include "expr/legacy.h"

#include <array>
#include <set>

namespace fdyno::expr::legacy {
namespace {

constexpr std::string_view kInvalid = "One or more parameter values were invalid: ";

Error Invalid(const std::string& message) {
  return Error::Validation(std::string(kInvalid) + message);
}

constexpr std::array<std::pair<std::string_view, ComparisonOperator>, 13> kOperators = {{
    {"EQ", ComparisonOperator::kEq},
    {"NE", ComparisonOperator::kNe},
    {"LE", ComparisonOperator::kLe},
    {"LT", ComparisonOperator::kLt},
    {"GE", ComparisonOperator::kGe},
    {"GT", ComparisonOperator::kGt},
    {"NOT_NULL", ComparisonOperator::kNotNull},
    {"NULL", ComparisonOperator::kNull},
    {"CONTAINS", ComparisonOperator::kContains},
    {"NOT_CONTAINS", ComparisonOperator::kNotContains},
    {"BEGINS_WITH", ComparisonOperator::kBeginsWith},
    {"IN", ComparisonOperator::kIn},
    {"BETWEEN", ComparisonOperator::kBetween},
}};

Path TopLevel(const std::string& name) {
  Path p;
  p.elements.emplace_back().v.emplace<0>(name);
  return p;
}

Operand PathOperand(const std::string& name) { return Operand{TopLevel(name)}; }
Operand ValueOperand(const model::AttributeValue& v) { return Operand{v}; }

Condition FunctionCondition(Function f, std::vector<Operand> args) {
  Condition c;
  c.kind = Condition::Kind::kFunction;
  Call call;
  call.function = f;
  call.args = std::move(args);
  c.operands.push_back(Operand{std::move(call)});
  return c;
}

Condition CompareCondition(CompareOp op, const std::string& name, const model::AttributeValue& v) {
  Condition c;
  c.kind = Condition::Kind::kCompare;
  c.op = op;
  c.operands.push_back(PathOperand(name));
  c.operands.push_back(ValueOperand(v));
  return c;
}

Condition Not(Condition inner) {
  Condition c;
  c.kind = Condition::Kind::kNot;
  c.children.push_back(std::move(inner));
  return c;
}

// a > b for two scalars of one type (numbers by value, strings and binaries bytewise).
bool Greater(const model::AttributeValue& a, const model::AttributeValue& b) {
  switch (a.type()) {
    case model::Type::kN:
      return std::get<model::Number>(a.v).Compare(std::get<model::Number>(b.v)) > 0;
    case model::Type::kS:
      return std::get<std::string>(a.v) > std::get<std::string>(b.v);
    case model::Type::kB:
      return std::get<model::Binary>(a.v).bytes > std::get<model::Binary>(b.v).bytes;
    default:
      return false;
  }
}

bool IsScalar(model::Type t) {
  return t == model::Type::kS || t == model::Type::kN || t == model::Type::kB;
}

// Number of AttributeValueList entries each operator takes; -1 for "one or more".
int Arity(ComparisonOperator op) {
  switch (op) {
    case ComparisonOperator::kNotNull:
    case ComparisonOperator::kNull:
      return 0;
    case ComparisonOperator::kIn:
      return -1;
    case ComparisonOperator::kBetween:
      return 2;
    default:
      return 1;
  }
}

// Which value types each operator accepts.
bool TypeAllowed(ComparisonOperator op, model::Type t) {
  switch (op) {
    case ComparisonOperator::kEq:
    case ComparisonOperator::kNe:
      return true;
    case ComparisonOperator::kBeginsWith:
      return t == model::Type::kS || t == model::Type::kB;
    case ComparisonOperator::kContains:
    case ComparisonOperator::kNotContains:
      return IsScalar(t) || t == model::Type::kBool || t == model::Type::kNull;
    default:
      return IsScalar(t);
  }
}

// Builds the condition of one attribute from an operator and its checked values.
Result<Condition> Build(const std::string& name, ComparisonOperator op,
                        const std::vector<model::AttributeValue>& values) {
  int arity = Arity(op);
  if ((arity >= 0 && static_cast<int>(values.size()) != arity) || (arity < 0 && values.empty())) {
    return Invalid("Invalid number of argument(s) for the " +
                   std::string(ComparisonOperatorName(op)) + " ComparisonOperator");
  }
  for (const model::AttributeValue& v : values) {
    if (!TypeAllowed(op, v.type())) {
      return Invalid("ComparisonOperator " + std::string(ComparisonOperatorName(op)) +
                     " is not valid for " + std::string(model::TypeName(v.type())) +
                     " AttributeValue type");
    }
  }
  switch (op) {
    case ComparisonOperator::kEq:
      return CompareCondition(CompareOp::kEq, name, values[0]);
    case ComparisonOperator::kNe:
      return CompareCondition(CompareOp::kNe, name, values[0]);
    case ComparisonOperator::kLe:
      return CompareCondition(CompareOp::kLe, name, values[0]);
    case ComparisonOperator::kLt:
      return CompareCondition(CompareOp::kLt, name, values[0]);
    case ComparisonOperator::kGe:
      return CompareCondition(CompareOp::kGe, name, values[0]);
    case ComparisonOperator::kGt:
      return CompareCondition(CompareOp::kGt, name, values[0]);
    case ComparisonOperator::kNotNull:
      return FunctionCondition(Function::kAttributeExists, {PathOperand(name)});
    case ComparisonOperator::kNull:
      return FunctionCondition(Function::kAttributeNotExists, {PathOperand(name)});
    case ComparisonOperator::kContains:
      return FunctionCondition(Function::kContains, {PathOperand(name), ValueOperand(values[0])});
    case ComparisonOperator::kNotContains: {
      // A missing attribute does not satisfy NOT_CONTAINS.
      Condition c;
      c.kind = Condition::Kind::kAnd;
      c.children.push_back(FunctionCondition(Function::kAttributeExists, {PathOperand(name)}));
      c.children.push_back(Not(
          FunctionCondition(Function::kContains, {PathOperand(name), ValueOperand(values[0])})));
      return c;
    }
    case ComparisonOperator::kBeginsWith:
      return FunctionCondition(Function::kBeginsWith, {PathOperand(name), ValueOperand(values[0])});
    case ComparisonOperator::kIn: {
      for (const auto& v : values) {
        if (v.type() != values[0].type()) {
          return Invalid("AttributeValues inside AttributeValueList must be of same type");
        }
      }
      Condition c;
      c.kind = Condition::Kind::kIn;
      c.operands.push_back(PathOperand(name));
      for (const auto& v : values) c.operands.push_back(ValueOperand(v));
      return c;
    }
    case ComparisonOperator::kBetween: {
      if (values[0].type() != values[1].type()) {
        return Invalid("AttributeValues inside AttributeValueList must be of same type");
      }
      if (Greater(values[0], values[1])) {
        return Error::Validation(
            "The BETWEEN condition was provided a range where the lower bound is greater than the "
            "upper bound");
      }
      Condition c;
      c.kind = Condition::Kind::kBetween;
      c.operands.push_back(PathOperand(name));
      c.operands.push_back(ValueOperand(values[0]));
      c.operands.push_back(ValueOperand(values[1]));
      return c;
    }
  }
  return Invalid("Unsupported ComparisonOperator");
}

Condition Combine(std::vector<Condition> parts, ConditionalOperator conditional_operator) {
  Condition out = std::move(parts[0]);
  for (size_t i = 1; i < parts.size(); ++i) {
    Condition c;
    c.kind = conditional_operator == ConditionalOperator::kOr ? Condition::Kind::kOr
                                                              : Condition::Kind::kAnd;
    c.children.push_back(std::move(out));
    c.children.push_back(std::move(parts[i]));
    out = std::move(c);
  }
  return out;
}

}  // namespace

std::optional<ComparisonOperator> ParseComparisonOperator(std::string_view text) {
  for (const auto& [name, op] : kOperators) {
    if (name == text) return op;
  }
  return std::nullopt;
}

std::string_view ComparisonOperatorName(ComparisonOperator op) {
  for (const auto& [name, o] : kOperators) {
    if (o == op) return name;
  }
  return "?";
}

Result<Condition> ConvertExpected(const std::map<std::string, ExpectedCondition>& expected,
                                  ConditionalOperator conditional_operator) {
  std::vector<Condition> parts;
  for (const auto& [name, e] : expected) {
    if (e.op) {
      if (e.exists) {
        return Invalid("Exists and ComparisonOperator cannot be used together for Attribute: " +
                       name);
      }
      if (e.value && e.value_list) {
        return Invalid("Value and AttributeValueList cannot be used together for Attribute: " +
                       name);
      }
      if (!e.value && !e.value_list && Arity(*e.op) != 0) {
        return Invalid("Value or AttributeValueList must be used with ComparisonOperator: " +
                       std::string(ComparisonOperatorName(*e.op)) + " for Attribute: " + name);
      }
      std::vector<model::AttributeValue> values;
      if (e.value_list) {
        values = *e.value_list;
      } else if (e.value) {
        values.push_back(*e.value);
      }
      FDYNO_ASSIGN_OR_RETURN(Condition c, Build(name, *e.op, values));
      parts.push_back(std::move(c));
      continue;
    }
    if (e.value_list) {
      return Invalid(
          "AttributeValueList can only be used with a ComparisonOperator for Attribute: " + name);
    }
    bool exists = !e.exists.has_value() || *e.exists;
    if (exists && !e.value) {
      return Invalid(std::string("Value must be provided when Exists is ") +
                     (e.exists ? "true" : "null") + " for Attribute: " + name);
    }
    if (!exists && e.value) {
      return Invalid("Value cannot be used when Exists is false for Attribute: " + name);
    }
    if (exists) {
      parts.push_back(CompareCondition(CompareOp::kEq, name, *e.value));
    } else {
      parts.push_back(FunctionCondition(Function::kAttributeNotExists, {PathOperand(name)}));
    }
  }
  return Combine(std::move(parts), conditional_operator);
}

Result<Condition> ConvertFilter(const std::map<std::string, FilterCondition>& conditions,
                                ConditionalOperator conditional_operator) {
  std::vector<Condition> parts;
  for (const auto& [name, f] : conditions) {
    FDYNO_ASSIGN_OR_RETURN(Condition c, Build(name, f.op, f.values));
    parts.push_back(std::move(c));
  }
  return Combine(std::move(parts), conditional_operator);
}

Status CheckKeyConditions(const std::map<std::string, FilterCondition>& conditions) {
  if (conditions.empty() || conditions.size() > 2) {
    return Error::Validation("Conditions can be of length 1 or 2 only");
  }
  for (const auto& [name, f] : conditions) {
    switch (f.op) {
      case ComparisonOperator::kEq:
      case ComparisonOperator::kLe:
      case ComparisonOperator::kLt:
      case ComparisonOperator::kGe:
      case ComparisonOperator::kGt:
      case ComparisonOperator::kBeginsWith:
      case ComparisonOperator::kBetween:
        break;
      default:
        return Error::Validation("Attempted conditional constraint is not an indexable operation");
    }
  }
  return Status::Ok();
}

Result<Projection> ConvertAttributesToGet(const std::vector<std::string>& attributes) {
  std::set<std::string> seen;
  Projection out;
  for (const std::string& a : attributes) {
    if (!seen.insert(a).second) {
      return Invalid("Duplicate value in attribute name: " + a);
    }
    out.push_back(TopLevel(a));
  }
  return out;
}

Result<Update> ConvertAttributeUpdates(const std::map<std::string, AttributeUpdate>& updates) {
  Update out;
  out.legacy = true;
  for (const auto& [name, u] : updates) {
    if (!u.value && u.action != AttributeUpdate::Action::kDelete) {
      return Invalid("Only DELETE action is allowed when no attribute value is specified");
    }
    UpdateAction a;
    a.path = TopLevel(name);
    switch (u.action) {
      case AttributeUpdate::Action::kPut:
        a.kind = UpdateAction::Kind::kSet;
        a.set.operands.push_back(ValueOperand(*u.value));
        break;
      case AttributeUpdate::Action::kDelete:
        if (!u.value) {
          a.kind = UpdateAction::Kind::kRemove;
          break;
        }
        if (u.value->type() != model::Type::kSS && u.value->type() != model::Type::kNS &&
            u.value->type() != model::Type::kBS) {
          return Invalid("DELETE action with value is not supported for the type " +
                         std::string(model::TypeName(u.value->type())));
        }
        a.kind = UpdateAction::Kind::kDelete;
        a.value.push_back(*u.value);
        break;
      case AttributeUpdate::Action::kAdd: {
        model::Type t = u.value->type();
        if (t == model::Type::kL) {
          // SET name = list_append(if_not_exists(name, []), value)
          Call inner;
          inner.function = Function::kIfNotExists;
          inner.args.push_back(PathOperand(name));
          inner.args.push_back(ValueOperand(model::AttributeValue::L({})));
          Call append;
          append.function = Function::kListAppend;
          append.args.push_back(Operand{std::move(inner)});
          append.args.push_back(ValueOperand(*u.value));
          a.kind = UpdateAction::Kind::kSet;
          a.set.operands.push_back(Operand{std::move(append)});
          break;
        }
        if (t != model::Type::kN && t != model::Type::kSS && t != model::Type::kNS &&
            t != model::Type::kBS) {
          return Invalid("ADD action is not supported for the type " +
                         std::string(model::TypeName(t)));
        }
        a.kind = UpdateAction::Kind::kAdd;
        a.value.push_back(*u.value);
        break;
      }
    }
    out.actions.push_back(std::move(a));
  }
  return out;
}

}  // namespace fdyno::expr::legacy
