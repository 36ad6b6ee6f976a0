#include "loadgen/workload.h"

namespace fdyno::loadgen {
namespace {

std::string KeyJson(int64_t partition, int64_t row) {
  return R"({"pk":{"S":"key-)" + std::to_string(partition) + R"("},"sk":{"N":")" +
         std::to_string(row) + R"("}})";
}

std::string TableJson(const WorkloadOptions& o) { return R"("TableName":")" + o.table + "\""; }

Call Get(const WorkloadOptions& o, int64_t p, int64_t r) {
  return {"GetItem", "{" + TableJson(o) + R"(,"Key":)" + KeyJson(p, r) + "}"};
}

Call Put(const WorkloadOptions& o, int64_t p, int64_t r) {
  std::string item = KeyJson(p, r);
  item.pop_back();  // reopen the key object to add the payload attribute
  item += R"(,"payload":{"S":")" + std::string(o.value_bytes, 'x') + R"("}})";
  return {"PutItem", "{" + TableJson(o) + R"(,"Item":)" + item + "}"};
}

// GetItem's read as a PartiQL statement, with the key as parameters. Table names of the
// workload need no escaping inside the JSON string (letters, digits, '-', '_', '.').
Call Select(const WorkloadOptions& o, int64_t p, int64_t r) {
  return {"ExecuteStatement", R"({"Statement":"SELECT * FROM \")" + o.table +
                                  R"(\" WHERE pk = ? AND sk = ?","Parameters":[{"S":"key-)" +
                                  std::to_string(p) + R"("},{"N":")" + std::to_string(r) +
                                  R"("}]})"};
}

Call Update(const WorkloadOptions& o, int64_t p, int64_t r) {
  return {"UpdateItem",
          "{" + TableJson(o) + R"(,"Key":)" + KeyJson(p, r) +
              R"(,"UpdateExpression":"ADD #c :one","ExpressionAttributeNames":{"#c":"counter"},)"
              R"("ExpressionAttributeValues":{":one":{"N":"1"}}})"};
}

Call Query(const WorkloadOptions& o, int64_t p) {
  return {"Query", "{" + TableJson(o) +
                       R"(,"KeyConditionExpression":"pk = :pk","ExpressionAttributeValues":)"
                       R"({":pk":{"S":"key-)" +
                       std::to_string(p) + R"("}},"Limit":)" + std::to_string(o.rows_per_key) +
                       "}"};
}

// Two Puts in one TransactWriteItems: rows r and r + 1 (mod rows_per_key) of partition p, so
// the two actions never target the same item (rows_per_key >= 2).
Call Transact(const WorkloadOptions& o, int64_t p, int64_t r) {
  int64_t r2 = (r + 1) % o.rows_per_key;
  auto put = [&](int64_t row) {
    std::string item = KeyJson(p, row);
    item.pop_back();
    item += R"(,"payload":{"S":")" + std::string(o.value_bytes, 'x') + R"("}})";
    return R"({"Put":{)" + TableJson(o) + R"(,"Item":)" + item + "}}";
  };
  return {"TransactWriteItems", R"({"TransactItems":[)" + put(r) + "," + put(r2) + "]}"};
}

}  // namespace

std::optional<Workload> ParseWorkload(std::string_view name) {
  static constexpr std::pair<std::string_view, Workload> kNames[] = {
      {"describe-endpoints", Workload::kDescribeEndpoints},
      {"get", Workload::kGetItem},
      {"put", Workload::kPutItem},
      {"query", Workload::kQuery},
      {"update", Workload::kUpdateItem},
      {"transact", Workload::kTransactWrite},
      {"execute-statement", Workload::kExecuteStatement},
      {"mix", Workload::kMix}};
  for (auto [n, w] : kNames) {
    if (n == name) return w;
  }
  return std::nullopt;
}

std::string_view WorkloadName(Workload w) {
  switch (w) {
    case Workload::kDescribeEndpoints:
      return "describe-endpoints";
    case Workload::kGetItem:
      return "get";
    case Workload::kPutItem:
      return "put";
    case Workload::kQuery:
      return "query";
    case Workload::kUpdateItem:
      return "update";
    case Workload::kTransactWrite:
      return "transact";
    case Workload::kExecuteStatement:
      return "execute-statement";
    case Workload::kMix:
      return "mix";
  }
  return "?";
}

Call NextCall(Workload w, const WorkloadOptions& o, std::mt19937_64& rng) {
  int64_t p = static_cast<int64_t>(rng() % static_cast<uint64_t>(o.keys));
  int64_t r = static_cast<int64_t>(rng() % static_cast<uint64_t>(o.rows_per_key));
  switch (w) {
    case Workload::kDescribeEndpoints:
      return {"DescribeEndpoints", "{}"};
    case Workload::kGetItem:
      return Get(o, p, r);
    case Workload::kPutItem:
      return Put(o, p, r);
    case Workload::kQuery:
      return Query(o, p);
    case Workload::kUpdateItem:
      return Update(o, p, r);
    case Workload::kTransactWrite:
      return Transact(o, p, r);
    case Workload::kExecuteStatement:
      return Select(o, p, r);
    case Workload::kMix: {
      uint64_t dice = rng() % 100;
      if (dice < 50) return Get(o, p, r);
      if (dice < 70) return Put(o, p, r);
      if (dice < 85) return Update(o, p, r);
      return Query(o, p);
    }
  }
  return {"DescribeEndpoints", "{}"};
}

Call PreloadCall(const WorkloadOptions& o, int64_t i) {
  return Put(o, i / o.rows_per_key, i % o.rows_per_key);
}

Call CreateTableCall(const WorkloadOptions& o) {
  return {"CreateTable",
          "{" + TableJson(o) +
              R"(,"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},)"
              R"({"AttributeName":"sk","KeyType":"RANGE"}],)"
              R"("AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},)"
              R"({"AttributeName":"sk","AttributeType":"N"}],"BillingMode":"PAY_PER_REQUEST"})"};
}

Call DescribeTableCall(const WorkloadOptions& o) {
  return {"DescribeTable", "{" + TableJson(o) + "}"};
}

}  // namespace fdyno::loadgen
