// Versioned binary codec for stored items and values: compact (numbers as packed decimal
// digits, lengths as varints) and fast to decode. Every encoding starts with a format version
// byte; a decoder that meets an unknown version, or bytes that do not decode exactly,
// returns InternalServerError and never a guessed value (fail closed). The format is
// persisted (docs/format/item.md): a change is a new version, and every version that may be
// on disk stays decodable.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"
#include "model/attribute_value.h"

namespace fdyno::model {

// Persisted format versions: never reuse a number.
inline constexpr uint8_t kItemFormatV1 = 1;
inline constexpr uint8_t kItemFormatCurrent = kItemFormatV1;

// An item: version byte, then the attributes.
std::string EncodeStoredItem(const Item& item);
void AppendStoredItem(const Item& item, std::string* out);
Result<Item> DecodeStoredItem(std::string_view bytes);

// A single value (for receipts, projections): version byte, then the value.
std::string EncodeStoredValue(const AttributeValue& value);
Result<AttributeValue> DecodeStoredValue(std::string_view bytes);

}  // namespace fdyno::model
