// DynamoDB's reserved words: an attribute name written directly (not through an
// ExpressionAttributeNames "#name" placeholder) may not be one of them.
#pragma once

#include <cstddef>
#include <string_view>

namespace fdyno::expr {

// True when `name` is a DynamoDB reserved word, compared case-insensitively.
bool IsReservedWord(std::string_view name);

// Number of reserved words (573); for tests.
size_t ReservedWordCount();

}  // namespace fdyno::expr
