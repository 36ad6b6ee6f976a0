#include "api/request_model.h"

#include <cctype>
#include <cmath>
#include <string>

#include "model/json.h"

namespace fdyno::api::request {

Result<const Value*> ReadMember(const Value& body, std::string_view name, JsonShape shape,
                                std::string_view type_name, ContentsCheck contents) {
  const Value* v = Member(body, name);
  if (v == nullptr) return v;
  FDYNO_RETURN_IF_ERROR(CheckShape(*v, shape, type_name));
  if (contents != nullptr) FDYNO_RETURN_IF_ERROR(contents(*v));
  return v;
}

Status StringElements(const Value& list) {
  for (const Value& v : list.GetArray()) FDYNO_RETURN_IF_ERROR(CheckShape(v, JsonShape::kString));
  return Status::Ok();
}

Status StringValues(const Value& map) {
  for (const auto& e : map.GetObject()) {
    FDYNO_RETURN_IF_ERROR(CheckShape(e.value, JsonShape::kString));
  }
  return Status::Ok();
}

Status AttributeValues(const Value& map) { return model::CheckItemShape(map); }

Status AttributeValueElements(const Value& list) {
  for (const Value& v : list.GetArray()) FDYNO_RETURN_IF_ERROR(model::CheckAttributeValueShape(v));
  return Status::Ok();
}

Status TimestampNumber(const Value& member) {
  if (!member.IsNumber()) return Error::Serialization("Unexpected token received from parser");
  return Status::Ok();
}

namespace {

// The attribute values of a structure's member `name` when it is a list of them.
Status AttributeValueList(const Value& structure, std::string_view name) {
  FDYNO_ASSIGN_OR_RETURN(const Value* list, GetList(structure, name));
  return list == nullptr ? Status::Ok() : AttributeValueElements(*list);
}

// The attribute value of a structure's member "Value".
Status OptionalValue(const Value& structure) {
  if (const Value* v = Member(structure, "Value")) {
    FDYNO_RETURN_IF_ERROR(model::CheckAttributeValueShape(*v));
  }
  return Status::Ok();
}

}  // namespace

Status ConditionEntries(const Value& map) {
  for (const auto& e : map.GetObject()) {
    if (e.value.IsNull()) continue;
    FDYNO_RETURN_IF_ERROR(CheckShape(e.value, JsonShape::kValueStruct, "Condition"));
    FDYNO_RETURN_IF_ERROR(AttributeValueList(e.value, "AttributeValueList"));
    FDYNO_RETURN_IF_ERROR(GetString(e.value, "ComparisonOperator"));
  }
  return Status::Ok();
}

Status ExpectedEntries(const Value& map) {
  for (const auto& e : map.GetObject()) {
    if (e.value.IsNull()) continue;
    FDYNO_RETURN_IF_ERROR(CheckShape(e.value, JsonShape::kValueStruct, "ExpectedAttributeValue"));
    FDYNO_RETURN_IF_ERROR(OptionalValue(e.value));
    FDYNO_RETURN_IF_ERROR(GetBool(e.value, "Exists"));
    FDYNO_RETURN_IF_ERROR(GetString(e.value, "ComparisonOperator"));
    FDYNO_RETURN_IF_ERROR(AttributeValueList(e.value, "AttributeValueList"));
  }
  return Status::Ok();
}

Status AttributeUpdateEntries(const Value& map) {
  for (const auto& e : map.GetObject()) {
    if (e.value.IsNull()) continue;
    FDYNO_RETURN_IF_ERROR(CheckShape(e.value, JsonShape::kValueStruct, "AttributeValueUpdate"));
    FDYNO_RETURN_IF_ERROR(OptionalValue(e.value));
    FDYNO_RETURN_IF_ERROR(GetString(e.value, "Action"));
  }
  return Status::Ok();
}

namespace {

// The path of member `field` of the entry `name` of the map at `path`.
std::string EntryPath(std::string_view path, const Value& name, std::string_view field) {
  std::string p(path);
  p += '.';
  p += AsStringView(name);
  p += ".member.";
  p += static_cast<char>(std::tolower(static_cast<unsigned char>(field[0])));
  p += field.substr(1);
  return p;
}

}  // namespace

void EntryEnums(ConstraintErrors& errors, std::string_view path, const Value* map,
                std::string_view field, std::span<const std::string_view> allowed, bool required) {
  if (map == nullptr) return;
  for (const auto& e : map->GetObject()) {
    const Value* v = e.value.IsObject() ? Member(e.value, field) : nullptr;
    if (v == nullptr && !required) continue;
    std::string p = EntryPath(path, e.name, field);
    if (v == nullptr) {
      errors.NotNull(p, false);
    } else {
      errors.Enum(p, AsStringView(*v), allowed);
    }
  }
}

void ConditionOperators(ConstraintErrors& errors, std::string_view path, const Value* map) {
  EntryEnums(errors, path, map, "ComparisonOperator", kComparisonOperator, /*required=*/true);
}

void OptionalOperators(ConstraintErrors& errors, std::string_view path, const Value* map) {
  EntryEnums(errors, path, map, "ComparisonOperator", kComparisonOperator, /*required=*/false);
}

void CheckMember(ConstraintErrors& errors, const Value* member, const Constraint& c,
                 std::string_view prefix) {
  if (!prefix.empty()) {
    std::string path = std::string(prefix) + "." + std::string(c.path);
    Constraint full = c;
    full.path = path;
    CheckMember(errors, member, full);
    return;
  }
  switch (c.rule) {
    case Rule::kNotNull:
      errors.NotNull(c.path, member != nullptr);
      return;
    case Rule::kDataPlaneTableName:
      CheckDataPlaneTableName(errors, member, c.path);
      return;
    case Rule::kCustom:
      c.custom(errors, c.path, member);
      return;
    default:
      break;
  }
  if (member == nullptr) return;
  switch (c.rule) {
    case Rule::kMinLength:
      errors.MinLength(c.path, AsStringView(*member), static_cast<size_t>(c.bound));
      return;
    case Rule::kMaxLength:
      errors.MaxLength(c.path, AsStringView(*member), static_cast<size_t>(c.bound));
      return;
    case Rule::kNamePattern: {
      std::string_view name = AsStringView(*member);
      errors.Pattern(c.path, name, IsValidTableNameChars(name), "[a-zA-Z0-9_.-]+");
      return;
    }
    case Rule::kEnum:
      errors.Enum(c.path, AsStringView(*member), c.values);
      return;
    case Rule::kMinValue:
      errors.MinValue(c.path, *AsInt64(*member), c.bound);
      return;
    case Rule::kMaxValue:
      errors.MaxValue(c.path, *AsInt64(*member), c.bound);
      return;
    case Rule::kNotEmptyList:
      if (member->GetArray().Empty()) {
        errors.AddWithoutValue(c.path, "Member must have length greater than or equal to 1");
      }
      return;
    case Rule::kNotEmptyListQuoted:
      if (member->GetArray().Empty()) {
        errors.Add(c.path, "[]", "Member must have length greater than or equal to 1");
      }
      return;
    case Rule::kNotNull:
    case Rule::kDataPlaneTableName:
    case Rule::kCustom:
      return;
  }
}

Error UnknownMember(std::string_view name, std::string_view where) {
  return Error::Validation("The request contains the member '" + std::string(name) + "' in " +
                           std::string(where) +
                           ", which this request contract does not define; unknown members are "
                           "rejected, not ignored");
}

std::optional<std::string_view> Text(const Value* member) {
  if (member == nullptr) return std::nullopt;
  return AsStringView(*member);
}

std::optional<std::string> OwnedText(const Value* member) {
  if (member == nullptr) return std::nullopt;
  return std::string(AsStringView(*member));
}

std::optional<int64_t> Number(const Value* member) {
  if (member == nullptr) return std::nullopt;
  return AsInt64(*member);
}

std::optional<int64_t> Millis(const Value* member) {
  if (member == nullptr) return std::nullopt;
  return static_cast<int64_t>(std::llround(member->GetDouble() * 1000.0));
}

std::optional<bool> Flag(const Value* member) {
  if (member == nullptr) return std::nullopt;
  return BoolValue(*member);
}

}  // namespace fdyno::api::request
