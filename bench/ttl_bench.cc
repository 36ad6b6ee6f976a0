// ttl_bench: what the Time to Live expiry index (store/ttl.h) buys the sweeper and costs writes,
// each against a baseline measured in the same run.
//
//   build/bench/ttl_bench [SIZES=10000,100000] [PUTS_PER_ROUND=10000] [CONC=16] [ROUNDS=5]
//       [KEYS=20000] [DURABLE=1]
//
// Finding (the sweeper's read side). For each size N a table of N items (a 100-byte string and
// the TTL attribute), TTL ENABLED, loaded through BatchWriteItem. Every item's expiry is a
// distinct second T0 + rank (rank a seeded permutation of 0..N-1), so "now" = T0 + f * N makes
// exactly f * N items expired; f = 0, 1% and 10%. Two ways to find those items, alternating in
// ROUNDS rounds, each in read-only snapshot transactions of 1,000 keys:
//   * scan (the baseline, written here only): every stored item read in key order as Query and
//     Scan read them (store::WholeImage, store::ReadItem for a split item), decoded and checked
//     with store::StoredItemExpired;
//   * index: the expiry index range of the expired (store::ExpiredRange, DecodeExpiryKey), and
//     each item it names read, decoded and its expiry checked again (store::ReadItem,
//     store::ExpirySeconds, store::ExpiredAt), which is what the sweeper reads before deleting.
// Both must find the same keys (the run stops otherwise). Prints the median time of each and
// the median ratio index/scan.
//
// Writing. PutItem through the API handler from CONC threads into two tables of the same run,
// one with TTL ENABLED on the attribute and one without TTL, the same items in both (one of KEYS
// keys, a 100-byte string and an expiry that changes on every put, so a replacement moves the
// index key: its costly case), in alternating rounds. Prints puts/s and the ratio with/without.
// DURABLE=0 commits without fsync, which shows the CPU the index costs.
//
// The data directory is FDYNO_BENCH_DIR (default: a fresh directory under /tmp), removed
// afterwards. Prints figures; never fails on them.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "api_bench.h"
#include "kv/run.h"
#include "model/item_codec.h"
#include "store/items.h"
#include "store/layout.h"
#include "store/maintainers.h"
#include "store/ttl.h"
#include "workers/backfill.h"
#include "workers/ttl.h"

namespace {

using namespace fdyno;  // NOLINT: benchmark brevity
using fdyno::bench::ApiBench;

constexpr int kPageKeys = 1000;  // keys per read transaction, both ways

std::string Account() { return api::RequestContext{}.account_id; }

void Check(const Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.error().message.c_str());
    std::exit(1);
  }
}

std::string CreateTableJson(const std::string& name) {
  return R"({"TableName":")" + name +
         R"(","BillingMode":"PAY_PER_REQUEST",)"
         R"("AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
         R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]})";
}

std::shared_ptr<const store::TableInfo> FindTable(ApiBench& bench, const std::string& name);

// Creates `name`; with `ttl`, enables TTL on "expires" and runs the worker's backfill of the
// (empty) table so that it is ENABLED.
void CreateTable(ApiBench& bench, const std::string& name, bool ttl) {
  bench.Must("CreateTable", CreateTableJson(name));
  if (!ttl) return;
  bench.Must("UpdateTimeToLive",
             R"({"TableName":")" + name +
                 R"(","TimeToLiveSpecification":{"Enabled":true,"AttributeName":"expires"}})");
  Result<workers::StepResult> r = workers::RunIndexStep(
      bench.db(), bench.catalog(), {Account(), "us-east-1", name}, store::kExpiryIndexPart);
  if (!r.ok() || !r->finished || FindTable(bench, name)->ttl.status != store::TtlStatus::kEnabled) {
    std::fprintf(stderr, "TTL of %s did not become ENABLED\n", name.c_str());
    std::exit(1);
  }
}

std::shared_ptr<const store::TableInfo> FindTable(ApiBench& bench, const std::string& name) {
  kv::RunOptions ro;
  ro.read_only = true;
  auto r = kv::Run(bench.db(), ro, [&](kv::Transaction& tx, const kv::Attempt&) {
    return bench.catalog().Find(tx, {Account(), "us-east-1"}, name);
  });
  if (!r.ok() || *r == nullptr) {
    std::fprintf(stderr, "table %s not found\n", name.c_str());
    std::exit(1);
  }
  return *r;
}

std::string ItemJson(const std::string& pk, int64_t expires_s) {
  static const std::string payload(100, 'x');
  return R"({"pk":{"S":")" + pk + R"("},"payload":{"S":")" + payload + R"("},"expires":{"N":")" +
         std::to_string(expires_s) + R"("}})";
}

// Loads n items into `table`, item i expiring at t0 + rank[i], 25 per BatchWriteItem.
void Load(ApiBench& bench, const std::string& table, int64_t n, int64_t t0, int conc) {
  std::vector<int64_t> rank(static_cast<size_t>(n));
  std::iota(rank.begin(), rank.end(), 0);
  std::shuffle(rank.begin(), rank.end(), std::mt19937_64(n));
  std::atomic<int64_t> next{0};
  const int64_t batches = (n + 24) / 25;
  ApiBench::Round(batches, conc, 0, [&](std::mt19937_64&) {
    const int64_t first = next.fetch_add(1) * 25;
    std::string json = R"({"RequestItems":{")" + table + R"(":[)";
    for (int64_t i = first; i < std::min(n, first + 25); ++i) {
      if (i != first) json += ',';
      json += R"({"PutRequest":{"Item":)" +
              ItemJson("item-" + std::to_string(i), t0 + rank[static_cast<size_t>(i)]) + "}}";
    }
    json += "]}}";
    const std::string out = bench.Must("BatchWriteItem", json);
    if (out.find("\"UnprocessedItems\":{}") == std::string::npos) {
      std::fprintf(stderr, "BatchWriteItem left items unprocessed: %s\n", out.c_str());
      std::exit(1);
    }
  });
}

// Reads [range) in snapshot pages of kPageKeys keys, each in its own read-only transaction,
// calling visit(tx, kv, keys) for every pair; returns every key visit added.
template <typename Visit>
std::vector<std::string> CollectKeys(kv::Database& db,
                                     const std::pair<std::string, std::string>& range,
                                     const char* what, Visit visit) {
  std::vector<std::string> found;
  std::string begin = range.first;
  const std::string& end = range.second;
  kv::RunOptions ro;
  ro.read_only = true;
  while (begin < end) {
    Check(kv::Run(db, ro,
                  [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                    std::vector<std::string> keys;
                    FDYNO_ASSIGN_OR_RETURN(
                        kv::RangeResult page,
                        tx.GetRange(begin, end, {.limit = kPageKeys, .snapshot = true}));
                    for (const kv::KeyValue& kv : page.kvs) {
                      FDYNO_RETURN_IF_ERROR(visit(tx, kv, keys));
                    }
                    found.insert(found.end(), keys.begin(), keys.end());
                    begin = page.more && !page.kvs.empty() ? page.kvs.back().key + '\x00' : end;
                    return Status::Ok();
                  }),
          what);
  }
  return found;
}

// The baseline: every item of the table read and decoded, its TTL attribute checked.
std::vector<std::string> FindByScan(kv::Database& db, const store::TableInfo& table,
                                    int64_t now_ms) {
  return CollectKeys(
      db, store::layout::Items(table.id).Range(), "scan",
      [&](kv::Transaction& tx, const kv::KeyValue& kv, std::vector<std::string>& keys) -> Status {
        if (store::IsItemPart(kv.value)) return Status::Ok();  // read with its head
        FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> whole, store::WholeImage(kv.value));
        std::string split;
        if (!whole) {
          FDYNO_ASSIGN_OR_RETURN(std::optional<store::StoredItem> stored,
                                 store::ReadItem(tx, kv.key, /*snapshot=*/true));
          if (!stored) return Status::Ok();
          split = std::move(stored->image);
        }
        FDYNO_ASSIGN_OR_RETURN(bool expired,
                               store::StoredItemExpired(table, whole ? *whole : split, now_ms));
        if (expired) keys.push_back(kv.key);
        return Status::Ok();
      });
}

// Through the expiry index: the keys below now, and each item they name read again.
std::vector<std::string> FindByIndex(kv::Database& db, const store::TableInfo& table,
                                     int64_t now_ms) {
  return CollectKeys(
      db, store::ExpiredRange(table.id, now_ms), "index",
      [&](kv::Transaction& tx, const kv::KeyValue& kv, std::vector<std::string>& keys) -> Status {
        FDYNO_ASSIGN_OR_RETURN(store::ExpiryEntry e, store::DecodeExpiryKey(table.id, kv.key));
        FDYNO_ASSIGN_OR_RETURN(std::optional<store::StoredItem> stored,
                               store::ReadItem(tx, e.item_key, /*snapshot=*/true));
        if (!stored) return Status::Ok();
        FDYNO_ASSIGN_OR_RETURN(model::Item item, model::DecodeStoredItem(stored->image));
        std::optional<int64_t> expiry = store::ExpirySeconds(table.ttl, item);
        if (expiry == e.expiry_s && store::ExpiredAt(*expiry, now_ms)) {
          keys.push_back(std::move(e.item_key));
        }
        return Status::Ok();
      });
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Finding the expired items of an N-item table, both ways, at 0%, 1% and 10% expired.
void MeasureFinding(ApiBench& bench, int64_t n, int rounds, int conc) {
  const std::string name = "find_" + std::to_string(n);
  CreateTable(bench, name, /*ttl=*/true);
  const int64_t t0 = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count() +
                     30 * 24 * 3600;
  const auto start = std::chrono::steady_clock::now();
  Load(bench, name, n, t0, conc);
  std::printf("\n%lld items loaded in %.1f s\n", static_cast<long long>(n), Seconds(start));
  const std::shared_ptr<const store::TableInfo> table = FindTable(bench, name);
  for (double fraction : {0.0, 0.01, 0.10}) {
    const int64_t expired = static_cast<int64_t>(fraction * static_cast<double>(n));
    const int64_t now_ms = (t0 + expired) * 1000;
    std::vector<double> scan_s, index_s, ratios;
    for (int r = 0; r < rounds; ++r) {
      std::vector<std::string> by_scan, by_index;
      double s = 0, i = 0;
      auto scan = [&] {
        const auto t = std::chrono::steady_clock::now();
        by_scan = FindByScan(bench.db(), *table, now_ms);
        s = Seconds(t);
      };
      auto index = [&] {
        const auto t = std::chrono::steady_clock::now();
        by_index = FindByIndex(bench.db(), *table, now_ms);
        i = Seconds(t);
      };
      if (r % 2 == 0) {
        scan();
        index();
      } else {
        index();
        scan();
      }
      std::sort(by_scan.begin(), by_scan.end());
      std::sort(by_index.begin(), by_index.end());
      if (by_scan != by_index || static_cast<int64_t>(by_scan.size()) != expired) {
        std::fprintf(stderr, "scan found %zu, index %zu, expected %lld: they disagree\n",
                     by_scan.size(), by_index.size(), static_cast<long long>(expired));
        std::exit(1);
      }
      scan_s.push_back(s);
      index_s.push_back(i);
      ratios.push_back(i / s);
    }
    std::printf(
        "%lld items, %4.1f%% expired (%lld): scan %.2f ms, index %.3f ms (medians of %d), "
        "index/scan %.3g (%.1fx less time)\n",
        static_cast<long long>(n), fraction * 100, static_cast<long long>(expired),
        ApiBench::Median(scan_s) * 1e3, ApiBench::Median(index_s) * 1e3, rounds,
        ApiBench::Median(ratios), 1 / ApiBench::Median(ratios));
  }
}

// Durable (or not) PutItem with TTL ENABLED against without TTL, same run.
void MeasureWrites(ApiBench& bench, int64_t puts, int conc, int rounds, int keys, bool durable) {
  CreateTable(bench, "put_ttl_off", /*ttl=*/false);
  CreateTable(bench, "put_ttl_on", /*ttl=*/true);
  const int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  std::printf("\n%s PutItem, %lld puts per round, %d threads, %d keys\n",
              durable ? "durable" : "non-durable", static_cast<long long>(puts), conc, keys);
  auto round = [&](const std::string& table, int r) {
    return ApiBench::Round(puts, conc, static_cast<uint64_t>(r), [&](std::mt19937_64& rng) {
      const std::string pk = "key-" + std::to_string(rng() % static_cast<uint64_t>(keys));
      const int64_t expires = now_s + 3600 + static_cast<int64_t>(rng() % 86400);
      bench.Must("PutItem",
                 R"({"TableName":")" + table + R"(","Item":)" + ItemJson(pk, expires) + "}");
    });
  };
  ApiBench::CompareRounds(rounds, "TTL disabled", "TTL enabled", [&](bool other, int r) {
    return round(other ? "put_ttl_on" : "put_ttl_off", r);
  });
}

// "10000,100000" -> {10000, 100000}.
std::vector<int64_t> Sizes(const std::string& arg) {
  std::vector<int64_t> out;
  for (size_t pos = 0; pos < arg.size();) {
    size_t comma = arg.find(',', pos);
    if (comma == std::string::npos) comma = arg.size();
    out.push_back(std::atoll(arg.substr(pos, comma - pos).c_str()));
    pos = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<int64_t> sizes = Sizes(argc > 1 ? argv[1] : "10000,100000");
  const int64_t puts = argc > 2 ? std::atoll(argv[2]) : 10'000;
  const int conc = argc > 3 ? std::atoi(argv[3]) : 16;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 5;
  const int keys = argc > 5 ? std::atoi(argv[5]) : 20'000;
  const bool durable = argc > 6 ? std::atoi(argv[6]) != 0 : true;
  ApiBench bench("fdyno_ttl_bench", durable);
  std::printf("finding expired items: scan (baseline) against the expiry index, %d rounds\n",
              rounds);
  for (int64_t n : sizes) MeasureFinding(bench, n, rounds, conc);
  MeasureWrites(bench, puts, conc, rounds, keys, durable);
  return 0;
}
