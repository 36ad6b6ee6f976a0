// vector_bench: SearchVectors, exact and approximate, against baselines in the same run.
//
//   ninja -C build vector_bench && build/bench/vector_bench [ITEMS=20000] [DIMS=128] [ROUNDS=100]
//       [M] [EF_CONSTRUCTION] [EF_SEARCH]   (the graph's parameters; default
//       store::VectorGraphOptions)
//
// Loads ITEMS items with random DIMS-dimension vectors into a table with a EUCLIDEAN vector
// index (in-memory embedded engine, through the mutation path), then, in one process:
//   * exact: store::SearchVectorIndex with TopK 10 over every entry, plus reading the 10 base
//     items (what SearchVectors does inside its transaction);
//   * baseline of exact: reading and decoding all ITEMS base items in one transaction (a Query
//     or Scan returning the same number of items, without the HTTP rendering), 5 rounds;
//   * approximate: the same searches through the HNSW graph (store/vector_graphs.h), built once
//     (timed, and its memory measured as the resident set's growth per vector), with the
//     recall@10 of its hits against the exact search's.
// Prints p50/p99 latencies, searches/s, recall and ratios. Prints figures; never fails.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kv/engines/embedded/embedded.h"
#include "kv/run.h"
#include "model/item_codec.h"
#include "store/catalog.h"
#include "store/items.h"
#include "store/layout.h"
#include "store/mutation.h"
#include "store/vector_graphs.h"
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
                      m.Stage(t, std::move(cur), item);
                    }
                    FDYNO_RETURN_IF_ERROR(m.Write(tx));
                    return Status::Ok();
                  }),
          "load");
  }
}

// One SearchVectors' work: the search and reading its hits' items. Fills `hits`.
Status SearchOnce(kv::Database& db, const store::TableInfo& t, const std::vector<float>& query,
                  store::VectorGraphs* graphs, std::vector<std::string>* hits) {
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    store::VectorQuery q;
    q.vector = query;
    q.top_k = 10;
    store::VectorSearchOptions options;
    options.graphs = graphs;
    FDYNO_ASSIGN_OR_RETURN(store::VectorSearchResult r,
                           store::SearchVectorIndex(tx, t, t.vector_indexes[0], q, options));
    if (graphs != nullptr && !r.approximate) return Error::Internal("not approximate");
    hits->clear();
    for (const store::VectorHit& h : r.hits) {
      FDYNO_ASSIGN_OR_RETURN(std::string key,
                             store::ItemKeyOfEntry(t, t.vector_indexes[0], h.entry_key));
      FDYNO_ASSIGN_OR_RETURN(std::optional<store::StoredItem> stored,
                             store::ReadItem(tx, key, true));
      if (!stored) return Error::Internal("entry without its item");
      FDYNO_ASSIGN_OR_RETURN(model::Item item, model::DecodeStoredItem(stored->image));
      hits->push_back(h.entry_key);
    }
    return Status::Ok();
  });
}

// The resident set size in bytes (Linux).
double ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  double pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * 4096;
}

struct Latencies {
  std::vector<double> s;
  double total = 0;
  void Add(double seconds) {
    s.push_back(seconds);
    total += seconds;
  }
  double Quantile(double q) {
    std::sort(s.begin(), s.end());
    return s[std::min(s.size() - 1, static_cast<size_t>(q * static_cast<double>(s.size())))];
  }
  double PerSecond() const { return static_cast<double>(s.size()) / total; }
};

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
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 100;
  auto opened = kv::OpenEmbedded({.path = "vector_bench", .in_memory = true});
  if (!opened.ok()) return 1;
  std::unique_ptr<kv::Database> db = std::move(opened).value();
  const store::TableInfo t = MakeTable(dims);
  auto start = std::chrono::steady_clock::now();
  Load(*db, t, items, dims);
  std::printf("loaded %lld items of %lld dimensions in %.1f s\n", static_cast<long long>(items),
              static_cast<long long>(dims), Seconds(start));
  const double rss_before = ResidentBytes();
  store::VectorGraphsOptions graph_options;
  graph_options.threshold = 1;
  if (argc > 4) graph_options.graph.m = static_cast<size_t>(std::atoll(argv[4]));
  if (argc > 5) graph_options.graph.ef_construction = static_cast<size_t>(std::atoll(argv[5]));
  if (argc > 6) graph_options.graph.ef_search = static_cast<size_t>(std::atoll(argv[6]));
  std::printf("graph: M %zu, ef_construction %zu, ef_search %zu\n", graph_options.graph.m,
              graph_options.graph.ef_construction, graph_options.graph.ef_search);
  store::VectorGraphs graphs(db.get(), nullptr, graph_options);
  start = std::chrono::steady_clock::now();
  Check(graphs.Build(t, t.vector_indexes[0]), "build");
  const double build_s = Seconds(start);
  const double graph_bytes = ResidentBytes() - rss_before;
  std::printf("graph built in %.1f s (%.0f vectors/s), resident set +%.0f MB: %.0f bytes/vector\n",
              build_s, static_cast<double>(items) / build_s, graph_bytes / 1e6,
              graph_bytes / static_cast<double>(items));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<std::vector<float>> queries(static_cast<size_t>(rounds));
  for (std::vector<float>& q : queries) {
    q.resize(static_cast<size_t>(dims));
    for (float& f : q) f = u(rng);
  }
  // Exact (the reference) and the baseline.
  Latencies exact, read;
  int64_t read_items = 0;
  std::vector<std::vector<std::string>> truth(queries.size());
  for (size_t r = 0; r < queries.size(); ++r) {
    start = std::chrono::steady_clock::now();
    Check(SearchOnce(*db, t, queries[r], nullptr, &truth[r]), "search");
    exact.Add(Seconds(start));
    if (r >= 5) continue;
    start = std::chrono::steady_clock::now();
    Check(ReadAllOnce(*db, t, &read_items), "read");
    read.Add(Seconds(start));
  }
  const double exact_p50 = exact.Quantile(0.5), exact_p99 = exact.Quantile(0.99);
  std::printf("exact search, TopK 10:          p50 %.2f ms  p99 %.2f ms  %.1f searches/s\n",
              exact_p50 * 1e3, exact_p99 * 1e3, exact.PerSecond());
  const double read_p50 = read.Quantile(0.5);
  std::printf("baseline, read+decode %lld items: p50 %.2f ms  %.1f reads/s\n",
              static_cast<long long>(read_items), read_p50 * 1e3, 1 / read_p50);
  std::printf("exact search / baseline throughput: %.2fx\n", read_p50 / exact_p50);
  // Approximate, the same queries, at the configured beam width and wider ones.
  std::shared_ptr<store::VectorGraph> graph = graphs.Find(t.id, t.vector_indexes[0].id);
  const size_t ef = graph_options.graph.ef_search;
  for (size_t breadth : {ef, ef * 2, ef * 4}) {
    graph->SetSearchBreadth(breadth);
    Latencies approx;
    double recall = 0;
    std::vector<std::string> hits;
    for (size_t r = 0; r < queries.size(); ++r) {
      start = std::chrono::steady_clock::now();
      Check(SearchOnce(*db, t, queries[r], &graphs, &hits), "approximate search");
      approx.Add(Seconds(start));
      const std::set<std::string> got(hits.begin(), hits.end());
      size_t found = 0;
      for (const std::string& h : truth[r]) found += got.count(h);
      recall += static_cast<double>(found) / static_cast<double>(truth[r].size());
    }
    recall /= static_cast<double>(queries.size());
    const double p50 = approx.Quantile(0.5), p99 = approx.Quantile(0.99);
    std::printf(
        "approximate, ef_search %4zu: recall@10 %.4f  p50 %.2f ms  p99 %.2f ms  %.1f searches/s"
        "  | / exact: p50 %.4fx  p99 %.4fx  throughput %.1fx\n",
        breadth, recall, p50 * 1e3, p99 * 1e3, approx.PerSecond(), p50 / exact_p50, p99 / exact_p99,
        approx.PerSecond() / exact.PerSecond());
  }
  return 0;
}
