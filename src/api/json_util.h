// Request-field helpers shared by every operation handler: typed access to members of the
// JSON request body with DynamoDB's SerializationException wording, and the collector of
// DynamoDB's constraint violations ("N validation errors detected: Value 'x' at 'path' failed
// to satisfy constraint: ...").
//
// DynamoDB checks a request in phases, and handlers follow the same order:
//   1. deserialization: a member of the wrong JSON type is a SerializationException
//      (first one found wins); JSON null counts as absent;
//   2. constraints from the API model (required members, lengths, enums, ranges, patterns),
//      all collected and reported together as one ValidationException (at most 10 listed);
//   3. semantic checks, one message at a time.
// Pure functions over rapidjson values; thread-safe.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/attribute_value.h"

namespace fdyno::api {

// The shapes a member can have in DynamoDB's API model, for type checking.
enum class JsonShape {
  kString,
  kBoolean,
  kInteger,  // 32-bit
  kLong,     // 64-bit
  kDouble,
  kBlob,  // base64 string
  kList,
  kMap,          // a map member (object whose values are one shape)
  kStruct,       // a structure member of a structure ("FieldStruct")
  kValueStruct,  // a structure inside a list or map ("ValueStruct")
};

// SerializationException when `value` (non-null) does not have `shape`. `type_name` names
// the Java class DynamoDB mentions for structures and maps ("KeySchemaElement",
// "AttributeValue"); it is ignored for scalars.
Status CheckShape(const rapidjson::Value& value, JsonShape shape, std::string_view type_name = {});

// The member `name` of object `obj`, or null when absent or JSON null. REQUIRES: obj is an
// object.
const rapidjson::Value* Member(const rapidjson::Value& obj, std::string_view name);

// Typed getters: nullopt / nullptr when the member is absent or null, a SerializationException
// when it has the wrong type. Integers given as JSON decimals are truncated, as DynamoDB does.
Result<std::optional<std::string_view>> GetString(const rapidjson::Value& obj,
                                                  std::string_view name);
Result<std::optional<bool>> GetBool(const rapidjson::Value& obj, std::string_view name);
Result<std::optional<int64_t>> GetLong(const rapidjson::Value& obj, std::string_view name);
Result<std::optional<int64_t>> GetInteger(const rapidjson::Value& obj, std::string_view name);
// An array member; every element is then checked by the caller (CheckShape per element).
Result<const rapidjson::Value*> GetList(const rapidjson::Value& obj, std::string_view name);
// A string member as an owned string (request fields kept past the parse).
Result<std::optional<std::string>> GetOwnedString(const rapidjson::Value& obj,
                                                  std::string_view name);
// A list member whose elements must each be a structure of `type_name`; the elements.
Result<std::optional<std::vector<const rapidjson::Value*>>> GetStructList(
    const rapidjson::Value& obj, std::string_view name, std::string_view type_name);
// A structure member (JSON object). `type_name` as for CheckShape.
Result<const rapidjson::Value*> GetStruct(const rapidjson::Value& obj, std::string_view name,
                                          std::string_view type_name);
// A map member (JSON object of values of one shape). `value_type_name` as for CheckShape.
Result<const rapidjson::Value*> GetMap(const rapidjson::Value& obj, std::string_view name,
                                       std::string_view value_type_name);

// The value's integer when it is a JSON number (truncated toward zero), else nullopt.
std::optional<int64_t> AsInt64(const rapidjson::Value& value);
std::string_view AsStringView(const rapidjson::Value& value);  // REQUIRES: IsString()
// A Boolean member's value, with the deserializer's coercions of the strings it takes
// ("true", "yes", "1", ...). REQUIRES: CheckShape(value, JsonShape::kBoolean) passed.
bool BoolValue(const rapidjson::Value& value);

// Collects constraint violations, then renders them as DynamoDB does. The path is the member
// path with the first letter of each member lower-cased and list members as
// "<list>.<1-based index>.member" ("keySchema.1.member.keyType").
class ConstraintErrors {
 public:
  // Adds "Value <rendered> at '<path>' failed to satisfy constraint: <constraint>". A
  // nullopt value renders as "null"; otherwise as '<value>'.
  void Add(std::string_view path, std::optional<std::string_view> value,
           std::string_view constraint);
  // Adds "Value at '<path>' failed ..." (DynamoDB omits some values, e.g. lists of keys).
  void AddWithoutValue(std::string_view path, std::string_view constraint);

  // Common constraints. Each adds an error only when violated. Lengths count characters as
  // DynamoDB does (UTF-16 code units, base/utf8.h), not bytes.
  void NotNull(std::string_view path, bool present);
  void MinLength(std::string_view path, std::string_view value, size_t min);
  void MaxLength(std::string_view path, std::string_view value, size_t max);
  void Pattern(std::string_view path, std::string_view value, bool matches,
               std::string_view pattern);
  void Enum(std::string_view path, std::string_view value,
            std::initializer_list<std::string_view> allowed);
  void Enum(std::string_view path, std::string_view value,
            std::span<const std::string_view> allowed);
  void MinValue(std::string_view path, int64_t value, int64_t min);
  void MaxValue(std::string_view path, int64_t value, int64_t max);

  bool empty() const { return errors_.empty(); }
  size_t size() const { return errors_.size(); }
  // "1 validation error detected: a" / "3 validation errors detected: a; b; c". DynamoDB
  // lists at most 10. REQUIRES: !empty().
  Error ToError() const;
  // ToError() when not empty, else OK.
  Status ToStatus() const;

 private:
  std::vector<std::string> errors_;
  size_t count_ = 0;
};

// The constraint path of element `index` (0-based) of the list at `list_path`:
// "<list_path>.<index + 1>.member".
std::string MemberPath(std::string_view list_path, size_t index);

// True when `name` matches [a-zA-Z0-9_.-]+ (table and index names).
bool IsValidTableNameChars(std::string_view name);

// Writes `s` as a JSON string.
inline void Str(rapidjson::Writer<rapidjson::StringBuffer>& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// A request body (or a structure in it) that must be a JSON object: SerializationException
// "Start of structure or map found where not expected" when it is not.
Status RequireObjectBody(const rapidjson::Value& body);

// Control-plane TableName (CreateTable, DescribeTable, DeleteTable, UpdateTable, ...):
// "The parameter 'TableName' is required but was not present in the request" when absent;
// then one constraint error on 'tableName' (length 3..255 first, then the pattern). Checked
// before every other constraint, as DynamoDB does; the member's JSON type is checked in the
// deserialization phase, before this.
Status ValidateControlPlaneTableName(std::optional<std::string_view> name);
// GetString(body, "TableName") then ValidateControlPlaneTableName: for operations whose only
// member is the table name.
Result<std::string_view> ReadControlPlaneTableName(const rapidjson::Value& body);

// Data-plane TableName constraints (PutItem, GetItem, ...) added to `errors` at 'tableName':
// null, length >= 1, length <= 255, length >= 3, then the pattern (one error at most).
void CheckDataPlaneTableName(ConstraintErrors& errors, const rapidjson::Value* value,
                             std::string_view path = "tableName");

// The length check some operations make by hand instead of the model's constraints (the legacy
// global table operations, RestoreTableFromBackup's target, Contributor Insights' index):
// "<what> must be at least 3 characters long and at most 255 characters long" (`what`:
// "TableName", "IndexName"). Lengths count UTF-16 code units.
Status CheckNameLengthByHand(std::string_view what, std::string_view name);

// "The parameter '<name>' is required but was not present in the request".
Error MissingParameter(std::string_view name);

// Decodes an ExpressionAttributeValues map. A value DynamoDB rejects is a ValidationException
// "ExpressionAttributeValues contains invalid value: <reason> for key <name>".
// REQUIRES: values is a JSON object (its shape already checked).
Result<model::Map> DecodeExpressionAttributeValues(const rapidjson::Value& values);

// Decodes ExpressionAttributeNames into "#k" -> name. DynamoDB's ValidationExceptions: an
// empty map ("ExpressionAttributeNames must not be empty"), an empty name
// ("ExpressionAttributeNames contains invalid value: Empty attribute name for key #k"), a name
// over 65,535 bytes (model::CheckAttributeNameLength's message).
// REQUIRES: names is a JSON object of strings (its shape already checked).
Result<std::map<std::string, std::string>> DecodeExpressionAttributeNames(
    const rapidjson::Value& names);

// The attribute names a request carries outside items and keys, checked by
// model::CheckAttributeName (not empty, at most 65,535 bytes): the keys of a legacy map
// (AttributeUpdates, Expected, KeyConditions, QueryFilter, ScanFilter) and the members of an
// AttributesToGet list.
// REQUIRES: map is a JSON object; list is a JSON array of strings.
Status CheckAttributeNameKeys(const rapidjson::Value& map);
Status CheckAttributeNameList(const rapidjson::Value& list);

}  // namespace fdyno::api
