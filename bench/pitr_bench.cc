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
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "api_bench.h"

namespace {

using fdyno::bench::ApiBench;

// A PutItem of one of `keys` items (a 100-byte string).
std::string Put(const std::string& table, std::mt19937_64& rng, int keys) {
  static const std::string payload(100, 'x');
  return R"({"TableName":")" + table + R"(","Item":{"pk":{"S":"key-)" +
         std::to_string(rng() % keys) + R"("},"payload":{"S":")" + payload + R"("},"n":{"N":")" +
         std::to_string(rng() % 1000) + R"("}}})";
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t puts = argc > 1 ? std::atoll(argv[1]) : 20'000;
  const int conc = argc > 2 ? std::atoi(argv[2]) : 16;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  const int keys = argc > 4 ? std::atoi(argv[4]) : 20'000;
  const bool durable = argc > 5 ? std::atoi(argv[5]) != 0 : true;
  ApiBench bench("fdyno_pitr_bench", durable);
  for (const char* name : {"pitr_off", "pitr_on"}) {
    bench.Must("CreateTable",
               std::string(R"({"TableName":")") + name +
                   R"(","BillingMode":"PAY_PER_REQUEST",)"
                   R"("AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
                   R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]})");
  }
  bench.Must("UpdateContinuousBackups",
             R"({"TableName":"pitr_on","PointInTimeRecoverySpecification":)"
             R"({"PointInTimeRecoveryEnabled":true}})");
  std::printf("%s PutItem, %lld puts per round, %d threads, %d keys\n",
              durable ? "durable" : "non-durable", static_cast<long long>(puts), conc, keys);
  auto round = [&](const std::string& table, int r) {
    return ApiBench::Round(
        puts, conc, r, [&](std::mt19937_64& rng) { bench.Must("PutItem", Put(table, rng, keys)); });
  };
  ApiBench::CompareRounds(rounds, "recovery off", "recovery on", [&](bool other, int r) {
    return round(other ? "pitr_on" : "pitr_off", r);
  });
  return 0;
}
