// vector_bench: exact SearchVectors throughput against a baseline in the same run.
//
//   ninja -C build vector_bench && build/bench/vector_bench [ITEMS=20000] [DIMS=128] [ROUNDS=20]
//
// Loads ITEMS items with random DIMS-dimension vectors into a table with a EUCLIDEAN vector
// index (in-memory embedded engine, through the mutation path), then times, in one process:
//   * search: store::SearchVectorIndex with TopK 10 over every entry, plus reading the 10 base
//     items (what SearchVectors does inside its transaction);
//   * baseline: reading and decoding all ITEMS base items in one transaction (a Query or Scan
//     returning the same number of items, without the HTTP rendering).
// Prints both rates and search/baseline. Prints figures; never fails.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kv/engines/embedded/embedded.h"
#include "kv/run.h"
#include "model/item_codec.h"
#include "store/catalog.h"
#include "store/items.h"
#include "store/layout.h"
#include "store/mutation.h"
#include "store/vector_index.h"
#include "store/vector_search.h"

namespace {

using namespace fdyno;  // NOLINT: benchmark brevity

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

void Check(const Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.error().message.c_str());
    std::exit(1);
  }
}

store::TableInfo MakeTable(int64_t dims) {
  store::TableInfo t;
  t.name = "bench";
  t.id = 1;
  t.key_schema.hash = {"pk", store::ScalarType::kS};
  t.billing_mode = store::BillingMode::kPayPerRequest;
  store::VectorIndex v;
  v.name = "vix";
  v.id = 1;
  v.attribute = "v";
  v.dimensions = dims;
  v.distance = store::DistanceFunction::kEuclidean;
  t.vector_indexes.push_back(v);
  return t;
}

model::AttributeValue RandomVector(std::mt19937& rng, int64_t dims) {
  std::uniform_real_distribution<float> u(-1, 1);
  model::List list;
  for (int64_t d = 0; d < dims; ++d) {
    list.push_back(model::AttributeValue::N(*model::Number::Parse(std::to_string(u(rng)))));
  }
  return model::AttributeValue{list};
}

void Load(kv::Database& db, const store::TableInfo& t, int64_t items, int64_t dims) {
  std::mt19937 rng(42);
  for (int64_t first = 0; first < items; first += 500) {
    std::vector<model::Item> batch;
    for (int64_t i = first; i < std::min(items, first + 500); ++i) {
      batch.push_back({{"pk", model::AttributeValue::S("k" + std::to_string(i))},
                       {"v", RandomVector(rng, dims)},
                       {"title", model::AttributeValue::S("item " + std::to_string(i))}});
    }
    Check(kv::Run(db,
                  [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                    store::Mutation m({});
                    for (const model::Item& item : batch) {
                      std::string key = store::ItemStorageKey(t, item);
                      FDYNO_ASSIGN_OR_RETURN(store::CurrentItem cur,
                                             store::ReadCurrent(tx, t, key, false));
                      FDYNO_RETURN_IF_ERROR(m.Stage(t, std::move(cur), item));
                    }
                    FDYNO_RETURN_IF_ERROR(m.Write(tx));
                    return Status::Ok();
                  }),
          "load");
  }
}

Status SearchOnce(kv::Database& db, const store::TableInfo& t, const std::vector<float>& query) {
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    store::VectorQuery q;
    q.vector = query;
    q.top_k = 10;
    FDYNO_ASSIGN_OR_RETURN(store::VectorSearchResult r,
                           store::SearchVectorIndex(tx, t, t.vector_indexes[0], q));
    for (const store::VectorHit& h : r.hits) {
      FDYNO_ASSIGN_OR_RETURN(std::string key,
                             store::ItemKeyOfEntry(t, t.vector_indexes[0], h.entry_key));
      FDYNO_ASSIGN_OR_RETURN(std::optional<store::StoredItem> stored,
                             store::ReadItem(tx, key, true));
      if (!stored) return Error::Internal("entry without its item");
      FDYNO_ASSIGN_OR_RETURN(model::Item item, model::DecodeStoredItem(stored->image));
    }
    return Status::Ok();
  });
}

Status ReadAllOnce(kv::Database& db, const store::TableInfo& t, int64_t* count) {
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    auto [from, end] = store::layout::Items(t.id).Range();
    *count = 0;
    while (from < end) {
      kv::RangeOptions ro;
      ro.limit = 1024;
      ro.snapshot = true;
      FDYNO_ASSIGN_OR_RETURN(kv::RangeResult page, tx.GetRange(from, end, ro));
      for (const kv::KeyValue& kv : page.kvs) {
        FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> image, store::WholeImage(kv.value));
        if (!image) continue;
        FDYNO_ASSIGN_OR_RETURN(model::Item item, model::DecodeStoredItem(*image));
        ++*count;
      }
      if (!page.more || page.kvs.empty()) break;
      from = page.kvs.back().key + '\x00';
    }
    return Status::Ok();
  });
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t items = argc > 1 ? std::atoll(argv[1]) : 20'000;
  const int64_t dims = argc > 2 ? std::atoll(argv[2]) : 128;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 20;
  auto opened = kv::OpenEmbedded({.path = "vector_bench", .in_memory = true});
  if (!opened.ok()) return 1;
  std::unique_ptr<kv::Database> db = std::move(opened).value();
  const store::TableInfo t = MakeTable(dims);
  auto start = std::chrono::steady_clock::now();
  Load(*db, t, items, dims);
  std::printf("loaded %lld items of %lld dimensions in %.1f s\n", static_cast<long long>(items),
              static_cast<long long>(dims), Seconds(start));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<double> search_s, read_s;
  int64_t read_items = 0;
  for (int r = 0; r < rounds; ++r) {
    std::vector<float> query(dims);
    for (float& f : query) f = u(rng);
    start = std::chrono::steady_clock::now();
    Check(SearchOnce(*db, t, query), "search");
    search_s.push_back(Seconds(start));
    start = std::chrono::steady_clock::now();
    Check(ReadAllOnce(*db, t, &read_items), "read");
    read_s.push_back(Seconds(start));
  }
  std::sort(search_s.begin(), search_s.end());
  std::sort(read_s.begin(), read_s.end());
  const double search_p50 = search_s[search_s.size() / 2];
  const double read_p50 = read_s[read_s.size() / 2];
  std::printf("exact search, TopK 10:          p50 %.2f ms  %.1f searches/s\n", search_p50 * 1e3,
              1 / search_p50);
  std::printf("baseline, read+decode %lld items: p50 %.2f ms  %.1f reads/s\n",
              static_cast<long long>(read_items), read_p50 * 1e3, 1 / read_p50);
  std::printf("search / baseline throughput: %.2fx\n", read_p50 / search_p50);
  return 0;
}
