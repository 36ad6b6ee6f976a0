// Key schemas: the hash (partition) key and optional range (sort) key of a table or index,
// each an attribute name with a scalar type (S, N or B).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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

struct KeySchema {
  KeyAttribute hash;
  std::optional<KeyAttribute> range;

  bool has_range() const { return range.has_value(); }
  bool operator==(const KeySchema&) const = default;
};

}  // namespace fdyno::model
