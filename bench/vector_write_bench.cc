// vector_write_bench: what a vector index costs writes. PutItem through the API handler (the
// whole request path below HTTP) on the embedded engine, into a table with one vector index and
// one without, in alternating rounds of the same run, from CONC threads. Both tables get the
// same items (a DIMS-dimension vector and a 100-byte string): the difference is the index entry
// (validation of the vector, the entry written and the old one replaced, the index item count).
//
//   build/bench/vector_write_bench [PUTS_PER_ROUND=10000] [CONC=16] [ROUNDS=5] [KEYS=20000]
//                                  [DIMS=128] [DURABLE=1]
//
// DURABLE=0 commits without fsync: what the index costs in CPU, which an fsync per commit batch
// otherwise hides. After the first round most puts replace an item, so the old entry is read
// and replaced. The data directory is FDYNO_BENCH_DIR (default: a fresh directory under /tmp),
// removed afterwards. Prints puts/s per round and the ratio with/without; never fails on them.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "api_bench.h"

namespace {

using fdyno::bench::ApiBench;

std::string CreateTable(const std::string& name, int64_t dims, bool with_index) {
  std::string body = R"({"TableName":")" + name +
                     R"(","BillingMode":"PAY_PER_REQUEST",)"
                     R"("AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
                     R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}])";
  if (with_index) {
    body += R"(,"VectorIndexes":[{"IndexName":"vix","VectorAttribute":{"AttributeName":"v"},)"
            R"("Dimensions":)" +
            std::to_string(dims) +
            R"(,"DistanceFunction":"COSINE","Projection":{"ProjectionType":"KEYS_ONLY"}}])";
  }
  return body + "}";
}

// A PutItem of one of `keys` items with a random vector of `dims` values in (-1, 1).
std::string Put(const std::string& table, std::mt19937_64& rng, int keys, int64_t dims) {
  static const std::string payload(100, 'x');
  std::string body = R"({"TableName":")" + table + R"(","Item":{"pk":{"S":"key-)" +
                     std::to_string(rng() % keys) + R"("},"payload":{"S":")" + payload +
                     R"("},"v":{"L":[)";
  std::uniform_real_distribution<float> u(-1, 1);
  char number[32];
  for (int64_t d = 0; d < dims; ++d) {
    std::snprintf(number, sizeof number, "%s{\"N\":\"%.6f\"}", d ? "," : "", u(rng));
    body += number;
  }
  return body + "]}}}";
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t puts = argc > 1 ? std::atoll(argv[1]) : 10'000;
  const int conc = argc > 2 ? std::atoi(argv[2]) : 16;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 5;
  const int keys = argc > 4 ? std::atoi(argv[4]) : 20'000;
  const int64_t dims = argc > 5 ? std::atoll(argv[5]) : 128;
  const bool durable = argc > 6 ? std::atoi(argv[6]) != 0 : true;
  ApiBench bench("fdyno_vector_write_bench", durable);
  bench.Must("CreateTable", CreateTable("without_index", dims, false));
  bench.Must("CreateTable", CreateTable("with_index", dims, true));
  std::printf("%s PutItem, %lld puts per round, %d threads, %d keys, %lld dimensions\n",
              durable ? "durable" : "non-durable", static_cast<long long>(puts), conc, keys,
              static_cast<long long>(dims));
  auto round = [&](const std::string& table, int r) {
    return ApiBench::Round(puts, conc, r, [&](std::mt19937_64& rng) {
      bench.Must("PutItem", Put(table, rng, keys, dims));
    });
  };
  ApiBench::CompareRounds(rounds, "without index", "with index", [&](bool other, int r) {
    return round(other ? "with_index" : "without_index", r);
  });
  return 0;
}
