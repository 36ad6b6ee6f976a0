// Load generator workloads: which DynamoDB operation each request calls and its JSON body.
// The table has a string hash key "pk" and a number range key "sk"; keys are drawn uniformly
// from `keys` partitions of `rows_per_key` items each.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>

namespace fdyno::loadgen {

enum class Workload {
  kDescribeEndpoints,
  kGetItem,
  kPutItem,
  kQuery,
  kUpdateItem,
  kTransactWrite,
  kExecuteStatement,
  kMix
};

// "describe-endpoints", "get", "put", "query", "update", "transact", "execute-statement",
// "mix"; nullopt when unknown. transact: TransactWriteItems with two Puts in one partition.
// execute-statement: the point read of `get` as PartiQL, `SELECT * FROM "<table>" WHERE pk = ?
// AND sk = ?` through ExecuteStatement, on the same keys.
std::optional<Workload> ParseWorkload(std::string_view name);
std::string_view WorkloadName(Workload w);

struct WorkloadOptions {
  std::string table = "fdyno-loadgen";
  int64_t keys = 10'000;
  int64_t rows_per_key = 10;
  size_t value_bytes = 100;
};

struct Call {
  std::string_view operation;  // "GetItem"
  std::string body;            // JSON
};

// Builds the next call. mix: 50% GetItem, 20% PutItem, 15% UpdateItem, 15% Query.
Call NextCall(Workload w, const WorkloadOptions& options, std::mt19937_64& rng);

// The preload of one item (PutItem) for key index i (partition i / rows_per_key).
Call PreloadCall(const WorkloadOptions& options, int64_t i);

// CreateTable for the workload table (PAY_PER_REQUEST), and DescribeTable to poll it.
Call CreateTableCall(const WorkloadOptions& options);
Call DescribeTableCall(const WorkloadOptions& options);

}  // namespace fdyno::loadgen
