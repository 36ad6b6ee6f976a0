#include "expr/evaluate.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace fdyno::expr {

using model::AttributeValue;
using model::Type;

namespace {

constexpr std::string_view kMissingAttribute =
    "The provided expression refers to an attribute that does not exist in the item";
constexpr std::string_view kWrongType =
    "An operand in the update expression has an incorrect data type";
constexpr std::string_view kLegacyWrongType = "Type mismatch for attribute to update";
constexpr std::string_view kInvalidPath =
    "The document path provided in the update expression is invalid for update";

// A value an operand evaluates to: a pointer into the item or tree, or a computed value.
class Val {
 public:
  Val() = default;
  explicit Val(const AttributeValue* p) : p_(p) {}
  explicit Val(AttributeValue owned) : owned_(std::move(owned)) {}
  const AttributeValue* get() const { return owned_ ? &*owned_ : p_; }

 private:
  const AttributeValue* p_ = nullptr;
  std::optional<AttributeValue> owned_;
};

// The length of a UTF-8 string in UTF-16 code units, as size() counts a String (a character
// outside the Basic Multilingual Plane is two).
uint64_t Utf16Length(const std::string& s) {
  uint64_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;  // a lead byte starts a character
    if (c >= 0xF0) ++n;           // a four-byte sequence: a surrogate pair
  }
  return n;
}

std::optional<uint64_t> SizeOf(const AttributeValue& v) {
  switch (v.type()) {
    case Type::kS:
      return Utf16Length(std::get<std::string>(v.v));
    case Type::kB:
      return std::get<model::Binary>(v.v).bytes.size();
    case Type::kSS:
      return std::get<model::StringSet>(v.v).members.size();
    case Type::kNS:
      return std::get<model::NumberSet>(v.v).members.size();
    case Type::kBS:
      return std::get<model::BinarySet>(v.v).members.size();
    case Type::kL:
      return std::get<model::List>(v.v).size();
    case Type::kM:
      return std::get<model::Map>(v.v).size();
    default:
      return std::nullopt;
  }
}

model::Number NumberFromUint(uint64_t n) {
  if (n == 0) return model::Number();
  std::string digits = std::to_string(n);
  int exponent = static_cast<int>(digits.size());
  while (!digits.empty() && digits.back() == '0') digits.pop_back();
  return model::Number::FromParts(false, std::move(digits), exponent);
}

Val EvalOperand(const Operand& o, const model::Item& item) {
  if (o.is_path()) return Val(Lookup(item, o.path()));
  if (o.is_value()) return Val(&o.value());
  const Call& call = o.call();
  // Only size() yields a value inside a condition (the parser rejects the others here).
  if (call.function == Function::kSize && call.args.size() == 1) {
    Val arg = EvalOperand(call.args[0], item);
    if (arg.get() == nullptr) return Val();
    auto n = SizeOf(*arg.get());
    if (!n) return Val();
    return Val(AttributeValue::N(NumberFromUint(*n)));
  }
  return Val();
}

bool Orderable(Type t) { return t == Type::kS || t == Type::kN || t == Type::kB; }

// <0, 0, >0. REQUIRES: same type, Orderable.
int CompareOrdered(const AttributeValue& a, const AttributeValue& b) {
  switch (a.type()) {
    case Type::kN:
      return std::get<model::Number>(a.v).Compare(std::get<model::Number>(b.v));
    case Type::kS:
      return std::get<std::string>(a.v).compare(std::get<std::string>(b.v));
    case Type::kB:
      return std::get<model::Binary>(a.v).bytes.compare(std::get<model::Binary>(b.v).bytes);
    default:
      return 0;
  }
}

bool Compare(CompareOp op, const AttributeValue* a, const AttributeValue* b) {
  if (op == CompareOp::kEq) return a != nullptr && b != nullptr && *a == *b;
  if (op == CompareOp::kNe) return !(a != nullptr && b != nullptr && *a == *b);
  if (a == nullptr || b == nullptr || a->type() != b->type() || !Orderable(a->type())) {
    return false;
  }
  int c = CompareOrdered(*a, *b);
  switch (op) {
    case CompareOp::kLt:
      return c < 0;
    case CompareOp::kLe:
      return c <= 0;
    case CompareOp::kGt:
      return c > 0;
    case CompareOp::kGe:
      return c >= 0;
    default:
      return false;
  }
}

bool BeginsWith(const AttributeValue* a, const AttributeValue* b) {
  if (a == nullptr || b == nullptr || a->type() != b->type()) return false;
  if (a->type() == Type::kS) {
    return std::get<std::string>(a->v).starts_with(std::get<std::string>(b->v));
  }
  if (a->type() == Type::kB) {
    return std::get<model::Binary>(a->v).bytes.starts_with(std::get<model::Binary>(b->v).bytes);
  }
  return false;
}

bool Contains(const AttributeValue* a, const AttributeValue* b) {
  if (a == nullptr || b == nullptr) return false;
  switch (a->type()) {
    case Type::kS:
      return b->type() == Type::kS &&
             std::get<std::string>(a->v).find(std::get<std::string>(b->v)) != std::string::npos;
    case Type::kB:
      return b->type() == Type::kB && std::get<model::Binary>(a->v).bytes.find(
                                          std::get<model::Binary>(b->v).bytes) != std::string::npos;
    case Type::kSS: {
      if (b->type() != Type::kS) return false;
      const auto& m = std::get<model::StringSet>(a->v).members;
      return std::find(m.begin(), m.end(), std::get<std::string>(b->v)) != m.end();
    }
    case Type::kNS: {
      if (b->type() != Type::kN) return false;
      const auto& m = std::get<model::NumberSet>(a->v).members;
      return std::find(m.begin(), m.end(), std::get<model::Number>(b->v)) != m.end();
    }
    case Type::kBS: {
      if (b->type() != Type::kB) return false;
      const auto& m = std::get<model::BinarySet>(a->v).members;
      return std::find(m.begin(), m.end(), std::get<model::Binary>(b->v).bytes) != m.end();
    }
    case Type::kL: {
      const auto& l = std::get<model::List>(a->v);
      return std::find(l.begin(), l.end(), *b) != l.end();
    }
    default:
      return false;
  }
}

bool EvalFunction(const Call& call, const model::Item& item) {
  switch (call.function) {
    case Function::kAttributeExists:
      return call.args[0].is_path() && Lookup(item, call.args[0].path()) != nullptr;
    case Function::kAttributeNotExists:
      return call.args[0].is_path() && Lookup(item, call.args[0].path()) == nullptr;
    case Function::kAttributeType: {
      Val v = EvalOperand(call.args[0], item);
      Val t = EvalOperand(call.args[1], item);
      if (v.get() == nullptr || t.get() == nullptr || t.get()->type() != Type::kS) return false;
      return model::TypeName(v.get()->type()) == std::get<std::string>(t.get()->v);
    }
    case Function::kBeginsWith: {
      Val a = EvalOperand(call.args[0], item);
      Val b = EvalOperand(call.args[1], item);
      return BeginsWith(a.get(), b.get());
    }
    case Function::kContains: {
      Val a = EvalOperand(call.args[0], item);
      Val b = EvalOperand(call.args[1], item);
      return Contains(a.get(), b.get());
    }
    default:
      return false;
  }
}

// ---- projection -------------------------------------------------------------------------------

struct ProjectionNode {
  const AttributeValue* whole = nullptr;       // the whole value is selected
  std::map<std::string, ProjectionNode> keys;  // selected map members
  std::map<uint64_t, ProjectionNode> indexes;  // selected list elements
};

AttributeValue Materialize(const ProjectionNode& node, const AttributeValue& source) {
  if (node.whole != nullptr) return *node.whole;
  if (source.type() == Type::kM) {
    const auto& m = std::get<model::Map>(source.v);
    model::Map out;
    for (const auto& [k, child] : node.keys) out.emplace(k, Materialize(child, m.at(k)));
    return AttributeValue::M(std::move(out));
  }
  const auto& l = std::get<model::List>(source.v);
  model::List out;
  for (const auto& [i, child] : node.indexes) out.push_back(Materialize(child, l[i]));
  return AttributeValue::L(std::move(out));
}

// ---- update -------------------------------------------------------------------------------

Error Invalid(std::string_view message) { return Error::Validation(std::string(message)); }

Result<AttributeValue> EvalUpdateOperand(const Operand& o, const model::Item& item,
                                         std::string_view wrong_type) {
  if (o.is_value()) return o.value();
  if (o.is_path()) {
    const AttributeValue* v = Lookup(item, o.path());
    if (v == nullptr) return Invalid(kMissingAttribute);
    return *v;
  }
  const Call& call = o.call();
  if (call.function == Function::kIfNotExists) {
    const AttributeValue* v = call.args[0].is_path() ? Lookup(item, call.args[0].path()) : nullptr;
    if (v != nullptr) return *v;
    return EvalUpdateOperand(call.args[1], item, wrong_type);
  }
  if (call.function == Function::kListAppend) {
    FDYNO_ASSIGN_OR_RETURN(AttributeValue a, EvalUpdateOperand(call.args[0], item, wrong_type));
    FDYNO_ASSIGN_OR_RETURN(AttributeValue b, EvalUpdateOperand(call.args[1], item, wrong_type));
    if (a.type() != Type::kL || b.type() != Type::kL) return Invalid(wrong_type);
    model::List out = std::move(std::get<model::List>(a.v));
    auto& tail = std::get<model::List>(b.v);
    out.insert(out.end(), std::make_move_iterator(tail.begin()),
               std::make_move_iterator(tail.end()));
    return AttributeValue::L(std::move(out));
  }
  return Invalid(wrong_type);
}

Result<AttributeValue> EvalSetValue(const SetValue& sv, const model::Item& item,
                                    std::string_view wrong_type) {
  FDYNO_ASSIGN_OR_RETURN(AttributeValue a, EvalUpdateOperand(sv.operands[0], item, wrong_type));
  if (sv.op == SetValue::Op::kValue) return a;
  FDYNO_ASSIGN_OR_RETURN(AttributeValue b, EvalUpdateOperand(sv.operands[1], item, wrong_type));
  if (a.type() != Type::kN || b.type() != Type::kN) return Invalid(wrong_type);
  const auto& x = std::get<model::Number>(a.v);
  const auto& y = std::get<model::Number>(b.v);
  FDYNO_ASSIGN_OR_RETURN(model::Number n, sv.op == SetValue::Op::kPlus
                                              ? model::Number::Add(x, y)
                                              : model::Number::Subtract(x, y));
  return AttributeValue::N(std::move(n));
}

// Set union (ADD) keeps the existing members' order and appends new ones.
template <typename T, typename Eq>
void Union(std::vector<T>& into, const std::vector<T>& add, Eq eq) {
  for (const T& m : add) {
    bool present = false;
    for (const T& x : into) present = present || eq(x, m);
    if (!present) into.push_back(m);
  }
}

template <typename T, typename Eq>
void Difference(std::vector<T>& from, const std::vector<T>& remove, Eq eq) {
  std::erase_if(from, [&](const T& x) {
    for (const T& r : remove) {
      if (eq(x, r)) return true;
    }
    return false;
  });
}

// ADD: numbers add, sets unite, an absent attribute takes the value.
Result<AttributeValue> AddValues(const AttributeValue* existing, const AttributeValue& v,
                                 std::string_view wrong_type) {
  if (existing == nullptr) return v;
  if (existing->type() != v.type()) return Invalid(wrong_type);
  AttributeValue out = *existing;
  auto same = [](const auto& a, const auto& b) { return a == b; };
  switch (v.type()) {
    case Type::kN: {
      FDYNO_ASSIGN_OR_RETURN(
          model::Number n,
          model::Number::Add(std::get<model::Number>(existing->v), std::get<model::Number>(v.v)));
      return AttributeValue::N(std::move(n));
    }
    case Type::kSS:
      Union(std::get<model::StringSet>(out.v).members, std::get<model::StringSet>(v.v).members,
            same);
      return out;
    case Type::kNS:
      Union(std::get<model::NumberSet>(out.v).members, std::get<model::NumberSet>(v.v).members,
            same);
      return out;
    case Type::kBS:
      Union(std::get<model::BinarySet>(out.v).members, std::get<model::BinarySet>(v.v).members,
            same);
      return out;
    default:
      return Invalid(wrong_type);
  }
}

// DELETE: set difference; nullopt when nothing is left (the attribute is removed).
Result<std::optional<AttributeValue>> DeleteValues(const AttributeValue& existing,
                                                   const AttributeValue& v,
                                                   std::string_view wrong_type) {
  if (existing.type() != v.type()) return Invalid(wrong_type);
  AttributeValue out = existing;
  auto same = [](const auto& a, const auto& b) { return a == b; };
  size_t left = 0;
  switch (v.type()) {
    case Type::kSS: {
      auto& m = std::get<model::StringSet>(out.v).members;
      Difference(m, std::get<model::StringSet>(v.v).members, same);
      left = m.size();
      break;
    }
    case Type::kNS: {
      auto& m = std::get<model::NumberSet>(out.v).members;
      Difference(m, std::get<model::NumberSet>(v.v).members, same);
      left = m.size();
      break;
    }
    case Type::kBS: {
      auto& m = std::get<model::BinarySet>(out.v).members;
      Difference(m, std::get<model::BinarySet>(v.v).members, same);
      left = m.size();
      break;
    }
    default:
      return Invalid(wrong_type);
  }
  if (left == 0) return std::optional<AttributeValue>();
  return std::optional<AttributeValue>(std::move(out));
}

// The actions of one update as a tree of path elements; every action sits on a leaf (the
// resolver rejected overlapping paths, so no action sits above another).
struct ActionNode {
  const UpdateAction* action = nullptr;
  AttributeValue* set_value = nullptr;  // the computed right-hand side of a SET
  std::map<std::string, ActionNode> keys;
  std::map<uint64_t, ActionNode> indexes;
};

enum class Outcome { kKeep, kRemove, kReplace };

// What a leaf action does to the value it targets (null when absent).
Result<Outcome> ApplyLeaf(const ActionNode& node, const AttributeValue* existing,
                          AttributeValue* replacement, std::string_view wrong_type) {
  const UpdateAction& a = *node.action;
  switch (a.kind) {
    case UpdateAction::Kind::kSet:
      *replacement = std::move(*node.set_value);
      return Outcome::kReplace;
    case UpdateAction::Kind::kRemove:
      return existing == nullptr ? Outcome::kKeep : Outcome::kRemove;
    case UpdateAction::Kind::kAdd: {
      FDYNO_ASSIGN_OR_RETURN(*replacement, AddValues(existing, a.value.front(), wrong_type));
      return Outcome::kReplace;
    }
    case UpdateAction::Kind::kDelete: {
      if (existing == nullptr) return Outcome::kKeep;
      FDYNO_ASSIGN_OR_RETURN(std::optional<AttributeValue> left,
                             DeleteValues(*existing, a.value.front(), wrong_type));
      if (!left) return Outcome::kRemove;  // the set became empty
      *replacement = std::move(*left);
      return Outcome::kReplace;
    }
  }
  return Outcome::kKeep;
}

Status ApplyInto(AttributeValue& value, const ActionNode& node, std::string_view wrong_type);

Status ApplyToMap(model::Map& m, const ActionNode& node, std::string_view wrong_type) {
  for (const auto& [name, child] : node.keys) {
    auto it = m.find(name);
    if (child.action == nullptr) {
      if (it == m.end()) return Invalid(kInvalidPath);
      FDYNO_RETURN_IF_ERROR(ApplyInto(it->second, child, wrong_type));
      continue;
    }
    AttributeValue replacement;
    FDYNO_ASSIGN_OR_RETURN(Outcome o, ApplyLeaf(child, it == m.end() ? nullptr : &it->second,
                                                &replacement, wrong_type));
    if (o == Outcome::kReplace) {
      m.insert_or_assign(name, std::move(replacement));
    } else if (o == Outcome::kRemove) {
      m.erase(it);
    }
  }
  return Status::Ok();
}

// A list is rebuilt in one pass: every index names an element of the list as it was before the
// update (so REMOVE a[1], a[2] removes two original elements), and indexes past the end append
// in index order.
Status ApplyToList(model::List& l, const ActionNode& node, std::string_view wrong_type) {
  model::List out;
  out.reserve(l.size() + node.indexes.size());
  auto it = node.indexes.begin();
  for (uint64_t i = 0; i < l.size(); ++i) {
    if (it == node.indexes.end() || it->first != i) {
      out.push_back(std::move(l[i]));
      continue;
    }
    const ActionNode& child = it->second;
    ++it;
    if (child.action == nullptr) {
      FDYNO_RETURN_IF_ERROR(ApplyInto(l[i], child, wrong_type));
      out.push_back(std::move(l[i]));
      continue;
    }
    AttributeValue replacement;
    FDYNO_ASSIGN_OR_RETURN(Outcome o, ApplyLeaf(child, &l[i], &replacement, wrong_type));
    if (o == Outcome::kReplace) {
      out.push_back(std::move(replacement));
    } else if (o == Outcome::kKeep) {
      out.push_back(std::move(l[i]));
    }
  }
  for (; it != node.indexes.end(); ++it) {
    const ActionNode& child = it->second;
    if (child.action == nullptr) return Invalid(kInvalidPath);
    AttributeValue replacement;
    FDYNO_ASSIGN_OR_RETURN(Outcome o, ApplyLeaf(child, nullptr, &replacement, wrong_type));
    if (o == Outcome::kReplace) out.push_back(std::move(replacement));
  }
  l = std::move(out);
  return Status::Ok();
}

Status ApplyInto(AttributeValue& value, const ActionNode& node, std::string_view wrong_type) {
  if (!node.keys.empty()) {
    if (value.type() != Type::kM || !node.indexes.empty()) return Invalid(kInvalidPath);
    return ApplyToMap(std::get<model::Map>(value.v), node, wrong_type);
  }
  if (value.type() != Type::kL) return Invalid(kInvalidPath);
  return ApplyToList(std::get<model::List>(value.v), node, wrong_type);
}

}  // namespace

const AttributeValue* Lookup(const model::Item& item, const Path& path) {
  auto it = item.find(path.root());
  if (it == item.end()) return nullptr;
  const AttributeValue* cur = &it->second;
  for (size_t k = 1; k < path.elements.size(); ++k) {
    const PathElement& e = path.elements[k];
    if (e.is_index()) {
      if (cur->type() != Type::kL) return nullptr;
      const auto& l = std::get<model::List>(cur->v);
      if (e.index() >= l.size()) return nullptr;
      cur = &l[e.index()];
    } else {
      if (cur->type() != Type::kM) return nullptr;
      const auto& m = std::get<model::Map>(cur->v);
      auto mit = m.find(e.name());
      if (mit == m.end()) return nullptr;
      cur = &mit->second;
    }
  }
  return cur;
}

bool EvaluateCondition(const Condition& c, const model::Item& item) {
  switch (c.kind) {
    case Condition::Kind::kAnd:
      return EvaluateCondition(c.children[0], item) && EvaluateCondition(c.children[1], item);
    case Condition::Kind::kOr:
      return EvaluateCondition(c.children[0], item) || EvaluateCondition(c.children[1], item);
    case Condition::Kind::kNot:
      return !EvaluateCondition(c.children[0], item);
    case Condition::Kind::kCompare: {
      Val a = EvalOperand(c.operands[0], item);
      Val b = EvalOperand(c.operands[1], item);
      return Compare(c.op, a.get(), b.get());
    }
    case Condition::Kind::kBetween: {
      Val x = EvalOperand(c.operands[0], item);
      Val lo = EvalOperand(c.operands[1], item);
      Val hi = EvalOperand(c.operands[2], item);
      return Compare(CompareOp::kGe, x.get(), lo.get()) &&
             Compare(CompareOp::kLe, x.get(), hi.get());
    }
    case Condition::Kind::kIn: {
      Val x = EvalOperand(c.operands[0], item);
      if (x.get() == nullptr) return false;
      for (size_t i = 1; i < c.operands.size(); ++i) {
        Val v = EvalOperand(c.operands[i], item);
        if (v.get() != nullptr && *x.get() == *v.get()) return true;
      }
      return false;
    }
    case Condition::Kind::kFunction:
      return EvalFunction(c.operands[0].call(), item);
  }
  return false;
}

model::Item Project(const model::Item& item, const Projection& paths) {
  std::map<std::string, ProjectionNode> roots;
  for (const Path& path : paths) {
    if (Lookup(item, path) == nullptr) continue;
    const AttributeValue* cur = &item.at(path.root());
    ProjectionNode* node = &roots[path.root()];
    for (size_t k = 1; k < path.elements.size(); ++k) {
      const PathElement& e = path.elements[k];
      if (e.is_index()) {
        node = &node->indexes[e.index()];
        cur = &std::get<model::List>(cur->v)[e.index()];
      } else {
        node = &node->keys[e.name()];
        cur = &std::get<model::Map>(cur->v).at(e.name());
      }
    }
    node->whole = cur;
  }
  model::Item out;
  for (const auto& [name, node] : roots) out.emplace(name, Materialize(node, item.at(name)));
  return out;
}

Result<model::Item> ApplyUpdate(const Update& update, const model::Item& item) {
  std::string_view wrong_type = update.legacy ? kLegacyWrongType : kWrongType;
  // Right-hand sides read the item as it was before the update.
  std::vector<AttributeValue> computed(update.actions.size());
  ActionNode root;
  for (size_t i = 0; i < update.actions.size(); ++i) {
    const UpdateAction& a = update.actions[i];
    if (a.kind == UpdateAction::Kind::kSet) {
      FDYNO_ASSIGN_OR_RETURN(computed[i], EvalSetValue(a.set, item, wrong_type));
    }
    ActionNode* node = &root;
    for (const PathElement& e : a.path.elements) {
      node = e.is_index() ? &node->indexes[e.index()] : &node->keys[e.name()];
    }
    node->action = &a;
    node->set_value = &computed[i];
  }
  model::Item out = item;
  FDYNO_RETURN_IF_ERROR(ApplyToMap(out, root, wrong_type));
  return out;
}

bool OnlyRemoves(const Update& update) {
  for (const UpdateAction& a : update.actions) {
    if (a.kind != UpdateAction::Kind::kRemove && a.kind != UpdateAction::Kind::kDelete) {
      return false;
    }
  }
  return !update.actions.empty();
}

std::vector<std::string> UpdatedTopLevelAttributes(const Update& update) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const UpdateAction& a : update.actions) {
    if (seen.insert(a.path.root()).second) out.push_back(a.path.root());
  }
  return out;
}

Status CheckKeyUntouched(const Update& update, const model::KeySchema& schema) {
  for (const std::string& name : UpdatedTopLevelAttributes(update)) {
    if (name == schema.hash.name || (schema.range && name == schema.range->name)) {
      return Error::Validation(
          "One or more parameter values were invalid: Cannot update attribute " + name +
          ". This attribute is part of the key");
    }
  }
  return Status::Ok();
}

Projection UpdatedPaths(const Update& update) {
  Projection out;
  for (const UpdateAction& a : update.actions) out.push_back(a.path);
  return out;
}

}  // namespace fdyno::expr
