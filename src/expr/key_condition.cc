#include "expr/key_condition.h"

#include <set>
#include <vector>

namespace fdyno::expr {
namespace {

Error Invalid(std::string message) { return Error::Validation(std::move(message)); }

// Four partition and four sort key attributes of a multi-attribute key.
constexpr size_t kMaxKeyConditions = 8;
constexpr std::string_view kConditionsLength = "Conditions can be of length 1 or 2 only";

// The conditions joined by AND, left to right.
void Leaves(const Condition& c, std::vector<const Condition*>& out) {
  if (c.kind == Condition::Kind::kAnd) {
    Leaves(c.children[0], out);
    Leaves(c.children[1], out);
  } else {
    out.push_back(&c);
  }
}

// The first operator DynamoDB does not allow in a key condition, in pre-order.
std::optional<std::string> InvalidOperator(const Condition& c) {
  switch (c.kind) {
    case Condition::Kind::kOr:
      return "OR";
    case Condition::Kind::kNot:
      return "NOT";
    case Condition::Kind::kIn:
      return "IN";
    case Condition::Kind::kCompare:
      if (c.op == CompareOp::kNe) return "<>";
      return std::nullopt;
    case Condition::Kind::kFunction: {
      Function f = c.operands[0].call().function;
      if (f != Function::kBeginsWith) return std::string(FunctionName(f));
      return std::nullopt;
    }
    case Condition::Kind::kAnd:
      for (const Condition& child : c.children) {
        if (auto op = InvalidOperator(child)) return op;
      }
      return std::nullopt;
    case Condition::Kind::kBetween:
      return std::nullopt;
  }
  return std::nullopt;
}

const std::vector<Operand>& OperandsOf(const Condition& leaf) {
  return leaf.kind == Condition::Kind::kFunction ? leaf.operands[0].call().args : leaf.operands;
}

// The key attribute a shape-checked leaf constrains.
const std::string& KeyOf(const Condition& leaf) {
  for (const Operand& o : OperandsOf(leaf)) {
    if (o.is_path()) return o.path().root();
  }
  static const std::string kNone;
  return kNone;
}

KeyRange::Op RangeOp(CompareOp op) {
  switch (op) {
    case CompareOp::kLt:
      return KeyRange::Op::kLt;
    case CompareOp::kLe:
      return KeyRange::Op::kLe;
    case CompareOp::kGt:
      return KeyRange::Op::kGt;
    case CompareOp::kGe:
      return KeyRange::Op::kGe;
    default:
      return KeyRange::Op::kEq;
  }
}

// The bound a shape-checked sort key leaf puts on its key.
KeyRange RangeOf(const Condition& leaf) {
  KeyRange r;
  r.name = KeyOf(leaf);
  switch (leaf.kind) {
    case Condition::Kind::kCompare: {
      bool key_left = leaf.operands[0].is_path();
      r.op = RangeOp(key_left ? leaf.op : Mirror(leaf.op));
      r.value = leaf.operands[key_left ? 1 : 0].value();
      break;
    }
    case Condition::Kind::kBetween:
      r.op = KeyRange::Op::kBetween;
      r.value = leaf.operands[1].value();
      r.high = leaf.operands[2].value();
      break;
    default:  // begins_with
      r.op = KeyRange::Op::kBeginsWith;
      r.value = leaf.operands[0].call().args[1].value();
      break;
  }
  return r;
}

bool IsEquality(const Condition& leaf) {
  return leaf.kind == Condition::Kind::kCompare && leaf.op == CompareOp::kEq;
}

// A key condition on a multi-attribute key: equality on every partition key attribute; the
// sort key attributes constrained left to right without a gap, with equality on all but the
// last constrained one, which may also be a range condition.
Result<KeyCondition> ExtractMultiAttributeKeyCondition(const Condition& condition,
                                                       const KeySchema& schema) {
  std::vector<const Condition*> leaves;
  Leaves(condition, leaves);
  std::vector<KeySchema::Attribute> hash{{schema.hash_name, schema.hash_type}};
  hash.insert(hash.end(), schema.more_hash.begin(), schema.more_hash.end());
  std::vector<KeySchema::Attribute> range;
  if (schema.range_name) range.push_back({*schema.range_name, schema.range_type});
  range.insert(range.end(), schema.more_range.begin(), schema.more_range.end());
  auto leaf_of = [&](const std::string& name) -> const Condition* {
    for (const Condition* leaf : leaves) {
      if (KeyOf(*leaf) == name) return leaf;
    }
    return nullptr;
  };
  const Error unsupported = Invalid("Query key condition not supported");
  // Every value compared with a key attribute must have the key's type.
  for (const auto* attrs : {&hash, &range}) {
    for (const KeySchema::Attribute& a : *attrs) {
      const Condition* leaf = leaf_of(a.name);
      if (leaf == nullptr) continue;
      for (const Operand& o : OperandsOf(*leaf)) {
        if (o.is_value() && o.value().type() != a.type) {
          return Invalid(
              "One or more parameter values were invalid: Condition parameter type does not "
              "match schema type");
        }
      }
    }
  }
  KeyCondition out;
  for (size_t i = 0; i < hash.size(); ++i) {
    const Condition* leaf = leaf_of(hash[i].name);
    if (leaf == nullptr)
      return Invalid("Query condition missed key schema element: " + hash[i].name);
    if (!IsEquality(*leaf)) return unsupported;
    model::AttributeValue v = RangeOf(*leaf).value;
    if (i == 0) {
      out.hash_name = hash[i].name;
      out.hash_value = v;
    } else {
      out.more_hash_values.push_back(v);
    }
  }
  // Every sort key attribute before a constrained one needs an equality condition: the first
  // constrained attribute (in key order) with an earlier one that has none is named.
  for (size_t j = 1; j < range.size(); ++j) {
    if (leaf_of(range[j].name) == nullptr) continue;
    for (size_t i = 0; i < j; ++i) {
      const Condition* earlier = leaf_of(range[i].name);
      if (earlier == nullptr || !IsEquality(*earlier)) {
        return Invalid("RANGE key attributes " + range[i].name +
                       " must have equality conditions specified in the query because a "
                       "condition is present on key attribute " +
                       range[j].name);
      }
    }
  }
  size_t used = hash.size();
  for (const KeySchema::Attribute& a : range) {
    const Condition* leaf = leaf_of(a.name);
    if (leaf == nullptr) break;
    ++used;
    if (out.range) out.range_prefix.push_back(out.range->value);
    out.range = RangeOf(*leaf);
  }
  // A condition on an attribute that is not part of the key.
  if (used != leaves.size()) {
    for (const Condition* leaf : leaves) {
      bool key = false;
      for (const auto* attrs : {&hash, &range}) {
        for (const KeySchema::Attribute& a : *attrs) key = key || a.name == KeyOf(*leaf);
      }
      if (!key) return Invalid("Query condition missed key schema element: " + KeyOf(*leaf));
    }
  }
  return out;
}

}  // namespace

CompareOp Mirror(CompareOp op) {
  switch (op) {
    case CompareOp::kLt:
      return CompareOp::kGt;
    case CompareOp::kLe:
      return CompareOp::kGe;
    case CompareOp::kGt:
      return CompareOp::kLt;
    case CompareOp::kGe:
      return CompareOp::kLe;
    default:
      return op;
  }
}

Status CheckKeyConditionShape(const Condition& condition) {
  if (auto op = InvalidOperator(condition)) {
    return Invalid("Invalid operator used in KeyConditionExpression: " + *op);
  }
  std::vector<const Condition*> leaves;
  Leaves(condition, leaves);
  std::set<std::string> keys;
  bool duplicate = false;
  for (const Condition* leaf : leaves) {
    if (leaf->kind == Condition::Kind::kBetween && !leaf->operands[0].is_path()) {
      return Invalid(
          "Invalid condition in KeyConditionExpression: BETWEEN operator must have the key "
          "attribute as its first operand");
    }
    if (leaf->kind == Condition::Kind::kFunction && !OperandsOf(*leaf)[0].is_path()) {
      return Invalid(
          "Invalid condition in KeyConditionExpression: begins_with operator must have the key "
          "attribute as its first operand");
    }
    int paths = 0;
    for (const Operand& o : OperandsOf(*leaf)) {
      if (o.is_call()) return Invalid("KeyConditionExpressions cannot contain nested operations");
      if (!o.is_path()) continue;
      if (paths > 0) {
        return Invalid(
            "Invalid condition in KeyConditionExpression: Multiple attribute names used in one "
            "condition");
      }
      if (o.path().elements.size() > 1) {
        return Invalid("KeyConditionExpressions cannot have conditions on nested attributes");
      }
      ++paths;
    }
    if (paths == 0) {
      return Invalid("Invalid condition in KeyConditionExpression: No key attribute specified");
    }
    duplicate = duplicate || !keys.insert(KeyOf(*leaf)).second;
  }
  if (duplicate) return Invalid("KeyConditionExpressions must only contain one condition per key");
  if (leaves.size() > kMaxKeyConditions) return Invalid(std::string(kConditionsLength));
  return Status::Ok();
}

std::vector<model::AttributeValue> KeyCondition::HashValues() const {
  std::vector<model::AttributeValue> out{hash_value};
  out.insert(out.end(), more_hash_values.begin(), more_hash_values.end());
  return out;
}

Result<KeyCondition> ExtractKeyCondition(const Condition& condition, const KeySchema& schema) {
  if (!schema.more_hash.empty() || !schema.more_range.empty()) {
    return ExtractMultiAttributeKeyCondition(condition, schema);
  }
  std::vector<const Condition*> leaves;
  Leaves(condition, leaves);
  const Error unsupported = Invalid("Query key condition not supported");
  if (leaves.size() > 2) return Invalid(std::string(kConditionsLength));
  if (leaves.size() == 2 && !schema.range_name) return unsupported;
  const Condition* hash = nullptr;
  const Condition* range = nullptr;
  for (const Condition* leaf : leaves) {
    if (KeyOf(*leaf) == schema.hash_name) {
      hash = leaf;
    } else {
      range = leaf;
    }
  }
  if (hash == nullptr)
    return Invalid("Query condition missed key schema element: " + schema.hash_name);
  // Every value compared with a key attribute must have the key's type.
  for (const Condition* leaf : leaves) {
    const std::string& key = KeyOf(*leaf);
    model::Type want = key == schema.hash_name ? schema.hash_type : schema.range_type;
    if (key != schema.hash_name && (!schema.range_name || key != *schema.range_name)) continue;
    for (const Operand& o : OperandsOf(*leaf)) {
      if (o.is_value() && o.value().type() != want) {
        return Invalid(
            "One or more parameter values were invalid: Condition parameter type does not match "
            "schema type");
      }
    }
  }
  if (hash->kind != Condition::Kind::kCompare || hash->op != CompareOp::kEq) return unsupported;
  KeyCondition out;
  out.hash_name = schema.hash_name;
  out.hash_value =
      hash->operands[0].is_path() ? hash->operands[1].value() : hash->operands[0].value();
  if (range == nullptr) return out;
  if (KeyOf(*range) != *schema.range_name) {
    return Invalid("Query condition missed key schema element: " + *schema.range_name);
  }
  KeyRange r;
  r.name = *schema.range_name;
  switch (range->kind) {
    case Condition::Kind::kCompare: {
      bool key_left = range->operands[0].is_path();
      r.op = RangeOp(key_left ? range->op : Mirror(range->op));
      r.value = range->operands[key_left ? 1 : 0].value();
      break;
    }
    case Condition::Kind::kBetween:
      r.op = KeyRange::Op::kBetween;
      r.value = range->operands[1].value();
      r.high = range->operands[2].value();
      break;
    case Condition::Kind::kFunction:
      r.op = KeyRange::Op::kBeginsWith;
      r.value = range->operands[0].call().args[1].value();
      break;
    default:
      return unsupported;
  }
  out.range = std::move(r);
  return out;
}

}  // namespace fdyno::expr
