// Declarative request members: an operation lists its members once, as two tables, and two
// generic passes run DynamoDB's first two validation phases over them (json_util.h):
//   * the read table: each member's name, JSON shape and the check of its contents, in the
//     order DynamoDB's deserializer meets them (the first wrong one is the
//     SerializationException);
//   * the check table: the API model's constraints, one row a check, in the order DynamoDB
//     lists their violations in its "N validation errors detected" envelope.
// A decoder keeps only what is special about its operation: semantic rules and building its
// request. Members are kept as JSON values (pointers into the request body, null when absent
// or JSON null) in the operation's own members struct `M`, named in the rows by
// pointer-to-member. Pure; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

#include "api/json_util.h"
#include "base/result.h"

namespace fdyno::api::request {

using Value = rapidjson::Value;

// ---- the read table ----

// Checks what a member holds once its own shape is right (the attribute values of an item,
// the strings of a list, the structures of a map), with DynamoDB's SerializationExceptions.
using ContentsCheck = Status (*)(const Value& member);

template <class M>
struct Read {
  std::string_view name;  // as the API spells it: "ReturnValues"
  const Value* M::*slot;
  JsonShape shape;
  std::string_view type_name = {};  // the class DynamoDB names for a structure or map value
  ContentsCheck contents = nullptr;
  // A structure's members, read from it right after it (Nested()); none: 0.
  const Read* nested = nullptr;
  size_t nested_size = 0;
};

// A structure member whose own members `rows` names, in its read table.
template <class M, size_t N>
constexpr Read<M> Nested(std::string_view name, const Value* M::*slot, std::string_view type_name,
                         const Read<M> (&rows)[N]) {
  return {name, slot, JsonShape::kStruct, type_name, nullptr, rows, N};
}

// Phase 1 for one member: the member `name` of `body` (null when absent or JSON null), its
// shape checked, then its contents.
Result<const Value*> ReadMember(const Value& body, std::string_view name, JsonShape shape,
                                std::string_view type_name, ContentsCheck contents);

// Phase 1 for the members of a structure: every row in order.
template <class M>
Status ReadRows(const Value& structure, std::type_identity_t<std::span<const Read<M>>> rows,
                M& members) {
  for (const Read<M>& row : rows) {
    FDYNO_ASSIGN_OR_RETURN(members.*row.slot,
                           ReadMember(structure, row.name, row.shape, row.type_name, row.contents));
    if (row.nested != nullptr && members.*row.slot != nullptr) {
      FDYNO_RETURN_IF_ERROR(ReadRows<M>(
          *(members.*row.slot), std::span<const Read<M>>(row.nested, row.nested_size), members));
    }
  }
  return Status::Ok();
}

// Phase 1 for a request: `body` must be an object; then every row in order.
template <class M>
Status ReadMembers(const Value& body, std::type_identity_t<std::span<const Read<M>>> rows,
                   M& members) {
  FDYNO_RETURN_IF_ERROR(RequireObjectBody(body));
  return ReadRows<M>(body, rows, members);
}

// Contents checks shared by many operations.
Status StringElements(const Value& list);          // a list of strings
Status StringValues(const Value& map);             // a map of strings (ExpressionAttributeNames)
Status AttributeValues(const Value& map);          // a map of attribute values (an item, a key)
Status AttributeValueElements(const Value& list);  // a list of attribute values
Status ConditionEntries(const Value& map);        // a map of Condition (KeyConditions, QueryFilter)
Status ExpectedEntries(const Value& map);         // a map of ExpectedAttributeValue
Status AttributeUpdateEntries(const Value& map);  // a map of AttributeValueUpdate
Status TimestampNumber(const Value& member);      // a timestamp: a JSON number of seconds

// ---- the check table ----

enum class Rule : uint8_t {
  kNotNull,             // present
  kMinLength,           // a string of at least `bound` characters (UTF-16 code units)
  kMaxLength,           // a string of at most `bound` characters
  kNamePattern,         // a table or index name: [a-zA-Z0-9_.-]+
  kEnum,                // a string, one of `values`
  kMinValue,            // a number of at least `bound`
  kMaxValue,            // a number of at most `bound`
  kNotEmptyList,        // a list of at least one element (reported without its value)
  kNotEmptyListQuoted,  // the same, reported with the value '[]'
  kDataPlaneTableName,  // CheckDataPlaneTableName's checks, in its order
  kCustom,              // `custom`, for members whose check looks inside them
};

// A check that looks inside a member (the entries of a map, ...); `member` may be null.
using CustomCheck = void (*)(ConstraintErrors& errors, std::string_view path, const Value* member);

struct Constraint {
  std::string_view path;  // as DynamoDB prints it: "returnValues"
  Rule rule = Rule::kNotNull;
  int64_t bound = 0;
  std::span<const std::string_view> values = {};
  CustomCheck custom = nullptr;
};

template <class M>
struct Check {
  const Value* M::*slot;
  Constraint constraint;
  // The structure the member is in, when the check applies only where it is given (a member
  // that must not be null in a structure that may be absent); none: null.
  const Value* M::*parent = nullptr;
};

// Phase 2 for one member: adds the constraint's violation, if any, to `errors`, at
// "<prefix>.<path>" when `prefix` is not empty (a structure inside a list). Every rule but
// kNotNull, kDataPlaneTableName and kCustom passes an absent member.
void CheckMember(ConstraintErrors& errors, const Value* member, const Constraint& c,
                 std::string_view prefix = {});

// Phase 2 for the members of one structure: every row in order, into `errors`.
template <class M>
void CheckMembers(ConstraintErrors& errors, std::type_identity_t<std::span<const Check<M>>> rows,
                  const M& members, std::string_view prefix = {}) {
  for (const Check<M>& row : rows) {
    if (row.parent != nullptr && members.*row.parent == nullptr) continue;
    CheckMember(errors, members.*row.slot, row.constraint, prefix);
  }
}

// Phase 2 for a request: every row in order; the violations as one ValidationException.
template <class M>
Status CheckMembers(std::type_identity_t<std::span<const Check<M>>> rows, const M& members) {
  ConstraintErrors errors;
  CheckMembers<M>(errors, rows, members);
  return errors.ToStatus();
}

// "The request contains the member '<name>' in <where>, which this request contract does not
// define; ...": the refusal of a member a closed schema does not define.
Error UnknownMember(std::string_view name, std::string_view where);

// Closed schemas (a structure that refuses members its contract does not define): a
// ValidationException naming the first member of `structure` not in `known`, in `where`.
// `name_of` gives the member name of an element of `known`.
template <class Known, class NameOf>
Status CheckKnown(const Value& structure, std::string_view where, const Known& known,
                  NameOf name_of) {
  for (const auto& m : structure.GetObject()) {
    std::string_view name(m.name.GetString(), m.name.GetStringLength());
    bool found = false;
    for (const auto& k : known) found = found || name_of(k) == name;
    if (!found) return UnknownMember(name, where);
  }
  return Status::Ok();
}
// The members the read rows name.
template <class M>
Status CheckKnownMembers(const Value& structure, std::string_view where,
                         std::type_identity_t<std::span<const Read<M>>> rows) {
  return CheckKnown(structure, where, rows, [](const Read<M>& row) { return row.name; });
}
// The members `names` lists.
inline Status CheckKnownNames(const Value& structure, std::string_view where,
                              std::initializer_list<std::string_view> names) {
  return CheckKnown(structure, where, names, [](std::string_view n) { return n; });
}

// Row builders, so that a table reads as the model does.
template <class M>
constexpr Check<M> NotNull(const Value* M::*slot, std::string_view path) {
  return {slot, {path, Rule::kNotNull, 0, {}, nullptr}};
}
// `check` where the structure `parent` is given.
template <class M>
constexpr Check<M> In(const Value* M::*parent, Check<M> check) {
  check.parent = parent;
  return check;
}
template <class M>
constexpr Check<M> Bound(const Value* M::*slot, std::string_view path, Rule rule, int64_t bound) {
  return {slot, {path, rule, bound, {}, nullptr}};
}
template <class M>
constexpr Check<M> NamePattern(const Value* M::*slot, std::string_view path) {
  return {slot, {path, Rule::kNamePattern, 0, {}, nullptr}};
}
template <class M>
constexpr Check<M> Enum(const Value* M::*slot, std::string_view path,
                        std::span<const std::string_view> values) {
  return {slot, {path, Rule::kEnum, 0, values, nullptr}};
}
template <class M>
constexpr Check<M> NotEmptyList(const Value* M::*slot, std::string_view path) {
  return {slot, {path, Rule::kNotEmptyList, 0, {}, nullptr}};
}
template <class M>
constexpr Check<M> NotEmptyListQuoted(const Value* M::*slot, std::string_view path) {
  return {slot, {path, Rule::kNotEmptyListQuoted, 0, {}, nullptr}};
}
template <class M>
constexpr Check<M> DataPlaneTableName(const Value* M::*slot) {
  return {slot, {"tableName", Rule::kDataPlaneTableName, 0, {}, nullptr}};
}
template <class M>
constexpr Check<M> Custom(const Value* M::*slot, std::string_view path, CustomCheck check) {
  return {slot, {path, Rule::kCustom, 0, {}, check}};
}

// The rows of every part in order: tables that share runs of rows.
template <class T, size_t... N>
constexpr std::array<T, (N + ...)> Join(const std::array<T, N>&... parts) {
  std::array<T, (N + ...)> out{};
  size_t at = 0;
  ((std::copy(parts.begin(), parts.end(), out.begin() + at), at += N), ...);
  return out;
}

// The API model's enums that many operations share.
inline constexpr std::string_view kReturnConsumedCapacity[] = {"INDEXES", "TOTAL", "NONE"};
inline constexpr std::string_view kReturnItemCollectionMetrics[] = {"SIZE", "NONE"};
inline constexpr std::string_view kReturnValues[] = {"ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE",
                                                     "UPDATED_NEW"};
inline constexpr std::string_view kReturnValuesOnConditionCheckFailure[] = {"ALL_OLD", "NONE"};
inline constexpr std::string_view kConditionalOperator[] = {"AND", "OR"};
inline constexpr std::string_view kComparisonOperator[] = {
    "EQ",      "NE",       "IN",   "LE",       "LT",           "GE",         "GT",
    "BETWEEN", "NOT_NULL", "NULL", "CONTAINS", "NOT_CONTAINS", "BEGINS_WITH"};
inline constexpr std::string_view kSelect[] = {"SPECIFIC_ATTRIBUTES", "COUNT", "ALL_ATTRIBUTES",
                                               "ALL_PROJECTED_ATTRIBUTES"};

// The member `field` of each entry of a map of structures, one of `allowed`:
// "<path>.<entry name>.member.<field, first letter lower-cased>". A `required` field is
// "must not be null" where an entry lacks it; otherwise such an entry passes.
void EntryEnums(ConstraintErrors& errors, std::string_view path, const Value* map,
                std::string_view field, std::span<const std::string_view> allowed, bool required);

// The ComparisonOperator of each entry of a map of Condition or ExpectedAttributeValue:
// "<path>.<name>.member.comparisonOperator" (kComparisonOperator). A Condition must have one
// (ConditionOperators); an ExpectedAttributeValue need not (OptionalOperators).
void ConditionOperators(ConstraintErrors& errors, std::string_view path, const Value* map);
void OptionalOperators(ConstraintErrors& errors, std::string_view path, const Value* map);

// ---- typed views of a member phase 1 accepted ----

std::optional<std::string_view> Text(const Value* member);
std::optional<std::string> OwnedText(const Value* member);  // a copy, kept past the request
std::optional<int64_t> Number(const Value* member);         // truncated toward zero, as AsInt64
std::optional<bool> Flag(const Value* member);              // with the deserializer's coercions
std::optional<int64_t> Millis(const Value* member);         // a timestamp's seconds, in ms

}  // namespace fdyno::api::request
