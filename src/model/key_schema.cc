#include "model/key_schema.h"

namespace fdyno::model {

std::string_view ScalarTypeName(ScalarType type) {
  switch (type) {
    case ScalarType::kS:
      return "S";
    case ScalarType::kN:
      return "N";
    case ScalarType::kB:
      return "B";
  }
  return "?";
}

std::optional<ScalarType> ParseScalarType(std::string_view name) {
  if (name == "S") return ScalarType::kS;
  if (name == "N") return ScalarType::kN;
  if (name == "B") return ScalarType::kB;
  return std::nullopt;
}

Type ToType(ScalarType type) {
  switch (type) {
    case ScalarType::kS:
      return Type::kS;
    case ScalarType::kN:
      return Type::kN;
    case ScalarType::kB:
      return Type::kB;
  }
  return Type::kS;
}

std::optional<ScalarType> ToScalarType(Type type) {
  switch (type) {
    case Type::kS:
      return ScalarType::kS;
    case Type::kN:
      return ScalarType::kN;
    case Type::kB:
      return ScalarType::kB;
    default:
      return std::nullopt;
  }
}

std::vector<KeyAttribute> KeySchema::HashAttributes() const {
  std::vector<KeyAttribute> out{hash};
  out.insert(out.end(), more_hash.begin(), more_hash.end());
  return out;
}

std::vector<KeyAttribute> KeySchema::RangeAttributes() const {
  std::vector<KeyAttribute> out;
  if (!range) return out;
  out.push_back(*range);
  out.insert(out.end(), more_range.begin(), more_range.end());
  return out;
}

std::vector<KeyAttribute> KeySchema::Attributes() const {
  std::vector<KeyAttribute> out = HashAttributes();
  for (KeyAttribute& a : RangeAttributes()) out.push_back(std::move(a));
  return out;
}

}  // namespace fdyno::model
