#include "api/vector_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/capacity.h"
#include "api/item_keys.h"
#include "api/json_util.h"
#include "expr/evaluate.h"
#include "expr/parser.h"
#include "expr/resolver.h"
#include "kv/run.h"
#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/json.h"
#include "store/items.h"
#include "store/vector_index.h"
#include "store/vector_search.h"

namespace fdyno::api {
namespace {

using model::AttributeValue;
using model::Item;
using rapidjson::Value;

constexpr std::string_view kInvalid = "One or more parameter values were invalid: ";

struct SearchRequest {
  std::string table_name;
  std::string index_name;
  std::vector<float> vector;
  int64_t top_k = 0;
  ReturnConsumedCapacity rcc = ReturnConsumedCapacity::kNone;
  // Attribute name -> value from SearchConditionExpression, in the order written.
  std::vector<std::pair<std::string, AttributeValue>> conditions;
  std::optional<expr::Projection> projection;
};

struct Members {
  const Value* table_name = nullptr;
  std::optional<std::string_view> index_name, rcc, sce, pe;
  const Value* vector = nullptr;
  std::optional<int64_t> top_k;
  const Value* names = nullptr;
  const Value* values = nullptr;
};

Result<Members> ReadMembers(const Value& body) {
  Members m;
  if (!body.IsObject()) {
    return Error::Serialization("Start of structure or map found where not expected");
  }
  auto it = body.FindMember("TableName");
  if (it != body.MemberEnd() && !it->value.IsNull()) {
    m.table_name = &it->value;
    FDYNO_RETURN_IF_ERROR(CheckShape(*m.table_name, JsonShape::kString));
  }
  FDYNO_ASSIGN_OR_RETURN(m.index_name, GetString(body, "IndexName"));
  FDYNO_ASSIGN_OR_RETURN(m.vector, GetList(body, "SearchVector"));
  if (m.vector) {
    for (const Value& v : m.vector->GetArray()) {
      FDYNO_RETURN_IF_ERROR(model::CheckAttributeValueShape(v));
    }
  }
  FDYNO_ASSIGN_OR_RETURN(m.top_k, GetInteger(body, "TopK"));
  FDYNO_ASSIGN_OR_RETURN(m.rcc, GetString(body, "ReturnConsumedCapacity"));
  FDYNO_ASSIGN_OR_RETURN(m.sce, GetString(body, "SearchConditionExpression"));
  FDYNO_ASSIGN_OR_RETURN(m.pe, GetString(body, "ProjectionExpression"));
  FDYNO_ASSIGN_OR_RETURN(m.names, GetExpressionNames(body));
  FDYNO_ASSIGN_OR_RETURN(m.values, GetExpressionValues(body));
  return m;
}

Status CheckConstraints(const Members& m) {
  ConstraintErrors e;
  CheckDataPlaneTableName(e, m.table_name);
  e.NotNull("indexName", m.index_name.has_value());
  if (m.index_name) {
    e.Pattern("indexName", *m.index_name, IsValidTableNameChars(*m.index_name), "[a-zA-Z0-9_.-]+");
    e.MinLength("indexName", *m.index_name, 3);
    e.MaxLength("indexName", *m.index_name, 255);
  }
  e.NotNull("searchVector", m.vector != nullptr);
  e.NotNull("topK", m.top_k.has_value());
  if (m.rcc) e.Enum("returnConsumedCapacity", *m.rcc, {"INDEXES", "TOTAL", "NONE"});
  return e.ToStatus();
}

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
  const bool expressions = m.sce.has_value() || m.pe.has_value();
  if (m.names && !expressions) {
    return Error::Validation(
        "ExpressionAttributeNames can only be specified when using expressions: "
        "SearchConditionExpression and ProjectionExpression are null");
  }
  if (m.values && !expressions) {
    return Error::Validation(
        "ExpressionAttributeValues can only be specified when using expressions: "
        "SearchConditionExpression and ProjectionExpression are null");
  }
  expr::AttributeNames names;
  if (m.names) {
    for (const auto& e : m.names->GetObject()) {
      names.emplace(std::string(e.name.GetString(), e.name.GetStringLength()),
                    std::string(AsStringView(e.value)));
    }
  }
  model::Map values;
  if (m.values) {
    FDYNO_ASSIGN_OR_RETURN(values, DecodeExpressionAttributeValues(*m.values));
  }
  std::optional<expr::parsed::Condition> condition;
  std::optional<expr::parsed::Projection> projection;
  if (m.sce) {
    FDYNO_ASSIGN_OR_RETURN(condition,
                           expr::ParseCondition(*m.sce, expr::ExpressionKind::kSearchCondition));
  }
  if (m.pe) {
    FDYNO_ASSIGN_OR_RETURN(projection, expr::ParseProjection(*m.pe));
  }
  if (m.names || m.values) {
    FDYNO_RETURN_IF_ERROR(
        expr::ValidateAttributeMaps(m.names ? &names : nullptr, m.values ? &values : nullptr));
  }
  expr::ResolveContext ctx(m.names ? &names : nullptr, m.values ? &values : nullptr);
  std::optional<expr::Condition> resolved;
  if (condition) {
    FDYNO_ASSIGN_OR_RETURN(
        resolved, ctx.ResolveCondition(*condition, expr::ExpressionKind::kSearchCondition));
  }
  if (projection) {
    FDYNO_ASSIGN_OR_RETURN(r.projection, ctx.ResolveProjection(*projection));
  }
  if (expressions) FDYNO_RETURN_IF_ERROR(ctx.CheckUnused());
  if (resolved) FDYNO_RETURN_IF_ERROR(CollectEqualities(*resolved, r.conditions));
  return Status::Ok();
}

Result<SearchRequest> DecodeRequest(const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(Members m, ReadMembers(body));
  FDYNO_RETURN_IF_ERROR(CheckConstraints(m));
  SearchRequest r;
  r.table_name = std::string(AsStringView(*m.table_name));
  r.index_name = std::string(*m.index_name);
  r.top_k = *m.top_k;
  if (r.top_k < 1 || r.top_k > kMaxSearchTopK) {
    return Error::Validation("Provided TopK value is out of valid range");
  }
  std::string rcc = m.rcc ? std::string(*m.rcc) : "";
  FDYNO_ASSIGN_OR_RETURN(r.rcc, ParseReturnConsumedCapacity(m.rcc ? &rcc : nullptr));
  FDYNO_ASSIGN_OR_RETURN(r.vector, DecodeVector(*m.vector));
  FDYNO_RETURN_IF_ERROR(PlanExpressions(m, r));
  return r;
}

// The store query for `r` on `index`, or the error of a request that does not fit the index.
Result<store::VectorQuery> QueryFor(const SearchRequest& r, const store::VectorIndex& index) {
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
  bool hash_given = false;
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
      hash_given = true;
    } else {
      q.filters.emplace_back(name, value);
    }
  }
  if (hash != nullptr && !hash_given) {
    return Error::Validation(
        "SearchConditionExpression must be provided when SearchSchema has "
        "a HASH key");
  }
  return q;
}

const AttributeValue* HashValue(const SearchRequest& r, const store::VectorIndex& index) {
  const store::SearchSchemaElement* hash = index.Hash();
  if (hash == nullptr) return nullptr;
  for (const auto& [name, value] : r.conditions) {
    if (name == hash->attribute.name) return &value;
  }
  return nullptr;
}

struct Found {
  std::vector<std::pair<Item, double>> results;
  double request_bytes = 0;
};

Result<Found> Search(const Services& s, kv::Transaction& tx, std::string_view account,
                     const SearchRequest& r) {
  FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> table,
                         FindActiveTable(*s.catalog, tx, account, r.table_name));
  const store::VectorIndex* index = table->FindVectorIndex(r.index_name);
  if (index == nullptr || index->status == store::IndexStatus::kDeleting) {
    return Error::Validation("The table does not have the specified index: " + r.index_name);
  }
  if (index->status != store::IndexStatus::kActive || index->backfilling) {
    return Error::Validation("Cannot search backfilling vector index: " + r.index_name);
  }
  FDYNO_ASSIGN_OR_RETURN(store::VectorQuery query, QueryFor(r, *index));
  query.hash = HashValue(r, *index);
  FDYNO_ASSIGN_OR_RETURN(store::VectorSearchResult hits,
                         store::SearchVectorIndex(tx, *table, *index, query));
  Found out;
  out.request_bytes = static_cast<double>(hits.examined * query.vector.size() * sizeof(float));
  for (const store::VectorHit& hit : hits.hits) {
    FDYNO_ASSIGN_OR_RETURN(std::string key, store::ItemKeyOfEntry(*table, *index, hit.entry_key));
    FDYNO_ASSIGN_OR_RETURN(std::optional<store::StoredItem> stored,
                           store::ReadItem(tx, key, /*snapshot=*/true));
    // The entry and its item are of one snapshot: an entry without its item is corruption.
    if (!stored) return Error::Internal("vector index entry without its item");
    FDYNO_ASSIGN_OR_RETURN(Item image, model::DecodeStoredItem(stored->image));
    Item item = store::ProjectForVectorIndex(*table, *index, image);
    if (r.projection) item = expr::Project(item, *r.projection);
    out.request_bytes += static_cast<double>(model::ItemSize(item));
    out.results.emplace_back(std::move(item), hit.score);
  }
  return out;
}

std::string Render(const SearchRequest& r, const Found& f) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("SearchResults");
  w.StartArray();
  for (const auto& [item, score] : f.results) {
    w.StartObject();
    w.Key("Item");
    model::WriteItem(w, item);
    w.Key("Score");
    w.Double(score);
    w.EndObject();
  }
  w.EndArray();
  if (r.rcc != ReturnConsumedCapacity::kNone) {
    w.Key("ConsumedCapacity");
    w.StartObject();
    w.Key("VectorSearchRequestBytes");
    w.Double(f.request_bytes);
    w.EndObject();
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

Result<std::string> SearchVectors(const Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(SearchRequest r, DecodeRequest(body));
  kv::RunOptions options;
  if (ctx.deadline != std::chrono::steady_clock::time_point{}) options.deadline = ctx.deadline;
  options.clock = s.clock;
  options.read_only = true;
  FDYNO_ASSIGN_OR_RETURN(Found found,
                         kv::Run(*s.db, options, [&](kv::Transaction& tx, const kv::Attempt&) {
                           return Search(s, tx, ctx.account_id, r);
                         }));
  return Render(r, found);
}

}  // namespace

void RegisterVectorOperations(OperationRegistry& registry, const Services& services) {
  registry.Register("SearchVectors", [services](const RequestContext& ctx, const Value& body) {
    return SearchVectors(services, ctx, body);
  });
}

}  // namespace fdyno::api
