// Stage 1 of a PartiQL statement: text -> syntax tree (ast.h).
//
// A hand-written recursive-descent parser for the statements DynamoDB accepts (SELECT, INSERT,
// UPDATE, DELETE, and EXISTS(SELECT ...) for ExecuteTransaction), with PartiQL's operator
// precedence (OR < AND < NOT < = <> IS IN < < <= > >= BETWEEN LIKE < + - || < * / %). It also
// recognizes the PartiQL constructs DynamoDB parses and then refuses (aliases, joins, GROUP BY,
// HAVING, LIMIT, DISTINCT, SELECT VALUE, ON CONFLICT, INSERT ... VALUES), leaving them marked in
// the tree so that bind.h can answer DynamoDB's specific message.
//
// Syntax errors are ValidationExceptions "Statement wasn't well formed, can't be processed:
// <detail>", with the detail PartiQL's parser gives in the common cases ("Expected data
// manipulation", "Unexpected keyword", "Unexpected token after expression", ...) and no detail
// for lexical errors. Nesting deeper than kMaxNesting levels is a syntax error, so parsing
// uses bounded stack. Pure; thread-safe.
#pragma once

#include <string_view>

#include "base/result.h"
#include "partiql/ast.h"

namespace fdyno::partiql {

// DynamoDB's limit on the Statement parameter, in bytes.
inline constexpr size_t kMaxStatementBytes = 8192;
// Parenthesized or nested expressions deeper than this are refused.
inline constexpr int kMaxNesting = 200;

Result<ast::Statement> Parse(std::string_view statement);

}  // namespace fdyno::partiql
