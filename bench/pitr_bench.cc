// pitr_bench: what point-in-time recovery costs writes. Durable PutItem through the API handler
// (the whole request path below HTTP) on the embedded engine, into a table with point-in-time
// recovery off and one with it on, in alternating rounds of the same run, from CONC threads.
//
//   build/bench/pitr_bench [PUTS_PER_ROUND=20000] [CONC=16] [ROUNDS=3] [KEYS=20000] [DURABLE=1]
//
// DURABLE=0 commits without fsync: what recovery costs in CPU, which an fsync per commit batch
// otherwise hides.
// Each put writes one of KEYS items (a 100-byte string), so after the first round most puts
// replace an item: the costly case for recovery, which keeps the replaced image. The data
// directory is FDYNO_BENCH_DIR (default: a fresh directory under /tmp), removed afterwards.
// Prints puts/s per round and the ratio on/off; never fails on them.
#include <rapidjson/document.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "api/api.h"
#include "kv/engines/embedded/embedded.h"
#include "store/catalog.h"

namespace {

using namespace fdyno;  // NOLINT: benchmark brevity

Result<std::string> Call(const api::OperationRegistry& registry, const std::string& op,
                         const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  api::RequestContext ctx;
  ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  return (*registry.Find(op))(ctx, doc);
}

void Must(Result<std::string> r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, r.error().message.c_str());
    std::exit(1);
  }
}

// Puts/s of `puts` PutItem calls into `table` from `conc` threads.
double Round(const api::OperationRegistry& registry, const std::string& table, int64_t puts,
             int conc, int keys, uint64_t seed) {
  std::atomic<int64_t> next{0};
  const std::string payload(100, 'x');
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < conc; ++c) {
    threads.emplace_back([&, c] {
      std::mt19937_64 rng(seed * 1000 + c);
      while (next.fetch_add(1) < puts) {
        const std::string key = "key-" + std::to_string(rng() % keys);
        Must(Call(registry, "PutItem",
                  R"({"TableName":")" + table + R"(","Item":{"pk":{"S":")" + key +
                      R"("},"payload":{"S":")" + payload + R"("},"n":{"N":")" +
                      std::to_string(rng() % 1000) + R"("}}})"),
             "PutItem");
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return static_cast<double>(puts) / s;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t puts = argc > 1 ? std::atoll(argv[1]) : 20'000;
  const int conc = argc > 2 ? std::atoi(argv[2]) : 16;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  const int keys = argc > 4 ? std::atoi(argv[4]) : 20'000;
  const bool durable = argc > 5 ? std::atoi(argv[5]) != 0 : true;
  std::string dir;
  if (const char* d = std::getenv("FDYNO_BENCH_DIR")) {
    dir = d;
  } else {
    dir = (std::filesystem::temp_directory_path() / "fdyno_pitr_bench_XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) return 1;
  }
  auto opened = kv::OpenEmbedded(
      {.path = dir, .durability = durable ? kv::Durability::kFsync : kv::Durability::kNone});
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s\n", opened.error().message.c_str());
    return 1;
  }
  std::unique_ptr<kv::Database> db = std::move(opened).value();
  {
    store::Catalog catalog;
    api::ApiDeps deps;
    deps.db = db.get();
    deps.catalog = &catalog;
    api::OperationRegistry registry = api::BuildOperationRegistry(deps);
    for (const char* name : {"pitr_off", "pitr_on"}) {
      Must(Call(registry, "CreateTable",
                std::string(R"({"TableName":")") + name +
                    R"(","BillingMode":"PAY_PER_REQUEST",)"
                    R"("AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
                    R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]})"),
           "CreateTable");
    }
    Must(Call(registry, "UpdateContinuousBackups",
              R"({"TableName":"pitr_on","PointInTimeRecoverySpecification":)"
              R"({"PointInTimeRecoveryEnabled":true}})"),
         "UpdateContinuousBackups");
    std::printf("%s PutItem, %lld puts per round, %d threads, %d keys\n",
                durable ? "durable" : "non-durable", static_cast<long long>(puts), conc, keys);
    std::vector<double> ratios;
    for (int r = 0; r < rounds; ++r) {
      // Alternate which goes first, so a trend in the machine's load favours neither.
      double off = 0, on = 0;
      if (r % 2 == 0) {
        off = Round(registry, "pitr_off", puts, conc, keys, r);
        on = Round(registry, "pitr_on", puts, conc, keys, r);
      } else {
        on = Round(registry, "pitr_on", puts, conc, keys, r);
        off = Round(registry, "pitr_off", puts, conc, keys, r);
      }
      ratios.push_back(on / off);
      std::printf("round %d: recovery off %.0f puts/s, on %.0f puts/s, on/off %.2f\n", r + 1, off,
                  on, on / off);
    }
    std::sort(ratios.begin(), ratios.end());
    std::printf("median on/off: %.2f\n", ratios[ratios.size() / 2]);
  }
  db.reset();
  if (std::getenv("FDYNO_BENCH_DIR") == nullptr) std::filesystem::remove_all(dir);
  return 0;
}
