// The tokens of DynamoDB's PartiQL dialect, and the lexer that produces them.
//
// Words are classified as PartiQL does: the SQL-92 and PartiQL keywords (keywords.cc) are
// keywords in any case ("SELECT", "select"); everything else that starts with a letter, '_' or
// '$' is an identifier, kept as written. Double-quoted text is a quoted identifier ("" inside
// stands for one "), single-quoted text a string literal ('' for one '). Comments (-- to the end
// of the line, /* ... */) and whitespace separate tokens and are dropped.
//
// A lexical error (an unterminated string, identifier or comment, a character that starts no
// token, an Ion literal in backquotes) is reported the way DynamoDB reports one: the statement
// "wasn't well formed" with no detail after the colon. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace fdyno::partiql {

enum class Tok {
  kEof,
  kIdent,        // unquoted identifier, text as written
  kQuotedIdent,  // "..." with the quotes removed and "" unescaped
  kKeyword,      // text lower-cased
  kString,       // '...' with the quotes removed and '' unescaped
  kNumber,       // 12, 1.5, .5, 1e10, 1.5E-3 (no sign)
  kQuestion,     // ?
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kLBag,  // <<
  kRBag,  // >>
  kComma,
  kDot,
  kColon,
  kSemicolon,
  kStar,
  kOp,  // = <> != < <= > >= + - / % || (text as written)
};

struct Token {
  Tok type = Tok::kEof;
  std::string text;
  size_t pos = 0;  // byte offset in the statement

  bool Is(Tok t) const { return type == t; }
  // A keyword token whose lower-case text is `kw`.
  bool IsKeyword(std::string_view kw) const { return type == Tok::kKeyword && text == kw; }
  bool IsOp(std::string_view op) const { return type == Tok::kOp && text == op; }
};

// The tokens of `statement`, ending with one kEof token.
Result<std::vector<Token>> Lex(std::string_view statement);

// Whether the lower-case word is a PartiQL keyword (it cannot be an unquoted identifier).
bool IsKeyword(std::string_view lower_word);

// "Statement wasn't well formed, can't be processed: <detail>" (ValidationException).
Error MalformedStatement(std::string_view detail);

}  // namespace fdyno::partiql
