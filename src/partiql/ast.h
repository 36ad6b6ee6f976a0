// The syntax tree of one PartiQL statement, as parser.h produces it: names and literals as
// written, `?` parameters still unbound (bind.h binds them and turns expressions into the expr
// layer's resolved trees). Trees are plain values: copyable, no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fdyno::partiql::ast {

// One expression node. The meaning of `text` and `children` depends on the kind.
struct Expr {
  enum class Kind {
    kString,     // 'text'
    kNumber,     // text as written; a leading '-' is folded in ("-5"), as PartiQL does
    kTrue,       //
    kFalse,      //
    kNull,       //
    kMissing,    //
    kParam,      // ?  (param: 0-based position among the statement's parameters)
    kName,       // an identifier: text; quoted says whether it was in double quotes
    kPath,       // children[0] the root; then one kPathName or kPathIndex step per child
    kPathName,   // .name (text; quoted) or ['name'] step
    kPathIndex,  // [n] step: text holds the digits
    kPathStar,   // .* or [*] (text says which)
    kList,       // [children...]
    kBag,        // <<children...>>
    kStruct,     // {k: v, ...}: children alternate key, value
    kCall,       // text(children...) - text as written
    kCompare,    // children[0] op children[1]; op is = <> < <= > >=
    kArith,      // children[0] op children[1]; op is + - * / % ||
    kUnary,      // op children[0]: unary + or - on anything but a number literal
    kAnd,        // children[0] AND children[1]
    kOr,         // children[0] OR children[1]
    kNot,        // NOT children[0]
    kBetween,    // children[0] [NOT] BETWEEN children[1] AND children[2]; negated
    kIn,         // children[0] [NOT] IN children[1] (a kList, kBag or parenthesized list)
    kLike,       // children[0] [NOT] LIKE children[1] (unsupported by DynamoDB)
    kIs,         // children[0] IS [NOT] text (a type: missing, null, boolean, string, ...)
    kSelect,     // a sub-query (unsupported inside expressions)
  };
  Kind kind = Kind::kNull;
  std::string text;
  std::string op;  // kCompare, kArith, kUnary
  bool quoted = false;
  bool negated = false;
  bool parenthesized = false;  // written inside ( ): kIn's right side
  size_t param = 0;            // kParam
  size_t pos = 0;              // byte offset in the statement
  std::vector<Expr> children;
};

// The FROM / INTO / UPDATE target: "table" or "table"."index" (quotes removed).
struct Target {
  struct Component {
    std::string name;
    bool index = false;  // a [n] step, not a name
  };
  std::vector<Component> components;
  bool has_alias = false;  // FROM t AS x / FROM t x
  bool is_path = true;     // false: some other expression stood there
  bool simple = true;      // one unquoted-or-quoted name and nothing else
};

enum class Returning { kNone, kAllOld, kAllNew, kModifiedOld, kModifiedNew };

struct OrderItem {
  Expr expr;
  bool descending = false;
};

struct SelectItem {
  Expr expr;
  bool star = false;  // the whole-item projection "*"
  bool has_alias = false;
  bool path_star = false;  // x.*
};

struct Select {
  std::vector<SelectItem> items;  // empty only for SELECT VALUE / PIVOT (value_or_pivot)
  bool value_or_pivot = false;
  bool distinct = false;
  Target from;
  bool from_not_single = false;  // several sources or a join
  std::optional<Expr> where;
  bool group_by = false;
  bool having = false;
  bool limit = false;
  bool offset = false;
  std::vector<OrderItem> order_by;
};

struct Assignment {
  Expr target;  // a kName or kPath
  Expr value;
};

struct UpdateAction {
  enum class Kind { kSet, kRemove };
  Kind kind = Kind::kSet;
  Assignment set;  // kSet
  Expr path;       // kRemove
};

struct Insert {
  Target into;
  Expr value;                  // VALUE <expr>
  bool multiple_rows = false;  // VALUES (...) or a bag of items
  bool at = false;             // AT <position>
  bool on_conflict = false;
  bool returning_columns = false;
  Returning returning = Returning::kNone;
};

struct Update {
  Target table;
  std::vector<UpdateAction> actions;
  std::optional<Expr> where;
  Returning returning = Returning::kNone;
};

struct Delete {
  Target from;
  std::optional<Expr> where;
  Returning returning = Returning::kNone;
};

// EXISTS(SELECT ...): a condition check, only inside ExecuteTransaction.
struct Exists {
  Select select;
};

struct Statement {
  enum class Kind { kSelect, kInsert, kUpdate, kDelete, kExists };
  Kind kind = Kind::kSelect;
  Select select;  // kSelect, kExists
  Insert insert;
  Update update;
  Delete del;
  size_t param_count = 0;  // `?` markers in the statement
};

}  // namespace fdyno::partiql::ast
