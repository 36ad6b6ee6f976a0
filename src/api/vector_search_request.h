// SearchVectors' request: everything checked before any I/O (DecodeSearchRequest), and the
// checks against the vector index it names (SearchQueryFor), with DynamoDB's errors.
//
// Order of checks in DecodeSearchRequest: the members' JSON types (SerializationException), the
// model's constraints collected in one ValidationException (TableName, IndexName, SearchVector,
// TopK, ReturnConsumedCapacity), TopK's range (1 to kMaxSearchTopK), the search vector's
// elements (numbers within the float32 range), then the expressions: ExpressionAttributeNames
// and ExpressionAttributeValues only with an expression, SearchConditionExpression (equalities
// on top-level attributes joined by AND, one per attribute) and ProjectionExpression parsed and
// resolved, every name and value used. SearchQueryFor then checks the vector's dimensions and
// the condition against the index's search schema (attributes, types, HASH required when the
// schema has one).
//
// Pure functions; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/capacity.h"
#include "base/result.h"
#include "expr/ast.h"
#include "model/attribute_value.h"
#include "store/catalog.h"
#include "store/vector_search.h"

namespace fdyno::api {

inline constexpr int64_t kMaxSearchTopK = 100;

struct SearchRequest {
  std::string table_name;  // a name or an ARN, as given
  std::string index_name;
  std::vector<float> vector;
  int64_t top_k = 0;
  ReturnConsumedCapacity rcc = ReturnConsumedCapacity::kNone;
  // Attribute name -> value from SearchConditionExpression, in the order written.
  std::vector<std::pair<std::string, model::AttributeValue>> conditions;
  std::optional<expr::Projection> projection;
};

// The request, or the first error a client would get from DynamoDB for it (header comment).
Result<SearchRequest> DecodeSearchRequest(const rapidjson::Value& body);

// The store query of `r` on `index`, or the ValidationException of a request that does not fit
// the index. The query points into `r` (its HASH value): `r` must outlive it.
Result<store::VectorQuery> SearchQueryFor(const SearchRequest& r, const store::VectorIndex& index);

}  // namespace fdyno::api
