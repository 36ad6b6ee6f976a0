#include "api/query_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/capacity.h"
#include "api/capacity_governor.h"
#include "api/item_keys.h"
#include "api/json_util.h"
#include "api/key_insights.h"
#include "api/parameter_mix.h"
#include "api/query_pages.h"
#include "api/request_model.h"
#include "api/table_arn.h"
#include "expr/evaluate.h"
#include "expr/key_condition.h"
#include "expr/legacy.h"
#include "expr/parser.h"
#include "expr/resolver.h"
#include "kv/run.h"
#include "kv/tuple.h"
#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/json.h"
#include "model/key_codec.h"
#include "model/stored_json.h"
#include "store/indexes.h"
#include "store/item_cursor.h"
#include "store/items.h"
#include "store/layout.h"
#include "store/ttl.h"

namespace fdyno::api {
namespace {

using model::AttributeValue;
using model::Item;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

enum class Select { kAllAttributes, kAllProjected, kSpecific, kCount };

using LegacyConditions = std::map<std::string, expr::legacy::FilterCondition>;

struct ReadRequest {
  bool is_query = true;
  std::string table_name;
  std::optional<std::string> index_name;
  std::optional<Select> select;
  int64_t limit = 0;  // 0: none
  bool consistent_read = false;
  bool forward = true;
  std::optional<Item> exclusive_start_key;
  std::optional<int64_t> segment;
  std::optional<int64_t> total_segments;
  ReturnConsumedCapacity return_consumed_capacity = ReturnConsumedCapacity::kNone;

  std::optional<std::string> key_condition_expression;
  std::optional<std::string> filter_expression;
  std::optional<std::string> projection_expression;
  expr::AttributeNames names;
  bool has_names = false;
  model::Map values;
  bool has_values = false;

  std::optional<LegacyConditions> key_conditions;
  std::optional<LegacyConditions> filter;  // QueryFilter / ScanFilter
  expr::legacy::ConditionalOperator conditional_operator = expr::legacy::ConditionalOperator::kAnd;
  std::optional<std::vector<std::string>> attributes_to_get;
};

// ---- decoding ------------------------------------------------------------------------------

using request::Check;
using request::Read;
using request::Rule;
using Value = rapidjson::Value;

// Every member of Query and Scan; each reads only its own.
struct Members {
  const Value* table_name = nullptr;
  const Value* index_name = nullptr;
  const Value* select = nullptr;
  const Value* conditional_operator = nullptr;
  const Value* rcc = nullptr;
  const Value* kce = nullptr;
  const Value* fe = nullptr;
  const Value* pe = nullptr;
  const Value* attributes_to_get = nullptr;
  const Value* limit = nullptr;
  const Value* segment = nullptr;
  const Value* total_segments = nullptr;
  const Value* consistent_read = nullptr;
  const Value* forward = nullptr;
  const Value* key_conditions = nullptr;
  const Value* filter = nullptr;
  const Value* esk = nullptr;
  const Value* names = nullptr;
  const Value* values = nullptr;
};
using M = Members;

// Phase 1: the members in the order DynamoDB's deserializer meets them.
constexpr std::array<Read<M>, 6> kReadHead = {{
    {"TableName", &M::table_name, JsonShape::kString},
    {"IndexName", &M::index_name, JsonShape::kString},
    {"Select", &M::select, JsonShape::kString},
    {"AttributesToGet", &M::attributes_to_get, JsonShape::kList, {}, request::StringElements},
    {"Limit", &M::limit, JsonShape::kInteger},
    {"ConsistentRead", &M::consistent_read, JsonShape::kBoolean},
}};
constexpr Read<M> kConditionalOperator{"ConditionalOperator", &M::conditional_operator,
                                       JsonShape::kString};
constexpr Read<M> kStartKey{"ExclusiveStartKey", &M::esk, JsonShape::kMap, "AttributeValue",
                            request::AttributeValues};
constexpr Read<M> kReturnCapacity{"ReturnConsumedCapacity", &M::rcc, JsonShape::kString};
constexpr Read<M> kProjection{"ProjectionExpression", &M::pe, JsonShape::kString};
constexpr Read<M> kFilter{"FilterExpression", &M::fe, JsonShape::kString};
constexpr std::array<Read<M>, 2> kReadTail = {{
    {"ExpressionAttributeNames", &M::names, JsonShape::kMap, "String", request::StringValues},
    {"ExpressionAttributeValues", &M::values, JsonShape::kMap, "AttributeValue",
     request::AttributeValues},
}};
constexpr auto kQueryReads = request::Join(
    request::Join(kReadHead, std::array<Read<M>, 9>{{
                                 {"KeyConditions", &M::key_conditions, JsonShape::kMap, "Condition",
                                  request::ConditionEntries},
                                 {"QueryFilter", &M::filter, JsonShape::kMap, "Condition",
                                  request::ConditionEntries},
                                 kConditionalOperator,
                                 {"ScanIndexForward", &M::forward, JsonShape::kBoolean},
                                 kStartKey,
                                 kReturnCapacity,
                                 kProjection,
                                 kFilter,
                                 {"KeyConditionExpression", &M::kce, JsonShape::kString},
                             }}),
    kReadTail);
constexpr auto kScanReads = request::Join(
    request::Join(kReadHead, std::array<Read<M>, 8>{{
                                 {"ScanFilter", &M::filter, JsonShape::kMap, "Condition",
                                  request::ConditionEntries},
                                 kConditionalOperator,
                                 kStartKey,
                                 kReturnCapacity,
                                 {"TotalSegments", &M::total_segments, JsonShape::kInteger},
                                 {"Segment", &M::segment, JsonShape::kInteger},
                                 kProjection,
                                 kFilter,
                             }}),
    kReadTail);

// Query's Limit message names the member with a capital letter and without its value, as
// DynamoDB answers (Scan's is the usual form).
void QueryLimit(ConstraintErrors& errors, std::string_view path, const Value* limit) {
  if (limit != nullptr && *AsInt64(*limit) < 1) {
    errors.AddWithoutValue(path, "Member must have value greater than or equal to 1");
  }
}

// Phase 2: the API model's constraints, in the order DynamoDB lists them.
constexpr std::array<Check<M>, 6> kCheckHead = {
    request::DataPlaneTableName(&M::table_name),
    request::Bound(&M::index_name, "indexName", Rule::kMinLength, 3),
    request::Bound(&M::index_name, "indexName", Rule::kMaxLength, 255),
    request::NamePattern(&M::index_name, "indexName"),
    request::Enum(&M::select, "select", request::kSelect),
    request::NotEmptyList(&M::attributes_to_get, "attributesToGet")};
constexpr auto kQueryChecks = request::Join(
    kCheckHead,
    std::array{request::Custom(&M::limit, "Limit", QueryLimit),
               request::Custom(&M::key_conditions, "keyConditions", request::ConditionOperators),
               request::Custom(&M::filter, "queryFilter", request::ConditionOperators),
               request::Enum(&M::conditional_operator, "conditionalOperator",
                             request::kConditionalOperator),
               request::Enum(&M::rcc, "returnConsumedCapacity", request::kReturnConsumedCapacity)});
constexpr auto kScanChecks = request::Join(
    kCheckHead,
    std::array{request::Bound(&M::limit, "limit", Rule::kMinValue, 1),
               request::Custom(&M::filter, "scanFilter", request::ConditionOperators),
               request::Enum(&M::conditional_operator, "conditionalOperator",
                             request::kConditionalOperator),
               request::Enum(&M::rcc, "returnConsumedCapacity", request::kReturnConsumedCapacity),
               request::Bound(&M::total_segments, "totalSegments", Rule::kMinValue, 1),
               request::Bound(&M::total_segments, "totalSegments", Rule::kMaxValue, 1000000),
               request::Bound(&M::segment, "segment", Rule::kMinValue, 0),
               request::Bound(&M::segment, "segment", Rule::kMaxValue, 999999)});

Result<LegacyConditions> DecodeConditions(const Value& map) {
  LegacyConditions out;
  for (const auto& e : map.GetObject()) {
    expr::legacy::FilterCondition c;
    const Value* op = Member(e.value, "ComparisonOperator");
    c.op = *expr::legacy::ParseComparisonOperator(AsStringView(*op));
    if (const Value* list = Member(e.value, "AttributeValueList")) {
      for (const auto& v : list->GetArray()) {
        FDYNO_ASSIGN_OR_RETURN(AttributeValue value, model::DecodeAttributeValue(v));
        c.values.push_back(std::move(value));
      }
    }
    out.emplace(std::string(e.name.GetString(), e.name.GetStringLength()), std::move(c));
  }
  return out;
}

// The simple members, copied.
Result<ReadRequest> CopyMembers(bool is_query, const Members& m) {
  using request::Text;
  ReadRequest r;
  r.is_query = is_query;
  r.table_name = std::string(AsStringView(*m.table_name));
  if (m.index_name) r.index_name = std::string(AsStringView(*m.index_name));
  if (auto s = Text(m.select)) {
    r.select = s == "ALL_ATTRIBUTES"             ? Select::kAllAttributes
               : s == "ALL_PROJECTED_ATTRIBUTES" ? Select::kAllProjected
               : s == "COUNT"                    ? Select::kCount
                                                 : Select::kSpecific;
  }
  r.limit = request::Number(m.limit).value_or(0);
  r.consistent_read = request::Flag(m.consistent_read).value_or(false);
  r.forward = request::Flag(m.forward).value_or(true);
  FDYNO_ASSIGN_OR_RETURN(r.return_consumed_capacity, ParseReturnConsumedCapacity(Text(m.rcc)));
  if (Text(m.conditional_operator) == "OR") {
    r.conditional_operator = expr::legacy::ConditionalOperator::kOr;
  }
  r.segment = request::Number(m.segment);
  r.total_segments = request::Number(m.total_segments);
  auto copy = [](const Value* member, std::optional<std::string>& out) {
    if (member) out = std::string(AsStringView(*member));
  };
  copy(m.kce, r.key_condition_expression);
  copy(m.fe, r.filter_expression);
  copy(m.pe, r.projection_expression);
  return r;
}

// Scan's Segment and TotalSegments come together, Segment below TotalSegments.
Status CheckSegments(const Members& m) {
  if (m.segment && !m.total_segments) {
    return Error::Validation(
        "The TotalSegments parameter is required but was not present in the request when "
        "Segment parameter is present");
  }
  if (m.total_segments && !m.segment) {
    return Error::Validation(
        "The Segment parameter is required but was not present in the request when parameter "
        "TotalSegments is present");
  }
  const std::optional<int64_t> segment = request::Number(m.segment);
  const std::optional<int64_t> total = request::Number(m.total_segments);
  if (segment && *segment >= *total) {
    return Error::Validation(
        "The Segment parameter is zero-based and must be less than parameter TotalSegments: "
        "Segment: " +
        std::to_string(*segment) + " is not less than TotalSegments: " + std::to_string(*total));
  }
  return Status::Ok();
}

// Phase 3: which parameters go together (legacy and expressions, Select, a key condition).
Status CheckParameterRules(bool is_query, const Members& m, const ReadRequest& r) {
  // Legacy and expression parameters never mix. DynamoDB takes KeyConditions with a
  // ProjectionExpression or a FilterExpression; it is a mix only with a KeyConditionExpression
  // (or in a request that mixes anyway).
  ParameterMix mix;
  mix.Legacy("AttributesToGet", m.attributes_to_get != nullptr)
      .Legacy(is_query ? "QueryFilter" : "ScanFilter", m.filter != nullptr)
      .Legacy("ConditionalOperator", m.conditional_operator != nullptr)
      .Expression("ProjectionExpression", m.pe != nullptr)
      .Expression("FilterExpression", m.fe != nullptr);
  if (is_query) mix.Expression("KeyConditionExpression", m.kce != nullptr);
  if (is_query && m.key_conditions != nullptr && (mix.mixed() || m.kce != nullptr)) {
    mix.Legacy("KeyConditions", true);
  }
  FDYNO_RETURN_IF_ERROR(mix.Check(m.names != nullptr, m.values != nullptr));
  if (r.select == Select::kSpecific && !m.attributes_to_get && !m.pe) {
    // Query words it as a constraint error; Scan does not (both as DynamoDB answers).
    constexpr std::string_view kText =
        "Must specify the AttributesToGet or ProjectionExpression when choosing to get "
        "SPECIFIC_ATTRIBUTES";
    return is_query ? Error::EnvelopedValidation(kText) : Error::Validation(std::string(kText));
  }
  if (r.select && r.select != Select::kSpecific && (m.attributes_to_get || m.pe)) {
    std::string which = m.pe ? "ProjectionExpression" : "AttributesToGet";
    return Error::Validation("Cannot specify the " + which + " when choosing to get " +
                             (r.select == Select::kCount ? std::string("only the Count")
                                                         : std::string(AsStringView(*m.select))));
  }
  if (is_query && !m.kce && !m.key_conditions) {
    return Error::Validation(
        "Either the KeyConditions or KeyConditionExpression parameter must be specified in the "
        "request.");
  }
  return Status::Ok();
}

// Phase 4: the values (start key, legacy conditions, expression maps, attribute lists).
Status DecodeValues(const Members& m, ReadRequest& r) {
  if (m.esk) {
    FDYNO_ASSIGN_OR_RETURN(Item esk, model::DecodeItem(*m.esk));
    r.exclusive_start_key = std::move(esk);
  }
  if (m.key_conditions) {
    FDYNO_RETURN_IF_ERROR(CheckAttributeNameKeys(*m.key_conditions));
    FDYNO_ASSIGN_OR_RETURN(r.key_conditions, DecodeConditions(*m.key_conditions));
  }
  if (m.filter) {
    FDYNO_RETURN_IF_ERROR(CheckAttributeNameKeys(*m.filter));
    FDYNO_ASSIGN_OR_RETURN(r.filter, DecodeConditions(*m.filter));
  }
  if (m.names) {
    r.has_names = true;
    // An empty map is refused with the placeholder checks, after the expressions are parsed.
    if (!m.names->ObjectEmpty()) {
      FDYNO_ASSIGN_OR_RETURN(r.names, DecodeExpressionAttributeNames(*m.names));
    }
  }
  if (m.values) {
    r.has_values = true;
    FDYNO_ASSIGN_OR_RETURN(r.values, DecodeExpressionAttributeValues(*m.values));
  }
  if (m.attributes_to_get) {
    FDYNO_RETURN_IF_ERROR(CheckAttributeNameList(*m.attributes_to_get));
    std::vector<std::string> names;
    for (const auto& v : m.attributes_to_get->GetArray()) names.emplace_back(AsStringView(v));
    r.attributes_to_get = std::move(names);
  }
  return Status::Ok();
}

Result<ReadRequest> DecodeReadRequest(bool is_query, const rapidjson::Value& body) {
  Members m;
  FDYNO_RETURN_IF_ERROR(request::ReadMembers<M>(
      body, is_query ? std::span<const Read<M>>(kQueryReads) : kScanReads, m));
  FDYNO_RETURN_IF_ERROR(request::CheckMembers<M>(
      is_query ? std::span<const Check<M>>(kQueryChecks) : kScanChecks, m));
  FDYNO_ASSIGN_OR_RETURN(ReadRequest r, CopyMembers(is_query, m));
  FDYNO_RETURN_IF_ERROR(CheckSegments(m));
  FDYNO_RETURN_IF_ERROR(CheckParameterRules(is_query, m, r));
  FDYNO_RETURN_IF_ERROR(DecodeValues(m, r));
  return r;
}

// ---- planning ------------------------------------------------------------------------------

struct Plan {
  std::optional<expr::Condition> key_condition;  // resolved, shape checked
  std::optional<expr::Condition> filter;
  bool legacy_filter = false;  // the filter is a QueryFilter/ScanFilter
  std::optional<expr::Projection> projection;
};

Result<Plan> PlanExpressions(const ReadRequest& r) {
  Plan plan;
  std::optional<expr::parsed::Condition> kc, filter;
  std::optional<expr::parsed::Projection> projection;
  if (r.key_condition_expression) {
    FDYNO_ASSIGN_OR_RETURN(
        kc, expr::ParseCondition(*r.key_condition_expression, expr::ExpressionKind::kKeyCondition));
  }
  if (r.filter_expression) {
    FDYNO_ASSIGN_OR_RETURN(
        filter, expr::ParseCondition(*r.filter_expression, expr::ExpressionKind::kFilter));
  }
  if (r.projection_expression) {
    FDYNO_ASSIGN_OR_RETURN(projection, expr::ParseProjection(*r.projection_expression));
  }
  FDYNO_ASSIGN_OR_RETURN(expr::ResolveContext ctx,
                         expr::ResolveContext::ForRequest(r.has_names ? &r.names : nullptr,
                                                          r.has_values ? &r.values : nullptr));
  if (kc) {
    FDYNO_ASSIGN_OR_RETURN(plan.key_condition,
                           ctx.ResolveCondition(*kc, expr::ExpressionKind::kKeyCondition));
  }
  if (filter) {
    FDYNO_ASSIGN_OR_RETURN(plan.filter,
                           ctx.ResolveCondition(*filter, expr::ExpressionKind::kFilter));
  }
  if (projection) {
    FDYNO_ASSIGN_OR_RETURN(plan.projection, ctx.ResolveProjection(*projection));
  }
  if (kc || filter || projection) FDYNO_RETURN_IF_ERROR(ctx.CheckUnused());
  if (plan.key_condition) FDYNO_RETURN_IF_ERROR(expr::CheckKeyConditionShape(*plan.key_condition));

  if (r.key_conditions) {
    FDYNO_RETURN_IF_ERROR(expr::legacy::CheckKeyConditions(*r.key_conditions));
    FDYNO_ASSIGN_OR_RETURN(
        plan.key_condition,
        expr::legacy::ConvertFilter(*r.key_conditions, expr::legacy::ConditionalOperator::kAnd));
  }
  if (r.filter && !r.filter->empty()) {
    FDYNO_ASSIGN_OR_RETURN(plan.filter,
                           expr::legacy::ConvertFilter(*r.filter, r.conditional_operator));
    plan.legacy_filter = true;
  }
  if (r.attributes_to_get) {
    FDYNO_ASSIGN_OR_RETURN(plan.projection,
                           expr::legacy::ConvertAttributesToGet(*r.attributes_to_get));
  }
  return plan;
}

// ---- reading -------------------------------------------------------------------------------

struct ReadServices {
  kv::Database* db = nullptr;
  store::Catalog* catalog = nullptr;
  Clock* clock = nullptr;
  QueryOptions options;
  CapacityGovernor* capacity = nullptr;  // --enforce-capacity (Services::capacity)
  KeyInsights* insights = nullptr;       // Contributor Insights (Services::insights)
};

bool IsEmptyKeyValue(const AttributeValue& v) {
  return (v.type() == model::Type::kS && std::get<std::string>(v.v).empty()) ||
         (v.type() == model::Type::kB && std::get<model::Binary>(v.v).bytes.empty());
}

// The smallest value greater than every value starting with `prefix` (S or B), or nullopt.
std::optional<AttributeValue> PrefixSuccessor(const AttributeValue& prefix) {
  std::string bytes = prefix.type() == model::Type::kS ? std::get<std::string>(prefix.v)
                                                       : std::get<model::Binary>(prefix.v).bytes;
  while (!bytes.empty() && static_cast<uint8_t>(bytes.back()) == 0xFF) bytes.pop_back();
  if (bytes.empty()) return std::nullopt;
  bytes.back() = static_cast<char>(static_cast<uint8_t>(bytes.back()) + 1);
  return prefix.type() == model::Type::kS ? AttributeValue::S(std::move(bytes))
                                          : AttributeValue::B(std::move(bytes));
}

Error InvalidStartKey() {
  return Error::Validation(
      "The provided starting key is invalid: The provided key element does not match the schema");
}

}  // namespace

// ExclusiveStartKey must hold exactly the table's key attributes (and the index's, when
// reading an index) with the right types. DynamoDB checks the number of attributes first,
// then the index's key attributes, then the table's, and words each failure differently.
Status ValidateStartKey(const store::TableInfo& table, const store::SecondaryIndex* index,
                        const Item& esk, bool is_query) {
  const Error short_form = Error::Validation("The provided starting key is invalid");
  std::vector<model::KeyAttribute> attrs = table.key_schema.Attributes();
  if (index) {
    for (model::KeyAttribute& a : index->key_schema.Attributes()) attrs.push_back(std::move(a));
  }
  std::vector<std::string> distinct;
  for (const model::KeyAttribute& a : attrs) {
    if (std::find(distinct.begin(), distinct.end(), a.name) == distinct.end()) {
      distinct.push_back(a.name);
    }
  }
  if (esk.size() != distinct.size()) {
    return is_query || index ? short_form : InvalidStartKey();
  }
  if (index) {
    for (const model::KeyAttribute& a : index->key_schema.Attributes()) {
      auto it = esk.find(a.name);
      if (it == esk.end()) return short_form;
      if (it->second.type() != model::ToType(a.type)) {
        return Error::Validation("The provided key element does not match the schema");
      }
    }
  }
  for (const model::KeyAttribute& a : attrs) {
    auto it = esk.find(a.name);
    if (it == esk.end() || it->second.type() != model::ToType(a.type)) return InvalidStartKey();
    if (IsEmptyKeyValue(it->second)) return InvalidStartKey();
  }
  return Status();
}

PageTarget MakePageTarget(std::shared_ptr<const store::TableInfo> table,
                          const store::SecondaryIndex* index) {
  PageTarget t;
  t.table = std::move(table);
  t.index = index;
  if (index != nullptr) {
    for (const auto& i : t.table->global_indexes) t.global = t.global || &i == index;
    t.subspace = store::layout::Index(t.table->id, index->id);
  } else {
    t.subspace = store::layout::Items(t.table->id);
  }
  return t;
}

namespace {

Result<PageTarget> ResolveTarget(const ReadServices& s, kv::Transaction& tx,
                                 store::TableScope scope, const ReadRequest& r) {
  FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> found,
                         FindActiveTable(*s.catalog, tx, scope, r.table_name));
  const store::SecondaryIndex* index = r.index_name ? found->FindIndex(*r.index_name) : nullptr;
  PageTarget t = MakePageTarget(std::move(found), index);
  if (r.index_name) {
    if (t.index == nullptr) {
      return Error::Validation("The table does not have the specified index: " + *r.index_name);
    }
    if (t.index->status != store::IndexStatus::kActive || t.index->backfilling) {
      return Error::Validation("Cannot read from backfilling global secondary index: " +
                               *r.index_name);
    }
    if (t.global && r.consistent_read) {
      return Error::Validation("Consistent reads are not supported on global secondary indexes");
    }
  }
  if (r.select == Select::kAllProjected && t.index == nullptr) {
    // DynamoDB says "Querying" for Scan too.
    return Error::Validation(
        "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName");
  }
  if (r.select == Select::kAllAttributes && t.global &&
      t.index->projection.type != store::ProjectionType::kAll) {
    return Error::Validation(
        "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported "
        "for global secondary index " +
        t.index->name + " because its projection type is not ALL");
  }
  return t;
}

// The top-level attributes an operand reads, left to right, appended to `out`.
void OperandRoots(const expr::Operand& o, std::vector<std::string>& out) {
  if (o.is_path()) out.push_back(o.path().root());
  if (o.is_call()) {
    for (const expr::Operand& arg : o.call().args) OperandRoots(arg, out);
  }
}

// The top-level attributes a condition reads, left to right, appended to `out`.
void ConditionRoots(const expr::Condition& c, std::vector<std::string>& out) {
  for (const expr::Operand& o : c.operands) OperandRoots(o, out);
  for (const expr::Condition& child : c.children) ConditionRoots(child, out);
}

// Decides how an index read gets attributes its index does not project: a local secondary
// index reads them from the base items; asking a global secondary index for them is
// DynamoDB's ValidationException.
// Answers whether each entry's base item must be read (PageSpec::fetch_base).
Result<bool> PlanUnprojectedReads(const ReadRequest& r, const Plan& plan, const PageTarget& t) {
  if (t.index == nullptr || t.index->projection.type == store::ProjectionType::kAll) {
    return false;
  }
  std::vector<std::string> projected_reads, filter_reads;
  if (plan.projection) {
    for (const expr::Path& p : *plan.projection) projected_reads.push_back(p.root());
  }
  if (plan.filter) ConditionRoots(*plan.filter, filter_reads);
  auto missing = [&](const std::vector<std::string>& names) {
    std::vector<std::string> out;
    for (const std::string& n : names) {
      if (!store::ProjectsAttribute(*t.table, *t.index, n) &&
          std::find(out.begin(), out.end(), n) == out.end()) {
        out.push_back(n);
      }
    }
    return out;
  };
  const std::vector<std::string> unprojected = missing(projected_reads);
  if (t.global) {
    if (unprojected.empty()) return false;
    std::string list;
    for (const std::string& n : unprojected) list += (list.empty() ? "" : ", ") + n;
    return Error::Validation("One or more parameter values were invalid: Global secondary index " +
                             t.index->name + " does not project [" + list + "]");
  }
  return r.select == Select::kAllAttributes || !unprojected.empty() ||
         !missing(filter_reads).empty();
}

}  // namespace

std::string StartKeyEntry(const PageTarget& t, const Item& esk) {
  if (t.index) return store::IndexEntryKey(t.table->id, *t.index, t.table->key_schema, esk);
  return StorageKey(*t.table, esk);
}

Item PageKeyOf(const PageTarget& t, const Item& item) {
  Item key = KeyOf(t.table->key_schema, item);
  if (t.index) {
    for (const model::KeyAttribute& a : t.index->key_schema.Attributes()) {
      key.emplace(a.name, item.at(a.name));
    }
  }
  return key;
}

kv::RunOptions PageRunOptions(const RequestContext& ctx, Clock* clock, const InlineBound* bound) {
  kv::RunOptions options;
  if (ctx.deadline != std::chrono::steady_clock::time_point{}) options.deadline = ctx.deadline;
  options.clock = clock;
  options.read_only = true;
  if (bound != nullptr) options.max_attempts = 1;
  return options;
}

void AddPageReadUnits(const PageOutput& page, bool consistent_read, ConsumedCapacity& c) {
  const double entries = ReadUnits(page.bytes - page.base_bytes, consistent_read);
  if (page.index_name.empty()) {
    c.table_units += entries;
    return;
  }
  c.table_units += static_cast<double>(page.base_read_units) * (consistent_read ? 1.0 : 0.5);
  (page.index_is_global ? c.global_indexes : c.local_indexes)
      .emplace_back(page.index_name, entries);
}

Status ReadRange(const QueryOptions& options, kv::Transaction& tx, const PageSpec& spec,
                 const PageTarget& t, std::string begin, std::string end, PageOutput& page,
                 InlineBound* bound) {
  const auto started = std::chrono::steady_clock::now();
  if (t.index) {
    page.index_name = t.index->name;
    page.index_is_global = t.global;
  }
  const bool fetch_base = spec.fetch_base;
  // Items whose TTL has expired are hidden until the sweeper deletes them (store/ttl.h); an
  // index entry without the TTL attribute is checked against its base item.
  const bool hide_expired = t.table->ttl.status == store::TtlStatus::kEnabled;
  const bool ttl_from_base = hide_expired && t.index != nullptr && !fetch_base &&
                             !store::IndexCarriesTtl(*t.table, *t.index);
  const int64_t now_ms = spec.now_ms;
  // Whole stored items are returned as they are: no filter, projection or base item to add.
  const bool whole_items = !fetch_base && !hide_expired && !spec.filter && !spec.projection &&
                           !spec.output && !spec.count_only;
  // Limit counts items read (before the filter); the 1 MB bound applies to what was read.
  auto page_ends = [&] {
    return (spec.limit > 0 && page.scanned >= spec.limit) || page.bytes >= options.page_bytes ||
           std::chrono::steady_clock::now() - started >= options.page_time_budget;
  };
  auto over_bound = [&] {
    if (bound == nullptr || page.bytes <= bound->bytes) return false;
    bound->exceeded = true;
    return true;
  };
  auto over_bound_error = [] { return Error::Internal("page larger than the inline read bound"); };
  store::SplitItems split_items(spec.forward);
  const store::SplitItems::Read read_parts = [&](const std::string& from, const std::string& to) {
    return tx.GetRange(from, to, kv::RangeOptions{});
  };
  while (begin < end) {
    kv::RangeOptions ro;
    ro.limit = options.read_batch;
    ro.reverse = !spec.forward;
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(begin, end, ro));
    const std::string* last_item = nullptr;  // the last item key handled in this batch
    for (size_t at = 0; at < rr.kvs.size(); ++at) {
      const kv::KeyValue& kv = rr.kvs[at];
      if (store::IsItemPart(kv.value)) continue;  // assembled with its head
      FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> whole, store::WholeImage(kv.value));
      std::string_view image;
      std::string split_image;
      if (whole) {
        image = *whole;
      } else {
        FDYNO_ASSIGN_OR_RETURN(split_image, split_items.Assemble(rr.kvs, at, read_parts));
        image = split_image;
      }
      last_item = &kv.key;
      ++page.scanned;
      if (spec.keep_read_keys) {
        FDYNO_ASSIGN_OR_RETURN(Item read, model::DecodeStoredItem(image));
        page.read_keys.push_back(PageKeyOf(t, read));
      }
      if (whole_items) {
        // Straight from the stored bytes to the response; the item is decoded only when it
        // ends the page, for its LastEvaluatedKey.
        ++page.count;
        if (page.items.GetSize() > 0) page.items.Put(',');
        FDYNO_ASSIGN_OR_RETURN(const uint64_t size, model::WriteStoredItemJson(image, page.items));
        page.bytes += size;
        if (over_bound()) return over_bound_error();
        if (page_ends()) {
          FDYNO_ASSIGN_OR_RETURN(Item item, model::DecodeStoredItem(image));
          page.last_key = PageKeyOf(t, item);
          return Status();
        }
      } else {
        FDYNO_ASSIGN_OR_RETURN(Item item, model::DecodeStoredItem(image));
        page.bytes += model::ItemSize(item);
        const Item* full = &item;
        Item base;
        if (fetch_base) {
          FDYNO_ASSIGN_OR_RETURN(std::optional<store::StoredItem> stored,
                                 store::ReadItem(tx, StorageKey(*t.table, item)));
          if (stored) {
            FDYNO_ASSIGN_OR_RETURN(base, model::DecodeStoredItem(stored->image));
            const uint64_t base_size = model::ItemSize(base);
            page.bytes += base_size;
            page.base_bytes += base_size;
            page.base_read_units +=
                std::max<uint64_t>(1, (base_size + kReadUnitBytes - 1) / kReadUnitBytes);
            full = &base;
          }
        }
        bool expired = hide_expired && store::ItemExpired(*t.table, *full, now_ms);
        if (ttl_from_base) {
          FDYNO_ASSIGN_OR_RETURN(std::optional<store::StoredItem> stored,
                                 store::ReadItem(tx, StorageKey(*t.table, item)));
          if (stored) {
            FDYNO_ASSIGN_OR_RETURN(Item checked, model::DecodeStoredItem(stored->image));
            expired = store::ItemExpired(*t.table, checked, now_ms);
          }
        }
        if (!expired && (!spec.filter || expr::EvaluateCondition(*spec.filter, *full))) {
          ++page.count;
          if (!spec.count_only) {
            if (page.items.GetSize() > 0) page.items.Put(',');
            Writer iw(page.items);
            if (spec.output) {
              model::WriteItem(iw, spec.output(*full));
            } else if (spec.projection) {
              model::WriteItem(iw, expr::Project(*full, *spec.projection));
            } else {
              model::WriteItem(iw, *full);
            }
          }
        }
        if (over_bound()) return over_bound_error();
        if (page_ends()) {
          page.last_key = PageKeyOf(t, item);
          return Status();
        }
      }
    }
    split_items.EndBatch(rr.kvs);
    if (last_item != nullptr) {
      if (spec.forward) {
        begin = store::ItemRangeEnd(*last_item);
      } else {
        end = *last_item;
      }
    }
    if (!rr.more) break;
    if (!rr.kvs.empty()) {
      // The batch may have ended on chunks: continue after (before) the last key read.
      const std::string& last = rr.kvs.back().key;
      if (spec.forward) {
        if (begin <= last) begin = last + '\x00';
      } else if (end > last) {
        end = last;
      }
    }
  }
  return Status();
}

namespace {

// The key schema a Query reads by: the index's when reading an index, else the table's.
const model::KeySchema& QuerySchema(const PageTarget& t) {
  return t.index ? t.index->key_schema : t.table->key_schema;
}

// The partition and sort-key range a Query's key condition selects.
Result<expr::KeyCondition> QueryKeyCondition(const PageTarget& t, const Plan& plan) {
  expr::KeySchema ks;
  const model::KeySchema& schema = QuerySchema(t);
  ks.hash_name = schema.hash.name;
  ks.hash_type = model::ToType(schema.hash.type);
  if (schema.range) {
    ks.range_name = schema.range->name;
    ks.range_type = model::ToType(schema.range->type);
  }
  for (const model::KeyAttribute& a : schema.more_hash) {
    ks.more_hash.push_back({a.name, model::ToType(a.type)});
  }
  for (const model::KeyAttribute& a : schema.more_range) {
    ks.more_range.push_back({a.name, model::ToType(a.type)});
  }
  return expr::ExtractKeyCondition(*plan.key_condition, ks);
}

// A Query's filter may not read the key attributes of the table or index queried: they belong
// in the key condition. The error names the first one the filter reads.
Status CheckFilterOnKeys(const PageTarget& t, const Plan& plan) {
  if (!plan.filter) return Status();
  std::vector<std::string> reads;
  ConditionRoots(*plan.filter, reads);
  const std::vector<model::KeyAttribute> keys = QuerySchema(t).Attributes();
  for (const std::string& name : reads) {
    for (const model::KeyAttribute& k : keys) {
      if (k.name != name) continue;
      return Error::Validation(
          std::string(plan.legacy_filter ? "QueryFilter" : "Filter Expression") +
          " can only contain non-primary key attributes: Primary key attribute: " + name);
    }
  }
  return Status();
}

}  // namespace

// A Query without a sort key condition: its ExclusiveStartKey must lie in the queried
// partition.
Status CheckStartKeyInPartition(const PageTarget& t, const expr::KeyCondition& kc,
                                const Item& esk) {
  const std::vector<model::KeyAttribute> attrs = QuerySchema(t).HashAttributes();
  const std::vector<AttributeValue> values = kc.HashValues();
  for (size_t i = 0; i < attrs.size(); ++i) {
    auto it = esk.find(attrs[i].name);
    if (it == esk.end() || !(it->second == values[i])) {
      return Error::Validation(
          "The provided starting key is outside query boundaries based on provided condition");
    }
  }
  return Status();
}

// A Query with a sort key condition, whose range is [begin, end): its ExclusiveStartKey, stored
// at `start`, must lie inside the range, and reading on from it in the query's direction must
// still be able to reach another key of the range. DynamoDB answers "does not match the range
// key predicate" otherwise, for a key of another partition too (docs/compatibility.md). So a
// start key below `sk >= :v` is rejected going forward, and one equal to :v is accepted going
// forward but rejected going backward (nothing of the range lies before it); on a table an
// `sk = :v` condition accepts no start key at all. Index entries carry the base key after the
// index sort key, so an index start key at an inclusive bound still leaves room (other items
// with the same index sort key): index pagination over ties keeps working.
//
// Read backward, a start key on an inclusive lower bound (`sk >= :v`, BETWEEN, begins_with) is
// accepted and leaves nothing to read: it is the LastEvaluatedKey of a page that ended exactly
// on the bound, which DynamoDB takes back.
Status CheckStartKeyInRange(const std::string& begin, const std::string& end,
                            const std::string& start, bool forward, expr::KeyRange::Op op) {
  using Op = expr::KeyRange::Op;
  const bool on_lower_bound_ok = op == Op::kGe || op == Op::kBetween || op == Op::kBeginsWith;
  const bool inside = forward
                          ? begin <= start && store::ItemRangeEnd(start) < end
                          : (begin < start || (on_lower_bound_ok && begin == start)) && start < end;
  if (!inside) {
    return Error::Validation("The provided starting key does not match the range key predicate");
  }
  return Status();
}

// [begin, end) of a Query.
Result<std::pair<std::string, std::string>> QueryRange(const PageTarget& t,
                                                       const expr::KeyCondition& kc) {
  const store::TableInfo& table = *t.table;
  std::string pbegin, pend;
  const std::vector<AttributeValue> hash_values = kc.HashValues();
  auto sort_prefix = [&](const AttributeValue& v) {
    if (t.index) {
      std::vector<AttributeValue> range = kc.range_prefix;
      range.push_back(v);
      return store::IndexSortPrefix(table.id, t.index->id, hash_values, range);
    }
    std::string h = model::EncodeKeyValue(kc.hash_value);
    std::string rv = model::EncodeKeyValue(v);
    return store::ItemKey(table.id, h, &rv);
  };
  if (t.index && !kc.range_prefix.empty()) {
    // The sort key attributes before the range condition's are fixed by equality.
    pbegin = store::IndexSortPrefix(table.id, t.index->id, hash_values, kc.range_prefix);
    pend = pbegin + '\xff';
  } else if (t.index) {
    std::tie(pbegin, pend) = store::IndexPartitionRange(table.id, t.index->id, hash_values);
  } else {
    std::string h = model::EncodeKeyValue(kc.hash_value);
    pbegin = store::ItemKey(table.id, h, nullptr);
    pend = pbegin + '\xff';
  }
  if (!kc.range) return std::make_pair(pbegin, pend);
  const expr::KeyRange& kr = *kc.range;
  using Op = expr::KeyRange::Op;
  switch (kr.op) {
    case Op::kEq: {
      std::string p = sort_prefix(kr.value);
      return std::make_pair(p, p + '\xff');
    }
    case Op::kLt:
      return std::make_pair(pbegin, sort_prefix(kr.value));
    case Op::kLe:
      return std::make_pair(pbegin, sort_prefix(kr.value) + '\xff');
    case Op::kGt:
      return std::make_pair(sort_prefix(kr.value) + '\xff', pend);
    case Op::kGe:
      return std::make_pair(sort_prefix(kr.value), pend);
    case Op::kBetween:
      return std::make_pair(sort_prefix(kr.value), sort_prefix(kr.high) + '\xff');
    case Op::kBeginsWith: {
      std::optional<AttributeValue> next = PrefixSuccessor(kr.value);
      return std::make_pair(sort_prefix(kr.value), next ? sort_prefix(*next) : pend);
    }
  }
  return std::make_pair(pbegin, pend);
}

namespace {

std::pair<std::string, std::string> ScanRange(const PageTarget& t, const ReadRequest& r) {
  auto [begin, end] = t.subspace.Range();
  if (r.segment && r.total_segments) {
    const uint64_t total = static_cast<uint64_t>(*r.total_segments);
    const uint64_t seg = static_cast<uint64_t>(*r.segment);
    const uint64_t lo = (seg << 32) / total;
    const uint64_t hi = ((seg + 1) << 32) / total;
    if (seg > 0) begin = t.subspace.Pack(kv::Tuple{static_cast<int64_t>(lo)});
    if (hi < (uint64_t{1} << 32)) end = t.subspace.Pack(kv::Tuple{static_cast<int64_t>(hi)});
  }
  return {begin, end};
}

// A Query or Scan request, decoded and planned.
struct ReadJob {
  ReadRequest r;
  Plan plan;
};

Result<std::shared_ptr<const ReadJob>> PrepareRead(bool is_query, const rapidjson::Value& body) {
  auto job = std::make_shared<ReadJob>();
  FDYNO_ASSIGN_OR_RETURN(job->r, DecodeReadRequest(is_query, body));
  FDYNO_ASSIGN_OR_RETURN(job->plan, PlanExpressions(job->r));
  return std::shared_ptr<const ReadJob>(std::move(job));
}

// Reads the page and renders the response. With `bound` (the network-thread try): one attempt
// only, giving up past bound->bytes.
Result<std::string> ReadPage(const ReadServices& s, const ReadJob& job, const RequestContext& ctx,
                             InlineBound* bound) {
  const ReadRequest& r = job.r;
  const Plan& plan = job.plan;
  std::shared_ptr<const store::TableInfo> read_table;  // for --enforce-capacity's charge
  std::string partition;                               // a Query of the table: its partition
  std::shared_ptr<const store::TableInfo> counted;     // for Contributor Insights
  FDYNO_ASSIGN_OR_RETURN(
      PageOutput page,
      kv::Run(*s.db, PageRunOptions(ctx, s.clock, bound),
              [&](kv::Transaction& tx, const kv::Attempt&) -> Result<PageOutput> {
                PageOutput page;
                FDYNO_ASSIGN_OR_RETURN(PageTarget t, ResolveTarget(s, tx, CallerScope(ctx), r));
                FDYNO_ASSIGN_OR_RETURN(const bool fetch_base, PlanUnprojectedReads(r, plan, t));
                std::optional<expr::KeyCondition> kc;
                if (r.is_query) {
                  FDYNO_ASSIGN_OR_RETURN(kc, QueryKeyCondition(t, plan));
                  FDYNO_RETURN_IF_ERROR(CheckFilterOnKeys(t, plan));
                }
                if (s.capacity != nullptr) {
                  partition = kc && t.index == nullptr ? model::EncodeKeyValue(kc->hash_value)
                                                       : std::string();
                  Status admitted = s.capacity->Admit(
                      ctx.region, *t.table, Draw::Read(partition, r.index_name.value_or("")));
                  if (!admitted.ok() && kc) {
                    CountThrottle(s.insights, *t.table, r.index_name.value_or(""),
                                  Item{{kc->hash_name, kc->hash_value}});
                  }
                  FDYNO_RETURN_IF_ERROR(admitted);
                  read_table = t.table;
                }
                if (r.exclusive_start_key) {
                  FDYNO_RETURN_IF_ERROR(
                      ValidateStartKey(*t.table, t.index, *r.exclusive_start_key, r.is_query));
                  if (kc && t.index == nullptr && !t.table->key_schema.range) {
                    // A Query of a table without a sort key reads at most one item.
                    return Error::Validation(
                        "The query can return at most one row and cannot be restarted");
                  }
                  if (kc && !kc->range) {
                    FDYNO_RETURN_IF_ERROR(CheckStartKeyInPartition(t, *kc, *r.exclusive_start_key));
                  }
                }
                std::string begin, end;
                if (kc) {
                  FDYNO_ASSIGN_OR_RETURN(auto range, QueryRange(t, *kc));
                  std::tie(begin, end) = std::move(range);
                } else {
                  std::tie(begin, end) = ScanRange(t, r);
                }
                if (r.exclusive_start_key) {
                  std::string start = StartKeyEntry(t, *r.exclusive_start_key);
                  if (r.segment && (start < begin || start >= end)) {
                    // A parallel Scan continues only within its own segment.
                    return Error::Validation(
                        "Invalid ExclusiveStartKey. Please use ExclusiveStartKey with correct "
                        "Segment. TotalSegments: " +
                        std::to_string(*r.total_segments) +
                        " Segment: " + std::to_string(*r.segment));
                  }
                  if (kc && kc->range) {
                    FDYNO_RETURN_IF_ERROR(
                        CheckStartKeyInRange(begin, end, start, r.forward, kc->range->op));
                  }
                  if (r.forward) {
                    begin = std::max(begin, store::ItemRangeEnd(start));
                  } else {
                    end = std::min(end, start);
                  }
                }
                PageSpec spec;
                spec.limit = r.limit;
                spec.forward = r.forward;
                spec.count_only = r.select == Select::kCount;
                spec.fetch_base = fetch_base;
                spec.filter = plan.filter ? &*plan.filter : nullptr;
                spec.projection = plan.projection ? &*plan.projection : nullptr;
                spec.now_ms = s.clock->WallMillis();
                spec.keep_read_keys = s.insights != nullptr && t.table->CountsKeyAccesses();
                if (spec.keep_read_keys) counted = t.table;
                FDYNO_RETURN_IF_ERROR(ReadRange(s.options, tx, spec, t, begin, end, page, bound));
                return page;
              }));

  // Everything after the items, as an object: {"Count":...}.
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("Count");
  w.Int64(page.count);
  w.Key("ScannedCount");
  w.Int64(page.scanned);
  if (page.last_key) {
    w.Key("LastEvaluatedKey");
    model::WriteItem(w, *page.last_key);
  }
  ConsumedCapacity c;
  c.table_name = r.table_name;
  AddPageReadUnits(page, r.consistent_read, c);
  if (read_table) s.capacity->Charge(*read_table, c, partition);
  if (counted) {
    for (const Item& key : page.read_keys) {
      CountAccess(s.insights, *counted, r.index_name.value_or(""), key);
    }
  }
  WriteConsumedCapacity(w, r.return_consumed_capacity, c);
  w.EndObject();
  const std::string_view rest(buffer.GetString(), buffer.GetSize());
  if (r.select == Select::kCount) return std::string(rest);
  // {"Items":[<the page's items>], then the rest's members: the items were written as JSON
  // while the page was read, and are copied once.
  constexpr std::string_view kItems = R"({"Items":[)";
  const std::string_view items(page.items.GetString(), page.items.GetSize());
  std::string out;
  out.reserve(kItems.size() + items.size() + rest.size() + 1);
  out.append(kItems).append(items).append("],").append(rest.substr(1));
  return out;
}

Result<std::string> ReadOp(const ReadServices& s, bool is_query, const RequestContext& ctx,
                           const rapidjson::Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const ReadJob> job, PrepareRead(is_query, body));
  return ReadPage(s, *job, ctx, nullptr);
}

// The asynchronous form, for a network thread: a page of at most inline_page_bytes is read and
// answered right there; a larger one, or an attempt that meets a retryable engine error, is
// read again from the start on ctx.blocking (a worker). Reads have no effect, so nothing of the
// abandoned try shows.
void ReadAsync(std::shared_ptr<const ReadServices> s, bool is_query, const RequestContext& ctx,
               const rapidjson::Value& body, Respond respond) {
  Result<std::shared_ptr<const ReadJob>> prepared = PrepareRead(is_query, body);
  if (!prepared.ok()) return respond(std::move(prepared).error());
  std::shared_ptr<const ReadJob> job = std::move(prepared).value();
  if (!ctx.blocking) return respond(ReadPage(*s, *job, ctx, nullptr));
  if (s->options.inline_page_bytes > 0) {
    InlineBound bound{s->options.inline_page_bytes};
    Result<std::string> page = ReadPage(*s, *job, ctx, &bound);
    if (page.ok() || !(bound.exceeded || page.error().is_kv())) return respond(std::move(page));
  }
  ctx.blocking(
      [s, job, ctx, respond = std::move(respond)] { respond(ReadPage(*s, *job, ctx, nullptr)); });
}

}  // namespace

void RegisterQueryOperations(OperationRegistry& registry, const Services& services,
                             QueryOptions options) {
  auto s = std::make_shared<ReadServices>();
  s->db = services.db;
  s->catalog = services.catalog;
  s->clock = services.clock != nullptr ? services.clock : Clock::Real();
  s->options = options;
  s->capacity = services.capacity;
  s->insights = services.insights;
  registry.Register("Query", [s](const RequestContext& ctx, const rapidjson::Value& body) {
    return ReadOp(*s, true, ctx, body);
  });
  registry.Register("Scan", [s](const RequestContext& ctx, const rapidjson::Value& body) {
    return ReadOp(*s, false, ctx, body);
  });
  for (bool is_query : {true, false}) {
    registry.RegisterAsync(
        is_query ? "Query" : "Scan",
        [s, is_query](const RequestContext& ctx, const rapidjson::Value& body, Respond respond) {
          ReadAsync(s, is_query, ctx, body, std::move(respond));
        });
  }
}

}  // namespace fdyno::api
