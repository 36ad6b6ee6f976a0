#include "expr/parser.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "expr/reserved_words.h"

namespace fdyno::expr {
namespace {

// ---- lexer -----------------------------------------------------------------------------------

enum class Tok {
  kEof,
  kName,      // attribute name, keyword or function name
  kNameRef,   // #name
  kValueRef,  // :value
  kInt,       // list index
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kDot,
  kComma,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kPlus,
  kMinus,
  kUnknown,  // any other character (one UTF-8 sequence)
};

struct Token {
  Tok type = Tok::kEof;
  size_t pos = 0;
  size_t len = 0;
  std::string_view text;
};

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentChar(char c) { return IsAlpha(c) || IsDigit(c) || c == '_'; }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::vector<Token> Lex(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  size_t last_end = 0;
  while (true) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    if (i >= s.size()) break;
    size_t start = i;
    Tok type = Tok::kUnknown;
    char c = s[i];
    if (IsAlpha(c)) {  // a name starts with a letter: "_a" is a syntax error at "_"
      while (i < s.size() && IsIdentChar(s[i])) ++i;
      type = Tok::kName;
    } else if (c == '#' || c == ':') {
      ++i;
      while (i < s.size() && IsIdentChar(s[i])) ++i;
      type = c == '#' ? Tok::kNameRef : Tok::kValueRef;
    } else if (IsDigit(c)) {
      while (i < s.size() && IsDigit(s[i])) ++i;
      type = Tok::kInt;
    } else {
      ++i;
      switch (c) {
        case '(':
          type = Tok::kLParen;
          break;
        case ')':
          type = Tok::kRParen;
          break;
        case '[':
          type = Tok::kLBracket;
          break;
        case ']':
          type = Tok::kRBracket;
          break;
        case '.':
          type = Tok::kDot;
          break;
        case ',':
          type = Tok::kComma;
          break;
        case '=':
          type = Tok::kEq;
          break;
        case '+':
          type = Tok::kPlus;
          break;
        case '-':
          type = Tok::kMinus;
          break;
        case '<':
          type = Tok::kLt;
          if (i < s.size() && s[i] == '=') {
            type = Tok::kLe;
            ++i;
          } else if (i < s.size() && s[i] == '>') {
            type = Tok::kNe;
            ++i;
          }
          break;
        case '>':
          type = Tok::kGt;
          if (i < s.size() && s[i] == '=') {
            type = Tok::kGe;
            ++i;
          }
          break;
        default:
          // Keep a multi-byte UTF-8 character in one token.
          if (static_cast<unsigned char>(c) >= 0xC0) {
            while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
          }
          type = Tok::kUnknown;
      }
    }
    out.push_back(Token{type, start, i - start, s.substr(start, i - start)});
    last_end = i;
  }
  out.push_back(Token{Tok::kEof, last_end, 0, {}});
  return out;
}

bool KeywordIs(const Token& t, std::string_view upper) {
  if (t.type != Tok::kName || t.text.size() != upper.size()) return false;
  for (size_t i = 0; i < upper.size(); ++i) {
    char c = t.text[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != upper[i]) return false;
  }
  return true;
}

// ---- deferred (non-syntax) errors ------------------------------------------------------------

// A syntax error ends parsing at once. Other problems found while parsing are remembered (the
// first of each kind) and reported after the whole text parsed, in this order, which is the
// order DynamoDB reports them in.
enum Slot {
  kSlotOperators,
  kSlotParens,
  kSlotUnknownFunction,
  kSlotMisusedFunction,
  kSlotReserved,
  kSlotSection,
  kSlotDepth,
  kSlotInOperands,
  kSlotCount,
};

std::optional<Function> LookupFunction(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, Function>, 8> kFunctions = {{
      {"attribute_exists", Function::kAttributeExists},
      {"attribute_not_exists", Function::kAttributeNotExists},
      {"attribute_type", Function::kAttributeType},
      {"begins_with", Function::kBeginsWith},
      {"contains", Function::kContains},
      {"size", Function::kSize},
      {"if_not_exists", Function::kIfNotExists},
      {"list_append", Function::kListAppend},
  }};
  for (const auto& [n, f] : kFunctions) {
    if (n == name) return f;
  }
  return std::nullopt;
}

bool IsUpdateFunction(Function f) {
  return f == Function::kIfNotExists || f == Function::kListAppend;
}

class Parser {
 public:
  Parser(std::string_view text, ExpressionKind kind) : text_(text), kind_(kind) {}

  // Checks size and emptiness and tokenizes.
  Status Start() {
    if (text_.size() > kMaxExpressionBytes) {
      return Fail("Expression size has exceeded the maximum allowed size; expression size: " +
                  std::to_string(text_.size()));
    }
    tokens_ = Lex(text_);
    if (tokens_.size() == 1) return Fail("The expression can not be empty;");
    return Status::Ok();
  }

  // ---- conditions ----

  Result<parsed::Condition> ParseWholeCondition() {
    FDYNO_ASSIGN_OR_RETURN(Cond c, ParseOr());
    FDYNO_RETURN_IF_ERROR(Finish(c));
    if (Peek().type != Tok::kEof) return SyntaxError(pos_);
    FDYNO_RETURN_IF_ERROR(Deferred());
    return std::move(c.cond);
  }

  // ---- projections ----

  Result<parsed::Projection> ParseWholeProjection() {
    parsed::Projection out;
    while (true) {
      FDYNO_ASSIGN_OR_RETURN(parsed::Path p, ParsePath());
      out.push_back(std::move(p));
      if (Peek().type == Tok::kComma) {
        ++pos_;
        continue;
      }
      if (Peek().type != Tok::kEof) return SyntaxError(pos_);
      break;
    }
    FDYNO_RETURN_IF_ERROR(Deferred());
    return out;
  }

  // ---- updates ----

  Result<parsed::Update> ParseWholeUpdate() {
    parsed::Update out;
    bool seen[4] = {false, false, false, false};
    static constexpr std::array<std::string_view, 4> kSections = {"SET", "REMOVE", "ADD", "DELETE"};
    while (Peek().type != Tok::kEof) {
      int section = -1;
      for (int s = 0; s < 4; ++s) {
        if (KeywordIs(Peek(), kSections[s])) section = s;
      }
      if (section < 0) return SyntaxError(pos_);
      ++pos_;
      if (seen[section]) {
        Note(kSlotSection, "The \"" + std::string(kSections[section]) +
                               "\" section can only be used once in an update expression;");
      }
      seen[section] = true;
      auto kind = static_cast<parsed::UpdateAction::Kind>(section);
      while (true) {
        parsed::UpdateAction action;
        action.kind = kind;
        FDYNO_ASSIGN_OR_RETURN(action.path, ParsePath());
        if (kind == parsed::UpdateAction::Kind::kSet) {
          if (Peek().type != Tok::kEq) return SyntaxError(pos_);
          ++pos_;
          FDYNO_ASSIGN_OR_RETURN(action.set, ParseSetValue());
        } else if (kind != parsed::UpdateAction::Kind::kRemove) {
          if (Peek().type != Tok::kValueRef) return SyntaxError(pos_);
          action.value.push_back(parsed::ValueRef{std::string(Peek().text)});
          ++pos_;
        }
        out.actions.push_back(std::move(action));
        if (Peek().type != Tok::kComma) break;
        ++pos_;
      }
    }
    FDYNO_RETURN_IF_ERROR(Deferred());
    return out;
  }

 private:
  // A condition, or an operand not (yet) part of one: "(a) = :v" is only known to be a
  // comparison of a parenthesized operand once the ')' and the comparator are seen.
  struct Cond {
    parsed::Condition cond;
    std::optional<parsed::Operand> bare;
    bool parens = false;  // this node (condition or operand) is parenthesized, as written
  };

  struct Opnd {
    parsed::Operand op;
    bool parens = false;
  };

  const Token& Peek(size_t ahead = 0) const {
    size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }

  Error Fail(std::string message) const {
    return Error::Validation("Invalid " + std::string(KindName(kind_)) + ": " + message);
  }

  // near: the text from the token before the offending one to the token after it.
  Error SyntaxError(size_t index) const {
    const Token& bad = tokens_[index];
    size_t begin = index > 0 ? tokens_[index - 1].pos : bad.pos;
    size_t end = bad.pos + bad.len;
    if (index + 1 < tokens_.size() && tokens_[index + 1].type != Tok::kEof) {
      end = tokens_[index + 1].pos + tokens_[index + 1].len;
    }
    std::string token = bad.type == Tok::kEof ? "<EOF>" : std::string(bad.text);
    return Fail("Syntax error; token: \"" + token + "\", near: \"" +
                std::string(text_.substr(begin, end - begin)) + "\"");
  }

  void Note(Slot slot, std::string message) {
    if (!deferred_[slot]) deferred_[slot] = std::move(message);
  }

  Status Deferred() const {
    // Update expressions report reserved words before function problems.
    if (kind_ == ExpressionKind::kUpdate && deferred_[kSlotReserved]) {
      return Fail(*deferred_[kSlotReserved]);
    }
    for (const auto& d : deferred_) {
      if (d) return Fail(*d);
    }
    return Status::Ok();
  }

  // Recursion guard. Every nesting level of a valid expression holds an operator or function
  // (a level without one is a redundant parenthesis), so nesting deeper than the operator limit
  // allows is always an error; stopping there bounds the parser's stack use.
  static constexpr size_t kMaxRecursion = 2 * kMaxOperators + 8;

  struct DepthGuard {
    explicit DepthGuard(size_t& depth) : depth_(depth) { ++depth_; }
    ~DepthGuard() { --depth_; }
    size_t& depth_;
  };

  // The error a complete parse would report for an over-deep expression: too many operators
  // (counting those not yet parsed), else the first problem already noted, else redundant
  // parentheses.
  Error NestingError() {
    size_t total = operators_;
    for (size_t i = pos_; i < tokens_.size(); ++i) {
      const Token& t = tokens_[i];
      switch (t.type) {
        case Tok::kEq:
        case Tok::kNe:
        case Tok::kLt:
        case Tok::kLe:
        case Tok::kGt:
        case Tok::kGe:
        case Tok::kPlus:
        case Tok::kMinus:
          ++total;
          break;
        case Tok::kName:
          if (IsConditionKeyword(t) ||
              (i + 1 < tokens_.size() && tokens_[i + 1].type == Tok::kLParen)) {
            ++total;
          }
          break;
        default:
          break;
      }
    }
    if (!deferred_[kSlotOperators] && total > kMaxOperators) {
      Note(kSlotOperators, "The expression contains too many operators; operator count: " +
                               std::to_string(kMaxOperators + 1));
    }
    Note(kSlotParens, "The expression has redundant parentheses;");
    return Deferred().error();
  }

  void CountOperator() {
    if (++operators_ == kMaxOperators + 1) {
      Note(kSlotOperators, "The expression contains too many operators; operator count: " +
                               std::to_string(operators_));
    }
  }

  static std::string MisusedMessage(Function f) {
    return "The function is not allowed to be used this way in an expression; function: " +
           std::string(FunctionName(f));
  }

  bool IsConditionKind() const {
    return kind_ == ExpressionKind::kCondition || kind_ == ExpressionKind::kFilter ||
           kind_ == ExpressionKind::kKeyCondition || kind_ == ExpressionKind::kSearchCondition;
  }

  bool IsConditionKeyword(const Token& t) const {
    return IsConditionKind() && (KeywordIs(t, "AND") || KeywordIs(t, "OR") || KeywordIs(t, "NOT") ||
                                 KeywordIs(t, "BETWEEN") || KeywordIs(t, "IN"));
  }

  // path := (name | #ref) ( '.' (name | #ref) | '[' int ']' )*
  Result<parsed::Path> ParsePath() {
    parsed::Path path;
    FDYNO_RETURN_IF_ERROR(ParsePathElement(path));
    FDYNO_RETURN_IF_ERROR(ParsePathTail(path));
    return path;
  }

  Status ParsePathElement(parsed::Path& path) {
    const Token& t = Peek();
    if (t.type == Tok::kName && !IsConditionKeyword(t)) {
      if (IsReservedWord(t.text)) {
        Note(kSlotReserved,
             "Attribute name is a reserved keyword; reserved keyword: " + std::string(t.text));
      }
      path.elements.push_back({parsed::PathElement::Kind::kName, std::string(t.text), 0});
    } else if (t.type == Tok::kNameRef) {
      path.elements.push_back({parsed::PathElement::Kind::kNameRef, std::string(t.text), 0});
    } else {
      return SyntaxError(pos_);
    }
    ++pos_;
    return Status::Ok();
  }

  Status ParsePathTail(parsed::Path& path) {
    while (true) {
      if (Peek().type == Tok::kDot) {
        ++pos_;
        FDYNO_RETURN_IF_ERROR(ParsePathElement(path));
      } else if (Peek().type == Tok::kLBracket) {
        ++pos_;
        if (Peek().type != Tok::kInt) return SyntaxError(pos_);
        uint64_t index = 0;
        for (char c : Peek().text) {
          index = index * 10 + static_cast<uint64_t>(c - '0');
          // A list index is a 32-bit integer: a larger one is no number at all (DynamoDB
          // rejects it as a syntax error at the index).
          if (index > static_cast<uint64_t>(INT32_MAX)) return SyntaxError(pos_);
        }
        ++pos_;
        if (Peek().type != Tok::kRBracket) return SyntaxError(pos_);
        ++pos_;
        path.elements.push_back({parsed::PathElement::Kind::kIndex, {}, index});
      } else {
        break;
      }
    }
    if (path.elements.size() > kMaxPathDepth) {
      Note(kSlotDepth, "The document path has too many nesting levels; nesting levels: " +
                           std::to_string(path.elements.size()));
    }
    return Status::Ok();
  }

  // operand := name '(' operand {',' operand} ')' | path | :value | '(' operand ')'
  // In conditions a parenthesized path may continue: "(a.b).c".
  Result<Opnd> ParseOperand() {
    DepthGuard guard(depth_);
    if (depth_ > kMaxRecursion) return NestingError();
    const Token& t = Peek();
    if (t.type == Tok::kValueRef) {
      ++pos_;
      return Opnd{parsed::Operand{parsed::ValueRef{std::string(t.text)}}};
    }
    if (t.type == Tok::kName && Peek(1).type == Tok::kLParen && !IsConditionKeyword(t)) {
      FDYNO_ASSIGN_OR_RETURN(parsed::Operand call, ParseCall());
      return Opnd{std::move(call)};
    }
    if (t.type == Tok::kLParen) {
      ++pos_;
      FDYNO_ASSIGN_OR_RETURN(Opnd inner, ParseOperand());
      if (Peek().type != Tok::kRParen) return SyntaxError(pos_);
      ++pos_;
      return Parenthesized(std::move(inner));
    }
    FDYNO_ASSIGN_OR_RETURN(parsed::Path p, ParsePath());
    return Opnd{parsed::Operand{std::move(p)}};
  }

  // An operand just closed by ')': checks redundancy and, in conditions, a path continuing
  // after the group.
  Result<Opnd> Parenthesized(Opnd inner) {
    if (kind_ == ExpressionKind::kUpdate) return Opnd{std::move(inner.op), true};
    if (inner.parens) Note(kSlotParens, "The expression has redundant parentheses;");
    if (inner.op.is_path() && (Peek().type == Tok::kDot || Peek().type == Tok::kLBracket)) {
      parsed::Path path = std::get<parsed::Path>(std::move(inner.op.v));
      FDYNO_RETURN_IF_ERROR(ParsePathTail(path));
      return Opnd{parsed::Operand{std::move(path)}, false};
    }
    return Opnd{std::move(inner.op), true};
  }

  Result<parsed::Operand> ParseCall() {
    const Token& name = Peek();
    std::optional<Function> f = LookupFunction(name.text);
    if (!f) {
      Note(kSlotUnknownFunction, "Invalid function name; function: " + std::string(name.text));
    } else if (kind_ == ExpressionKind::kUpdate && !IsUpdateFunction(*f)) {
      Note(kSlotMisusedFunction, "The function is not allowed in an update expression; function: " +
                                     std::string(name.text));
    } else if (kind_ != ExpressionKind::kUpdate && IsUpdateFunction(*f)) {
      Note(kSlotMisusedFunction,
           "The function is not allowed in a condition expression; function: " +
               std::string(name.text));
    }
    CountOperator();
    pos_ += 2;  // name '('
    parsed::Call call;
    call.function = f.value_or(Function::kSize);
    while (true) {
      FDYNO_ASSIGN_OR_RETURN(Opnd arg, ParseOperand());
      if (arg.op.is_call() && IsConditionKind() && arg.op.call().function != Function::kSize) {
        Note(kSlotMisusedFunction, MisusedMessage(arg.op.call().function));
      }
      // DynamoDB parses a list_append argument of list_append, then refuses it.
      if (f == Function::kListAppend && arg.op.is_call() &&
          arg.op.call().function == Function::kListAppend) {
        Note(kSlotMisusedFunction, MisusedMessage(Function::kListAppend));
      }
      call.args.push_back(std::move(arg.op));
      if (Peek().type == Tok::kComma) {
        ++pos_;
        continue;
      }
      if (Peek().type != Tok::kRParen) return SyntaxError(pos_);
      ++pos_;
      break;
    }
    return parsed::Operand{std::move(call)};
  }

  // set_value := '(' set_value ')' | operand [('+' | '-') operand]
  Result<parsed::SetValue> ParseSetValue() {
    DepthGuard guard(depth_);
    if (depth_ > kMaxRecursion) return NestingError();
    parsed::SetValue sv;
    if (Peek().type == Tok::kLParen) {
      ++pos_;
      FDYNO_ASSIGN_OR_RETURN(sv, ParseSetValue());
      if (Peek().type != Tok::kRParen) return SyntaxError(pos_);
      ++pos_;
      if (sv.op != parsed::SetValue::Op::kValue ||
          (Peek().type != Tok::kPlus && Peek().type != Tok::kMinus)) {
        return sv;
      }
    } else {
      FDYNO_ASSIGN_OR_RETURN(Opnd a, ParseOperand());
      sv.operands.push_back(std::move(a.op));
    }
    if (Peek().type == Tok::kPlus || Peek().type == Tok::kMinus) {
      sv.op =
          Peek().type == Tok::kPlus ? parsed::SetValue::Op::kPlus : parsed::SetValue::Op::kMinus;
      CountOperator();
      ++pos_;
      FDYNO_ASSIGN_OR_RETURN(Opnd b, ParseOperand());
      sv.operands.push_back(std::move(b.op));
    }
    return sv;
  }

  // A bare operand where a condition is needed: a function call is a condition by itself
  // (size() is not: it yields a number); anything else is a syntax error at the next token.
  Status Finish(Cond& c) {
    if (!c.bare) return Status::Ok();
    if (!c.bare->is_call()) return SyntaxError(pos_);
    if (c.bare->call().function == Function::kSize) {
      Note(kSlotMisusedFunction, MisusedMessage(Function::kSize));
    }
    c.cond = parsed::Condition{};
    c.cond.kind = parsed::Condition::Kind::kFunction;
    c.cond.operands.push_back(std::move(*c.bare));
    c.bare.reset();
    return Status::Ok();
  }

  // or := and (OR and)*
  Result<Cond> ParseOr() {
    FDYNO_ASSIGN_OR_RETURN(Cond left, ParseAnd());
    while (KeywordIs(Peek(), "OR")) {
      FDYNO_RETURN_IF_ERROR(Finish(left));
      ++pos_;
      CountOperator();
      FDYNO_ASSIGN_OR_RETURN(Cond right, ParseAnd());
      FDYNO_RETURN_IF_ERROR(Finish(right));
      left = Combine(parsed::Condition::Kind::kOr, std::move(left), std::move(right));
    }
    return left;
  }

  // and := not (AND not)*
  Result<Cond> ParseAnd() {
    FDYNO_ASSIGN_OR_RETURN(Cond left, ParseNot());
    while (KeywordIs(Peek(), "AND")) {
      FDYNO_RETURN_IF_ERROR(Finish(left));
      ++pos_;
      CountOperator();
      FDYNO_ASSIGN_OR_RETURN(Cond right, ParseNot());
      FDYNO_RETURN_IF_ERROR(Finish(right));
      left = Combine(parsed::Condition::Kind::kAnd, std::move(left), std::move(right));
    }
    return left;
  }

  static Cond Combine(parsed::Condition::Kind kind, Cond left, Cond right) {
    Cond out;
    out.cond.kind = kind;
    out.cond.children.push_back(std::move(left.cond));
    out.cond.children.push_back(std::move(right.cond));
    return out;
  }

  // not := NOT not | primary
  Result<Cond> ParseNot() {
    DepthGuard guard(depth_);
    if (depth_ > kMaxRecursion) return NestingError();
    if (KeywordIs(Peek(), "NOT")) {
      ++pos_;
      CountOperator();
      FDYNO_ASSIGN_OR_RETURN(Cond inner, ParseNot());
      FDYNO_RETURN_IF_ERROR(Finish(inner));
      Cond out;
      out.cond.kind = parsed::Condition::Kind::kNot;
      out.cond.children.push_back(std::move(inner.cond));
      return out;
    }
    return ParsePrimary();
  }

  // primary := '(' or ')'
  //          | operand comparator operand
  //          | operand BETWEEN operand AND operand
  //          | operand IN '(' operand {',' operand} ')'
  //          | operand            (a bare operand; see Cond)
  Result<Cond> ParsePrimary() {
    DepthGuard guard(depth_);
    if (depth_ > kMaxRecursion) return NestingError();
    if (Peek().type == Tok::kLParen) {
      ++pos_;
      FDYNO_ASSIGN_OR_RETURN(Cond inner, ParseOr());
      if (Peek().type != Tok::kRParen) return SyntaxError(pos_);
      ++pos_;
      if (!inner.bare) {
        if (inner.parens) Note(kSlotParens, "The expression has redundant parentheses;");
        inner.parens = true;
        return inner;
      }
      FDYNO_ASSIGN_OR_RETURN(Opnd first, Parenthesized(Opnd{std::move(*inner.bare), inner.parens}));
      return ParseAfterOperand(std::move(first));
    }
    FDYNO_ASSIGN_OR_RETURN(Opnd first, ParseOperand());
    return ParseAfterOperand(std::move(first));
  }

  // The rest of a primary after its first operand. Kept out of ParsePrimary so that the frames
  // of nested groups stay small.
  [[gnu::noinline]] Result<Cond> ParseAfterOperand(Opnd first) {
    Cond out;
    const Token& t = Peek();
    std::optional<CompareOp> op;
    switch (t.type) {
      case Tok::kEq:
        op = CompareOp::kEq;
        break;
      case Tok::kNe:
        op = CompareOp::kNe;
        break;
      case Tok::kLt:
        op = CompareOp::kLt;
        break;
      case Tok::kLe:
        op = CompareOp::kLe;
        break;
      case Tok::kGt:
        op = CompareOp::kGt;
        break;
      case Tok::kGe:
        op = CompareOp::kGe;
        break;
      default:
        break;
    }
    if (op) {
      ++pos_;
      CountOperator();
      FDYNO_ASSIGN_OR_RETURN(Opnd second, ParseOperand());
      out.cond.kind = parsed::Condition::Kind::kCompare;
      out.cond.op = *op;
      out.cond.operands.push_back(std::move(first.op));
      out.cond.operands.push_back(std::move(second.op));
    } else if (KeywordIs(t, "BETWEEN")) {
      ++pos_;
      CountOperator();
      FDYNO_ASSIGN_OR_RETURN(Opnd low, ParseOperand());
      if (!KeywordIs(Peek(), "AND")) return SyntaxError(pos_);
      ++pos_;
      FDYNO_ASSIGN_OR_RETURN(Opnd high, ParseOperand());
      out.cond.kind = parsed::Condition::Kind::kBetween;
      out.cond.operands.push_back(std::move(first.op));
      out.cond.operands.push_back(std::move(low.op));
      out.cond.operands.push_back(std::move(high.op));
    } else if (KeywordIs(t, "IN")) {
      ++pos_;
      CountOperator();
      if (Peek().type != Tok::kLParen) return SyntaxError(pos_);
      ++pos_;
      out.cond.kind = parsed::Condition::Kind::kIn;
      out.cond.operands.push_back(std::move(first.op));
      while (true) {
        FDYNO_ASSIGN_OR_RETURN(Opnd v, ParseOperand());
        out.cond.operands.push_back(std::move(v.op));
        if (Peek().type == Tok::kComma) {
          ++pos_;
          continue;
        }
        if (Peek().type != Tok::kRParen) return SyntaxError(pos_);
        ++pos_;
        break;
      }
      size_t n = out.cond.operands.size() - 1;
      if (n > kMaxInOperands) {
        Note(kSlotInOperands,
             "The IN operator is provided with too many operands; number of operands: " +
                 std::to_string(n));
      }
    } else {
      out.bare = std::move(first.op);
      out.parens = first.parens;
      return out;
    }
    for (const parsed::Operand& o : out.cond.operands) {
      if (o.is_call() && o.call().function != Function::kSize) {
        Note(kSlotMisusedFunction, MisusedMessage(o.call().function));
      }
    }
    return out;
  }

  std::string_view text_;
  ExpressionKind kind_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  size_t operators_ = 0;
  size_t depth_ = 0;
  std::array<std::optional<std::string>, kSlotCount> deferred_;
};

}  // namespace

Result<parsed::Condition> ParseCondition(std::string_view text, ExpressionKind kind) {
  Parser p(text, kind);
  FDYNO_RETURN_IF_ERROR(p.Start());
  return p.ParseWholeCondition();
}

Result<parsed::Projection> ParseProjection(std::string_view text) {
  Parser p(text, ExpressionKind::kProjection);
  FDYNO_RETURN_IF_ERROR(p.Start());
  return p.ParseWholeProjection();
}

Result<parsed::Update> ParseUpdate(std::string_view text) {
  Parser p(text, ExpressionKind::kUpdate);
  FDYNO_RETURN_IF_ERROR(p.Start());
  return p.ParseWholeUpdate();
}

}  // namespace fdyno::expr
