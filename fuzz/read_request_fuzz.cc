// libFuzzer target for Query and Scan requests: PrepareRead (DecodeReadRequest, then
// PlanExpressions: expressions parsed and resolved, legacy conditions converted), as the
// handlers call it, then every check a page makes before its first read (ReadPage), against a
// fixed table or index instead of one looked up in a database: the unprojected attributes an
// index read needs, the key condition against the key schema, a filter on key attributes,
// ExclusiveStartKey against the schema and the key condition, and the key range read. The first
// byte picks Query or Scan (bit 0) and the table or index read (the other bits); the rest is the
// body, admitted as the router admits it (api_body.h). Invariants: no crash, no sanitizer
// report, every error a ValidationException or SerializationException; a decoded request has
// Segment and TotalSegments both or neither with 0 <= Segment < TotalSegments <= 1000000, a
// Limit of 0 (none) or at least 1, no KeyConditions with a KeyConditionExpression, and a Query
// has a key condition.
//
// BatchGetItem and BatchWriteItem have their own target (batch_request_fuzz.cc).
//
// The functions are internal to query_ops.cc (no header declares them), so this file includes
// query_ops.cc: its definitions are this program's own, and the linker never takes query_ops.cc's
// object out of libfdyno_api.a, since this file already defines every symbol it would bring.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api_body.h"
// The file under test, last: see the header comment.
#include "api/query_ops.cc"

namespace fdyno::api {
namespace {

using fuzz::Require;
using fuzz::RequireClientError;
using model::KeyAttribute;
using model::ScalarType;

model::KeySchema Key(KeyAttribute hash, std::optional<KeyAttribute> range) {
  model::KeySchema key;
  key.hash = std::move(hash);
  key.range = std::move(range);
  return key;
}

store::SecondaryIndex Index(std::string name, int64_t id, model::KeySchema key,
                            store::ProjectionType projection,
                            std::vector<std::string> non_key = {}) {
  store::SecondaryIndex i;
  i.name = std::move(name);
  i.id = id;
  i.key_schema = std::move(key);
  i.projection.type = projection;
  i.projection.non_key_attributes = std::move(non_key);
  return i;
}

// The pages a request may read: a table with a sort key, its local index, a global index, a
// global index with a multi-attribute key, and a table with a partition key only.
std::vector<PageTarget> MakeTargets() {
  auto a = std::make_shared<store::TableInfo>();
  a->name = "tbl";
  a->id = 7;
  a->key_schema = Key({"pk", ScalarType::kS}, KeyAttribute{"sk", ScalarType::kN});
  a->local_indexes.push_back(Index("lsi", 1,
                                   Key({"pk", ScalarType::kS}, KeyAttribute{"lsk", ScalarType::kS}),
                                   store::ProjectionType::kKeysOnly));
  a->global_indexes.push_back(
      Index("gsi", 2, Key({"gpk", ScalarType::kN}, KeyAttribute{"gsk", ScalarType::kB}),
            store::ProjectionType::kInclude, {"a"}));
  model::KeySchema multi = Key({"h1", ScalarType::kS}, KeyAttribute{"r1", ScalarType::kS});
  multi.more_hash.push_back({"h2", ScalarType::kN});
  multi.more_range.push_back({"r2", ScalarType::kN});
  a->global_indexes.push_back(Index("multi", 3, multi, store::ProjectionType::kAll));
  auto b = std::make_shared<store::TableInfo>();
  b->name = "hash";
  b->id = 8;
  b->key_schema = Key({"pk", ScalarType::kB}, std::nullopt);
  std::shared_ptr<const store::TableInfo> ca = a, cb = b;
  return {MakePageTarget(ca, nullptr), MakePageTarget(ca, &a->local_indexes[0]),
          MakePageTarget(ca, &a->global_indexes[0]), MakePageTarget(ca, &a->global_indexes[1]),
          MakePageTarget(cb, nullptr)};
}

void CheckRequest(const ReadRequest& r) {
  Require(r.segment.has_value() == r.total_segments.has_value());
  if (r.segment) {
    Require(*r.segment >= 0 && *r.segment < *r.total_segments && *r.total_segments <= 1000000);
  }
  Require(r.limit >= 0);
  Require(!(r.key_conditions && r.key_condition_expression));
  if (r.is_query) Require(r.key_conditions || r.key_condition_expression);
}

// ReadPage's checks up to its first read, in its order.
void CheckPage(const ReadJob& job, const PageTarget& t) {
  const ReadRequest& r = job.r;
  const Plan& plan = job.plan;
  Result<bool> fetch_base = PlanUnprojectedReads(r, plan, t);
  if (!fetch_base.ok()) return RequireClientError(fetch_base.error());
  std::optional<expr::KeyCondition> kc;
  if (r.is_query) {
    Require(plan.key_condition.has_value());
    Result<expr::KeyCondition> extracted = QueryKeyCondition(t, plan);
    if (!extracted.ok()) return RequireClientError(extracted.error());
    kc = std::move(extracted).value();
    Status keys = CheckFilterOnKeys(t, plan);
    if (!keys.ok()) return RequireClientError(keys.error());
  }
  if (r.exclusive_start_key) {
    Status valid = ValidateStartKey(*t.table, t.index, *r.exclusive_start_key, r.is_query);
    if (!valid.ok()) return RequireClientError(valid.error());
    if (kc && t.index == nullptr && !t.table->key_schema.range) return;
    if (kc && !kc->range) {
      Status inside = CheckStartKeyInPartition(t, *kc, *r.exclusive_start_key);
      if (!inside.ok()) return RequireClientError(inside.error());
    }
  }
  std::string begin, end;
  if (kc) {
    Result<std::pair<std::string, std::string>> range = QueryRange(t, *kc);
    if (!range.ok()) return RequireClientError(range.error());
    std::tie(begin, end) = std::move(range).value();
  } else {
    std::tie(begin, end) = ScanRange(t, r);
  }
  if (r.exclusive_start_key) {
    const std::string start = StartKeyEntry(t, *r.exclusive_start_key);
    if (kc && kc->range) {
      Status inside = CheckStartKeyInRange(begin, end, start, r.forward, kc->range->op);
      if (!inside.ok()) return RequireClientError(inside.error());
    }
  }
}

void FuzzRead(const uint8_t* data, size_t size) {
  if (size == 0) return;
  static const std::vector<PageTarget>* targets = new std::vector<PageTarget>(MakeTargets());
  const bool is_query = (data[0] & 1) == 0;
  const PageTarget& target = (*targets)[(data[0] >> 1) % targets->size()];
  rapidjson::Document doc;
  if (!fuzz::ParseBody({reinterpret_cast<const char*>(data) + 1, size - 1}, doc)) return;
  Result<std::shared_ptr<const ReadJob>> job = PrepareRead(is_query, doc);
  if (!job.ok()) return RequireClientError(job.error());
  CheckRequest((*job)->r);
  CheckPage(**job, target);
}

}  // namespace
}  // namespace fdyno::api

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fdyno::api::FuzzRead(data, size);
  return 0;
}
