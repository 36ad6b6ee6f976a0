// Key schemas: the hash (partition) key and optional range (sort) key of a table or index,
// each an attribute name with a scalar type (S, N or B). A global secondary index may have a
// multi-attribute key (DynamoDB, November 2025): up to four partition key attributes and up to
// four sort key attributes; its partition is the combination of the partition key values, and
// its entries are ordered by the sort key attributes in sequence.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/attribute_value.h"

namespace fdyno::model {

// A key attribute's type. Persisted in the catalog: never renumber.
enum class ScalarType : uint8_t { kS = 0, kN = 1, kB = 2 };

// "S", "N", "B".
std::string_view ScalarTypeName(ScalarType type);
// Parses "S", "N" or "B" (DynamoDB's ScalarAttributeType); nullopt otherwise.
std::optional<ScalarType> ParseScalarType(std::string_view name);
// The AttributeValue type of a key type.
Type ToType(ScalarType type);
// The key type of a value type, or nullopt when the type cannot be a key.
std::optional<ScalarType> ToScalarType(Type type);

struct KeyAttribute {
  std::string name;
  ScalarType type = ScalarType::kS;
  bool operator==(const KeyAttribute&) const = default;
};

// The most partition key attributes, and the most sort key attributes, of a multi-attribute
// index key.
inline constexpr size_t kMaxKeyAttributesPerRole = 4;

struct KeySchema {
  KeyAttribute hash;
  std::optional<KeyAttribute> range;
  // The further partition and sort key attributes of a multi-attribute key, in key order after
  // `hash` and `range` (empty for tables, local indexes and single-attribute keys).
  std::vector<KeyAttribute> more_hash = {};
  std::vector<KeyAttribute> more_range = {};

  bool has_range() const { return range.has_value(); }
  bool multi_attribute() const { return !more_hash.empty() || !more_range.empty(); }
  // Every partition key attribute in key order ([hash, more_hash...]).
  std::vector<KeyAttribute> HashAttributes() const;
  // Every sort key attribute in key order ([range, more_range...]; empty without a sort key).
  std::vector<KeyAttribute> RangeAttributes() const;
  // Every key attribute: the partition key attributes, then the sort key attributes.
  std::vector<KeyAttribute> Attributes() const;
  bool operator==(const KeySchema&) const = default;
};

}  // namespace fdyno::model
