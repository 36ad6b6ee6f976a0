// libFuzzer target for SearchVectors' request (api/vector_search_request.h): DecodeSearchRequest,
// then SearchQueryFor against a vector index whose search schema has a HASH attribute or not
// (bit 0 of the first byte) and whose dimensions are the request's or 3 (bit 1). The rest of
// the input is the body, admitted as the router admits it (api_body.h). Invariants: no crash,
// no sanitizer report, every error a ValidationException or SerializationException; a decoded
// request has a TopK of 1 to kMaxSearchTopK, finite vector elements and at most one condition
// per attribute; a query has the index's dimensions, the request's TopK, a HASH value exactly
// when the schema has a HASH attribute, and one filter for every other condition.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "api/vector_search_request.h"
#include "api_body.h"

namespace {

using fdyno::fuzz::Require;
using fdyno::fuzz::RequireClientError;

fdyno::store::VectorIndex Index(bool with_hash, int64_t dimensions) {
  fdyno::store::VectorIndex index;
  index.name = "vix";
  index.attribute = "v";
  index.dimensions = dimensions;
  if (with_hash) {
    index.search_schema.push_back(
        {{"cat", fdyno::store::ScalarType::kS}, fdyno::store::SearchRole::kHash});
  }
  index.search_schema.push_back(
      {{"sz", fdyno::store::ScalarType::kN}, fdyno::store::SearchRole::kInlineFilter});
  index.search_schema.push_back(
      {{"tag", fdyno::store::ScalarType::kB}, fdyno::store::SearchRole::kInlineFilter});
  return index;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  rapidjson::Document doc;
  if (!fdyno::fuzz::ParseBody({reinterpret_cast<const char*>(data) + 1, size - 1}, doc)) return 0;
  fdyno::Result<fdyno::api::SearchRequest> r = fdyno::api::DecodeSearchRequest(doc);
  if (!r.ok()) {
    RequireClientError(r.error());
    return 0;
  }
  Require(r->top_k >= 1 && r->top_k <= fdyno::api::kMaxSearchTopK);
  for (float f : r->vector) Require(std::isfinite(f));
  std::set<std::string> names;
  for (const auto& [name, value] : r->conditions) Require(names.insert(name).second);

  const bool with_hash = (data[0] & 1) != 0;
  const int64_t dimensions = (data[0] & 2) != 0 ? static_cast<int64_t>(r->vector.size()) : 3;
  const fdyno::store::VectorIndex index = Index(with_hash, dimensions);
  fdyno::Result<fdyno::store::VectorQuery> q = fdyno::api::SearchQueryFor(*r, index);
  if (!q.ok()) {
    Require(q.error().type == fdyno::ErrorType::kValidation);
    return 0;
  }
  Require(static_cast<int64_t>(q->vector.size()) == index.dimensions);
  Require(q->top_k == r->top_k);
  Require((q->hash != nullptr) == with_hash);
  Require(q->filters.size() + (with_hash ? 1 : 0) == r->conditions.size());
  return 0;
}
