// Item size by DynamoDB's rules (docs: "DynamoDB item sizes and formats"), used for the 400 KB
// item limit and for capacity units:
//   * an attribute is the UTF-8 length of its name plus the size of its value;
//   * S: UTF-8 bytes; B: raw bytes; BOOL and NULL: 1;
//   * N: 1 + ceil(significant digits / 2), plus 1 when the digit count is even and the
//     decimal point falls inside a base-100 digit pair (DynamoDB stores numbers in base 100),
//     plus 1 for a negative number; zero is 1;
//   * M and L: 3 bytes, plus 1 per element, plus the elements (map entries count their names);
//   * SS, NS, BS: the sum of the members' sizes.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/result.h"
#include "model/attribute_value.h"

namespace fdyno::model {

// 400 KB.
inline constexpr uint64_t kMaxItemSizeBytes = 409'600;

uint64_t NumberSize(const Number& number);
// The same for a number given by its parts: digit_count significant digits (0 for zero),
// value 0.d1d2.. x 10^exponent.
uint64_t NumberSize(bool negative, size_t digit_count, int exponent);
uint64_t ValueSize(const AttributeValue& value);
// Name plus value.
uint64_t AttributeSize(std::string_view name, const AttributeValue& value);
uint64_t ItemSize(const Item& item);

// ValidationException "Item size has exceeded the maximum allowed size" when the item is larger
// than 400 KB (PutItem, BatchWriteItem, TransactWriteItems Put).
Status CheckItemSize(const Item& item);
// The UpdateItem form: "Item size to update has exceeded the maximum allowed size".
Status CheckUpdatedItemSize(const Item& item);

// Capacity units for an item of `size_bytes` (0 when there is no item): reads are counted in
// 4 KB units (halved for eventually consistent reads), writes in 1 KB units, at least one
// unit either way. Transactional operations double these; that is the caller's business.
double ReadCapacityUnits(uint64_t size_bytes, bool consistent_read);
double WriteCapacityUnits(uint64_t size_bytes);

}  // namespace fdyno::model
