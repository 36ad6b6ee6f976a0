#include "api/json_util.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include "base/utf8.h"
#include "model/json.h"

namespace fdyno::api {
namespace {

// DynamoDB's model classes live in this Java package; its deserializer names them.
constexpr std::string_view kModelPackage = "com.amazonaws.dynamodb.v20120810.";
// DynamoDB lists at most this many constraint violations in one message.
constexpr size_t kMaxListedErrors = 10;

Error SerializationError(std::string message) { return Error::Serialization(std::move(message)); }

bool IsIntegral(const rapidjson::Value& v) {
  if (v.IsInt64() || v.IsUint64()) return true;
  double d = v.GetDouble();
  return std::floor(d) == d;
}

std::string NumberToken(const rapidjson::Value& v) {
  return IsIntegral(v) ? "NUMBER_VALUE" : "DECIMAL_VALUE";
}

std::string BoolToken(const rapidjson::Value& v) {
  return v.GetBool() ? "TRUE_VALUE" : "FALSE_VALUE";
}

using model::kStartOfStructure;

Status CheckScalar(const rapidjson::Value& value, std::string_view java_type) {
  if (value.IsArray()) {
    return SerializationError("Unrecognized collection type class java.lang." +
                              std::string(java_type));
  }
  if (value.IsObject()) return SerializationError(std::string(kStartOfStructure));
  return Status::Ok();
}

}  // namespace

Status CheckShape(const rapidjson::Value& value, JsonShape shape, std::string_view type_name) {
  if (value.IsNull()) return Status::Ok();
  switch (shape) {
    case JsonShape::kString:
      if (value.IsString()) return Status::Ok();
      if (value.IsBool())
        return SerializationError(BoolToken(value) + " cannot be converted to String");
      if (value.IsNumber()) {
        return SerializationError(NumberToken(value) + " cannot be converted to String");
      }
      return CheckScalar(value, "String");
    case JsonShape::kBoolean:
      if (value.IsBool()) return Status::Ok();
      if (value.IsNumber()) {
        return SerializationError(NumberToken(value) + " cannot be converted to Boolean");
      }
      if (value.IsString()) {
        std::string upper;
        for (char c : AsStringView(value)) {
          upper.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
        }
        if (upper == "TRUE" || upper == "FALSE" || upper == "1" || upper == "0" || upper == "YES" ||
            upper == "NO") {
          return Status::Ok();
        }
        return SerializationError("Unexpected token received from parser");
      }
      return CheckScalar(value, "Boolean");
    case JsonShape::kInteger:
    case JsonShape::kLong:
    case JsonShape::kDouble: {
      std::string java = shape == JsonShape::kInteger ? "Integer"
                         : shape == JsonShape::kLong  ? "Long"
                                                      : "Double";
      if (value.IsNumber()) {
        if (shape == JsonShape::kDouble) return Status::Ok();
        double d = value.GetDouble();
        double limit = shape == JsonShape::kInteger ? 2147483648.0 : 9223372036854775808.0;
        if (value.IsInt64() && shape == JsonShape::kLong) return Status::Ok();
        if (d >= limit || d < -limit) {
          char text[40];
          std::snprintf(text, sizeof(text), "%.17g", d);
          return SerializationError("Numeric value (" + std::string(text) + ") out of range of " +
                                    (shape == JsonShape::kInteger ? "int" : "long"));
        }
        return Status::Ok();
      }
      if (value.IsBool())
        return SerializationError(BoolToken(value) + " cannot be converted to " + java);
      if (value.IsString())
        return SerializationError("STRING_VALUE cannot be converted to " + java);
      return CheckScalar(value, java);
    }
    case JsonShape::kBlob:
      if (value.IsString()) return Status::Ok();
      if (value.IsBool() || value.IsNumber()) {
        return SerializationError("only base-64-encoded strings are convertible to bytes");
      }
      if (value.IsArray()) {
        return SerializationError("Unrecognized collection type class java.nio.ByteBuffer");
      }
      return SerializationError(std::string(kStartOfStructure));
    case JsonShape::kList:
      if (value.IsArray()) return Status::Ok();
      if (value.IsObject()) return SerializationError(std::string(kStartOfStructure));
      return SerializationError("Unexpected field type");
    case JsonShape::kMap:
      if (value.IsObject()) return Status::Ok();
      if (value.IsArray()) {
        return SerializationError("Unrecognized collection type java.util.Map<java.lang.String, " +
                                  std::string(kModelPackage) + std::string(type_name) + ">");
      }
      return SerializationError("Unexpected field type");
    case JsonShape::kStruct:
    case JsonShape::kValueStruct:
      if (value.IsObject()) return Status::Ok();
      if (value.IsArray()) {
        return SerializationError("Unrecognized collection type class " +
                                  std::string(kModelPackage) + std::string(type_name));
      }
      return SerializationError(shape == JsonShape::kStruct ? "Unexpected field type"
                                                            : "Unexpected value type in payload");
  }
  return Status::Ok();
}

const rapidjson::Value* Member(const rapidjson::Value& obj, std::string_view name) {
  auto it = obj.FindMember(rapidjson::Value(
      rapidjson::StringRef(name.data(), static_cast<rapidjson::SizeType>(name.size()))));
  if (it == obj.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

std::string_view AsStringView(const rapidjson::Value& value) {
  return {value.GetString(), value.GetStringLength()};
}

std::optional<int64_t> AsInt64(const rapidjson::Value& value) {
  if (!value.IsNumber()) return std::nullopt;
  if (value.IsInt64()) return value.GetInt64();
  double d = std::trunc(value.GetDouble());
  if (d >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (d < -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

Result<std::optional<std::string_view>> GetString(const rapidjson::Value& obj,
                                                  std::string_view name) {
  const rapidjson::Value* v = Member(obj, name);
  if (v == nullptr) return std::optional<std::string_view>();
  FDYNO_RETURN_IF_ERROR(CheckShape(*v, JsonShape::kString));
  return std::optional<std::string_view>(AsStringView(*v));
}

Result<std::optional<bool>> GetBool(const rapidjson::Value& obj, std::string_view name) {
  const rapidjson::Value* v = Member(obj, name);
  if (v == nullptr) return std::optional<bool>();
  FDYNO_RETURN_IF_ERROR(CheckShape(*v, JsonShape::kBoolean));
  return std::optional<bool>(BoolValue(*v));
}

bool BoolValue(const rapidjson::Value& value) {
  if (value.IsBool()) return value.GetBool();
  // A string the deserializer coerces (CheckShape accepted it).
  char c = static_cast<char>(std::toupper(static_cast<unsigned char>(AsStringView(value)[0])));
  return c == 'T' || c == '1' || c == 'Y';
}

Result<std::optional<int64_t>> GetLong(const rapidjson::Value& obj, std::string_view name) {
  const rapidjson::Value* v = Member(obj, name);
  if (v == nullptr) return std::optional<int64_t>();
  FDYNO_RETURN_IF_ERROR(CheckShape(*v, JsonShape::kLong));
  return AsInt64(*v);
}

Result<std::optional<int64_t>> GetInteger(const rapidjson::Value& obj, std::string_view name) {
  const rapidjson::Value* v = Member(obj, name);
  if (v == nullptr) return std::optional<int64_t>();
  FDYNO_RETURN_IF_ERROR(CheckShape(*v, JsonShape::kInteger));
  return AsInt64(*v);
}

Result<std::optional<std::string>> GetOwnedString(const rapidjson::Value& obj,
                                                  std::string_view name) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> v, GetString(obj, name));
  if (!v) return std::optional<std::string>();
  return std::optional<std::string>(std::string(*v));
}

Result<std::optional<std::vector<const rapidjson::Value*>>> GetStructList(
    const rapidjson::Value& obj, std::string_view name, std::string_view type_name) {
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* list, GetList(obj, name));
  if (list == nullptr) return std::optional<std::vector<const rapidjson::Value*>>();
  std::vector<const rapidjson::Value*> out;
  for (const rapidjson::Value& v : list->GetArray()) {
    FDYNO_RETURN_IF_ERROR(CheckShape(v, JsonShape::kValueStruct, type_name));
    out.push_back(&v);
  }
  return std::optional<std::vector<const rapidjson::Value*>>(std::move(out));
}

Result<const rapidjson::Value*> GetList(const rapidjson::Value& obj, std::string_view name) {
  const rapidjson::Value* v = Member(obj, name);
  if (v == nullptr) return v;
  FDYNO_RETURN_IF_ERROR(CheckShape(*v, JsonShape::kList));
  return v;
}

Result<const rapidjson::Value*> GetStruct(const rapidjson::Value& obj, std::string_view name,
                                          std::string_view type_name) {
  const rapidjson::Value* v = Member(obj, name);
  if (v == nullptr) return v;
  FDYNO_RETURN_IF_ERROR(CheckShape(*v, JsonShape::kStruct, type_name));
  return v;
}

Result<const rapidjson::Value*> GetMap(const rapidjson::Value& obj, std::string_view name,
                                       std::string_view value_type_name) {
  const rapidjson::Value* v = Member(obj, name);
  if (v == nullptr) return v;
  FDYNO_RETURN_IF_ERROR(CheckShape(*v, JsonShape::kMap, value_type_name));
  return v;
}

void ConstraintErrors::Add(std::string_view path, std::optional<std::string_view> value,
                           std::string_view constraint) {
  ++count_;
  if (errors_.size() >= kMaxListedErrors) return;
  std::string e = "Value ";
  if (value) {
    e += "'";
    e += *value;
    e += "'";
  } else {
    e += "null";
  }
  e += " at '";
  e += path;
  e += "' failed to satisfy constraint: ";
  e += constraint;
  errors_.push_back(std::move(e));
}

void ConstraintErrors::AddWithoutValue(std::string_view path, std::string_view constraint) {
  ++count_;
  if (errors_.size() >= kMaxListedErrors) return;
  errors_.push_back("Value at '" + std::string(path) +
                    "' failed to satisfy constraint: " + std::string(constraint));
}

void ConstraintErrors::NotNull(std::string_view path, bool present) {
  if (!present) Add(path, std::nullopt, "Member must not be null");
}

void ConstraintErrors::MinLength(std::string_view path, std::string_view value, size_t min) {
  if (Utf16Length(value) < min) {
    Add(path, value, "Member must have length greater than or equal to " + std::to_string(min));
  }
}

void ConstraintErrors::MaxLength(std::string_view path, std::string_view value, size_t max) {
  if (Utf16Length(value) > max) {
    Add(path, value, "Member must have length less than or equal to " + std::to_string(max));
  }
}

void ConstraintErrors::Pattern(std::string_view path, std::string_view value, bool matches,
                               std::string_view pattern) {
  if (!matches) {
    Add(path, value, "Member must satisfy regular expression pattern: " + std::string(pattern));
  }
}

void ConstraintErrors::Enum(std::string_view path, std::string_view value,
                            std::initializer_list<std::string_view> allowed) {
  Enum(path, value, std::span<const std::string_view>(allowed.begin(), allowed.size()));
}

void ConstraintErrors::Enum(std::string_view path, std::string_view value,
                            std::span<const std::string_view> allowed) {
  std::string set;
  for (std::string_view a : allowed) {
    if (a == value) return;
    if (!set.empty()) set += ", ";
    set += a;
  }
  Add(path, value, "Member must satisfy enum value set: [" + set + "]");
}

void ConstraintErrors::MinValue(std::string_view path, int64_t value, int64_t min) {
  if (value < min) {
    Add(path, std::to_string(value),
        "Member must have value greater than or equal to " + std::to_string(min));
  }
}

void ConstraintErrors::MaxValue(std::string_view path, int64_t value, int64_t max) {
  if (value > max) {
    Add(path, std::to_string(value),
        "Member must have value less than or equal to " + std::to_string(max));
  }
}

Error ConstraintErrors::ToError() const {
  std::string msg = std::to_string(count_) +
                    (count_ == 1 ? " validation error" : " validation errors") + " detected: ";
  for (size_t i = 0; i < errors_.size(); ++i) {
    if (i > 0) msg += "; ";
    msg += errors_[i];
  }
  return Error::Validation(std::move(msg)).WithCause(ErrorCause::kInEnvelope);
}

Status ConstraintErrors::ToStatus() const {
  if (errors_.empty()) return Status::Ok();
  return ToError();
}

bool IsValidTableNameChars(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) {
      return false;
    }
  }
  return true;
}

std::string MemberPath(std::string_view list_path, size_t index) {
  return std::string(list_path) + "." + std::to_string(index + 1) + ".member";
}

Status CheckNameLengthByHand(std::string_view what, std::string_view name) {
  const size_t length = Utf16Length(name);
  if (length >= 3 && length <= 255) return Status::Ok();
  return Error::Validation(std::string(what) +
                           " must be at least 3 characters long and at most 255 characters long");
}

Error MissingParameter(std::string_view name) {
  return Error::Validation("The parameter '" + std::string(name) +
                           "' is required but was not present in the request");
}

namespace {

// A table name's length (in characters, as DynamoDB counts them) and then its pattern: the first
// constraint it breaks.
void CheckTableNameConstraints(ConstraintErrors& errors, std::string_view path,
                               std::string_view name) {
  errors.MinLength(path, name, 3);
  errors.MaxLength(path, name, 255);
  errors.Pattern(path, name, IsValidTableNameChars(name), "[a-zA-Z0-9_.-]+");
}

}  // namespace

Status RequireObjectBody(const rapidjson::Value& body) {
  if (body.IsObject()) return Status::Ok();
  return Error::Serialization(std::string(kStartOfStructure));
}

Status ValidateControlPlaneTableName(std::optional<std::string_view> name) {
  if (!name) return MissingParameter("TableName");
  ConstraintErrors errors;
  CheckTableNameConstraints(errors, "tableName", *name);
  return errors.ToStatus();
}

Result<std::string_view> ReadControlPlaneTableName(const rapidjson::Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> name, GetString(body, "TableName"));
  FDYNO_RETURN_IF_ERROR(ValidateControlPlaneTableName(name));
  return *name;
}

void CheckDataPlaneTableName(ConstraintErrors& errors, const rapidjson::Value* value,
                             std::string_view path) {
  if (value == nullptr || !value->IsString()) {
    errors.NotNull(path, false);
    return;
  }
  std::string_view name = AsStringView(*value);
  if (name.empty()) {
    errors.MinLength(path, name, 1);
  } else {
    CheckTableNameConstraints(errors, path, name);
  }
}

Result<model::Map> DecodeExpressionAttributeValues(const rapidjson::Value& values) {
  model::Map out;
  for (const auto& e : values.GetObject()) {
    std::string name(e.name.GetString(), e.name.GetStringLength());
    auto value = model::DecodeAttributeValue(e.value);
    if (!value.ok()) {
      Error err = std::move(value).error();
      if (err.type == ErrorType::kValidation) {
        err.message =
            "ExpressionAttributeValues contains invalid value: " + err.message + " for key " + name;
      }
      return err;
    }
    out.emplace(std::move(name), std::move(value).value());
  }
  return out;
}

Result<std::map<std::string, std::string>> DecodeExpressionAttributeNames(
    const rapidjson::Value& names) {
  if (names.ObjectEmpty()) return Error::Validation("ExpressionAttributeNames must not be empty");
  std::map<std::string, std::string> out;
  for (const auto& e : names.GetObject()) {
    std::string key(e.name.GetString(), e.name.GetStringLength());
    std::string_view name = AsStringView(e.value);
    if (name.empty()) {
      return Error::Validation(
          "ExpressionAttributeNames contains invalid value: Empty attribute name for key " + key);
    }
    FDYNO_RETURN_IF_ERROR(model::CheckAttributeNameLength(name));
    out.emplace(std::move(key), std::string(name));
  }
  return out;
}

Status CheckAttributeNameKeys(const rapidjson::Value& map) {
  for (const auto& e : map.GetObject()) {
    FDYNO_RETURN_IF_ERROR(model::CheckAttributeName(AsStringView(e.name)));
  }
  return Status::Ok();
}

Status CheckAttributeNameList(const rapidjson::Value& list) {
  for (const auto& v : list.GetArray()) {
    FDYNO_RETURN_IF_ERROR(model::CheckAttributeName(AsStringView(v)));
  }
  return Status::Ok();
}

}  // namespace fdyno::api
