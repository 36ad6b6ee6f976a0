#include "partiql/lexer.h"

#include <cctype>

namespace fdyno::partiql {
namespace {

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentStart(char c) { return IsAlpha(c) || c == '_' || c == '$'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// DynamoDB answers a lexical error with the envelope and no detail.
Error LexError() { return MalformedStatement(""); }

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  Result<std::vector<Token>> Run() {
    std::vector<Token> out;
    while (true) {
      FDYNO_RETURN_IF_ERROR(SkipSpaceAndComments());
      if (i_ >= s_.size()) break;
      FDYNO_ASSIGN_OR_RETURN(Token t, Next());
      out.push_back(std::move(t));
    }
    out.push_back(Token{Tok::kEof, "", s_.size()});
    return out;
  }

 private:
  Status SkipSpaceAndComments() {
    while (i_ < s_.size()) {
      if (IsSpace(s_[i_])) {
        ++i_;
      } else if (s_.substr(i_, 2) == "--") {
        while (i_ < s_.size() && s_[i_] != '\n' && s_[i_] != '\r') ++i_;
      } else if (s_.substr(i_, 2) == "/*") {
        size_t end = s_.find("*/", i_ + 2);
        if (end == std::string_view::npos) return LexError();
        i_ = end + 2;
      } else {
        break;
      }
    }
    return Status::Ok();
  }

  Token Make(Tok type, std::string text, size_t start) {
    return Token{type, std::move(text), start};
  }

  Result<Token> Next() {
    const size_t start = i_;
    const char c = s_[i_];
    if (IsIdentStart(c)) {
      while (i_ < s_.size() && IsIdentChar(s_[i_])) ++i_;
      std::string_view word = s_.substr(start, i_ - start);
      // No keyword is longer than this; the lower-case copy of a word stays on the stack.
      constexpr size_t kLongestKeyword = 32;
      if (word.size() <= kLongestKeyword) {
        char lower[kLongestKeyword];
        for (size_t k = 0; k < word.size(); ++k) {
          lower[k] = static_cast<char>(std::tolower(static_cast<unsigned char>(word[k])));
        }
        std::string_view lowered(lower, word.size());
        if (IsKeyword(lowered)) return Make(Tok::kKeyword, std::string(lowered), start);
      }
      return Make(Tok::kIdent, std::string(word), start);
    }
    if (IsDigit(c) || (c == '.' && i_ + 1 < s_.size() && IsDigit(s_[i_ + 1]))) return Number();
    if (c == '\'' || c == '"') return Quoted(c);
    if (c == '`') return LexError();  // Ion literals are not part of DynamoDB's dialect
    return Punctuation();
  }

  Result<Token> Number() {
    const size_t start = i_;
    while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      size_t j = i_ + 1;
      if (j < s_.size() && (s_[j] == '+' || s_[j] == '-')) ++j;
      if (j >= s_.size() || !IsDigit(s_[j])) return LexError();
      i_ = j;
      while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
    }
    // A number runs into no identifier: "1abc" is not two tokens.
    if (i_ < s_.size() && IsIdentStart(s_[i_])) return LexError();
    return Make(Tok::kNumber, std::string(s_.substr(start, i_ - start)), start);
  }

  Result<Token> Quoted(char quote) {
    const size_t start = i_;
    ++i_;
    std::string text;
    while (true) {
      if (i_ >= s_.size()) return LexError();
      if (s_[i_] == quote) {
        if (i_ + 1 < s_.size() && s_[i_ + 1] == quote) {
          text += quote;
          i_ += 2;
          continue;
        }
        ++i_;
        break;
      }
      text += s_[i_++];
    }
    return Make(quote == '\'' ? Tok::kString : Tok::kQuotedIdent, std::move(text), start);
  }

  Result<Token> Punctuation() {
    const size_t start = i_;
    auto two = s_.substr(i_, 2);
    auto take = [&](Tok type, size_t n) {
      i_ += n;
      return Make(type, std::string(s_.substr(start, n)), start);
    };
    if (two == "<<") return take(Tok::kLBag, 2);
    if (two == ">>") return take(Tok::kRBag, 2);
    if (two == "<=" || two == ">=" || two == "<>" || two == "!=" || two == "||") {
      return take(Tok::kOp, 2);
    }
    switch (s_[i_]) {
      case '(':
        return take(Tok::kLParen, 1);
      case ')':
        return take(Tok::kRParen, 1);
      case '[':
        return take(Tok::kLBracket, 1);
      case ']':
        return take(Tok::kRBracket, 1);
      case '{':
        return take(Tok::kLBrace, 1);
      case '}':
        return take(Tok::kRBrace, 1);
      case ',':
        return take(Tok::kComma, 1);
      case '.':
        return take(Tok::kDot, 1);
      case ':':
        return take(Tok::kColon, 1);
      case ';':
        return take(Tok::kSemicolon, 1);
      case '?':
        return take(Tok::kQuestion, 1);
      case '*':
        return take(Tok::kStar, 1);
      case '=':
      case '<':
      case '>':
      case '+':
      case '-':
      case '/':
      case '%':
        return take(Tok::kOp, 1);
      default:
        return LexError();
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

Error MalformedStatement(std::string_view detail) {
  return Error::Validation("Statement wasn't well formed, can't be processed: " +
                           std::string(detail));
}

Result<std::vector<Token>> Lex(std::string_view statement) { return Lexer(statement).Run(); }

}  // namespace fdyno::partiql
