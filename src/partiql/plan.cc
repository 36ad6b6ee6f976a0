#include "partiql/plan.h"

#include <algorithm>
#include <set>
#include <utility>

#include "expr/evaluate.h"
#include "model/item_size.h"

namespace fdyno::partiql {
namespace {

using expr::CompareOp;
using expr::Condition;
using expr::Operand;
using model::AttributeValue;
using CK = expr::Condition::Kind;

Error Invalid(std::string message) { return Error::Validation(std::move(message)); }

// The conditions joined by AND at the top of `c`, left to right.
void Leaves(const Condition& c, std::vector<const Condition*>& out) {
  if (c.kind == CK::kAnd) {
    Leaves(c.children[0], out);
    Leaves(c.children[1], out);
  } else {
    out.push_back(&c);
  }
}

// `leaves` joined by AND again (left-deep, in order); nullopt when there are none.
std::optional<Condition> AndOf(const std::vector<const Condition*>& leaves) {
  std::optional<Condition> out;
  for (const Condition* leaf : leaves) {
    if (!out) {
      out = *leaf;
      continue;
    }
    Condition c;
    c.kind = CK::kAnd;
    c.children.push_back(std::move(*out));
    c.children.push_back(*leaf);
    out = std::move(c);
  }
  return out;
}

// The operands of a leaf: a comparison's, or a function call's arguments.
const std::vector<Operand>& OperandsOf(const Condition& leaf) {
  return leaf.kind == CK::kFunction ? leaf.operands[0].call().args : leaf.operands;
}

// The key attribute an operand names directly (a one-element path), or null.
const std::string* KeyNamed(const Operand& o, const std::vector<std::string>& keys) {
  if (!o.is_path() || o.path().elements.size() != 1) return nullptr;
  for (const std::string& k : keys) {
    if (o.path().root() == k) return &k;
  }
  return nullptr;
}

// Whether a key attribute appears anywhere inside an operand (size(pk), list_append(...)).
bool MentionsKey(const Operand& o, const std::vector<std::string>& keys) {
  if (KeyNamed(o, keys) != nullptr) return true;
  if (!o.is_call()) return false;
  for (const Operand& a : o.call().args) {
    if (MentionsKey(a, keys)) return true;
  }
  return false;
}

// The key attribute a leaf constrains, with its first direct mention; null when none.
const std::string* LeafKey(const Condition& leaf, const std::vector<std::string>& keys) {
  if (leaf.kind == CK::kAnd || leaf.kind == CK::kOr || leaf.kind == CK::kNot) return nullptr;
  for (const Operand& o : OperandsOf(leaf)) {
    if (const std::string* k = KeyNamed(o, keys)) return k;
  }
  return nullptr;
}

bool LeafMentionsKey(const Condition& leaf, const std::vector<std::string>& keys) {
  if (leaf.kind == CK::kAnd || leaf.kind == CK::kOr || leaf.kind == CK::kNot) return false;
  for (const Operand& o : OperandsOf(leaf)) {
    if (MentionsKey(o, keys)) return true;
  }
  return false;
}

// An equality between a key attribute and a value: the value, else null.
const AttributeValue* KeyEquality(const Condition& leaf, const std::string& key) {
  if (leaf.kind != CK::kCompare || leaf.op != CompareOp::kEq) return nullptr;
  const Operand& a = leaf.operands[0];
  const Operand& b = leaf.operands[1];
  if (a.is_path() && a.path().elements.size() == 1 && a.path().root() == key && b.is_value()) {
    return &b.value();
  }
  if (b.is_path() && b.path().elements.size() == 1 && b.path().root() == key && a.is_value()) {
    return &a.value();
  }
  return nullptr;
}

// A sort-key condition DynamoDB pushes into a Query, or nullopt.
std::optional<expr::KeyRange> RangeOf(const Condition& leaf, const std::string& key) {
  using Op = expr::KeyRange::Op;
  expr::KeyRange r;
  r.name = key;
  auto is_key = [&](const Operand& o) {
    return o.is_path() && o.path().elements.size() == 1 && o.path().root() == key;
  };
  if (leaf.kind == CK::kCompare && leaf.op != CompareOp::kNe) {
    bool key_left = is_key(leaf.operands[0]) && leaf.operands[1].is_value();
    bool key_right = is_key(leaf.operands[1]) && leaf.operands[0].is_value();
    if (!key_left && !key_right) return std::nullopt;
    CompareOp op = key_left ? leaf.op : expr::Mirror(leaf.op);
    r.op = op == CompareOp::kEq   ? Op::kEq
           : op == CompareOp::kLt ? Op::kLt
           : op == CompareOp::kLe ? Op::kLe
           : op == CompareOp::kGt ? Op::kGt
                                  : Op::kGe;
    r.value = leaf.operands[key_left ? 1 : 0].value();
    return r;
  }
  if (leaf.kind == CK::kBetween && is_key(leaf.operands[0]) && leaf.operands[1].is_value() &&
      leaf.operands[2].is_value()) {
    r.op = Op::kBetween;
    r.value = leaf.operands[1].value();
    r.high = leaf.operands[2].value();
    return r;
  }
  if (leaf.kind == CK::kFunction) {
    const expr::Call& call = leaf.operands[0].call();
    if (call.function == expr::Function::kBeginsWith && call.args.size() == 2 &&
        is_key(call.args[0]) && call.args[1].is_value()) {
      r.op = Op::kBeginsWith;
      r.value = call.args[1].value();
      return r;
    }
  }
  return std::nullopt;
}

bool SameRange(const expr::KeyRange& a, const expr::KeyRange& b) {
  return a.op == b.op && a.value == b.value &&
         (a.op != expr::KeyRange::Op::kBetween || a.high == b.high);
}

// The key conditions of a SELECT that DynamoDB pushes down, and the rest of the WHERE.
struct ReadKeys {
  std::optional<AttributeValue> hash;
  std::optional<expr::KeyRange> range;
  std::vector<const Condition*> rest;
};

// Extracts the partition-key equality and sort-key condition of a SELECT's WHERE. nullopt when
// the WHERE does not pin the partition key in a form DynamoDB pushes down: the read then
// scans with the whole WHERE as its filter.
std::optional<ReadKeys> ExtractReadKeys(const Condition& where, const model::KeySchema& ks) {
  std::vector<std::string> keys = {ks.hash.name};
  if (ks.range) keys.push_back(ks.range->name);
  std::vector<const Condition*> leaves;
  Leaves(where, leaves);
  ReadKeys out;
  for (const Condition* leaf : leaves) {
    if (leaf->kind == CK::kNot && LeafKey(leaf->children[0], keys) != nullptr) return std::nullopt;
    const std::string* key = LeafKey(*leaf, keys);
    if (key == nullptr) {
      if (LeafMentionsKey(*leaf, keys)) return std::nullopt;
      out.rest.push_back(leaf);
      continue;
    }
    if (*key == ks.hash.name) {
      const AttributeValue* v = KeyEquality(*leaf, *key);
      if (v == nullptr) {
        // A comparison of two paths stays a filter; any other condition on the partition key
        // is not pushed down.
        bool two_paths = leaf->kind == CK::kCompare && leaf->op == CompareOp::kEq &&
                         leaf->operands[0].is_path() && leaf->operands[1].is_path();
        if (!two_paths) return std::nullopt;
        out.rest.push_back(leaf);
        continue;
      }
      if (out.hash && !(*out.hash == *v)) return std::nullopt;
      out.hash = *v;
      continue;
    }
    std::optional<expr::KeyRange> r = RangeOf(*leaf, *key);
    if (!r) {
      bool two_paths = leaf->kind == CK::kCompare && leaf->op == CompareOp::kEq &&
                       leaf->operands[0].is_path() && leaf->operands[1].is_path();
      if (!two_paths) return std::nullopt;
      out.rest.push_back(leaf);
      continue;
    }
    if (out.range && !SameRange(*out.range, *r)) return std::nullopt;
    out.range = std::move(r);
  }
  if (!out.hash) return std::nullopt;
  return out;
}

// Every value compared with a key attribute has the attribute's type.
Status CheckKeyTypes(const ReadKeys& k, const model::KeySchema& ks) {
  auto mismatch = [](const std::string& name) {
    return Invalid("Key attribute's data type should match its data type in table's schema: Key " +
                   name);
  };
  if (k.hash->type() != model::ToType(ks.hash.type)) return mismatch(ks.hash.name);
  if (k.range) {
    model::Type want = model::ToType(ks.range->type);
    if (k.range->value.type() != want) return mismatch(ks.range->name);
    if (k.range->op == expr::KeyRange::Op::kBetween && k.range->high.type() != want) {
      return mismatch(ks.range->name);
    }
  }
  return Status::Ok();
}

bool IsEmptyKeyValue(const AttributeValue& v) {
  if (v.type() == model::Type::kS) return std::get<std::string>(v.v).empty();
  if (v.type() == model::Type::kB) return std::get<model::Binary>(v.v).bytes.empty();
  return false;
}

Status CheckNotEmpty(const std::string& name, const AttributeValue& v) {
  if (!IsEmptyKeyValue(v)) return Status::Ok();
  return Invalid(std::string("One or more parameter values are not valid. The AttributeValue for a "
                             "key attribute cannot contain an empty ") +
                 (v.type() == model::Type::kS ? "string" : "binary") + " value. Key: " + name);
}

// Whether the top-level AND of a WHERE names the partition key with = or IN: the shape DynamoDB
// calls keyed (even when an IN then scans).
bool NamesPartition(const Condition& where, const std::string& hash) {
  std::vector<const Condition*> leaves;
  Leaves(where, leaves);
  for (const Condition* leaf : leaves) {
    if (KeyEquality(*leaf, hash) != nullptr) return true;
    if (leaf->kind == CK::kIn && leaf->operands[0].is_path() &&
        leaf->operands[0].path().elements.size() == 1 && leaf->operands[0].path().root() == hash) {
      return true;
    }
  }
  return false;
}

// PartiQL's rule for ORDER BY: some condition on the partition key that every OR branch has.
bool HasPartitionCondition(const Condition& c, const std::string& hash) {
  switch (c.kind) {
    case CK::kAnd:
      return HasPartitionCondition(c.children[0], hash) ||
             HasPartitionCondition(c.children[1], hash);
    case CK::kOr:
      return HasPartitionCondition(c.children[0], hash) &&
             HasPartitionCondition(c.children[1], hash);
    case CK::kNot:
      return false;
    default: {
      bool path = false;
      bool value = false;
      for (const Operand& o : OperandsOf(c)) {
        path = path || (o.is_path() && o.path().root() == hash);
        value = value || o.is_value();
      }
      return path && value;
    }
  }
}

// The attributes an index holds: its keys, the table's keys and, for INCLUDE, the listed ones.
bool IndexHolds(const IndexSchema& index, const model::KeySchema& table, const std::string& name) {
  if (index.projection == IndexSchema::Projection::kAll) return true;
  auto is_key = [&](const model::KeySchema& ks) {
    return ks.hash.name == name || (ks.range && ks.range->name == name);
  };
  if (is_key(table) || is_key(index.key_schema)) return true;
  if (index.projection == IndexSchema::Projection::kInclude) {
    for (const std::string& a : index.non_key_attributes) {
      if (a == name) return true;
    }
  }
  return false;
}

void CollectRoots(const Operand& o, std::vector<std::string>& out) {
  if (o.is_path()) {
    out.push_back(o.path().root());
  } else if (o.is_call()) {
    for (const Operand& a : o.call().args) CollectRoots(a, out);
  }
}

void CollectRoots(const Condition& c, std::vector<std::string>& out) {
  for (const Operand& o : c.operands) CollectRoots(o, out);
  for (const Condition& child : c.children) CollectRoots(child, out);
}

std::string Bracketed(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += names[i];
  }
  return out + "]";
}

// Names of `candidates` the index does not hold, each once, in order.
std::vector<std::string> Unprojected(const IndexSchema& index, const model::KeySchema& table,
                                     const std::vector<std::string>& candidates) {
  std::vector<std::string> out;
  for (const std::string& name : candidates) {
    if (IndexHolds(index, table, name)) continue;
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

// ---- SELECT --------------------------------------------------------------------------------

class ReadPlanner {
 public:
  ReadPlanner(const BoundSelect& s, const TableSchema& schema, const PlanOptions& options)
      : s_(s), schema_(schema), options_(options) {}

  Result<ReadPlan> Run() {
    ReadPlan plan;
    plan.table = s_.table;
    plan.all_attributes = s_.all_attributes;
    plan.projection = s_.projection;
    plan.projection_paths = s_.projection_paths;
    if (s_.index) {
      if (options_.use == Use::kTransaction) {
        return Invalid("Reads on indices are not supported within transactions.");
      }
      plan.index = schema_.FindIndex(*s_.index);
      if (plan.index == nullptr) return Invalid("The table does not have the specified index");
    }
    const model::KeySchema& ks = plan.index ? plan.index->key_schema : schema_.key_schema;
    if (options_.use != Use::kStatement) return PointRead(std::move(plan));
    FDYNO_RETURN_IF_ERROR(CheckOrderBy(ks));
    if (plan.index && !plan.index->readable) {
      return Invalid("Cannot read from backfilling global secondary index: " + plan.index->name);
    }
    if (plan.index && plan.index->global && options_.consistent_read) {
      return Invalid("Strongly consistent read is not supported on Global Secondary Indexes");
    }
    std::optional<ReadKeys> keys;
    if (s_.where) keys = ExtractReadKeys(*s_.where, ks);
    if (keys) {
      FDYNO_RETURN_IF_ERROR(CheckKeyTypes(*keys, ks));
      FDYNO_RETURN_IF_ERROR(CheckNotEmpty(ks.hash.name, *keys->hash));
      if (keys->range) FDYNO_RETURN_IF_ERROR(CheckNotEmpty(ks.range->name, keys->range->value));
    }
    if (plan.index) {
      bool keyed = s_.where && NamesPartition(*s_.where, ks.hash.name);
      FDYNO_RETURN_IF_ERROR(CheckIndexAttributes(plan, keyed));
    }
    if (!keys) {
      plan.access = ReadPlan::Access::kScan;
      plan.filter = s_.where;
      return plan;
    }
    plan.filter = AndOf(keys->rest);
    bool whole_key = !ks.range || (keys->range && keys->range->op == expr::KeyRange::Op::kEq);
    if (!plan.index && whole_key) {
      plan.access = ReadPlan::Access::kGet;
      plan.key.emplace(ks.hash.name, *keys->hash);
      if (ks.range) plan.key.emplace(ks.range->name, keys->range->value);
      return plan;
    }
    plan.access = ReadPlan::Access::kQuery;
    plan.key_condition.hash_name = ks.hash.name;
    plan.key_condition.hash_value = *keys->hash;
    plan.key_condition.range = keys->range;
    for (const OrderKey& o : s_.order_by) {
      if (ks.range && o.name == ks.range->name) plan.forward = !o.descending;
    }
    return plan;
  }

 private:
  // BatchExecuteStatement and ExecuteTransaction read single items by their whole key.
  Result<ReadPlan> PointRead(ReadPlan plan) {
    const model::KeySchema& ks = schema_.key_schema;
    std::vector<std::string> keys = {ks.hash.name};
    if (ks.range) keys.push_back(ks.range->name);
    std::vector<const Condition*> leaves;
    if (s_.where) Leaves(*s_.where, leaves);
    bool ok = !plan.index && s_.where.has_value();
    for (const Condition* leaf : leaves) {
      const std::string* key = LeafKey(*leaf, keys);
      const AttributeValue* v = key ? KeyEquality(*leaf, *key) : nullptr;
      if (v == nullptr || (plan.key.count(*key) && !(plan.key.at(*key) == *v))) {
        ok = false;
        break;
      }
      plan.key.emplace(*key, *v);
    }
    if (!ok || plan.key.size() != keys.size()) {
      return Invalid(
          options_.use == Use::kTransaction
              ? "Select statements within ExecuteTransaction must specify the primary key "
                "in the where clause."
              : "Select statements within BatchExecuteStatement must specify the primary "
                "key in the where clause.");
    }
    for (const auto& [name, value] : plan.key) {
      model::Type want =
          name == ks.hash.name ? model::ToType(ks.hash.type) : model::ToType(ks.range->type);
      if (value.type() != want) {
        return Invalid(
            "Key attribute's data type should match its data type in table's schema: Key " + name);
      }
    }
    plan.access = ReadPlan::Access::kGet;
    return plan;
  }

  Status CheckOrderBy(const model::KeySchema& ks) {
    if (s_.order_by.empty()) return Status::Ok();
    if (!s_.where)
      return Invalid("Must have WHERE clause in the statement when using ORDER BY clause.");
    if (!HasPartitionCondition(*s_.where, ks.hash.name)) {
      return Invalid(
          "Must have at least one non-optional hash key condition in WHERE clause when using "
          "ORDER BY clause.");
    }
    for (const OrderKey& o : s_.order_by) {
      if (!o.not_a_name.empty()) {
        return Invalid("Argument to ORDER BY must be of type VariableReference. Type: " +
                       o.not_a_name);
      }
      bool key = o.name == ks.hash.name || (ks.range && o.name == ks.range->name) ||
                 (o.name == schema_.key_schema.hash.name) ||
                 (schema_.key_schema.range && o.name == schema_.key_schema.range->name);
      if (!key) {
        return Invalid("Variable reference " + o.name +
                       " in ORDER BY clause must be part of the primary key");
      }
    }
    return Status::Ok();
  }

  // What an index cannot serve: a GSI refuses attributes of the SELECT list it does not
  // project (an LSI reads them from the table); a keyed read refuses a filter on them.
  Status CheckIndexAttributes(ReadPlan& plan, bool keyed) {
    const IndexSchema& index = *plan.index;
    if (!plan.all_attributes) {
      std::vector<std::string> roots;
      for (const OutputPath& p : plan.projection) roots.push_back(p.path.root());
      std::vector<std::string> missing = Unprojected(index, schema_.key_schema, roots);
      if (!missing.empty() && index.global) {
        return Invalid("One or more parameter values were invalid: Global secondary index " +
                       index.name + " does not project " + Bracketed(missing));
      }
      plan.fetch_base = !missing.empty();
    }
    if (keyed && s_.where) {
      std::vector<std::string> roots;
      CollectRoots(*s_.where, roots);
      std::vector<std::string> missing = Unprojected(index, schema_.key_schema, roots);
      if (!missing.empty()) {
        return Invalid("One or more parameter values were invalid: Secondary index " + index.name +
                       " does not project one or more filter attributes: " + Bracketed(missing));
      }
    }
    return Status::Ok();
  }

  const BoundSelect& s_;
  const TableSchema& schema_;
  const PlanOptions& options_;
};

// ---- writes --------------------------------------------------------------------------------

struct DmlKeys {
  model::Item key;
  std::vector<const Condition*> rest;
};

// The key of a data manipulation statement: an equality with a value on every key attribute
// among the top-level AND of the WHERE; everything else is the write's condition.
Result<DmlKeys> ExtractDmlKeys(const Condition& where, const model::KeySchema& ks,
                               bool condition_check) {
  std::vector<std::string> keys = {ks.hash.name};
  if (ks.range) keys.push_back(ks.range->name);
  std::vector<const Condition*> leaves;
  Leaves(where, leaves);
  DmlKeys out;
  for (const Condition* leaf : leaves) {
    const std::string* key = LeafKey(*leaf, keys);
    const AttributeValue* v = key ? KeyEquality(*leaf, *key) : nullptr;
    if (v == nullptr) {
      out.rest.push_back(leaf);
      continue;
    }
    auto it = out.key.find(*key);
    if (it != out.key.end()) {
      if (condition_check) {
        out.rest.push_back(leaf);
        continue;
      }
      if (!(it->second == *v)) {
        return Invalid("Multiple conditions on same key " + *key +
                       ". Only single item Update/Insert/Delete are supported");
      }
      continue;
    }
    out.key.emplace(*key, *v);
  }
  if (out.key.size() != keys.size()) {
    return Invalid(
        condition_check
            ? "EXISTS() must contain a single item read with additional condition"
            : "Where clause does not contain a mandatory equality on all key attributes");
  }
  for (const auto& [name, value] : out.key) {
    model::Type t = value.type();
    if (t != model::Type::kS && t != model::Type::kN && t != model::Type::kB) {
      return Invalid("Key value must be of type S, N, or B. Key name: " + name +
                     ", Key type: " + std::string(model::TypeName(t)));
    }
    model::Type want =
        name == ks.hash.name ? model::ToType(ks.hash.type) : model::ToType(ks.range->type);
    if (t != want) {
      return Invalid(
          "Key attribute's data type should match its data type in table's schema: Key " + name);
    }
  }
  return out;
}

// attribute_exists(<partition key>) or attribute_not_exists(<partition key>).
Condition Existence(const model::KeySchema& ks, bool exists) {
  expr::Call call;
  call.function = exists ? expr::Function::kAttributeExists : expr::Function::kAttributeNotExists;
  expr::Path path;
  path.elements.push_back(expr::PathElement{ks.hash.name});
  call.args.push_back(Operand{std::move(path)});
  Condition c;
  c.kind = CK::kFunction;
  c.operands.push_back(Operand{std::move(call)});
  return c;
}

Condition Join(CK kind, Condition a, Condition b) {
  Condition c;
  c.kind = kind;
  c.children.push_back(std::move(a));
  c.children.push_back(std::move(b));
  return c;
}

std::string_view ReturningText(Returning r) {
  switch (r) {
    case Returning::kAllOld:
      return "ALL OLD *";
    case Returning::kAllNew:
      return "ALL NEW *";
    case Returning::kModifiedOld:
      return "MODIFIED OLD *";
    case Returning::kModifiedNew:
      return "MODIFIED NEW *";
    case Returning::kNone:
      break;
  }
  return "";
}

Status CheckReturning(Returning r, WritePlan::Kind kind, Use use) {
  if (r == Returning::kNone) return Status::Ok();
  if (use == Use::kTransaction) {
    return Invalid("RETURNING clause is not supported in ExecuteTransaction.");
  }
  if (kind == WritePlan::Kind::kInsert) return Invalid("RETURNING is not supported in INSERT");
  if (kind == WritePlan::Kind::kDelete && r != Returning::kAllOld) {
    return Invalid("Invalid returning clause: RETURNING " + std::string(ReturningText(r)) +
                   ". Only RETURNING ALL OLD * is allowed in DELETE statements.");
  }
  return Status::Ok();
}

Result<WritePlan> PlanInsert(const BoundInsert& ins, const TableSchema& schema, Use use) {
  WritePlan plan;
  plan.kind = WritePlan::Kind::kInsert;
  plan.table = ins.table;
  const model::KeySchema& ks = schema.key_schema;
  std::vector<const model::KeyAttribute*> attrs = {&ks.hash};
  if (ks.range) attrs.push_back(&*ks.range);
  for (const model::KeyAttribute* a : attrs) {
    auto it = ins.item.find(a->name);
    if (it == ins.item.end()) {
      return Invalid("Key attribute should be present in the item: Key " + a->name);
    }
    if (it->second.type() != model::ToType(a->type)) {
      return Invalid(
          "Key attribute's data type should match its data type in table's schema: Key " + a->name);
    }
    plan.key.emplace(a->name, it->second);
  }
  FDYNO_RETURN_IF_ERROR(CheckReturning(ins.returning, plan.kind, use));
  FDYNO_RETURN_IF_ERROR(model::CheckItemSize(ins.item));
  plan.item = ins.item;
  plan.condition = Existence(ks, false);
  plan.on_false = WritePlan::OnFalse::kDuplicateItem;
  return plan;
}

// The start of an UPDATE or DELETE plan (the key out of the WHERE, then RETURNING), and what
// remains of the WHERE.
struct KeyedWrite {
  WritePlan plan;
  std::optional<Condition> rest;
};

Result<KeyedWrite> PlanKeyedWrite(WritePlan::Kind kind, const std::string& table,
                                  const Condition& where, Returning returning,
                                  const model::KeySchema& ks, Use use) {
  KeyedWrite out;
  out.plan.kind = kind;
  out.plan.table = table;
  FDYNO_ASSIGN_OR_RETURN(DmlKeys keys, ExtractDmlKeys(where, ks, false));
  out.plan.key = std::move(keys.key);
  FDYNO_RETURN_IF_ERROR(CheckReturning(returning, kind, use));
  out.plan.returning = returning;
  out.rest = AndOf(keys.rest);
  return out;
}

Result<WritePlan> PlanUpdate(const BoundUpdate& up, const TableSchema& schema, Use use) {
  const model::KeySchema& ks = schema.key_schema;
  FDYNO_ASSIGN_OR_RETURN(KeyedWrite w, PlanKeyedWrite(WritePlan::Kind::kUpdate, up.table, up.where,
                                                      up.returning, ks, use));
  FDYNO_RETURN_IF_ERROR(expr::CheckKeyUntouched(up.update, ks));
  w.plan.update = up.update;
  Condition exists = Existence(ks, true);
  w.plan.condition =
      w.rest ? Join(CK::kAnd, std::move(exists), std::move(*w.rest)) : std::move(exists);
  return std::move(w.plan);
}

Result<WritePlan> PlanDelete(const BoundDelete& d, const TableSchema& schema, Use use) {
  const model::KeySchema& ks = schema.key_schema;
  FDYNO_ASSIGN_OR_RETURN(KeyedWrite w, PlanKeyedWrite(WritePlan::Kind::kDelete, d.table, d.where,
                                                      d.returning, ks, use));
  if (w.rest) w.plan.condition = Join(CK::kOr, Existence(ks, false), std::move(*w.rest));
  return std::move(w.plan);
}

Result<WritePlan> PlanCheck(const BoundSelect& s, const TableSchema& schema) {
  WritePlan plan;
  plan.kind = WritePlan::Kind::kCheck;
  plan.table = s.table;
  FDYNO_ASSIGN_OR_RETURN(DmlKeys keys, ExtractDmlKeys(*s.where, schema.key_schema, true));
  plan.key = std::move(keys.key);
  plan.condition = AndOf(keys.rest);
  if (!plan.condition) {
    return Invalid("EXISTS() must contain a single item read with additional condition");
  }
  return plan;
}

}  // namespace

model::Item ProjectOutput(const model::Item& item, const ReadPlan& plan) {
  if (plan.all_attributes) return item;
  model::Item out;
  for (const OutputPath& p : plan.projection) {
    if (const AttributeValue* v = expr::Lookup(item, p.path)) out.emplace(p.name, *v);
  }
  return out;
}

const IndexSchema* TableSchema::FindIndex(std::string_view index_name) const {
  for (const IndexSchema& i : indexes) {
    if (i.name == index_name) return &i;
  }
  return nullptr;
}

Result<Plan> PlanStatement(const BoundStatement& statement, const TableSchema& schema,
                           const PlanOptions& options) {
  Plan plan;
  plan.is_read = statement.is_read();
  switch (statement.kind) {
    case BoundStatement::Kind::kSelect: {
      FDYNO_ASSIGN_OR_RETURN(plan.read, ReadPlanner(statement.select, schema, options).Run());
      break;
    }
    case BoundStatement::Kind::kInsert: {
      FDYNO_ASSIGN_OR_RETURN(plan.write, PlanInsert(statement.insert, schema, options.use));
      break;
    }
    case BoundStatement::Kind::kUpdate: {
      FDYNO_ASSIGN_OR_RETURN(plan.write, PlanUpdate(statement.update, schema, options.use));
      break;
    }
    case BoundStatement::Kind::kDelete: {
      FDYNO_ASSIGN_OR_RETURN(plan.write, PlanDelete(statement.del, schema, options.use));
      break;
    }
    case BoundStatement::Kind::kExists: {
      if (options.use != Use::kTransaction) {
        return Invalid("EXISTS can only be used in ExecuteTransaction write requests.");
      }
      FDYNO_ASSIGN_OR_RETURN(plan.write, PlanCheck(statement.select, schema));
      break;
    }
  }
  return plan;
}

}  // namespace fdyno::partiql
