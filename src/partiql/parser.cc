#include "partiql/parser.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "partiql/lexer.h"

namespace fdyno::partiql {
namespace {

using ast::Expr;

// Binding strength of the infix operators (PartiQL's precedence groups).
enum Prec {
  kPrecNone = 0,
  kPrecOr = 1,
  kPrecAnd = 2,
  kPrecNot = 3,
  kPrecEquity = 4,      // = <> IS IN
  kPrecComparison = 5,  // < <= > >= BETWEEN LIKE
  kPrecAddition = 6,    // + - ||
  kPrecMultiply = 7,    // * / %
};

// Function names that are keywords but may be called: size(x), exists(...).
bool IsCallableKeyword(const Token& t) {
  static constexpr std::string_view kNames[] = {"exists",
                                                "count",
                                                "avg",
                                                "max",
                                                "min",
                                                "sum",
                                                "substring",
                                                "upper",
                                                "lower",
                                                "size",
                                                "nullif",
                                                "coalesce",
                                                "sexp",
                                                "list",
                                                "bag",
                                                "char_length",
                                                "character_length",
                                                "octet_length",
                                                "bit_length"};
  if (t.type != Tok::kKeyword) return false;
  for (std::string_view n : kNames) {
    if (t.text == n) return true;
  }
  return false;
}

// Keywords that end an expression inside a clause (where the next clause starts).
bool IsClauseKeyword(const Token& t) {
  static constexpr std::string_view kWords[] = {
      "from",      "where", "group",  "having", "order", "limit", "offset", "set", "remove",
      "returning", "value", "values", "on",     "at",    "by",    "asc",    "desc"};
  if (t.type != Tok::kKeyword) return false;
  for (std::string_view w : kWords) {
    if (t.text == w) return true;
  }
  return false;
}

// Moves the operands into `e` (an initializer list would copy the subtrees).
template <typename... Children>
void Adopt(Expr& e, Children&&... children) {
  e.children.reserve(sizeof...(children));
  (e.children.push_back(std::move(children)), ...);
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  Result<ast::Statement> Run() {
    ast::Statement st;
    const Token& first = Peek();
    if (first.IsKeyword("select")) {
      st.kind = ast::Statement::Kind::kSelect;
      FDYNO_ASSIGN_OR_RETURN(st.select, ParseSelect());
    } else if (first.IsKeyword("insert") && Peek(1).IsKeyword("into")) {
      st.kind = ast::Statement::Kind::kInsert;
      FDYNO_ASSIGN_OR_RETURN(st.insert, ParseInsert());
    } else if (first.IsKeyword("update")) {
      st.kind = ast::Statement::Kind::kUpdate;
      FDYNO_ASSIGN_OR_RETURN(st.update, ParseUpdate());
    } else if (first.IsKeyword("delete")) {
      st.kind = ast::Statement::Kind::kDelete;
      FDYNO_ASSIGN_OR_RETURN(st.del, ParseDelete());
    } else if (first.IsKeyword("exists") && Peek(1).Is(Tok::kLParen) &&
               Peek(2).IsKeyword("select")) {
      st.kind = ast::Statement::Kind::kExists;
      FDYNO_ASSIGN_OR_RETURN(st.select, ParseExists());
    } else {
      return ParseBareExpression();
    }
    FDYNO_RETURN_IF_ERROR(ExpectEnd());
    st.param_count = params_;
    return st;
  }

 private:
  // ---- tokens --------------------------------------------------------------------------------

  const Token& Peek(size_t k = 0) const {
    size_t i = pos_ + k;
    return i < t_.size() ? t_[i] : t_.back();
  }
  const Token& Advance() {
    const Token& t = Peek();
    if (pos_ + 1 < t_.size()) ++pos_;
    return t;
  }
  bool AcceptKeyword(std::string_view kw) {
    if (!Peek().IsKeyword(kw)) return false;
    Advance();
    return true;
  }
  bool Accept(Tok type) {
    if (!Peek().Is(type)) return false;
    Advance();
    return true;
  }

  static Error Fail(std::string_view detail) { return MalformedStatement(detail); }

  // After a statement: an optional ';' and the end.
  Status ExpectEnd() {
    if (Peek().Is(Tok::kEof)) return Status::Ok();
    if (Peek().Is(Tok::kSemicolon)) {
      Advance();
      if (Peek().Is(Tok::kEof)) return Status::Ok();
      return Fail("Unexpected token after semicolon. (Only one query is allowed.)");
    }
    return Fail("Unexpected token after expression");
  }

  // A statement that does not start with a statement keyword is parsed as PartiQL parses any
  // expression; DynamoDB then refuses it (or the parse fails first, e.g. on a FROM inside).
  Result<ast::Statement> ParseBareExpression() {
    FDYNO_ASSIGN_OR_RETURN(Expr e, ParseExpr(kPrecNone));
    FDYNO_RETURN_IF_ERROR(ExpectEnd());
    switch (e.kind) {
      case Expr::Kind::kCall:
      case Expr::Kind::kCompare:
      case Expr::Kind::kArith:
      case Expr::Kind::kAnd:
      case Expr::Kind::kOr:
      case Expr::Kind::kNot:
      case Expr::Kind::kBetween:
      case Expr::Kind::kIn:
      case Expr::Kind::kLike:
      case Expr::Kind::kUnary:
        return Error::Validation("EXISTS can only be used in ExecuteTransaction write requests.");
      default:
        return Error::Validation("Unsupported operation: " + ExprClassName(e));
    }
  }

  static std::string ExprClassName(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::kName:
        return "VariableReference";
      case Expr::Kind::kPath:
        return "Path";
      case Expr::Kind::kParam:
        return "Parameter";
      case Expr::Kind::kList:
      case Expr::Kind::kBag:
        return "Seq";
      case Expr::Kind::kStruct:
        return "Struct";
      case Expr::Kind::kMissing:
        return "LiteralMissing";
      case Expr::Kind::kIs:
        return "Typed";
      default:
        return "Literal";
    }
  }

  // ---- statements ----------------------------------------------------------------------------

  Result<ast::Select> ParseSelect() {
    Advance();  // SELECT
    ast::Select s;
    if (AcceptKeyword("distinct")) {
      s.distinct = true;
    } else {
      AcceptKeyword("all");
    }
    if (Peek().IsKeyword("value") || Peek().IsKeyword("pivot")) {
      Advance();
      s.value_or_pivot = true;
      FDYNO_ASSIGN_OR_RETURN(Expr ignored, ParseExpr(kPrecNone));
      (void)ignored;
      if (AcceptKeyword("at")) {
        FDYNO_ASSIGN_OR_RETURN(Expr at, ParseExpr(kPrecNone));
        (void)at;
      }
    } else {
      FDYNO_RETURN_IF_ERROR(ParseSelectList(s));
    }
    if (!AcceptKeyword("from")) return Fail("Expected FROM after SELECT list");
    FDYNO_RETURN_IF_ERROR(ParseFromSources(s));
    if (AcceptKeyword("where")) {
      FDYNO_ASSIGN_OR_RETURN(s.where, ParseExpr(kPrecNone));
    }
    if (Peek().IsKeyword("group")) {
      Advance();
      if (!AcceptKeyword("by")) return Fail("Expected BY after GROUP");
      s.group_by = true;
      FDYNO_RETURN_IF_ERROR(SkipExprList());
    }
    if (AcceptKeyword("having")) {
      s.having = true;
      FDYNO_ASSIGN_OR_RETURN(Expr h, ParseExpr(kPrecNone));
      (void)h;
    }
    if (Peek().IsKeyword("order")) {
      Advance();
      if (!AcceptKeyword("by")) return Fail("Expected BY after ORDER");
      FDYNO_RETURN_IF_ERROR(ParseOrderBy(s));
    }
    if (AcceptKeyword("limit")) {
      s.limit = true;
      FDYNO_ASSIGN_OR_RETURN(Expr l, ParseExpr(kPrecNone));
      (void)l;
    }
    if (Peek().Is(Tok::kIdent) && Lower(Peek().text) == "offset") {
      Advance();
      s.offset = true;
      FDYNO_ASSIGN_OR_RETURN(Expr o, ParseExpr(kPrecNone));
      (void)o;
    }
    return s;
  }

  static std::string Lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
  }

  Status ParseSelectList(ast::Select& s) {
    if (Peek().IsKeyword("from")) return Fail("Cannot have empty SELECT list");
    while (true) {
      ast::SelectItem item;
      if (Peek().Is(Tok::kStar)) {
        Advance();
        item.star = true;
      } else {
        FDYNO_ASSIGN_OR_RETURN(item.expr, ParseExpr(kPrecNone));
        item.path_star = EndsWithStar(item.expr);
        if (AcceptKeyword("as")) {
          if (!Peek().Is(Tok::kIdent) && !Peek().Is(Tok::kQuotedIdent)) {
            return Fail("Expected identifier for AS-alias");
          }
          Advance();
          item.has_alias = true;
        } else if (Peek().Is(Tok::kIdent) || Peek().Is(Tok::kQuotedIdent)) {
          Advance();
          item.has_alias = true;
        }
      }
      s.items.push_back(std::move(item));
      if (!Accept(Tok::kComma)) break;
    }
    bool star = false;
    for (const ast::SelectItem& item : s.items) star = star || item.star;
    if (star && s.items.size() > 1) {
      return Fail(
          "Other expressions may not be present in the select list when '*' is used without "
          "dot notation.");
    }
    return Status::Ok();
  }

  static bool EndsWithStar(const Expr& e) {
    return e.kind == Expr::Kind::kPath && e.children.back().kind == Expr::Kind::kPathStar;
  }

  // FROM <source> [[AS] alias] [AT alias] [BY alias] {, <source> | JOIN ...}
  Status ParseFromSources(ast::Select& s) {
    FDYNO_ASSIGN_OR_RETURN(s.from, ParseTarget(/*allow_alias=*/true));
    while (true) {
      if (Accept(Tok::kComma)) {
        s.from_not_single = true;
        FDYNO_ASSIGN_OR_RETURN(ast::Target other, ParseTarget(true));
        (void)other;
        continue;
      }
      if (IsJoinStart()) {
        s.from_not_single = true;
        while (!Peek().IsKeyword("join")) Advance();
        Advance();
        FDYNO_ASSIGN_OR_RETURN(ast::Target other, ParseTarget(true));
        (void)other;
        if (AcceptKeyword("on")) {
          FDYNO_ASSIGN_OR_RETURN(Expr on, ParseExpr(kPrecNone));
          (void)on;
        }
        continue;
      }
      break;
    }
    return Status::Ok();
  }

  bool IsJoinStart() const {
    for (size_t k = 0; k < 4; ++k) {
      const Token& t = Peek(k);
      if (t.IsKeyword("join")) return true;
      if (!(t.IsKeyword("inner") || t.IsKeyword("left") || t.IsKeyword("right") ||
            t.IsKeyword("full") || t.IsKeyword("outer") || t.IsKeyword("cross"))) {
        return false;
      }
    }
    return false;
  }

  // A table reference: an expression that must be a path of names.
  Result<ast::Target> ParseTarget(bool allow_alias) {
    ast::Target target;
    FDYNO_ASSIGN_OR_RETURN(Expr e, ParseExpr(kPrecNone, /*in_target=*/true));
    if (e.kind == Expr::Kind::kName) {
      target.components.push_back({e.text, false});
    } else if (e.kind == Expr::Kind::kPath && e.children[0].kind == Expr::Kind::kName) {
      target.simple = false;
      target.components.push_back({e.children[0].text, false});
      for (size_t i = 1; i < e.children.size(); ++i) {
        const Expr& step = e.children[i];
        if (step.kind == Expr::Kind::kPathName) {
          target.components.push_back({step.text, false});
        } else if (step.kind == Expr::Kind::kPathIndex) {
          target.components.push_back({step.text, true});
        } else {
          target.is_path = false;
        }
      }
    } else {
      target.is_path = false;
      target.simple = false;
    }
    if (allow_alias) {
      if (AcceptKeyword("as")) {
        if (!Peek().Is(Tok::kIdent) && !Peek().Is(Tok::kQuotedIdent)) {
          return Fail("Expected identifier for AS-alias");
        }
        Advance();
        target.has_alias = true;
      } else if (Peek().Is(Tok::kIdent) || Peek().Is(Tok::kQuotedIdent)) {
        Advance();
        target.has_alias = true;
      }
      for (std::string_view kw : {"at", "by"}) {
        if (AcceptKeyword(kw)) {
          if (!Peek().Is(Tok::kIdent) && !Peek().Is(Tok::kQuotedIdent)) {
            return Fail("Expected identifier for " + Upper(kw) + "-alias");
          }
          Advance();
          target.has_alias = true;
        }
      }
    }
    return target;
  }

  static std::string Upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
    return out;
  }

  Status SkipExprList() {
    while (true) {
      FDYNO_ASSIGN_OR_RETURN(Expr e, ParseExpr(kPrecNone));
      (void)e;
      if (!Accept(Tok::kComma)) return Status::Ok();
    }
  }

  Status ParseOrderBy(ast::Select& s) {
    while (true) {
      ast::OrderItem item;
      FDYNO_ASSIGN_OR_RETURN(item.expr, ParseExpr(kPrecNone));
      if (AcceptKeyword("desc")) {
        item.descending = true;
      } else {
        AcceptKeyword("asc");
      }
      s.order_by.push_back(std::move(item));
      if (!Accept(Tok::kComma)) return Status::Ok();
    }
  }

  Result<ast::Insert> ParseInsert() {
    Advance();  // INSERT
    Advance();  // INTO
    ast::Insert ins;
    FDYNO_ASSIGN_OR_RETURN(ins.into, ParseTarget(/*allow_alias=*/false));
    if (AcceptKeyword("value")) {
      FDYNO_ASSIGN_OR_RETURN(ins.value, ParseExpr(kPrecNone));
      if (AcceptKeyword("at")) {
        ins.at = true;
        FDYNO_ASSIGN_OR_RETURN(Expr at, ParseExpr(kPrecNone));
        (void)at;
      }
      if (Peek().IsKeyword("on") && Peek(1).IsKeyword("conflict")) {
        FDYNO_RETURN_IF_ERROR(ParseOnConflict());
        ins.on_conflict = true;
      }
    } else {
      // INSERT INTO t VALUES (...), INSERT INTO t <<...>>, INSERT INTO t SELECT ...
      ins.multiple_rows = true;
      if (AcceptKeyword("values")) {
        FDYNO_RETURN_IF_ERROR(SkipExprList());
      } else {
        FDYNO_ASSIGN_OR_RETURN(Expr rows, ParseExpr(kPrecNone));
        (void)rows;
      }
    }
    if (Peek().IsKeyword("returning")) {
      ins.returning_columns = true;
      FDYNO_ASSIGN_OR_RETURN(ins.returning, ParseReturning());
    }
    return ins;
  }

  // ON CONFLICT [WHERE expr] DO NOTHING
  Status ParseOnConflict() {
    Advance();
    Advance();
    if (AcceptKeyword("where")) {
      FDYNO_ASSIGN_OR_RETURN(Expr w, ParseExpr(kPrecNone));
      (void)w;
    }
    if (!(AcceptKeyword("do") && AcceptKeyword("nothing"))) {
      return Fail("invalid ON CONFLICT syntax");
    }
    return Status::Ok();
  }

  // PartiQL's type names (the type after IS), lower case; DOUBLE PRECISION and CHARACTER VARYING
  // are two words. Another name is a syntax error.
  Result<std::string> ParseTypeName() {
    static const std::set<std::string, std::less<>> kTypes = {
        "missing",   "null",     "bool",    "boolean",  "smallint", "int2",      "integer2",
        "int4",      "integer4", "int8",    "integer8", "int",      "integer",   "bigint",
        "float",     "real",     "decimal", "dec",      "numeric",  "timestamp", "char",
        "character", "varchar",  "string",  "symbol",   "clob",     "blob",      "struct",
        "tuple",     "list",     "sexp",    "bag",      "date",     "time",      "any"};
    const Token& t = Peek();
    if (t.type != Tok::kKeyword && t.type != Tok::kIdent) return Fail("Expected type name");
    std::string name = Lower(t.text);
    if (name == "double" && Peek(1).IsKeyword("precision")) {
      Advance();
      name = "double precision";
    } else if (name == "character" && Peek(1).IsKeyword("varying")) {
      Advance();
      name = "character varying";
    } else if (!kTypes.contains(name)) {
      return Fail("Expected type name");
    }
    Advance();
    return name;
  }

  // UPDATE <table> followed by SET and REMOVE clauses and one WHERE, in any order, then
  // RETURNING.
  Result<ast::Update> ParseUpdate() {
    Advance();  // UPDATE
    ast::Update up;
    FDYNO_ASSIGN_OR_RETURN(up.table, ParseTarget(/*allow_alias=*/true));
    while (true) {
      if (AcceptKeyword("set")) {
        FDYNO_RETURN_IF_ERROR(ParseAssignments(up));
      } else if (AcceptKeyword("remove")) {
        ast::UpdateAction a;
        a.kind = ast::UpdateAction::Kind::kRemove;
        FDYNO_ASSIGN_OR_RETURN(a.path, ParseExpr(kPrecNone));
        up.actions.push_back(std::move(a));
      } else if (!up.where && AcceptKeyword("where")) {
        FDYNO_ASSIGN_OR_RETURN(up.where, ParseExpr(kPrecNone));
      } else {
        break;
      }
    }
    if (up.actions.empty()) return Fail("Expected data manipulation");
    if (Peek().IsKeyword("returning")) {
      FDYNO_ASSIGN_OR_RETURN(up.returning, ParseReturning());
    }
    return up;
  }

  Status ParseAssignments(ast::Update& up) {
    if (Peek().Is(Tok::kEof) || IsClauseKeyword(Peek())) return Fail("Expected assignment for SET");
    while (true) {
      ast::UpdateAction a;
      a.kind = ast::UpdateAction::Kind::kSet;
      // The target binds tighter than '=': parse it above the equity level.
      FDYNO_ASSIGN_OR_RETURN(a.set.target, ParseExpr(kPrecEquity));
      if (!Peek().IsOp("=")) return Fail("Expected '='");
      Advance();
      FDYNO_ASSIGN_OR_RETURN(a.set.value, ParseExpr(kPrecNone));
      up.actions.push_back(std::move(a));
      if (!Accept(Tok::kComma)) return Status::Ok();
    }
  }

  Result<ast::Delete> ParseDelete() {
    Advance();  // DELETE
    if (!AcceptKeyword("from")) return Fail("Expected FROM after DELETE");
    ast::Delete d;
    FDYNO_ASSIGN_OR_RETURN(d.from, ParseTarget(/*allow_alias=*/true));
    if (AcceptKeyword("where")) {
      FDYNO_ASSIGN_OR_RETURN(d.where, ParseExpr(kPrecNone));
    }
    if (Peek().IsKeyword("returning")) {
      FDYNO_ASSIGN_OR_RETURN(d.returning, ParseReturning());
    }
    return d;
  }

  // RETURNING (MODIFIED | ALL) (OLD | NEW) *
  Result<ast::Returning> ParseReturning() {
    Advance();  // RETURNING
    const Token& a = Peek();
    const Token& b = Peek(1);
    bool modified = a.IsKeyword("modified");
    bool all = a.IsKeyword("all");
    bool old_image = b.IsKeyword("old");
    bool new_image = b.IsKeyword("new");
    if (!(modified || all) || !(old_image || new_image)) {
      return Fail("Expected ( MODIFIED | ALL ) ( NEW | OLD ) in each returning element.");
    }
    Advance();
    Advance();
    ast::Returning r =
        all ? (old_image ? ast::Returning::kAllOld : ast::Returning::kAllNew)
            : (old_image ? ast::Returning::kModifiedOld : ast::Returning::kModifiedNew);
    bool star = Accept(Tok::kStar);
    if (!star) {
      FDYNO_ASSIGN_OR_RETURN(Expr column, ParseExpr(kPrecNone));
      (void)column;
    }
    if (Peek().Is(Tok::kComma)) {
      return Error::Validation(
          "Invalid syntax with multiple returning elements in RETURNING clause");
    }
    if (!star) {
      return Error::Validation(
          "Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause");
    }
    return r;
  }

  Result<ast::Select> ParseExists() {
    Advance();  // EXISTS
    Advance();  // (
    FDYNO_ASSIGN_OR_RETURN(ast::Select s, ParseSelect());
    if (!Accept(Tok::kRParen)) return Fail("Expected RIGHT_PAREN");
    return s;
  }

  // ---- expressions ---------------------------------------------------------------------------

  struct DepthGuard {
    explicit DepthGuard(int& d) : d_(d) { ++d_; }
    ~DepthGuard() { --d_; }
    int& d_;
  };

  // The infix operator at the cursor and its precedence; kPrecNone when there is none.
  Prec InfixPrec() const {
    const Token& t = Peek();
    if (t.IsKeyword("or")) return kPrecOr;
    if (t.IsKeyword("and")) return kPrecAnd;
    if (t.IsKeyword("is") || t.IsKeyword("in")) return kPrecEquity;
    if (t.IsKeyword("not")) {
      const Token& n = Peek(1);
      if (n.IsKeyword("in")) return kPrecEquity;
      if (n.IsKeyword("between") || n.IsKeyword("like")) return kPrecComparison;
      return kPrecNone;
    }
    if (t.IsKeyword("between") || t.IsKeyword("like")) return kPrecComparison;
    if (t.Is(Tok::kOp)) {
      if (t.text == "=" || t.text == "<>" || t.text == "!=") return kPrecEquity;
      if (t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">=") {
        return kPrecComparison;
      }
      if (t.text == "+" || t.text == "-" || t.text == "||") return kPrecAddition;
      if (t.text == "/" || t.text == "%") return kPrecMultiply;
    }
    if (t.Is(Tok::kStar)) return kPrecMultiply;
    return kPrecNone;
  }

  // Parses operators that bind tighter than `min`.
  Result<Expr> ParseExpr(Prec min, bool in_target = false) {
    DepthGuard guard(depth_);
    if (depth_ > kMaxNesting) return Fail("Expression nesting is too deep");
    FDYNO_ASSIGN_OR_RETURN(Expr left, ParsePrefix(in_target));
    while (true) {
      Prec p = InfixPrec();
      if (p == kPrecNone || p <= min) return left;
      FDYNO_ASSIGN_OR_RETURN(left, ParseInfix(std::move(left), p));
    }
  }

  Result<Expr> ParsePrefix(bool in_target) {
    if (Peek().IsKeyword("not")) {
      Expr e;
      e.kind = Expr::Kind::kNot;
      e.pos = Advance().pos;
      FDYNO_ASSIGN_OR_RETURN(Expr operand, ParseExpr(kPrecNot));
      e.children.push_back(std::move(operand));
      return e;
    }
    if (Peek().IsOp("-") || Peek().IsOp("+")) {
      const Token& sign = Advance();
      Expr e;
      e.kind = Expr::Kind::kUnary;
      e.op = sign.text;
      e.pos = sign.pos;
      FDYNO_ASSIGN_OR_RETURN(Expr operand, ParseExpr(kPrecMultiply));
      // A sign on a number literal is part of the literal.
      if (operand.kind == Expr::Kind::kNumber && !operand.parenthesized) {
        if (e.op == "-") {
          operand.text = operand.text[0] == '-' ? operand.text.substr(1) : "-" + operand.text;
        }
        operand.pos = e.pos;
        return operand;
      }
      e.children.push_back(std::move(operand));
      return e;
    }
    FDYNO_ASSIGN_OR_RETURN(Expr term, ParseTerm(in_target));
    return ParsePathSteps(std::move(term));
  }

  Result<Expr> ParseInfix(Expr left, Prec p) {
    const Token& op = Advance();
    const size_t pos = op.pos;
    Expr e;
    e.pos = pos;
    if (op.IsKeyword("or") || op.IsKeyword("and")) {
      e.kind = op.IsKeyword("or") ? Expr::Kind::kOr : Expr::Kind::kAnd;
      FDYNO_ASSIGN_OR_RETURN(Expr right, ParseRight(p));
      Adopt(e, std::move(left), std::move(right));
      return e;
    }
    if (op.IsKeyword("is")) {
      e.kind = Expr::Kind::kIs;
      e.negated = AcceptKeyword("not");
      FDYNO_ASSIGN_OR_RETURN(e.text, ParseTypeName());
      e.children.push_back(std::move(left));
      return e;
    }
    bool negated = false;
    const Token* kw = &op;
    if (op.IsKeyword("not")) {
      negated = true;
      kw = &Advance();
    }
    if (kw->IsKeyword("in")) {
      e.kind = Expr::Kind::kIn;
      e.negated = negated;
      FDYNO_ASSIGN_OR_RETURN(Expr right, ParseRight(p));
      Adopt(e, std::move(left), std::move(right));
      return e;
    }
    if (kw->IsKeyword("like")) {
      e.kind = Expr::Kind::kLike;
      e.negated = negated;
      FDYNO_ASSIGN_OR_RETURN(Expr right, ParseRight(p));
      Adopt(e, std::move(left), std::move(right));
      if (AcceptKeyword("escape")) {
        FDYNO_ASSIGN_OR_RETURN(Expr esc, ParseRight(p));
        (void)esc;
      }
      return e;
    }
    if (kw->IsKeyword("between")) {
      e.kind = Expr::Kind::kBetween;
      e.negated = negated;
      FDYNO_ASSIGN_OR_RETURN(Expr low, ParseRight(p));
      if (!AcceptKeyword("and")) return Fail("Expected AND after BETWEEN");
      if (Peek().Is(Tok::kEof)) return Fail("Expected expression after AND");
      FDYNO_ASSIGN_OR_RETURN(Expr high, ParseRight(p));
      Adopt(e, std::move(left), std::move(low), std::move(high));
      return e;
    }
    // Symbolic operators.
    std::string text = op.Is(Tok::kStar) ? "*" : op.text;
    if (text == "!=") text = "<>";
    bool compare = p == kPrecEquity || p == kPrecComparison;
    e.kind = compare ? Expr::Kind::kCompare : Expr::Kind::kArith;
    e.op = std::move(text);
    FDYNO_ASSIGN_OR_RETURN(Expr right, ParseRight(p));
    Adopt(e, std::move(left), std::move(right));
    return e;
  }

  Result<Expr> ParseRight(Prec p) {
    if (Peek().Is(Tok::kEof)) return Fail("Missing right-hand side expression of infix operator");
    return ParseExpr(p);
  }

  // .name, ."name", .*, [expr] after a term.
  Result<Expr> ParsePathSteps(Expr term) {
    if (!Peek().Is(Tok::kDot) && !Peek().Is(Tok::kLBracket)) return term;
    Expr path;
    path.kind = Expr::Kind::kPath;
    path.pos = term.pos;
    path.children.push_back(std::move(term));
    while (true) {
      if (Peek().Is(Tok::kDot)) {
        Advance();
        const Token& t = Peek();
        Expr step;
        step.pos = t.pos;
        if (t.Is(Tok::kIdent) || t.Is(Tok::kQuotedIdent) || t.Is(Tok::kKeyword)) {
          if (t.Is(Tok::kKeyword)) return Fail("Expected identifier for simple path");
          step.kind = Expr::Kind::kPathName;
          step.text = t.text;
          step.quoted = t.Is(Tok::kQuotedIdent);
          Advance();
        } else if (t.Is(Tok::kStar)) {
          step.kind = Expr::Kind::kPathStar;
          step.text = ".*";
          Advance();
        } else {
          return Fail("Invalid path dot component");
        }
        path.children.push_back(std::move(step));
      } else if (Peek().Is(Tok::kLBracket)) {
        Advance();
        Expr step;
        step.pos = Peek().pos;
        if (Peek().Is(Tok::kStar)) {
          Advance();
          step.kind = Expr::Kind::kPathStar;
          step.text = "[*]";
        } else {
          FDYNO_ASSIGN_OR_RETURN(Expr inner, ParseExpr(kPrecNone));
          if (inner.kind == Expr::Kind::kNumber) {
            step.kind = Expr::Kind::kPathIndex;
            step.text = inner.text;
          } else if (inner.kind == Expr::Kind::kString) {
            step.kind = Expr::Kind::kPathName;
            step.text = inner.text;
            step.quoted = true;
          } else {
            // Any other expression: kept for bind.h to refuse ("Unexpected path component").
            step = std::move(inner);
          }
        }
        if (!Accept(Tok::kRBracket)) return Fail("Expected RIGHT_BRACKET");
        path.children.push_back(std::move(step));
      } else {
        return path;
      }
    }
  }

  Result<Expr> ParseTerm(bool in_target) {
    const Token& t = Peek();
    Expr e;
    e.pos = t.pos;
    switch (t.type) {
      case Tok::kString:
        e.kind = Expr::Kind::kString;
        e.text = Advance().text;
        return e;
      case Tok::kNumber:
        e.kind = Expr::Kind::kNumber;
        e.text = Advance().text;
        return e;
      case Tok::kQuestion:
        Advance();
        e.kind = Expr::Kind::kParam;
        e.param = params_++;
        return e;
      case Tok::kIdent:
      case Tok::kQuotedIdent:
        if (t.Is(Tok::kIdent) && Peek(1).Is(Tok::kLParen) && !in_target) return ParseCall();
        e.kind = Expr::Kind::kName;
        e.quoted = t.Is(Tok::kQuotedIdent);
        e.text = Advance().text;
        return e;
      case Tok::kLParen:
        return ParseParenthesized();
      case Tok::kLBracket:
        return ParseSequence(Expr::Kind::kList, Tok::kRBracket, "Expected RIGHT_BRACKET");
      case Tok::kLBag:
        return ParseSequence(Expr::Kind::kBag, Tok::kRBag, "Expected RIGHT_DOUBLE_ANGLE_BRACKET");
      case Tok::kLBrace:
        return ParseStruct();
      case Tok::kKeyword:
        return ParseKeywordTerm();
      case Tok::kEof:
        return Fail("Unexpected term");
      case Tok::kOp:
      case Tok::kStar:
        return Fail("Unexpected operator");
      default:
        return Fail("Unexpected term");
    }
  }

  Result<Expr> ParseKeywordTerm() {
    const Token& t = Peek();
    Expr e;
    e.pos = t.pos;
    if (t.IsKeyword("true") || t.IsKeyword("false")) {
      e.kind = t.IsKeyword("true") ? Expr::Kind::kTrue : Expr::Kind::kFalse;
      Advance();
      return e;
    }
    if (t.IsKeyword("null") || t.IsKeyword("missing")) {
      e.kind = t.IsKeyword("null") ? Expr::Kind::kNull : Expr::Kind::kMissing;
      Advance();
      return e;
    }
    if (IsCallableKeyword(t) && Peek(1).Is(Tok::kLParen)) return ParseCall();
    if (t.IsKeyword("select")) {
      e.kind = Expr::Kind::kSelect;
      FDYNO_ASSIGN_OR_RETURN(ast::Select ignored, ParseSelect());
      (void)ignored;
      return e;
    }
    if (t.IsKeyword("from")) {
      // PartiQL's FROM-first data manipulation ("FROM t WHERE ... SET ..."): DynamoDB has none
      // of it, and answers the missing operation as PartiQL's parser does.
      Advance();
      FDYNO_ASSIGN_OR_RETURN(ast::Target ignored, ParseTarget(true));
      (void)ignored;
      if (AcceptKeyword("where")) {
        FDYNO_ASSIGN_OR_RETURN(Expr w, ParseExpr(kPrecNone));
        (void)w;
      }
      return Fail("Expected data manipulation");
    }
    return Fail("Unexpected keyword");
  }

  Result<Expr> ParseCall() {
    Expr e;
    e.kind = Expr::Kind::kCall;
    e.pos = Peek().pos;
    e.text = Advance().text;
    Advance();  // (
    if (Accept(Tok::kRParen)) return e;
    while (true) {
      FDYNO_ASSIGN_OR_RETURN(Expr arg, ParseExpr(kPrecNone));
      e.children.push_back(std::move(arg));
      if (Accept(Tok::kComma)) continue;
      if (!Accept(Tok::kRParen)) return Fail("Expected RIGHT_PAREN");
      return e;
    }
  }

  // ( expr ) or ( expr, expr, ... ) - the second is a list (IN's right side).
  Result<Expr> ParseParenthesized() {
    const size_t pos = Advance().pos;
    if (Peek().Is(Tok::kRParen)) return Fail("Expression group cannot be empty");
    FDYNO_ASSIGN_OR_RETURN(Expr first, ParseExpr(kPrecNone));
    if (Accept(Tok::kRParen)) {
      first.parenthesized = true;
      return first;
    }
    Expr list;
    list.kind = Expr::Kind::kList;
    list.pos = pos;
    list.parenthesized = true;
    list.children.push_back(std::move(first));
    while (Accept(Tok::kComma)) {
      FDYNO_ASSIGN_OR_RETURN(Expr item, ParseExpr(kPrecNone));
      list.children.push_back(std::move(item));
    }
    if (!Accept(Tok::kRParen)) return Fail("Expected RIGHT_PAREN");
    return list;
  }

  Result<Expr> ParseSequence(Expr::Kind kind, Tok close, std::string_view missing_close) {
    Expr e;
    e.kind = kind;
    e.pos = Advance().pos;
    if (Accept(close)) return e;
    while (true) {
      FDYNO_ASSIGN_OR_RETURN(Expr item, ParseExpr(kPrecNone));
      e.children.push_back(std::move(item));
      if (Accept(Tok::kComma)) continue;
      if (!Accept(close)) return Fail(missing_close);
      return e;
    }
  }

  // { key : value, ... }
  Result<Expr> ParseStruct() {
    Expr e;
    e.kind = Expr::Kind::kStruct;
    e.pos = Advance().pos;
    if (Accept(Tok::kRBrace)) return e;
    while (true) {
      FDYNO_ASSIGN_OR_RETURN(Expr key, ParseExpr(kPrecNone));
      if (!Accept(Tok::kColon)) return Fail("Expected COLON");
      FDYNO_ASSIGN_OR_RETURN(Expr value, ParseExpr(kPrecNone));
      e.children.push_back(std::move(key));
      e.children.push_back(std::move(value));
      if (Accept(Tok::kComma)) continue;
      if (!Accept(Tok::kRBrace)) return Fail("Expected RIGHT_CURLY");
      return e;
    }
  }

  std::vector<Token> t_;
  size_t pos_ = 0;
  size_t params_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<ast::Statement> Parse(std::string_view statement) {
  FDYNO_ASSIGN_OR_RETURN(std::vector<Token> tokens, Lex(statement));
  return Parser(std::move(tokens)).Run();
}

}  // namespace fdyno::partiql
