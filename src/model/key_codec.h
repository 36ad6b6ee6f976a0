// Order-preserving key codec: S, N and B key values as byte strings whose bytewise order is
// DynamoDB's order for the values (S by UTF-8 bytes, N numerically, B by unsigned bytes).
// Every encoding is self-delimiting and none is a proper prefix of another, so encodings can
// be concatenated (hash key then range key sorts by hash, then range) and embedded in kv
// tuples as byte strings. The format is persisted in every item key (docs/format/key.md):
// never change it.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/result.h"
#include "model/attribute_value.h"

namespace fdyno::model {

// Type tags, the first byte of every encoded value. Persisted: never renumber.
inline constexpr uint8_t kKeyTagString = 0x10;
inline constexpr uint8_t kKeyTagBinary = 0x20;
inline constexpr uint8_t kKeyTagNegative = 0x30;
inline constexpr uint8_t kKeyTagZero = 0x31;
inline constexpr uint8_t kKeyTagPositive = 0x32;

// Appends the encoding of `value`. REQUIRES: value is S, N or B.
void AppendKeyValue(const AttributeValue& value, std::string* out);
void AppendKeyString(std::string_view utf8, std::string* out);
void AppendKeyBinary(std::string_view bytes, std::string* out);
void AppendKeyNumber(const Number& number, std::string* out);
std::string EncodeKeyValue(const AttributeValue& value);

// Decodes the value at the front of `*in` and advances `*in` past it. Malformed input (an
// unknown tag, a missing terminator, an out-of-range digit) is an InternalServerError: a
// stored key that does not decode is corruption and is never guessed at.
Result<AttributeValue> DecodeKeyValue(std::string_view* in);

// A primary key: hash value then, when present, range value.
// REQUIRES: each value is S, N or B.
std::string EncodeKey(const AttributeValue& hash, const AttributeValue* range);

struct DecodedKey {
  AttributeValue hash;
  std::optional<AttributeValue> range;
};
// Decodes a whole EncodeKey output; `has_range` says whether a range value follows. Trailing
// bytes are an error.
Result<DecodedKey> DecodeKey(std::string_view encoded, bool has_range);

}  // namespace fdyno::model
