// DynamoDB JSON wire codec for AttributeValue and items ({"S":"x"}, {"N":"1"}, {"B":"<base64>"},
// {"BOOL":true}, {"NULL":true}, {"M":{..}}, {"L":[..]}, {"SS":[..]}, {"NS":[..]}, {"BS":[..]}).
//
// Decoding has DynamoDB's two phases. The shape check (CheckAttributeValueShape) finds what
// DynamoDB's deserializer rejects, as SerializationException: a field of the wrong JSON type,
// invalid base64. Validation (inside Decode*) finds what DynamoDB rejects as
// ValidationException, with DynamoDB's messages and in its order: no type or more than one,
// bad numbers, NULL false, empty sets, duplicate set members, nesting deeper than 32 levels.
// A request handler that decodes several values should shape-check all of them before
// validating any, because DynamoDB reports serialization errors first; Decode* does both for
// one value. JSON null members count as absent, as in DynamoDB. Unknown members are ignored.
//
// Encoding writes what DynamoDB returns: numbers as canonical strings, B/BS as base64, set
// members in stored order.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <string_view>

#include "base/result.h"
#include "model/attribute_value.h"
#include "model/base64.h"

namespace fdyno::model {

// Maximum nesting: a top-level attribute value is level 1; a value inside an M or L is one
// level deeper than it. DynamoDB rejects values deeper than this.
inline constexpr int kMaxNestingLevel = 32;

// The SerializationException of a JSON object where the protocol wants a scalar or a list.
inline constexpr std::string_view kStartOfStructure =
    "Start of structure or map found where not expected";

// Every attribute name a request carries (an item's or key's attributes and the keys of maps
// inside them at any depth, AttributeUpdates, Expected, QueryFilter, ScanFilter, AttributesToGet,
// ExpressionAttributeNames values, ExclusiveStartKey) is at most 65,535 bytes; a longer one is
// DynamoDB's ValidationException "1 validation error detected: Attribute name is too large, must
// be less than 65536 bytes".
Status CheckAttributeNameLength(std::string_view name);
// A top-level attribute name is also not empty: an empty one is the ValidationException "Empty
// attribute name". Then CheckAttributeNameLength.
Status CheckAttributeName(std::string_view name);

// SerializationException for a JSON value that cannot be an AttributeValue (wrong JSON type of
// the value or of a member, invalid base64), recursively.
Status CheckAttributeValueShape(const rapidjson::Value& value);
// The same for an item / key / attribute map: a JSON object of name -> AttributeValue.
Status CheckItemShape(const rapidjson::Value& value);

// Decodes one AttributeValue (shape check, then validation) at nesting level `level`.
Result<AttributeValue> DecodeAttributeValue(const rapidjson::Value& value, int level = 1);
// Decodes an item (name -> AttributeValue): shape of every attribute first, then validation.
Result<Item> DecodeItem(const rapidjson::Value& value);

// Convenience: parse JSON text then decode. Malformed JSON is a SerializationException.
Result<AttributeValue> AttributeValueFromJson(std::string_view json);
Result<Item> ItemFromJson(std::string_view json);

// Writes `value` as DynamoDB JSON with any RapidJSON writer.
template <typename Writer>
void WriteAttributeValue(Writer& w, const AttributeValue& value);
template <typename Writer>
void WriteItem(Writer& w, const Item& item);

std::string AttributeValueToJson(const AttributeValue& value);
std::string ItemToJson(const Item& item);

// ---- implementation of the templates ----

namespace json_internal {
template <typename Writer>
void WriteString(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}
template <typename Writer>
void WriteBase64(Writer& w, std::string_view bytes) {
  std::string b64;
  Base64EncodeTo(bytes, &b64);
  WriteString(w, b64);
}
}  // namespace json_internal

template <typename Writer>
void WriteItem(Writer& w, const Item& item) {
  w.StartObject();
  for (const auto& [name, v] : item) {
    json_internal::WriteString(w, name);
    WriteAttributeValue(w, v);
  }
  w.EndObject();
}

template <typename Writer>
void WriteAttributeValue(Writer& w, const AttributeValue& value) {
  using json_internal::WriteString;
  w.StartObject();
  WriteString(w, TypeName(value.type()));
  switch (value.type()) {
    case Type::kS:
      WriteString(w, std::get<std::string>(value.v));
      break;
    case Type::kN:
      WriteString(w, std::get<Number>(value.v).ToString());
      break;
    case Type::kB:
      json_internal::WriteBase64(w, std::get<Binary>(value.v).bytes);
      break;
    case Type::kBool:
      w.Bool(std::get<bool>(value.v));
      break;
    case Type::kNull:
      w.Bool(true);
      break;
    case Type::kM:
      WriteItem(w, std::get<Map>(value.v));
      break;
    case Type::kL:
      w.StartArray();
      for (const auto& e : std::get<List>(value.v)) WriteAttributeValue(w, e);
      w.EndArray();
      break;
    case Type::kSS:
      w.StartArray();
      for (const auto& e : std::get<StringSet>(value.v).members) WriteString(w, e);
      w.EndArray();
      break;
    case Type::kNS:
      w.StartArray();
      for (const auto& e : std::get<NumberSet>(value.v).members) WriteString(w, e.ToString());
      w.EndArray();
      break;
    case Type::kBS:
      w.StartArray();
      for (const auto& e : std::get<BinarySet>(value.v).members) json_internal::WriteBase64(w, e);
      w.EndArray();
      break;
  }
  w.EndObject();
}

}  // namespace fdyno::model
