#include "expr/resolver.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace fdyno::expr {

namespace {

// Problems are remembered (the first of each kind) and reported in this order, DynamoDB's.
enum Slot {
  kSlotName,
  kSlotValue,
  kSlotOverlap,
  kSlotConflict,
  kSlotUpdateOperand,
  kSlotArity,
  kSlotDistinct,
  kSlotType,
  kSlotCount,
};

std::string Base64(const std::string& bytes) {
  static constexpr char kChars[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t n = (static_cast<uint8_t>(bytes[i]) << 16) |
                 (static_cast<uint8_t>(bytes[i + 1]) << 8) | static_cast<uint8_t>(bytes[i + 2]);
    out += kChars[(n >> 18) & 63];
    out += kChars[(n >> 12) & 63];
    out += kChars[(n >> 6) & 63];
    out += kChars[n & 63];
  }
  if (i + 1 == bytes.size()) {
    uint32_t n = static_cast<uint8_t>(bytes[i]) << 16;
    out += kChars[(n >> 18) & 63];
    out += kChars[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    uint32_t n = (static_cast<uint8_t>(bytes[i]) << 16) | (static_cast<uint8_t>(bytes[i + 1]) << 8);
    out += kChars[(n >> 18) & 63];
    out += kChars[(n >> 12) & 63];
    out += kChars[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

// "{N:5}" as DynamoDB prints a scalar bound in BETWEEN messages.
std::string BoundString(const model::AttributeValue& v) {
  std::string text;
  switch (v.type()) {
    case model::Type::kS:
      text = std::get<std::string>(v.v);
      break;
    case model::Type::kN:
      text = std::get<model::Number>(v.v).ToString();
      break;
    case model::Type::kB:
      text = Base64(std::get<model::Binary>(v.v).bytes);
      break;
    default:
      break;
  }
  return "AttributeValue: {" + std::string(model::TypeName(v.type())) + ":" + text + "}";
}

// <0, 0, >0; REQUIRES: a and b of the same type, one of S, N, B.
int CompareScalars(const model::AttributeValue& a, const model::AttributeValue& b) {
  switch (a.type()) {
    case model::Type::kN:
      return std::get<model::Number>(a.v).Compare(std::get<model::Number>(b.v));
    case model::Type::kS:
      return std::get<std::string>(a.v).compare(std::get<std::string>(b.v));
    case model::Type::kB:
      return std::get<model::Binary>(a.v).bytes.compare(std::get<model::Binary>(b.v).bytes);
    default:
      return 0;
  }
}

bool IsScalarOrderable(model::Type t) {
  return t == model::Type::kS || t == model::Type::kN || t == model::Type::kB;
}

std::string UpdateTypeName(model::Type t) {
  switch (t) {
    case model::Type::kS:
      return "STRING";
    case model::Type::kN:
      return "NUMBER";
    case model::Type::kB:
      return "BINARY";
    case model::Type::kNull:
      return "NULL";
    case model::Type::kBool:
      return "BOOLEAN";
    case model::Type::kL:
      return "LIST";
    case model::Type::kM:
      return "MAP";
    default:
      return std::string(model::TypeName(t));
  }
}

bool IsSet(model::Type t) {
  return t == model::Type::kSS || t == model::Type::kNS || t == model::Type::kBS;
}

constexpr std::string_view kValidTypes = "{B,NULL,SS,BOOL,L,BS,N,NS,S,M}";

}  // namespace

class Resolver {
 public:
  Resolver(ResolveContext& ctx, ExpressionKind kind) : ctx_(ctx), kind_(kind) {}

  Status Finish() const {
    // A key condition reports an operand's type before a later undefined placeholder.
    if (kind_ == ExpressionKind::kKeyCondition && type_before_name_ && deferred_[kSlotType]) {
      return Report(*deferred_[kSlotType]);
    }
    for (const auto& d : deferred_) {
      if (d) return Report(*d);
    }
    return Status::Ok();
  }

  Error Report(const std::string& problem) const {
    if (ctx_.omit_expression_names_) return Error::Validation(problem);
    return Error::Validation("Invalid " + std::string(KindName(kind_)) + ": " + problem);
  }

  Path ResolvePath(const parsed::Path& p) {
    Path out;
    out.elements.reserve(p.elements.size());
    for (const parsed::PathElement& e : p.elements) {
      switch (e.kind) {
        case parsed::PathElement::Kind::kName:
          out.elements.emplace_back().v.emplace<0>(e.text);
          break;
        case parsed::PathElement::Kind::kIndex:
          out.elements.emplace_back().v.emplace<1>(e.index);
          break;
        case parsed::PathElement::Kind::kNameRef: {
          const std::string* name = nullptr;
          if (ctx_.names_ != nullptr) {
            auto it = ctx_.names_->find(e.text);
            if (it != ctx_.names_->end()) name = &it->second;
          }
          if (name == nullptr) {
            Note(kSlotName,
                 "An expression attribute name used in the document path is not defined; "
                 "attribute name: " +
                     e.text);
            out.elements.emplace_back().v.emplace<0>(e.text);
          } else {
            ctx_.used_names_.insert(e.text);
            out.elements.emplace_back().v.emplace<0>(*name);
          }
          break;
        }
      }
    }
    return out;
  }

  model::AttributeValue ResolveValue(const parsed::ValueRef& ref) {
    if (ctx_.values_ != nullptr) {
      auto it = ctx_.values_->find(ref.name);
      if (it != ctx_.values_->end()) {
        ctx_.used_values_.insert(ref.name);
        return it->second;
      }
    }
    // Conditions report the first undefined placeholder of either kind; updates report
    // undefined names before undefined values.
    Note(kind_ == ExpressionKind::kUpdate ? kSlotValue : kSlotName,
         "An expression attribute value used in expression is not defined; attribute value: " +
             ref.name);
    return model::AttributeValue::MakeNull();
  }

  Operand ResolveOperand(const parsed::Operand& o) {
    if (o.is_path()) return Operand{ResolvePath(o.path())};
    if (o.is_value()) return Operand{ResolveValue(o.value())};
    const parsed::Call& pc = o.call();
    Call call;
    call.function = pc.function;
    for (const parsed::Operand& a : pc.args) call.args.push_back(ResolveOperand(a));
    CheckCall(call);
    return Operand{std::move(call)};
  }

  Condition ResolveCond(const parsed::Condition& c) {
    Condition out;
    out.kind = static_cast<Condition::Kind>(c.kind);
    out.op = c.op;
    const bool ordering = out.kind == Condition::Kind::kBetween ||
                          (out.kind == Condition::Kind::kCompare && out.op != CompareOp::kEq &&
                           out.op != CompareOp::kNe);
    const std::string_view op =
        out.kind == Condition::Kind::kBetween ? "BETWEEN" : CompareOpText(out.op);
    // Each operand is checked as it is resolved, so problems are found in the order they appear.
    for (const parsed::Operand& o : c.operands) {
      out.operands.push_back(ResolveOperand(o));
      if (ordering && Defined(o)) CheckOrderable(op, out.operands.back());
    }
    for (const parsed::Condition& ch : c.children) out.children.push_back(ResolveCond(ch));
    switch (out.kind) {
      case Condition::Kind::kCompare:
        CheckDistinct(std::string(CompareOpText(out.op)), out.operands[0], out.operands[1]);
        break;
      case Condition::Kind::kBetween:
        CheckBetween(out.operands[1], out.operands[2]);
        break;
      default:
        break;
    }
    return out;
  }

  // The checks of ResolveOperand and ResolveCond, on a resolved tree, in their order.
  void CheckOperand(const Operand& o) {
    if (!o.is_call()) return;
    for (const Operand& a : o.call().args) CheckOperand(a);
    CheckCall(o.call());
  }

  void CheckCond(const Condition& c) {
    for (const Operand& o : c.operands) CheckOperand(o);
    for (const Condition& ch : c.children) CheckCond(ch);
    switch (c.kind) {
      case Condition::Kind::kCompare:
        CheckDistinct(std::string(CompareOpText(c.op)), c.operands[0], c.operands[1]);
        break;
      case Condition::Kind::kBetween:
        CheckBetween(c.operands[1], c.operands[2]);
        break;
      default:
        break;
    }
  }

  SetValue ResolveSetValue(const parsed::SetValue& sv) {
    SetValue out;
    out.op = static_cast<SetValue::Op>(sv.op);
    for (const parsed::Operand& o : sv.operands) out.operands.push_back(ResolveOperand(o));
    if (out.op != SetValue::Op::kValue) {
      std::string name = out.op == SetValue::Op::kPlus ? "+" : "-";
      for (const Operand& o : out.operands) {
        if (o.is_value() && o.value().type() != model::Type::kN) {
          Note(kSlotType,
               "Incorrect operand type for operator or function; operator or function: " + name +
                   ", operand type: " + std::string(model::TypeName(o.value().type())));
        }
      }
    }
    return out;
  }

  // Overlap and conflict checks between all pairs of paths, in the order written.
  void CheckPaths(const std::vector<const Path*>& paths) {
    for (size_t j = 1; j < paths.size(); ++j) {
      for (size_t i = 0; i < j; ++i) {
        const Path& one = *paths[i];
        const Path& two = *paths[j];
        size_t n = std::min(one.elements.size(), two.elements.size());
        bool differ = false;
        for (size_t k = 0; k < n; ++k) {
          const PathElement& a = one.elements[k];
          const PathElement& b = two.elements[k];
          if (a.is_index() != b.is_index()) {
            Note(kSlotConflict,
                 "Two document paths conflict with each other; must remove or rewrite one of "
                 "these paths; path one: " +
                     PathToString(one) + ", path two: " + PathToString(two));
            differ = true;
            break;
          }
          if (!(a == b)) {
            differ = true;
            break;
          }
        }
        if (!differ) {
          Note(kSlotOverlap,
               "Two document paths overlap with each other; must remove or rewrite one of these "
               "paths; path one: " +
                   PathToString(one) + ", path two: " + PathToString(two));
        }
        if (deferred_[kSlotOverlap] && deferred_[kSlotConflict]) return;
      }
    }
  }

  void CheckUpdateOperand(std::string_view op, const model::AttributeValue& v) {
    model::Type t = v.type();
    bool ok = IsSet(t) || (op == "ADD" && t == model::Type::kN);
    if (!ok) {
      Note(kSlotUpdateOperand, "Incorrect operand type for operator or function; operator: " +
                                   std::string(op) + ", operand type: " + UpdateTypeName(t));
    }
  }

 private:
  void Note(Slot slot, std::string message) {
    if (deferred_[slot]) return;
    if (slot == kSlotType && !deferred_[kSlotName]) type_before_name_ = true;
    deferred_[slot] = std::move(message);
  }

  // The type an operand is known to have before reading the item, if any.
  static std::optional<model::Type> StaticType(const Operand& o) {
    if (o.is_value()) return o.value().type();
    if (o.is_call() && o.call().function == Function::kSize) return model::Type::kN;
    return std::nullopt;
  }

  void OperandTypeError(Function f, std::string_view type) {
    Note(kSlotType, "Incorrect operand type for operator or function; operator or function: " +
                        std::string(FunctionName(f)) + ", operand type: " + std::string(type));
  }

  void CheckCall(const Call& call) {
    Function f = call.function;
    size_t want = 2;
    if (f == Function::kAttributeExists || f == Function::kAttributeNotExists ||
        f == Function::kSize) {
      want = 1;
    }
    if (call.args.size() != want) {
      Note(kSlotArity,
           "Incorrect number of operands for operator or function; operator or function: " +
               std::string(FunctionName(f)) +
               ", number of operands: " + std::to_string(call.args.size()));
      return;
    }
    switch (f) {
      case Function::kAttributeExists:
      case Function::kAttributeNotExists:
      case Function::kIfNotExists:
        if (!call.args[0].is_path()) {
          Note(kSlotType, "Operator or function requires a document path; operator or function: " +
                              std::string(FunctionName(f)));
        }
        break;
      case Function::kBeginsWith:
        CheckDistinct(std::string(FunctionName(f)), call.args[0], call.args[1]);
        for (const Operand& a : call.args) {
          auto t = StaticType(a);
          if (t && *t != model::Type::kS && *t != model::Type::kB) {
            OperandTypeError(f, model::TypeName(*t));
          }
        }
        break;
      case Function::kContains:
        CheckDistinct(std::string(FunctionName(f)), call.args[0], call.args[1]);
        break;
      case Function::kAttributeType: {
        CheckDistinct(std::string(FunctionName(f)), call.args[0], call.args[1]);
        auto t = StaticType(call.args[1]);
        if (!t) {
          OperandTypeError(f, "{NS,SS,L,BS,N,M,B,BOOL,NULL,S}");
        } else if (*t != model::Type::kS || !call.args[1].is_value()) {
          OperandTypeError(f, model::TypeName(*t));
        } else {
          const std::string& name = std::get<std::string>(call.args[1].value().v);
          static constexpr std::array<std::string_view, 10> kNames = {
              "S", "N", "B", "NULL", "SS", "BOOL", "L", "BS", "NS", "M"};
          bool valid = false;
          for (auto n : kNames) valid = valid || n == name;
          if (!valid) {
            Note(kSlotType, "Invalid attribute type name found; type: " + name +
                                ", valid types: " + std::string(kValidTypes));
          }
        }
        break;
      }
      case Function::kSize: {
        auto t = StaticType(call.args[0]);
        if (t && (*t == model::Type::kN || *t == model::Type::kBool || *t == model::Type::kNull)) {
          OperandTypeError(f, model::TypeName(*t));
        }
        break;
      }
      case Function::kListAppend:
        for (const Operand& a : call.args) {
          if (a.is_value() && a.value().type() != model::Type::kL) {
            OperandTypeError(f, model::TypeName(a.value().type()));
          }
        }
        break;
    }
  }

  // An ordering comparison with a value it cannot order (Orderable).
  void CheckOrderable(std::string_view op, const Operand& o) {
    if (!o.is_value()) return;
    const model::Type t = o.value().type();
    if (!Orderable(t)) {
      Note(kSlotType, "Incorrect operand type for operator or function; operator or function: " +
                          std::string(op) + ", operand type: " + std::string(model::TypeName(t)));
    }
  }

  // Whether a placeholder operand has a value (an undefined one is noted, and stands as NULL).
  bool Defined(const parsed::Operand& o) const {
    return !o.is_value() || (ctx_.values_ != nullptr && ctx_.values_->contains(o.value().name));
  }

  void CheckDistinct(const std::string& op, const Operand& a, const Operand& b) {
    if (a.is_path() && b.is_path() && a.path() == b.path()) {
      Note(kSlotDistinct,
           "The first operand must be distinct from the remaining operands for this operator or "
           "function; operator: " +
               op + ", first operand: " + PathToString(a.path()));
    }
  }

  void CheckBetween(const Operand& low, const Operand& high) {
    if (!low.is_value() || !high.is_value()) return;
    const model::AttributeValue& a = low.value();
    const model::AttributeValue& b = high.value();
    if (a.type() != b.type()) {
      Note(kSlotType,
           "The BETWEEN operator requires same data type for lower and upper bounds; lower bound "
           "operand: " +
               BoundString(a) + ", upper bound operand: " + BoundString(b));
    } else if (IsScalarOrderable(a.type()) && CompareScalars(a, b) > 0) {
      Note(kSlotType,
           "The BETWEEN operator requires upper bound to be greater than or equal to lower "
           "bound; lower bound operand: " +
               BoundString(a) + ", upper bound operand: " + BoundString(b));
    }
  }

  ResolveContext& ctx_;
  ExpressionKind kind_;
  std::array<std::optional<std::string>, kSlotCount> deferred_;
  bool type_before_name_ = false;  // an operand type problem was found before any undefined name
};

Result<Condition> ResolveContext::ResolveCondition(const parsed::Condition& tree,
                                                   ExpressionKind kind) {
  Resolver r(*this, kind);
  Condition out = r.ResolveCond(tree);
  FDYNO_RETURN_IF_ERROR(r.Finish());
  return out;
}

Status ResolveContext::CheckCondition(const Condition& tree, ExpressionKind kind) {
  Resolver r(*this, kind);
  r.CheckCond(tree);
  return r.Finish();
}

Result<Projection> ResolveContext::ResolveProjection(const parsed::Projection& tree) {
  Resolver r(*this, ExpressionKind::kProjection);
  Projection out;
  out.reserve(tree.size());
  for (const parsed::Path& p : tree) out.push_back(r.ResolvePath(p));
  std::vector<const Path*> paths;
  for (const Path& p : out) paths.push_back(&p);
  r.CheckPaths(paths);
  FDYNO_RETURN_IF_ERROR(r.Finish());
  return out;
}

Result<Update> ResolveContext::ResolveUpdate(const parsed::Update& tree) {
  Resolver r(*this, ExpressionKind::kUpdate);
  Update out;
  out.actions.reserve(tree.actions.size());
  for (const parsed::UpdateAction& a : tree.actions) {
    UpdateAction action;
    action.kind = static_cast<UpdateAction::Kind>(a.kind);
    action.path = r.ResolvePath(a.path);
    switch (a.kind) {
      case parsed::UpdateAction::Kind::kSet:
        action.set = r.ResolveSetValue(a.set);
        break;
      case parsed::UpdateAction::Kind::kRemove:
        break;
      case parsed::UpdateAction::Kind::kAdd:
      case parsed::UpdateAction::Kind::kDelete:
        action.value.push_back(r.ResolveValue(a.value.front()));
        break;
    }
    out.actions.push_back(std::move(action));
  }
  std::vector<const Path*> paths;
  for (const UpdateAction& a : out.actions) paths.push_back(&a.path);
  r.CheckPaths(paths);
  for (size_t i = 0; i < out.actions.size(); ++i) {
    const UpdateAction& a = out.actions[i];
    // An undefined value resolved to a placeholder; its type says nothing.
    if (a.kind == UpdateAction::Kind::kAdd || a.kind == UpdateAction::Kind::kDelete) {
      const std::string& ref = tree.actions[i].value.front().name;
      if (values_ == nullptr || values_->find(ref) == values_->end()) continue;
      r.CheckUpdateOperand(a.kind == UpdateAction::Kind::kAdd ? "ADD" : "DELETE", a.value.front());
    }
  }
  FDYNO_RETURN_IF_ERROR(r.Finish());
  return out;
}

namespace {

bool ValidPlaceholder(const std::string& key, char sigil) {
  if (key.size() < 2 || key[0] != sigil) return false;
  for (size_t i = 1; i < key.size(); ++i) {
    char c = key[i];
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

bool Orderable(model::Type t) {
  return t == model::Type::kS || t == model::Type::kN || t == model::Type::kB;
}

Status ValidateAttributeMaps(const AttributeNames* names, const AttributeValues* values) {
  if (names != nullptr) {
    if (names->empty()) return Error::Validation("ExpressionAttributeNames must not be empty");
    for (const auto& [k, v] : *names) {
      if (!ValidPlaceholder(k, '#')) {
        return Error::Validation(
            "ExpressionAttributeNames contains invalid key: Syntax error; key: \"" + k + "\"");
      }
    }
  }
  if (values != nullptr) {
    if (values->empty()) return Error::Validation("ExpressionAttributeValues must not be empty");
    for (const auto& [k, v] : *values) {
      if (!ValidPlaceholder(k, ':')) {
        return Error::Validation(
            "ExpressionAttributeValues contains invalid key: Syntax error; key: \"" + k + "\"");
      }
    }
  }
  return Status::Ok();
}

Result<ResolveContext> ResolveContext::ForRequest(const AttributeNames* names,
                                                  const AttributeValues* values) {
  FDYNO_RETURN_IF_ERROR(ValidateAttributeMaps(names, values));
  return ResolveContext(names, values);
}

Status ResolveContext::CheckUnused() const {
  auto unused = [](const auto& map, const std::set<std::string>& used) {
    std::string keys;
    for (const auto& [k, v] : map) {
      if (used.count(k)) continue;
      if (!keys.empty()) keys += ", ";
      keys += k;
    }
    return keys;
  };
  if (names_ != nullptr) {
    std::string keys = unused(*names_, used_names_);
    if (!keys.empty()) {
      return Error::Validation(
          "Value provided in ExpressionAttributeNames unused in expressions: keys: {" + keys + "}");
    }
  }
  if (values_ != nullptr) {
    std::string keys = unused(*values_, used_values_);
    if (!keys.empty()) {
      return Error::Validation(
          "Value provided in ExpressionAttributeValues unused in expressions: keys: {" + keys +
          "}");
    }
  }
  return Status::Ok();
}

}  // namespace fdyno::expr
