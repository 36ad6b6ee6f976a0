#include "partiql/bind.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>

#include "expr/resolver.h"
#include "model/json.h"
#include "model/number.h"

namespace fdyno::partiql {
namespace {

using ast::Expr;
using EK = ast::Expr::Kind;
using model::AttributeValue;

Error Invalid(std::string message) { return Error::Validation(std::move(message)); }

constexpr std::string_view kTableNameRule =
    "Table name should be within the length [3, 255] and only contain 'a-z', 'A-Z', '0-9', '-', "
    "'_', '.'.";

// DynamoDB's name for the kind of an expression in "Unsupported ..." messages (the class of
// PartiQL's node, or the literal's Ion type).
std::string NodeType(const Expr& e) {
  switch (e.kind) {
    case EK::kString:
      return "STRING";
    case EK::kNumber:
      return e.text.find_first_of(".eE") == std::string::npos ? "INT" : "DECIMAL";
    case EK::kTrue:
    case EK::kFalse:
      return "BOOL";
    case EK::kNull:
      return "NULL";
    case EK::kMissing:
      return "LiteralMissing";
    case EK::kParam:
      return "Parameter";
    case EK::kName:
      return "VariableReference";
    case EK::kPath:
      return "Path";
    case EK::kList:
    case EK::kBag:
      return "Seq";
    case EK::kStruct:
      return "Struct";
    case EK::kIs:
      return "Typed";
    case EK::kSelect:
      return "Select";
    default:
      return "NAry";
  }
}

// The word DynamoDB prints for a node in "Unsupported token in expression: <word>" and
// "Unrecognized assignment target: <word>".
std::string NodeWord(const Expr& e) {
  switch (e.kind) {
    case EK::kString:
      return "\"" + e.text + "\"";
    case EK::kNumber:
    case EK::kName:
    case EK::kCall:
      return e.text;
    case EK::kTrue:
      return "true";
    case EK::kFalse:
      return "false";
    case EK::kNull:
      return "null";
    case EK::kMissing:
      return "MISSING";
    case EK::kParam:
      return "PARAMETER";
    case EK::kPath:
      return "PATH";
    case EK::kStruct:
      return "STRUCT";
    case EK::kList:
      return "LIST";
    case EK::kBag:
      return "BAG";
    case EK::kSelect:
      return "SELECT";
    case EK::kIs:
      return e.negated ? "IS_NOT" : "IS";
    case EK::kCompare:
    case EK::kArith:
    case EK::kUnary:
      return e.op;
    case EK::kAnd:
      return "and";
    case EK::kOr:
      return "or";
    case EK::kNot:
      return "not";
    case EK::kBetween:
      return e.negated ? "not_between" : "between";
    case EK::kIn:
      return e.negated ? "not_in" : "in";
    case EK::kLike:
      return e.negated ? "not_like" : "like";
    default:
      return "UNKNOWN";
  }
}

bool IsValidTableName(std::string_view name) {
  if (name.size() < 3 || name.size() > 255) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// A list index as DynamoDB accepts it: digits fitting a 32-bit signed integer.
Result<uint64_t> ListIndex(const std::string& text) {
  bool digits = !text.empty();
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  bool negative = !text.empty() && text[0] == '-';
  if (!digits && !negative) return Invalid("Unexpected path component");
  if (negative || text.size() > 10 || std::stoull(text) > INT32_MAX) {
    return Invalid("List index is not within the allowable range; index: [" + text + "]");
  }
  return std::stoull(text);
}

// The components of a FROM source ("table" or "table"."index"), checked as DynamoDB does.
Result<std::vector<std::string>> FromComponents(const ast::Target& t) {
  if (t.has_alias) return Invalid("Aliasing is not supported");
  if (!t.is_path) return Invalid("Unexpected from source");
  for (const ast::Target::Component& c : t.components) {
    if (!c.index && c.name.empty()) return Invalid("Path component cannot be an empty string");
    if (c.index) FDYNO_RETURN_IF_ERROR(ListIndex(c.name));
  }
  if (t.components.size() > 2) {
    return Invalid("A path may contain at most 2 components in the FROM clause");
  }
  std::vector<std::string> out;
  for (const ast::Target::Component& c : t.components) {
    if (c.index) return Invalid("Invalid list expression in source.");
    if (!IsValidTableName(c.name)) return Invalid(std::string(kTableNameRule));
    out.push_back(c.name);
  }
  return out;
}

// The table of UPDATE and DELETE: a FROM source naming no index.
Result<std::string> DmlTable(const ast::Target& t) {
  FDYNO_ASSIGN_OR_RETURN(std::vector<std::string> components, FromComponents(t));
  if (components.size() > 1) return Invalid("This operation is not supported on an index");
  return components[0];
}

bool IsOpNode(EK k) {
  switch (k) {
    case EK::kCall:
    case EK::kCompare:
    case EK::kArith:
    case EK::kUnary:
    case EK::kAnd:
    case EK::kOr:
    case EK::kNot:
    case EK::kBetween:
    case EK::kIn:
    case EK::kLike:
    case EK::kIs:
      return true;
    default:
      return false;
  }
}

bool IsValueNode(EK k) {
  return k == EK::kString || k == EK::kNumber || k == EK::kTrue || k == EK::kFalse ||
         k == EK::kNull || k == EK::kParam || k == EK::kList || k == EK::kBag || k == EK::kStruct;
}

std::optional<expr::Function> LookupFunction(std::string_view lower_name) {
  using expr::Function;
  if (lower_name == "attribute_exists") return Function::kAttributeExists;
  if (lower_name == "attribute_not_exists") return Function::kAttributeNotExists;
  if (lower_name == "attribute_type") return Function::kAttributeType;
  if (lower_name == "begins_with") return Function::kBeginsWith;
  if (lower_name == "contains") return Function::kContains;
  if (lower_name == "size") return Function::kSize;
  if (lower_name == "if_not_exists") return Function::kIfNotExists;
  if (lower_name == "list_append") return Function::kListAppend;
  return std::nullopt;
}

bool IsUpdateFunction(expr::Function f) {
  return f == expr::Function::kIfNotExists || f == expr::Function::kListAppend;
}

std::string MisusedFunction(expr::Function f) {
  return "The function is not allowed to be used this way in an expression; function: " +
         std::string(expr::FunctionName(f));
}

// What one node of a WHERE clause became: an operand (value, path or value function) or a
// condition (a comparison, a logical operator or a condition function).
struct Converted {
  bool is_condition = false;
  expr::Operand operand;
  expr::Condition condition;
};

// A resolved path as the resolver's input (projections and updates go through it).
expr::parsed::Path ParsedPath(const expr::Path& p) {
  expr::parsed::Path out;
  out.elements.reserve(p.elements.size());
  for (const expr::PathElement& e : p.elements) {
    if (e.is_index()) {
      out.elements.push_back({expr::parsed::PathElement::Kind::kIndex, {}, e.index()});
    } else {
      out.elements.push_back({expr::parsed::PathElement::Kind::kName, e.name(), 0});
    }
  }
  return out;
}

class Binder {
 public:
  explicit Binder(const Parameters& params) : params_(params) {}

  Result<BoundStatement> Run(const ast::Statement& st) {
    if (st.param_count != params_.size()) {
      return Invalid("Number of parameters in request and statement don't match.");
    }
    BoundStatement out;
    switch (st.kind) {
      case ast::Statement::Kind::kSelect: {
        out.kind = BoundStatement::Kind::kSelect;
        FDYNO_ASSIGN_OR_RETURN(out.select, BindSelect(st.select));
        break;
      }
      case ast::Statement::Kind::kExists: {
        out.kind = BoundStatement::Kind::kExists;
        FDYNO_ASSIGN_OR_RETURN(out.select, BindExists(st.select));
        break;
      }
      case ast::Statement::Kind::kInsert: {
        out.kind = BoundStatement::Kind::kInsert;
        FDYNO_ASSIGN_OR_RETURN(out.insert, BindInsert(st.insert));
        break;
      }
      case ast::Statement::Kind::kUpdate: {
        out.kind = BoundStatement::Kind::kUpdate;
        FDYNO_ASSIGN_OR_RETURN(out.update, BindUpdate(st.update));
        break;
      }
      case ast::Statement::Kind::kDelete: {
        out.kind = BoundStatement::Kind::kDelete;
        FDYNO_ASSIGN_OR_RETURN(out.del, BindDelete(st.del));
        break;
      }
    }
    return out;
  }

 private:
  // ---- statements ----------------------------------------------------------------------------

  static Status CheckSelectClauses(const ast::Select& s) {
    if (s.group_by) return Invalid("Unsupported clause: GROUP BY");
    if (s.having) return Invalid("Unsupported clause: HAVING");
    if (s.limit) return Invalid("Unsupported clause: LIMIT");
    if (s.offset) return Invalid("Unsupported clause: OFFSET");
    return Status::Ok();
  }

  Result<BoundSelect> BindSelect(const ast::Select& s) {
    FDYNO_RETURN_IF_ERROR(CheckSelectClauses(s));
    if (s.distinct) return Invalid("Unsupported token in expression: DISTINCT");
    if (s.from_not_single) return Invalid("Only select from a single table or index is supported.");
    FDYNO_ASSIGN_OR_RETURN(std::vector<std::string> from, FromComponents(s.from));
    BoundSelect out;
    out.table = from[0];
    if (from.size() == 2) out.index = from[1];
    FDYNO_RETURN_IF_ERROR(BindProjection(s, out));
    if (s.where) {
      FDYNO_ASSIGN_OR_RETURN(out.where, BindWhere(*s.where));
    }
    for (const ast::OrderItem& item : s.order_by) {
      OrderKey key;
      key.descending = item.descending;
      if (item.expr.kind == EK::kName) {
        key.name = item.expr.text;
      } else {
        key.not_a_name = NodeWord(item.expr);
      }
      out.order_by.push_back(std::move(key));
    }
    return out;
  }

  Result<BoundSelect> BindExists(const ast::Select& s) {
    FDYNO_RETURN_IF_ERROR(CheckSelectClauses(s));
    if (s.from_not_single) return Invalid("Only select from a single table or index is supported.");
    FDYNO_ASSIGN_OR_RETURN(std::vector<std::string> from, FromComponents(s.from));
    if (from.size() != 1) return Invalid("Operations on indices are not supported in transactions");
    BoundSelect out;
    out.table = from[0];
    if (!s.where)
      return Invalid("EXISTS() must contain a single item read with additional condition");
    FDYNO_ASSIGN_OR_RETURN(out.where, BindWhere(*s.where));
    return out;
  }

  Status BindProjection(const ast::Select& s, BoundSelect& out) {
    if (s.value_or_pivot)
      return Invalid("Select projection doesn't support value or pivot keywords");
    std::set<std::string> names;
    expr::parsed::Projection parsed;
    for (const ast::SelectItem& item : s.items) {
      if (item.star) return Status::Ok();
      if (item.path_star) return Invalid("Changing item's hierarchy while reading isn't supported");
      if (item.has_alias) return Invalid("Aliasing is not supported");
      if (item.expr.kind != EK::kName && item.expr.kind != EK::kPath) {
        return Invalid("Unexpected path component");
      }
      FDYNO_ASSIGN_OR_RETURN(expr::Path resolved, BindPath(item.expr));
      expr::parsed::Path path = ParsedPath(resolved);
      std::string name = OutputName(path);
      if (!names.insert(name).second)
        return Invalid("Duplicate identifiers in select clause: " + name);
      out.projection.push_back(OutputPath{{}, std::move(name)});
      parsed.push_back(std::move(path));
    }
    out.all_attributes = false;
    expr::ResolveContext ctx(nullptr, nullptr);
    ctx.OmitExpressionNames();
    FDYNO_ASSIGN_OR_RETURN(out.projection_paths, ctx.ResolveProjection(parsed));
    for (size_t i = 0; i < out.projection.size(); ++i) {
      out.projection[i].path = out.projection_paths[i];
    }
    return Status::Ok();
  }

  // The last name of a path and the list indexes after it: m.a.b -> "b", l[1] -> "l[1]".
  static std::string OutputName(const expr::parsed::Path& path) {
    std::string name;
    for (const expr::parsed::PathElement& e : path.elements) {
      if (e.kind == expr::parsed::PathElement::Kind::kIndex) {
        name += "[" + std::to_string(e.index) + "]";
      } else {
        name = e.text;
      }
    }
    return name;
  }

  Result<BoundInsert> BindInsert(const ast::Insert& ins) {
    if (ins.multiple_rows) {
      return Invalid(
          "Unsupported operation: Inserting multiple items in a single statement is not "
          "supported, use \"INSERT INTO tableName VALUE item\" instead");
    }
    if (ins.at) return Invalid("AT is not supported in insert statements.");
    if (ins.on_conflict) return Invalid("Unsupported clause: ON CONFLICT");
    BoundInsert out;
    FDYNO_ASSIGN_OR_RETURN(out.item, BindItem(ins.value));
    if (!ins.into.simple || ins.into.components.size() != 1) {
      return Invalid(
          "FROM clause may only contain a single table name in data manipulation statements");
    }
    out.table = ins.into.components[0].name;
    out.returning = ins.returning;
    return out;
  }

  // INSERT's VALUE: a struct whose fields are literals or parameters.
  Result<model::Item> BindItem(const Expr& value) {
    if (value.kind != EK::kStruct) {
      return Invalid(
          "Unsupported format in item expression. Please use struct format {...} to express item "
          "values for insert statement.");
    }
    model::Item item;
    for (size_t i = 0; i + 1 < value.children.size(); i += 2) {
      const Expr& key = value.children[i];
      const Expr& field = value.children[i + 1];
      if (key.kind != EK::kString) {
        return Invalid("Tuple keys must be of type String. Actual type: " + NodeType(key) +
                       " under root");
      }
      if (key.text.empty()) return Invalid("Path component cannot be an empty string");
      if (!IsValueNode(field.kind)) {
        return Invalid("Unsupported data type: " + NodeWord(field) + " under key root");
      }
      FDYNO_ASSIGN_OR_RETURN(AttributeValue v, Value(field, "root", 1));
      if (!item.emplace(key.text, std::move(v)).second) {
        return Invalid("Duplicate keys in tuple. Key: " + key.text + " under root");
      }
    }
    return item;
  }

  Result<BoundUpdate> BindUpdate(const ast::Update& up) {
    BoundUpdate out;
    std::optional<expr::Condition> where;
    if (up.where) {
      FDYNO_ASSIGN_OR_RETURN(where, BindWhereTree(*up.where));
    }
    expr::parsed::Update update;
    for (const ast::UpdateAction& a : up.actions) {
      FDYNO_ASSIGN_OR_RETURN(expr::parsed::UpdateAction action, BindAction(a));
      update.actions.push_back(std::move(action));
    }
    FDYNO_ASSIGN_OR_RETURN(out.table, DmlTable(up.table));
    if (!where) return MissingKey();
    expr::ResolveContext ctx(nullptr, &values_);
    ctx.OmitExpressionNames();
    FDYNO_ASSIGN_OR_RETURN(out.update, ctx.ResolveUpdate(update));
    FDYNO_RETURN_IF_ERROR(CheckWhere(*where));
    out.where = std::move(*where);
    out.returning = up.returning;
    return out;
  }

  Result<BoundDelete> BindDelete(const ast::Delete& d) {
    BoundDelete out;
    std::optional<expr::Condition> where;
    if (d.where) {
      FDYNO_ASSIGN_OR_RETURN(where, BindWhereTree(*d.where));
    }
    FDYNO_ASSIGN_OR_RETURN(out.table, DmlTable(d.from));
    if (!where) return MissingKey();
    FDYNO_RETURN_IF_ERROR(CheckWhere(*where));
    out.where = std::move(*where);
    out.returning = d.returning;
    return out;
  }

  static Error MissingKey() {
    return Invalid("Where clause does not contain a mandatory equality on all key attributes");
  }

  // ---- WHERE ---------------------------------------------------------------------------------

  // The WHERE clause is built as a resolved tree (its values in place), then checked as the
  // resolver checks a ConditionExpression.
  Result<expr::Condition> BindWhere(const Expr& e) {
    FDYNO_ASSIGN_OR_RETURN(expr::Condition c, BindWhereTree(e));
    FDYNO_RETURN_IF_ERROR(CheckWhere(c));
    return c;
  }

  Result<expr::Condition> BindWhereTree(const Expr& e) {
    FDYNO_ASSIGN_OR_RETURN(Converted c, Convert(e));
    bool condition_call = c.operand.is_call() && c.operand.call().function != expr::Function::kSize;
    if (!c.is_condition && !condition_call) {
      return Invalid("WHERE clause must contain an expression that resolves to a boolean");
    }
    return AsCondition(std::move(c));
  }

  static Status CheckWhere(const expr::Condition& c) {
    expr::ResolveContext ctx(nullptr, nullptr);
    ctx.OmitExpressionNames();
    FDYNO_RETURN_IF_ERROR(ctx.CheckCondition(c, expr::ExpressionKind::kCondition));
    return CheckOrderedOperands(c);
  }

  // <, <=, >, >= and BETWEEN order only numbers, strings and binaries: a value of another type
  // is refused before anything is read.
  static Status CheckOrderedOperands(const expr::Condition& c) {
    using K = expr::Condition::Kind;
    bool ordering =
        c.kind == K::kBetween ||
        (c.kind == K::kCompare && c.op != expr::CompareOp::kEq && c.op != expr::CompareOp::kNe);
    if (ordering) {
      std::string op = c.kind == K::kBetween ? "BETWEEN" : std::string(expr::CompareOpText(c.op));
      for (const expr::Operand& o : c.operands) {
        if (!o.is_value()) continue;
        model::Type t = o.value().type();
        if (!expr::Orderable(t)) {
          return Invalid("Incorrect operand type for operator or function; operator or function: " +
                         op + ", operand type: " + std::string(model::TypeName(t)));
        }
      }
    }
    for (const expr::Condition& child : c.children) {
      FDYNO_RETURN_IF_ERROR(CheckOrderedOperands(child));
    }
    return Status::Ok();
  }

  Result<Converted> Convert(const Expr& e) {
    Converted out;
    switch (e.kind) {
      case EK::kAnd:
      case EK::kOr:
        return ConvertLogical(e);
      case EK::kNot: {
        FDYNO_ASSIGN_OR_RETURN(Converted child, Convert(e.children[0]));
        if (!child.is_condition && !child.operand.is_call()) {
          return Invalid("The argument to NOT must be a Type or Expression");
        }
        FDYNO_ASSIGN_OR_RETURN(expr::Condition inner, AsCondition(std::move(child)));
        return ConditionOf(Not(std::move(inner)));
      }
      case EK::kCompare:
        return ConvertCompare(e);
      case EK::kBetween: {
        expr::Condition c;
        c.kind = expr::Condition::Kind::kBetween;
        for (const Expr& child : e.children) {
          FDYNO_ASSIGN_OR_RETURN(expr::Operand o, Operand(child));
          c.operands.push_back(std::move(o));
        }
        return ConditionOf(e.negated ? Not(std::move(c)) : std::move(c));
      }
      case EK::kIn:
        return ConvertIn(e);
      case EK::kIs:
        return ConvertIs(e);
      case EK::kCall:
        return ConvertCall(e);
      case EK::kArith:
      case EK::kUnary:
      case EK::kLike:
        return Invalid("Unsupported operator in Condition Expression. Operator: " + NodeWord(e));
      case EK::kMissing:
        return Invalid("MISSING must be compared using IS operator");
      case EK::kSelect:
        return Invalid("Unsupported token in expression: SELECT");
      case EK::kName:
      case EK::kPath: {
        FDYNO_ASSIGN_OR_RETURN(expr::Path p, BindPath(e));
        out.operand.v = std::move(p);
        return out;
      }
      default: {
        FDYNO_ASSIGN_OR_RETURN(AttributeValue v, Value(e, "root", 1));
        out.operand.v = std::move(v);
        return out;
      }
    }
  }

  static Converted ConditionOf(expr::Condition c) {
    Converted out;
    out.is_condition = true;
    out.condition = std::move(c);
    return out;
  }

  static expr::Condition Not(expr::Condition inner) {
    expr::Condition c;
    c.kind = expr::Condition::Kind::kNot;
    c.children.push_back(std::move(inner));
    return c;
  }

  // A converted node in a condition's place: conditions as they are, a condition function as a
  // function condition; size() and anything else is misused there.
  static Result<expr::Condition> AsCondition(Converted c) {
    if (c.is_condition) return std::move(c.condition);
    expr::Function f = c.operand.call().function;
    if (f == expr::Function::kSize || IsUpdateFunction(f)) return Invalid(MisusedFunction(f));
    expr::Condition out;
    out.kind = expr::Condition::Kind::kFunction;
    out.operands.push_back(std::move(c.operand));
    return out;
  }

  Result<Converted> ConvertLogical(const Expr& e) {
    FDYNO_ASSIGN_OR_RETURN(Converted a, Convert(e.children[0]));
    FDYNO_ASSIGN_OR_RETURN(Converted b, Convert(e.children[1]));
    auto op_node = [](const Converted& c) { return c.is_condition || c.operand.is_call(); };
    if (!op_node(a) || !op_node(b)) return Invalid("The arguments to AND/OR must be Expressions");
    expr::Condition c;
    c.kind = e.kind == EK::kAnd ? expr::Condition::Kind::kAnd : expr::Condition::Kind::kOr;
    FDYNO_ASSIGN_OR_RETURN(expr::Condition left, AsCondition(std::move(a)));
    FDYNO_ASSIGN_OR_RETURN(expr::Condition right, AsCondition(std::move(b)));
    c.children.push_back(std::move(left));
    c.children.push_back(std::move(right));
    return ConditionOf(std::move(c));
  }

  Result<Converted> ConvertCompare(const Expr& e) {
    expr::Condition c;
    c.kind = expr::Condition::Kind::kCompare;
    const std::string& op = e.op;
    c.op = op == "="    ? expr::CompareOp::kEq
           : op == "<>" ? expr::CompareOp::kNe
           : op == "<"  ? expr::CompareOp::kLt
           : op == "<=" ? expr::CompareOp::kLe
           : op == ">"  ? expr::CompareOp::kGt
                        : expr::CompareOp::kGe;
    for (const Expr& child : e.children) {
      FDYNO_ASSIGN_OR_RETURN(expr::Operand o, Operand(child));
      c.operands.push_back(std::move(o));
    }
    return ConditionOf(std::move(c));
  }

  Result<Converted> ConvertIn(const Expr& e) {
    const Expr& list = e.children[1];
    if ((list.kind != EK::kList && list.kind != EK::kBag) || list.children.empty()) {
      return Invalid(
          "IN operator must have a left hand argument of type Variable Reference and right hand "
          "argument of type Seq with at least one member");
    }
    expr::Condition c;
    c.kind = expr::Condition::Kind::kIn;
    FDYNO_ASSIGN_OR_RETURN(expr::Operand left, Operand(e.children[0]));
    c.operands.push_back(std::move(left));
    for (const Expr& member : list.children) {
      FDYNO_ASSIGN_OR_RETURN(expr::Operand o, Operand(member));
      c.operands.push_back(std::move(o));
    }
    if (list.children.size() > expr::kMaxInOperands) {
      return Invalid("The IN operator is provided with too many operands; number of operands: " +
                     std::to_string(list.children.size()));
    }
    return ConditionOf(e.negated ? Not(std::move(c)) : std::move(c));
  }

  // x IS [NOT] MISSING | NULL | BOOLEAN | STRING | NUMERIC | BLOB | STRUCT | TUPLE | LIST
  Result<Converted> ConvertIs(const Expr& e) {
    const Expr& x = e.children[0];
    bool literal = x.kind == EK::kString || x.kind == EK::kNumber || x.kind == EK::kTrue ||
                   x.kind == EK::kFalse || x.kind == EK::kNull;
    if (x.kind != EK::kName && x.kind != EK::kPath && !literal) {
      return Invalid(
          "The left hand side argument to IS must be a Variable Reference, Literal, or Path");
    }
    FDYNO_ASSIGN_OR_RETURN(expr::Operand operand, Operand(x));
    expr::Condition c;
    const std::string& type = e.text;
    std::string dynamo_type;
    if (type == "boolean" || type == "bool") dynamo_type = "BOOL";
    if (type == "string") dynamo_type = "S";
    if (type == "numeric") dynamo_type = "N";
    if (type == "blob") dynamo_type = "B";
    if (type == "struct" || type == "tuple") dynamo_type = "M";
    if (type == "list") dynamo_type = "L";
    if (type == "missing") {
      c.kind = expr::Condition::Kind::kFunction;
      expr::Call call;
      call.function = expr::Function::kAttributeNotExists;
      call.args.push_back(std::move(operand));
      c.operands.push_back(expr::Operand{std::move(call)});
    } else if (type == "null") {
      c.kind = expr::Condition::Kind::kCompare;
      c.op = expr::CompareOp::kEq;
      c.operands.push_back(std::move(operand));
      c.operands.push_back(expr::Operand{AttributeValue::MakeNull()});
    } else if (!dynamo_type.empty()) {
      c.kind = expr::Condition::Kind::kFunction;
      expr::Call call;
      call.function = expr::Function::kAttributeType;
      call.args.push_back(std::move(operand));
      call.args.push_back(expr::Operand{AttributeValue::S(dynamo_type)});
      c.operands.push_back(expr::Operand{std::move(call)});
    } else {
      // Another of PartiQL's types (the parser accepts only type names).
      return Invalid("Unsupported operation: IsType");
    }
    return ConditionOf(e.negated ? Not(std::move(c)) : std::move(c));
  }

  Result<Converted> ConvertCall(const Expr& e) {
    std::string name = Lower(e.text);
    std::optional<expr::Function> f = LookupFunction(name);
    if (!f) return Invalid("Unrecognized function: " + e.text);
    if (IsUpdateFunction(*f)) {
      return Invalid("The function is not allowed in a condition expression; function: " + name);
    }
    expr::Call call;
    call.function = *f;
    for (const Expr& arg : e.children) {
      FDYNO_ASSIGN_OR_RETURN(expr::Operand o, Operand(arg));
      call.args.push_back(std::move(o));
    }
    Converted out;
    out.operand.v = std::move(call);
    return out;
  }

  // An operand of a comparison, BETWEEN, IN or function: a value, a path or size().
  Result<expr::Operand> Operand(const Expr& e) {
    FDYNO_ASSIGN_OR_RETURN(Converted c, Convert(e));
    if (c.is_condition) return Invalid("Unsupported token in expression: " + NodeWord(e));
    if (c.operand.is_call() && c.operand.call().function != expr::Function::kSize) {
      return Invalid(MisusedFunction(c.operand.call().function));
    }
    return std::move(c.operand);
  }

  // ---- SET and REMOVE ------------------------------------------------------------------------

  Result<expr::parsed::UpdateAction> BindAction(const ast::UpdateAction& a) {
    expr::parsed::UpdateAction out;
    const Expr& target = a.kind == ast::UpdateAction::Kind::kSet ? a.set.target : a.path;
    if (target.kind != EK::kName && target.kind != EK::kPath) {
      return Invalid("Unrecognized assignment target: " + NodeWord(target));
    }
    FDYNO_ASSIGN_OR_RETURN(expr::Path target_path, BindPath(target));
    out.path = ParsedPath(target_path);
    if (a.kind == ast::UpdateAction::Kind::kRemove) {
      out.kind = expr::parsed::UpdateAction::Kind::kRemove;
      return out;
    }
    const Expr& value = a.set.value;
    if (value.kind == EK::kCall) {
      std::string name = Lower(value.text);
      if (name == "set_add" || name == "set_delete")
        return SetFunction(value, name, std::move(out));
    }
    out.kind = expr::parsed::UpdateAction::Kind::kSet;
    if (value.kind == EK::kArith && (value.op == "+" || value.op == "-")) {
      out.set.op =
          value.op == "+" ? expr::parsed::SetValue::Op::kPlus : expr::parsed::SetValue::Op::kMinus;
      for (const Expr& side : value.children) {
        FDYNO_ASSIGN_OR_RETURN(expr::parsed::Operand o, UpdateOperand(side));
        out.set.operands.push_back(std::move(o));
      }
      return out;
    }
    FDYNO_ASSIGN_OR_RETURN(expr::parsed::Operand o, UpdateOperand(value));
    out.set.operands.push_back(std::move(o));
    return out;
  }

  // x = set_add(x, <<...>>) and set_delete: ADD and DELETE of set members.
  Result<expr::parsed::UpdateAction> SetFunction(const Expr& call, const std::string& name,
                                                 expr::parsed::UpdateAction out) {
    std::string which = name == "set_add" ? "ADD" : "DELETE";
    if (call.children.size() != 2) {
      return Invalid("SET_" + which + " must have exactly two arguments");
    }
    const Expr& first = call.children[0];
    bool same = false;
    if (first.kind == EK::kName || first.kind == EK::kPath) {
      FDYNO_ASSIGN_OR_RETURN(expr::Path p, BindPath(first));
      same = SamePath(ParsedPath(p), out.path);
    }
    if (!same)
      return Invalid("The first argument to SET_" + which + " must equal the assignment value");
    const Expr& second = call.children[1];
    std::optional<AttributeValue> v;
    if (IsValueNode(second.kind)) {
      FDYNO_ASSIGN_OR_RETURN(v, Value(second, "root", 1));
    }
    bool is_set = v && (v->type() == model::Type::kSS || v->type() == model::Type::kNS ||
                        v->type() == model::Type::kBS);
    if (!is_set) {
      return Invalid("The second argument to SET_" + which + " must be a value with type SET");
    }
    out.kind = name == "set_add" ? expr::parsed::UpdateAction::Kind::kAdd
                                 : expr::parsed::UpdateAction::Kind::kDelete;
    out.value.push_back(Placeholder(std::move(*v)));
    return out;
  }

  static bool SamePath(const expr::parsed::Path& a, const expr::parsed::Path& b) {
    if (a.elements.size() != b.elements.size()) return false;
    for (size_t i = 0; i < a.elements.size(); ++i) {
      const auto& x = a.elements[i];
      const auto& y = b.elements[i];
      if (x.kind != y.kind || x.text != y.text || x.index != y.index) return false;
    }
    return true;
  }

  // A right-hand side operand of SET: a value, a path, list_append(...) or if_not_exists(...).
  Result<expr::parsed::Operand> UpdateOperand(const Expr& e) {
    switch (e.kind) {
      case EK::kName:
      case EK::kPath: {
        FDYNO_ASSIGN_OR_RETURN(expr::Path p, BindPath(e));
        return expr::parsed::Operand{ParsedPath(p)};
      }
      case EK::kCall: {
        std::string name = Lower(e.text);
        std::optional<expr::Function> f = LookupFunction(name);
        if (!f) return Invalid("Unrecognized function: " + e.text);
        if (!IsUpdateFunction(*f)) {
          return Invalid("The function is not allowed in an update expression; function: " + name);
        }
        expr::parsed::Call call;
        call.function = *f;
        for (const Expr& arg : e.children) {
          FDYNO_ASSIGN_OR_RETURN(expr::parsed::Operand o, UpdateOperand(arg));
          call.args.push_back(std::move(o));
        }
        return expr::parsed::Operand{std::move(call)};
      }
      case EK::kIs:
        return Invalid("IS operator is not supported in update expressions");
      case EK::kMissing:
        return Invalid("MISSING must be compared using IS operator");
      case EK::kSelect:
        return Invalid("Unsupported token in expression: SELECT");
      default:
        if (IsOpNode(e.kind)) {
          return Invalid("Unsupported operator in Update Expression. Operator: " + NodeWord(e));
        }
        FDYNO_ASSIGN_OR_RETURN(AttributeValue v, Value(e, "root", 1));
        return expr::parsed::Operand{Placeholder(std::move(v))};
    }
  }

  // ---- paths and values ----------------------------------------------------------------------

  Result<expr::Path> BindPath(const Expr& e) {
    expr::Path out;
    const Expr& root = e.kind == EK::kPath ? e.children[0] : e;
    if (root.kind == EK::kList) return Invalid("A path cannot start with a list index");
    if (root.kind != EK::kName) return Invalid("Unexpected path component");
    if (root.text.empty()) return Invalid("Path component cannot be an empty string");
    out.elements.reserve(e.kind == EK::kPath ? e.children.size() : 1);
    out.elements.emplace_back().v.emplace<0>(root.text);
    if (e.kind != EK::kPath) return out;
    for (size_t i = 1; i < e.children.size(); ++i) {
      const Expr& step = e.children[i];
      if (step.kind == EK::kPathName) {
        if (step.text.empty()) return Invalid("Path component cannot be an empty string");
        out.elements.emplace_back().v.emplace<0>(step.text);
      } else if (step.kind == EK::kPathIndex) {
        FDYNO_ASSIGN_OR_RETURN(uint64_t index, ListIndex(step.text));
        out.elements.emplace_back().v.emplace<1>(index);
      } else if (step.kind == EK::kPathStar && step.text == "[*]") {
        return Invalid("Wildcard path component like a[*].b are not supported");
      } else if (step.kind == EK::kPathStar) {
        return Invalid("Unpivot path component like a.*.b are not supported");
      } else {
        return Invalid("Unexpected path component");
      }
    }
    if (out.elements.size() > expr::kMaxPathDepth) {
      return Invalid("The document path has too many nesting levels; nesting levels: " +
                     std::to_string(out.elements.size()));
    }
    return out;
  }

  expr::parsed::ValueRef Placeholder(AttributeValue v) {
    std::string name = ":v" + std::to_string(values_.size());
    values_.emplace(name, std::move(v));
    return expr::parsed::ValueRef{std::move(name)};
  }

  // A literal (or parameter) as an AttributeValue. `where` names its place for messages
  // ("root", "root.a", "root[1]"); `level` is its nesting level (1 at the top).
  Result<AttributeValue> Value(const Expr& e, const std::string& where, int level) {
    if (level > model::kMaxNestingLevel) {
      return Invalid(
          "Nesting Levels have exceeded supported limits: Attributes in the item have nested "
          "levels beyond supported limit");
    }
    switch (e.kind) {
      case EK::kString:
        return AttributeValue::S(e.text);
      case EK::kNumber: {
        FDYNO_ASSIGN_OR_RETURN(model::Number n, model::Number::Parse(e.text));
        return AttributeValue::N(std::move(n));
      }
      case EK::kTrue:
      case EK::kFalse:
        return AttributeValue::Bool(e.kind == EK::kTrue);
      case EK::kNull:
        return AttributeValue::MakeNull();
      case EK::kParam:
        return params_[e.param];
      case EK::kList: {
        model::List list;
        for (size_t i = 0; i < e.children.size(); ++i) {
          FDYNO_ASSIGN_OR_RETURN(
              AttributeValue v,
              Value(e.children[i], where + "[" + std::to_string(i) + "]", level + 1));
          list.push_back(std::move(v));
        }
        return AttributeValue::L(std::move(list));
      }
      case EK::kStruct: {
        FDYNO_ASSIGN_OR_RETURN(model::Map m, StructValue(e, where, level));
        return AttributeValue::M(std::move(m));
      }
      case EK::kBag:
        return BagValue(e, where);
      default:
        return Invalid("Unsupported data type: " + NodeType(e) + " under key " + where);
    }
  }

  Result<model::Map> StructValue(const Expr& e, const std::string& where, int level) {
    model::Map out;
    for (size_t i = 0; i + 1 < e.children.size(); i += 2) {
      const Expr& key = e.children[i];
      if (key.kind != EK::kString) {
        return Invalid("Tuple keys must be of type String. Actual type: " + NodeType(key) +
                       " under " + where);
      }
      if (key.text.empty()) return Invalid("Path component cannot be an empty string");
      FDYNO_ASSIGN_OR_RETURN(AttributeValue v,
                             Value(e.children[i + 1], where + "." + key.text, level + 1));
      if (!out.emplace(key.text, std::move(v)).second) {
        return Invalid("Duplicate keys in tuple. Key: " + key.text + " under " + where);
      }
    }
    return out;
  }

  // <<1, 2>> is a number set, <<'a', 'b'>> a string set.
  Result<AttributeValue> BagValue(const Expr& e, const std::string& where) {
    if (e.children.empty()) return Invalid("Empty bags are not supported");
    constexpr std::string_view kBagTypes =
        "Unsupported data type in Bag. DynamoDB only supports either numbers or strings in bags";
    std::vector<AttributeValue> members;
    for (const Expr& member : e.children) {
      bool literal =
          member.kind == EK::kString || member.kind == EK::kNumber || member.kind == EK::kParam;
      if (!literal) return Invalid(std::string(kBagTypes));
      FDYNO_ASSIGN_OR_RETURN(AttributeValue v, Value(member, where, 1));
      members.push_back(std::move(v));
    }
    for (size_t i = 0; i < members.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (members[i] == members[j]) return Invalid("Input collection contains duplicates");
      }
    }
    model::Type type = members[0].type();
    AttributeValue out;
    if (type == model::Type::kS) {
      model::StringSet set;
      for (AttributeValue& m : members) {
        if (m.type() != model::Type::kS) return Invalid(std::string(kBagTypes));
        set.members.push_back(std::move(std::get<std::string>(m.v)));
      }
      out.v = std::move(set);
    } else if (type == model::Type::kN) {
      model::NumberSet set;
      for (AttributeValue& m : members) {
        if (m.type() != model::Type::kN) return Invalid(std::string(kBagTypes));
        set.members.push_back(std::move(std::get<model::Number>(m.v)));
      }
      out.v = std::move(set);
    } else {
      return Invalid(std::string(kBagTypes));
    }
    return out;
  }

  const Parameters& params_;
  expr::AttributeValues values_;
};

}  // namespace

const std::string& BoundStatement::table() const {
  switch (kind) {
    case Kind::kSelect:
    case Kind::kExists:
      return select.table;
    case Kind::kInsert:
      return insert.table;
    case Kind::kUpdate:
      return update.table;
    case Kind::kDelete:
      return del.table;
  }
  return select.table;
}

Result<BoundStatement> Bind(const ast::Statement& statement, const Parameters& parameters) {
  return Binder(parameters).Run(statement);
}

}  // namespace fdyno::partiql
