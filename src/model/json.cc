#include "model/json.h"

#include <rapidjson/error/en.h>

#include <algorithm>
#include <unordered_set>

namespace fdyno::model {
namespace {

using rapidjson::Value;

enum class Field { kS, kN, kB, kBool, kNull, kM, kL, kSS, kNS, kBS, kUnknown };

Field FieldOf(const Value& name) {
  std::string_view n(name.GetString(), name.GetStringLength());
  switch (n.size()) {
    case 1:
      if (n[0] == 'S') return Field::kS;
      if (n[0] == 'N') return Field::kN;
      if (n[0] == 'B') return Field::kB;
      if (n[0] == 'M') return Field::kM;
      if (n[0] == 'L') return Field::kL;
      break;
    case 2:
      if (n == "SS") return Field::kSS;
      if (n == "NS") return Field::kNS;
      if (n == "BS") return Field::kBS;
      break;
    case 4:
      if (n == "BOOL") return Field::kBool;
      if (n == "NULL") return Field::kNull;
      break;
  }
  return Field::kUnknown;
}

std::string_view Str(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

Error SerializationError(std::string message) { return Error::Serialization(std::move(message)); }

// DynamoDB's deserializer names JSON numbers as Jackson tokens do.
const char* NumberToken(const Value& v) { return v.IsDouble() ? "DECIMAL_VALUE" : "NUMBER_VALUE"; }

Status CheckString(const Value& v) {
  if (v.IsNull() || v.IsString()) return Status::Ok();
  if (v.IsBool()) {
    return SerializationError(std::string(v.GetBool() ? "TRUE_VALUE" : "FALSE_VALUE") +
                              " cannot be converted to String");
  }
  if (v.IsNumber())
    return SerializationError(std::string(NumberToken(v)) + " cannot be converted to String");
  if (v.IsArray()) return SerializationError("Unrecognized collection type class java.lang.String");
  return SerializationError(std::string(kStartOfStructure));
}

Status CheckBlob(const Value& v) {
  if (v.IsNull()) return Status::Ok();
  if (v.IsBool() || v.IsNumber()) {
    return SerializationError("only base-64-encoded strings are convertible to bytes");
  }
  if (v.IsArray())
    return SerializationError("Unrecognized collection type class java.nio.ByteBuffer");
  if (v.IsObject()) return SerializationError(std::string(kStartOfStructure));
  if (v.GetStringLength() % 4 != 0) {
    return SerializationError(
        "Base64 encoded length is expected a multiple of 4 bytes but found: " +
        std::to_string(v.GetStringLength()));
  }
  if (!Base64Decode(Str(v))) {
    // DynamoDB's message, misspelling included.
    return SerializationError("Invalid last non-pad Base64 character dectected");
  }
  return Status::Ok();
}

// DynamoDB's deserializer accepts some strings as booleans.
std::optional<bool> BoolFromString(std::string_view s) {
  std::string u(s);
  std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return std::toupper(c); });
  if (u == "TRUE" || u == "1" || u == "YES") return true;
  if (u == "FALSE" || u == "0" || u == "NO") return false;
  return std::nullopt;
}

Status CheckBoolean(const Value& v) {
  if (v.IsNull() || v.IsBool()) return Status::Ok();
  if (v.IsNumber())
    return SerializationError(std::string(NumberToken(v)) + " cannot be converted to Boolean");
  if (v.IsString()) {
    if (BoolFromString(Str(v))) return Status::Ok();
    return SerializationError("Unexpected token received from parser");
  }
  if (v.IsArray())
    return SerializationError("Unrecognized collection type class java.lang.Boolean");
  return SerializationError(std::string(kStartOfStructure));
}

bool BoolValue(const Value& v) { return v.IsBool() ? v.GetBool() : *BoolFromString(Str(v)); }

Status CheckListContainer(const Value& v) {
  if (v.IsArray()) return Status::Ok();
  if (v.IsObject()) return SerializationError(std::string(kStartOfStructure));
  return SerializationError("Unexpected field type");
}

Status CheckShape(const Value& v, int level);

Status CheckMapShape(const Value& v, int level) {
  if (v.IsArray()) {
    return SerializationError(
        "Unrecognized collection type java.util.Map<java.lang.String, "
        "com.amazonaws.dynamodb.v20120810.AttributeValue>");
  }
  if (!v.IsObject()) return SerializationError("Unexpected field type");
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    FDYNO_RETURN_IF_ERROR(CheckShape(it->value, level));
  }
  return Status::Ok();
}

Status CheckShape(const Value& v, int level) {
  if (v.IsNull()) return Status::Ok();
  if (v.IsArray()) {
    return SerializationError(
        "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.AttributeValue");
  }
  if (!v.IsObject()) return SerializationError("Unexpected value type in payload");
  // Below the deepest level DynamoDB accepts, validation reports the nesting error; the
  // shape check stops descending so that hostile input cannot exhaust the stack.
  if (level > kMaxNestingLevel + 1) return Status::Ok();
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    const Value& m = it->value;
    switch (FieldOf(it->name)) {
      case Field::kS:
      case Field::kN:
        FDYNO_RETURN_IF_ERROR(CheckString(m));
        break;
      case Field::kB:
        FDYNO_RETURN_IF_ERROR(CheckBlob(m));
        break;
      case Field::kBool:
      case Field::kNull:
        FDYNO_RETURN_IF_ERROR(CheckBoolean(m));
        break;
      case Field::kSS:
      case Field::kNS:
        if (m.IsNull()) break;
        FDYNO_RETURN_IF_ERROR(CheckListContainer(m));
        for (const auto& e : m.GetArray()) FDYNO_RETURN_IF_ERROR(CheckString(e));
        break;
      case Field::kBS:
        if (m.IsNull()) break;
        FDYNO_RETURN_IF_ERROR(CheckListContainer(m));
        for (const auto& e : m.GetArray()) FDYNO_RETURN_IF_ERROR(CheckBlob(e));
        break;
      case Field::kL:
        if (m.IsNull()) break;
        FDYNO_RETURN_IF_ERROR(CheckListContainer(m));
        for (const auto& e : m.GetArray()) FDYNO_RETURN_IF_ERROR(CheckShape(e, level + 1));
        break;
      case Field::kM:
        if (m.IsNull()) break;
        FDYNO_RETURN_IF_ERROR(CheckMapShape(m, level + 1));
        break;
      case Field::kUnknown:
        break;
    }
  }
  return Status::Ok();
}

// ---- validation ----

constexpr const char* kInvalidPrefix = "One or more parameter values were invalid: ";

Error Invalid(std::string message) { return Error::Validation(std::move(message)); }

Result<Number> ParseNumber(const Value& v) {
  if (v.IsNull()) return Number::Parse("");
  return Number::Parse(Str(v));
}

// "[a, b, a]" as DynamoDB prints a collection in its messages.
std::string CollectionText(const Value& array) {
  std::string out = "[";
  bool first = true;
  for (const auto& e : array.GetArray()) {
    if (!first) out += ", ";
    first = false;
    if (e.IsString()) {
      out.append(e.GetString(), e.GetStringLength());
    } else {
      out += "null";
    }
  }
  out += "]";
  return out;
}

bool HasDuplicateStrings(const Value& array) {
  std::unordered_set<std::string_view> seen;
  seen.reserve(array.Size());
  for (const auto& e : array.GetArray()) {
    std::string_view s = e.IsString() ? Str(e) : std::string_view("\0null", 5);
    if (!seen.insert(s).second) return true;
  }
  return false;
}

Status ValidateInto(const Value& v, int level, AttributeValue* out_value);

Status CheckMapKeyName(const Value& name) { return CheckAttributeNameLength(Str(name)); }

Error NestingError() {
  return Invalid(
      "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels "
      "beyond supported limit");
}

// The value's type errors (none set, several set) are answered bare by every operation.
Error EmptyError() {
  return Invalid(
             "Supplied AttributeValue is empty, must contain exactly one of the supported "
             "datatypes")
      .WithCause(ErrorCause::kNeverEnveloped);
}

// Validates `v` and decodes it into *out_value in place (no moves of decoded subtrees).
Status ValidateInto(const Value& v, int level, AttributeValue* out_value) {
  if (level > kMaxNestingLevel) return NestingError();
  if (!v.IsObject()) return EmptyError();
  AttributeValue& out = *out_value;
  int types_set = 0;
  uint32_t seen_mask = 0;
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    const Value& m = it->value;
    const Field field = FieldOf(it->name);
    if (field == Field::kUnknown || m.IsNull()) continue;
    const uint32_t bit = 1u << static_cast<int>(field);
    if (!(seen_mask & bit)) {
      seen_mask |= bit;
      ++types_set;
    }
    switch (field) {
      case Field::kS:
        out.v = std::string(Str(m));
        break;
      case Field::kN: {
        FDYNO_ASSIGN_OR_RETURN(Number n, ParseNumber(m));
        out.v = std::move(n);
        break;
      }
      case Field::kB:
        out.v = Binary{*Base64Decode(Str(m))};
        break;
      case Field::kBool:
        out.v = BoolValue(m);
        break;
      case Field::kNull:
        if (!BoolValue(m)) {
          return Invalid(std::string(kInvalidPrefix) +
                         "Null attribute value types must have the value of true");
        }
        out.v = Null{};
        break;
      case Field::kSS: {
        if (m.Empty())
          return Invalid(std::string(kInvalidPrefix) + "An string set  may not be empty");
        if (HasDuplicateStrings(m)) {
          return Invalid(std::string(kInvalidPrefix) + "Input collection " + CollectionText(m) +
                         " contains duplicates.");
        }
        StringSet set;
        set.members.reserve(m.Size());
        for (const auto& e : m.GetArray()) {
          // A null member: DynamoDB's deserializer yields a null string, which its validation
          // reports like an empty attribute value.
          if (e.IsNull()) return EmptyError();
          set.members.emplace_back(Str(e));
        }
        out.v = std::move(set);
        break;
      }
      case Field::kNS: {
        if (m.Empty())
          return Invalid(std::string(kInvalidPrefix) + "An number set  may not be empty");
        NumberSet set;
        set.members.reserve(m.Size());
        for (const auto& e : m.GetArray()) {
          FDYNO_ASSIGN_OR_RETURN(Number n, ParseNumber(e));
          set.members.push_back(std::move(n));
        }
        // Duplicates are numeric: "1" and "1.0" are the same member.
        std::vector<const Number*> sorted;
        sorted.reserve(set.members.size());
        for (const auto& n : set.members) sorted.push_back(&n);
        std::sort(sorted.begin(), sorted.end(),
                  [](const Number* a, const Number* b) { return a->Compare(*b) < 0; });
        for (size_t i = 1; i < sorted.size(); ++i) {
          if (sorted[i - 1]->Compare(*sorted[i]) == 0) {
            return Invalid("Input collection contains duplicates");
          }
        }
        out.v = std::move(set);
        break;
      }
      case Field::kBS: {
        if (m.Empty()) {
          return Invalid(std::string(kInvalidPrefix) + "Binary sets should not be empty");
        }
        if (HasDuplicateStrings(m)) {
          return Invalid(std::string(kInvalidPrefix) + "Input collection " + CollectionText(m) +
                         "of type BS contains duplicates.");
        }
        BinarySet set;
        set.members.reserve(m.Size());
        for (const auto& e : m.GetArray()) {
          if (e.IsNull()) return EmptyError();
          set.members.push_back(*Base64Decode(Str(e)));
        }
        out.v = std::move(set);
        break;
      }
      case Field::kM: {
        Map& map = out.v.emplace<Map>();
        for (auto c = m.MemberBegin(); c != m.MemberEnd(); ++c) {
          FDYNO_RETURN_IF_ERROR(CheckMapKeyName(c->name));
          auto [slot, inserted] = map.try_emplace(std::string(Str(c->name)));
          if (!inserted) slot->second = AttributeValue{};  // a repeated name: the last wins
          FDYNO_RETURN_IF_ERROR(ValidateInto(c->value, level + 1, &slot->second));
        }
        break;
      }
      case Field::kL: {
        List& list = out.v.emplace<List>();
        list.resize(m.Size());
        for (rapidjson::SizeType i = 0; i < m.Size(); ++i) {
          FDYNO_RETURN_IF_ERROR(ValidateInto(m[i], level + 1, &list[i]));
        }
        break;
      }
      case Field::kUnknown:
        break;
    }
  }
  if (types_set == 0) return EmptyError();
  if (types_set > 1) {
    return Invalid(
               "Supplied AttributeValue has more than one datatypes set, must contain exactly one "
               "of the supported datatypes")
        .WithCause(ErrorCause::kNeverEnveloped);
  }
  return Status::Ok();
}

Result<AttributeValue> Validate(const Value& v, int level) {
  AttributeValue out;
  FDYNO_RETURN_IF_ERROR(ValidateInto(v, level, &out));
  return out;
}

Result<rapidjson::Document> ParseJson(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
  if (doc.HasParseError()) {
    return SerializationError(std::string("Malformed JSON: ") +
                              rapidjson::GetParseError_En(doc.GetParseError()));
  }
  return doc;
}

}  // namespace

Status CheckAttributeValueShape(const Value& value) { return CheckShape(value, 1); }

Status CheckItemShape(const Value& value) { return CheckMapShape(value, 1); }

Result<AttributeValue> DecodeAttributeValue(const Value& value, int level) {
  FDYNO_RETURN_IF_ERROR(CheckShape(value, level));
  return Validate(value, level);
}

Result<Item> DecodeItem(const Value& value) {
  FDYNO_RETURN_IF_ERROR(CheckItemShape(value));
  Item item;
  for (auto it = value.MemberBegin(); it != value.MemberEnd(); ++it) {
    FDYNO_RETURN_IF_ERROR(CheckAttributeName(Str(it->name)));
    auto [slot, inserted] = item.try_emplace(std::string(Str(it->name)));
    if (!inserted) slot->second = AttributeValue{};  // a repeated name: the last wins
    FDYNO_RETURN_IF_ERROR(ValidateInto(it->value, 1, &slot->second));
  }
  return item;
}

Result<AttributeValue> AttributeValueFromJson(std::string_view json) {
  FDYNO_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseJson(json));
  return DecodeAttributeValue(doc);
}

Result<Item> ItemFromJson(std::string_view json) {
  FDYNO_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseJson(json));
  return DecodeItem(doc);
}

std::string AttributeValueToJson(const AttributeValue& value) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  WriteAttributeValue(w, value);
  return std::string(buf.GetString(), buf.GetSize());
}

std::string ItemToJson(const Item& item) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  WriteItem(w, item);
  return std::string(buf.GetString(), buf.GetSize());
}

Status CheckAttributeNameLength(std::string_view name) {
  constexpr size_t kMaxAttributeNameBytes = 65'535;
  if (name.size() <= kMaxAttributeNameBytes) return Status::Ok();
  return Error::EnvelopedValidation("Attribute name is too large, must be less than 65536 bytes");
}

Status CheckAttributeName(std::string_view name) {
  if (name.empty()) return Invalid("Empty attribute name");
  return CheckAttributeNameLength(name);
}

}  // namespace fdyno::model
