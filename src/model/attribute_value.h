// AttributeValue: one DynamoDB value (S, N, B, BOOL, NULL, M, L, SS, NS, BS).
// Values are plain data: copyable, comparable for equality, no validation on construction
// (validation lives in the JSON decoder and the operations).
#pragma once

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "model/number.h"

namespace fdyno::model {

struct AttributeValue;
using Map = std::map<std::string, AttributeValue>;  // attribute name -> value, ordered
using List = std::vector<AttributeValue>;

struct Null {
  bool operator==(const Null&) const = default;
};
// Binary values hold raw bytes (base64 only on the wire).
struct Binary {
  std::string bytes;
  bool operator==(const Binary&) const = default;
};
// Sets keep their members in insertion order as received; equality is set equality.
struct StringSet {
  std::vector<std::string> members;
};
struct NumberSet {
  std::vector<Number> members;
};
struct BinarySet {
  std::vector<std::string> members;
};

// Persisted as the type tag of the item codec: never renumber.
enum class Type : uint8_t {
  kS = 0,
  kN = 1,
  kB = 2,
  kBool = 3,
  kNull = 4,
  kM = 5,
  kL = 6,
  kSS = 7,
  kNS = 8,
  kBS = 9
};

struct AttributeValue {
  std::variant<std::string, Number, Binary, bool, Null, Map, List, StringSet, NumberSet,
               BinarySet>
      v;  // alternative index == static_cast<int>(Type)

  Type type() const { return static_cast<Type>(v.index()); }

  static AttributeValue S(std::string s) { return {std::move(s)}; }
  static AttributeValue N(Number n) { return {std::move(n)}; }
  static AttributeValue B(std::string bytes) { return {Binary{std::move(bytes)}}; }
  static AttributeValue Bool(bool b) { return {b}; }
  static AttributeValue MakeNull() { return {Null{}}; }
  static AttributeValue M(Map m) { return {std::move(m)}; }
  static AttributeValue L(List l) { return {std::move(l)}; }
};

// DynamoDB equality: same type and value; sets compare as sets, numbers numerically.
bool operator==(const AttributeValue& a, const AttributeValue& b);
bool operator==(const StringSet& a, const StringSet& b);
bool operator==(const NumberSet& a, const NumberSet& b);
bool operator==(const BinarySet& a, const BinarySet& b);

// "S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS".
std::string_view TypeName(Type type);

// An item: attribute name -> value.
using Item = Map;

}  // namespace fdyno::model
