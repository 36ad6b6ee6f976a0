#include "api/vector_search_request.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/json_util.h"
#include "api/parameter_mix.h"
#include "api/request_model.h"
#include "expr/parser.h"
#include "expr/resolver.h"
#include "model/json.h"
#include "store/vector_index.h"

namespace fdyno::api {
namespace {

using model::AttributeValue;
using rapidjson::Value;

constexpr std::string_view kInvalid = "One or more parameter values were invalid: ";

using request::Check;
using request::Read;
using request::Rule;

struct Members {
  const Value* table_name = nullptr;
  const Value* index_name = nullptr;
  const Value* vector = nullptr;
  const Value* top_k = nullptr;
  const Value* rcc = nullptr;
  const Value* sce = nullptr;
  const Value* pe = nullptr;
  const Value* names = nullptr;
  const Value* values = nullptr;
};
using M = Members;

constexpr Read<M> kReads[] = {
    {"TableName", &M::table_name, JsonShape::kString},
    {"IndexName", &M::index_name, JsonShape::kString},
    {"SearchVector", &M::vector, JsonShape::kList, {}, request::AttributeValueElements},
    {"TopK", &M::top_k, JsonShape::kInteger},
    {"ReturnConsumedCapacity", &M::rcc, JsonShape::kString},
    {"SearchConditionExpression", &M::sce, JsonShape::kString},
    {"ProjectionExpression", &M::pe, JsonShape::kString},
    {"ExpressionAttributeNames", &M::names, JsonShape::kMap, "String", request::StringValues},
    {"ExpressionAttributeValues", &M::values, JsonShape::kMap, "AttributeValue",
     request::AttributeValues},
};

constexpr Check<M> kChecks[] = {
    request::DataPlaneTableName(&M::table_name),
    request::NotNull(&M::index_name, "indexName"),
    request::NamePattern(&M::index_name, "indexName"),
    request::Bound(&M::index_name, "indexName", Rule::kMinLength, 3),
    request::Bound(&M::index_name, "indexName", Rule::kMaxLength, 255),
    request::NotNull(&M::vector, "searchVector"),
    request::NotNull(&M::top_k, "topK"),
    request::Enum(&M::rcc, "returnConsumedCapacity", request::kReturnConsumedCapacity),
};

// The search vector as float32 values (each a number within the float32 range).
Result<std::vector<float>> DecodeVector(const Value& list) {
  model::List values;
  for (const Value& v : list.GetArray()) {
    FDYNO_ASSIGN_OR_RETURN(AttributeValue a, model::DecodeAttributeValue(v));
    values.push_back(std::move(a));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].type() != model::Type::kN) {
      return Error::Validation(
          std::string(kInvalid) + "Type mismatch for SearchVector[" + std::to_string(i) +
          "] Expected: N Actual: " + std::string(model::TypeName(values[i].type())));
    }
  }
  const AttributeValue list_value{values};
  std::optional<std::vector<float>> out =
      store::ParseVector(list_value, static_cast<int64_t>(values.size()));
  if (!out) {
    return Error::Validation(std::string(kInvalid) +
                             "SearchVector holds a value out of range for a 32-bit float");
  }
  return std::move(*out);
}

// The equalities of a SearchConditionExpression: "a = :v" terms joined by AND, each on a
// distinct top-level attribute.
Status CollectEqualities(const expr::Condition& c,
                         std::vector<std::pair<std::string, AttributeValue>>& out) {
  using Kind = expr::Condition::Kind;
  if (c.kind == Kind::kAnd) {
    for (const expr::Condition& child : c.children) {
      FDYNO_RETURN_IF_ERROR(CollectEqualities(child, out));
    }
    return Status::Ok();
  }
  if (c.kind == Kind::kOr || c.kind == Kind::kNot) {
    return Error::Validation(std::string("Invalid operator used in SearchConditionExpression: ") +
                             (c.kind == Kind::kOr ? "OR" : "NOT"));
  }
  if (c.kind != Kind::kCompare || c.op != expr::CompareOp::kEq) {
    return Error::Validation("Invalid comparator used in SearchConditionExpression");
  }
  const expr::Operand* path = &c.operands[0];
  const expr::Operand* value = &c.operands[1];
  if (path->is_value()) std::swap(path, value);
  if (!path->is_path() || !value->is_value()) {
    return Error::Validation("Invalid comparator used in SearchConditionExpression");
  }
  if (path->path().elements.size() != 1) {
    return Error::Validation("SearchConditionExpression can only reference top-level attributes: " +
                             expr::PathToString(path->path()));
  }
  for (const auto& [name, v] : out) {
    if (name == path->path().root()) {
      return Error::Validation(
          "SearchConditionExpressions must only contain one condition per attribute: " + name);
    }
  }
  out.emplace_back(path->path().root(), value->value());
  return Status::Ok();
}

Status PlanExpressions(const Members& m, SearchRequest& r) {
  FDYNO_RETURN_IF_ERROR(ParameterMix()
                            .Expression("SearchConditionExpression", m.sce != nullptr)
                            .Expression("ProjectionExpression", m.pe != nullptr)
                            .CheckAttributeMaps(m.names != nullptr, m.values != nullptr));
  expr::AttributeNames names;
  if (m.names) {
    FDYNO_ASSIGN_OR_RETURN(names, DecodeExpressionAttributeNames(*m.names));
  }
  model::Map values;
  if (m.values) {
    FDYNO_ASSIGN_OR_RETURN(values, DecodeExpressionAttributeValues(*m.values));
  }
  std::optional<expr::parsed::Condition> condition;
  std::optional<expr::parsed::Projection> projection;
  if (m.sce) {
    FDYNO_ASSIGN_OR_RETURN(condition, expr::ParseCondition(AsStringView(*m.sce),
                                                           expr::ExpressionKind::kSearchCondition));
  }
  if (m.pe) {
    FDYNO_ASSIGN_OR_RETURN(projection, expr::ParseProjection(AsStringView(*m.pe)));
  }
  FDYNO_ASSIGN_OR_RETURN(
      expr::ResolveContext ctx,
      expr::ResolveContext::ForRequest(m.names ? &names : nullptr, m.values ? &values : nullptr));
  std::optional<expr::Condition> resolved;
  if (condition) {
    FDYNO_ASSIGN_OR_RETURN(
        resolved, ctx.ResolveCondition(*condition, expr::ExpressionKind::kSearchCondition));
  }
  if (projection) {
    FDYNO_ASSIGN_OR_RETURN(r.projection, ctx.ResolveProjection(*projection));
  }
  if (m.sce || m.pe) FDYNO_RETURN_IF_ERROR(ctx.CheckUnused());
  if (resolved) FDYNO_RETURN_IF_ERROR(CollectEqualities(*resolved, r.conditions));
  return Status::Ok();
}

}  // namespace

Result<SearchRequest> DecodeSearchRequest(const Value& body) {
  Members m;
  FDYNO_RETURN_IF_ERROR(request::ReadMembers<M>(body, kReads, m));
  FDYNO_RETURN_IF_ERROR(request::CheckMembers<M>(kChecks, m));
  SearchRequest r;
  r.table_name = std::string(AsStringView(*m.table_name));
  r.index_name = std::string(AsStringView(*m.index_name));
  r.top_k = *AsInt64(*m.top_k);
  if (r.top_k < 1 || r.top_k > kMaxSearchTopK) {
    return Error::Validation("Provided TopK value is out of valid range");
  }
  FDYNO_ASSIGN_OR_RETURN(r.rcc, ParseReturnConsumedCapacity(request::Text(m.rcc)));
  FDYNO_ASSIGN_OR_RETURN(r.vector, DecodeVector(*m.vector));
  FDYNO_RETURN_IF_ERROR(PlanExpressions(m, r));
  return r;
}

Result<store::VectorQuery> SearchQueryFor(const SearchRequest& r, const store::VectorIndex& index) {
  if (static_cast<int64_t>(r.vector.size()) != index.dimensions) {
    return Error::Validation(std::string(kInvalid) + "SearchVector has " +
                             std::to_string(r.vector.size()) +
                             " dimensions, but the index requires " +
                             std::to_string(index.dimensions) + ". IndexName: " + index.name);
  }
  store::VectorQuery q;
  q.vector = r.vector;
  q.top_k = static_cast<int>(r.top_k);
  const store::SearchSchemaElement* hash = index.Hash();
  for (const auto& [name, value] : r.conditions) {
    const store::SearchSchemaElement* element = nullptr;
    for (const store::SearchSchemaElement& e : index.search_schema) {
      if (e.attribute.name == name) element = &e;
    }
    if (element == nullptr) {
      return Error::Validation(
          "SearchConditionExpression can only reference SearchSchema "
          "attributes of the index: " +
          name);
    }
    if (value.type() != model::ToType(element->attribute.type)) {
      return Error::Validation(std::string(kInvalid) +
                               "Condition parameter type does not match schema type");
    }
    if (element == hash) {
      q.hash = &value;
    } else {
      q.filters.emplace_back(name, value);
    }
  }
  if (hash != nullptr && q.hash == nullptr) {
    return Error::Validation(
        "SearchConditionExpression must be provided when SearchSchema has "
        "a HASH key");
  }
  return q;
}

}  // namespace fdyno::api
