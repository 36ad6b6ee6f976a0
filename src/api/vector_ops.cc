#include "api/vector_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/item_keys.h"
#include "api/table_arn.h"
#include "api/vector_search_request.h"
#include "expr/evaluate.h"
#include "kv/run.h"
#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/json.h"
#include "store/items.h"
#include "store/vector_index.h"
#include "store/vector_search.h"

namespace fdyno::api {
namespace {

using model::Item;
using rapidjson::Value;

struct Found {
  std::vector<std::pair<Item, double>> results;
  double request_bytes = 0;
};

Result<Found> Search(const Services& s, kv::Transaction& tx, store::TableScope scope,
                     const SearchRequest& r) {
  FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> table,
                         FindActiveTable(*s.catalog, tx, scope, r.table_name));
  const store::VectorIndex* index = table->FindVectorIndex(r.index_name);
  if (index == nullptr || index->status == store::IndexStatus::kDeleting) {
    return Error::Validation("The table does not have the specified index: " + r.index_name);
  }
  if (index->status != store::IndexStatus::kActive || index->backfilling) {
    return Error::Validation("Cannot search backfilling vector index: " + r.index_name);
  }
  FDYNO_ASSIGN_OR_RETURN(store::VectorQuery query, SearchQueryFor(r, *index));
  store::VectorSearchOptions options;
  options.graphs = s.vector_graphs;
  FDYNO_ASSIGN_OR_RETURN(store::VectorSearchResult hits,
                         store::SearchVectorIndex(tx, *table, *index, query, options));
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
  FDYNO_ASSIGN_OR_RETURN(SearchRequest r, DecodeSearchRequest(body));
  kv::RunOptions options;
  if (ctx.deadline != std::chrono::steady_clock::time_point{}) options.deadline = ctx.deadline;
  options.clock = s.clock;
  options.read_only = true;
  FDYNO_ASSIGN_OR_RETURN(Found found,
                         kv::Run(*s.db, options, [&](kv::Transaction& tx, const kv::Attempt&) {
                           return Search(s, tx, CallerScope(ctx), r);
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
