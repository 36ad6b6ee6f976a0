// Seeded random model test of what expires: operation receipts and ClientRequestToken records,
// driven by an injected clock through the real operation handlers, on the embedded engine opened
// exactly as `fdyno serve` opens it (main/engine_options.h).
//
// Between jumps of the clock (seconds to half an hour) it writes a chosen number of times (none,
// one, around the engine's point-delete cutoff of 64, hundreds), so that each expiry clears a
// receipt range of a different size; tokened TransactWriteItems reuse tokens inside and after
// their 10-minute window; the token collector runs passes of random sizes; tables are dropped
// and recreated (their whole key range cleared); index and item-count entries come and go. After
// every round the tables, their global secondary index and their item counts are compared with
// a model, and now and then the engine is closed and reopened (replaying the write-ahead log)
// and compared again. Debian's RocksDB aborts on its own assertions if a memtable is corrupted.
//
// Seeds 1..2; FDYNO_FULL=1 runs seeds 1..8 with more rounds; FDYNO_SEED=n replays one seed:
// FDYNO_SEED=7 build/tests/integration/integration_expiry_model_test
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "api/api.h"
#include "api/testing/call.h"
#include "kv/engines/embedded/embedded.h"
#include "kv/tuple.h"
#include "main/engine_options.h"
#include "seeds.h"
#include "store/catalog.h"
#include "store/layout.h"
#include "store/tokens.h"
#include "workers/token_gc.h"

namespace fdyno::api {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

using integration::FullRun;

std::vector<uint64_t> Seeds() { return integration::Seeds(2, 8); }

// One item of the model: a string, a counter and an optional GSI key.
struct Row {
  std::string v;
  int64_t n = 0;
  std::optional<std::string> g;
  bool operator==(const Row&) const = default;
};
using Table = std::map<std::string, Row>;  // pk -> row

std::string ItemJson(const std::string& pk, const Row& r) {
  std::string j = R"({"pk":{"S":")" + pk + R"("},"v":{"S":")" + r.v + R"("},"n":{"N":")" +
                  std::to_string(r.n) + R"("})";
  if (r.g) j += R"(,"g":{"S":")" + *r.g + R"("})";
  return j + "}";
}

std::string KeyJson(const std::string& pk) { return R"({"pk":{"S":")" + pk + R"("}})"; }

rapidjson::Document Parse(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str(), text.size());
  EXPECT_FALSE(d.HasParseError()) << text.substr(0, 200);
  return d;
}

// The engine and the handlers over one directory, opened as the server opens them.
class Server {
 public:
  Server(std::string dir, ManualClock* clock) : dir_(std::move(dir)), clock_(clock) { Open(); }
  ~Server() { Close(); }

  void Restart() {
    Close();
    Open();
  }

  Result<std::string> Call(const std::string& op, const std::string& json) {
    RequestContext ctx;
    ctx.clock = clock_;
    return testing::CallOperation(*registry_, op, json, ctx);
  }
  std::string MustCall(const std::string& op, const std::string& json) {
    Result<std::string> r = Call(op, json);
    EXPECT_TRUE(r.ok()) << op << ": " << (r.ok() ? "" : r.error().message) << "\n"
                        << json.substr(0, 300);
    return r.ok() ? *r : std::string("{}");
  }

  workers::TokenGc& token_gc() { return *token_gc_; }
  kv::Database& db() { return *db_; }

 private:
  void Open() {
    auto db = kv::OpenEmbedded(main::ServerEngineOptions(dir_, kv::Durability::kNone, clock_));
    ASSERT_TRUE(db.ok()) << db.error().message;
    db_ = std::move(db).value();
    catalog_ = std::make_unique<store::Catalog>(clock_);
    ApiDeps deps;
    deps.db = db_.get();
    deps.clock = clock_;
    deps.catalog = catalog_.get();
    registry_ = std::make_unique<OperationRegistry>(BuildOperationRegistry(deps));
    token_gc_ = std::make_unique<workers::TokenGc>(
        db_.get(), store::TokenStore(store::layout::Tokens()),
        workers::TokenGcOptions{.max_scan = 7, .clock = clock_, .lease = {}});
  }
  void Close() {
    token_gc_.reset();
    registry_.reset();
    catalog_.reset();
    db_.reset();
  }

  std::string dir_;
  ManualClock* clock_;
  std::unique_ptr<kv::Database> db_;
  std::unique_ptr<store::Catalog> catalog_;
  std::unique_ptr<OperationRegistry> registry_;
  std::unique_ptr<workers::TokenGc> token_gc_;
};

class ExpiryModel {
 public:
  ExpiryModel(uint64_t seed, const std::string& dir) : rng_(seed), server_(dir, &clock_) {
    for (const char* t : {"exp_a", "exp_b"}) CreateTable(t);
  }

  void Round() {
    static constexpr int kWrites[] = {0, 1, 2, 10, 63, 64, 65, 66, 130, 300};
    const int writes = kWrites[Uniform(0, static_cast<int>(std::size(kWrites)) - 1)];
    for (int i = 0; i < writes; ++i) RandomWrite();
    if (Uniform(0, 9) == 0) RecreateTable(Uniform(0, 1) == 0 ? "exp_a" : "exp_b");
    static constexpr milliseconds kJumps[] = {seconds(1), seconds(30), seconds(61), minutes(5),
                                              minutes(9), minutes(11), minutes(25)};
    clock_.Advance(kJumps[Uniform(0, static_cast<int>(std::size(kJumps)) - 1)]);
    if (Uniform(0, 2) == 0) {
      Result<workers::TokenGc::Stats> pass = server_.token_gc().RunPass();
      ASSERT_TRUE(pass.ok()) << pass.error().message;
      ASSERT_EQ(pass->malformed, 0);
    }
  }

  void Check(const std::string& when) {
    for (const auto& [name, model] : tables_) {
      SCOPED_TRACE(when + ", table " + name);
      ASSERT_EQ(ScanTable(name), model);
      ASSERT_EQ(QueryIndexCount(name), CountIndexed(model));
      rapidjson::Document d =
          Parse(server_.MustCall("DescribeTable", R"({"TableName":")" + name + R"("})"));
      ASSERT_EQ(d["Table"]["ItemCount"].GetInt64(), static_cast<int64_t>(model.size()));
    }
    // Receipts stay bounded: none older than their 10-minute lifetime plus one bucket survives
    // a PutItem (which clears the expired ones), and each write leaves at most one.
    Put(RandomTable(), RandomPk());
    Wrote();
    ASSERT_LE(Receipts(), writes_since(minutes(12)) + 1) << when;
  }

  void Restart() { server_.Restart(); }

 private:
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  std::string RandomTable() { return Uniform(0, 1) == 0 ? "exp_a" : "exp_b"; }
  std::string RandomPk() { return "k" + std::to_string(Uniform(0, 150)); }
  std::optional<std::string> RandomG() {
    if (Uniform(0, 2) == 0) return std::nullopt;  // sparse: not in the index
    return "g" + std::to_string(Uniform(0, 4));
  }

  void CreateTable(const std::string& name) {
    server_.MustCall("CreateTable", R"({"TableName":")" + name + R"(",
      "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
      "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},
                              {"AttributeName":"g","AttributeType":"S"}],
      "GlobalSecondaryIndexes":[{"IndexName":"by_g",
        "KeySchema":[{"AttributeName":"g","KeyType":"HASH"},{"AttributeName":"pk","KeyType":"RANGE"}],
        "Projection":{"ProjectionType":"ALL"}}],
      "BillingMode":"PAY_PER_REQUEST"})");
    tables_[name].clear();
  }

  void RecreateTable(const std::string& name) {
    server_.MustCall("DeleteTable", R"({"TableName":")" + name + R"("})");
    CreateTable(name);
  }

  void Wrote() { write_times_.push_back(clock_.WallMillis()); }
  int64_t writes_since(milliseconds d) const {
    const int64_t from = clock_.WallMillis() - d.count();
    return static_cast<int64_t>(write_times_.end() -
                                std::lower_bound(write_times_.begin(), write_times_.end(), from));
  }

  void Put(const std::string& t, const std::string& pk) {
    Row r{"v" + std::to_string(Uniform(0, 1000)), Uniform(0, 9), RandomG()};
    server_.MustCall("PutItem", R"({"TableName":")" + t + R"(","Item":)" + ItemJson(pk, r) + "}");
    tables_[t][pk] = r;
  }

  void RandomWrite() {
    const std::string t = RandomTable();
    Table& model = tables_[t];
    const std::string pk = RandomPk();
    switch (Uniform(0, 5)) {
      case 0:
        Put(t, pk);
        break;
      case 1: {  // UpdateItem: ADD to the counter, set the index key
        const int delta = Uniform(1, 5);
        std::optional<std::string> g = RandomG();
        std::string update = "ADD n :d";
        std::string values = R"(":d":{"N":")" + std::to_string(delta) + R"("})";
        if (g) {
          update += " SET g = :g";
          values += R"(,":g":{"S":")" + *g + R"("})";
        } else {
          update += " REMOVE g";
        }
        server_.MustCall("UpdateItem", R"({"TableName":")" + t + R"(","Key":)" + KeyJson(pk) +
                                           R"(,"UpdateExpression":")" + update +
                                           R"(","ExpressionAttributeValues":{)" + values + "}}");
        Row& r = model[pk];
        r.n += delta;
        r.g = g;
        break;
      }
      case 2:  // DeleteItem
        server_.MustCall("DeleteItem", R"({"TableName":")" + t + R"(","Key":)" + KeyJson(pk) + "}");
        model.erase(pk);
        break;
      case 3: {  // BatchWriteItem: puts and deletes of distinct keys
        std::set<std::string> keys;
        const int n = Uniform(1, 25);
        for (int i = 0; i < n; ++i) keys.insert(RandomPk());
        std::string requests;
        for (const std::string& k : keys) {
          if (!requests.empty()) requests += ",";
          if (Uniform(0, 3) == 0) {
            requests += R"({"DeleteRequest":{"Key":)" + KeyJson(k) + "}}";
            model.erase(k);
          } else {
            Row r{"b" + std::to_string(Uniform(0, 1000)), Uniform(0, 9), RandomG()};
            requests += R"({"PutRequest":{"Item":)" + ItemJson(k, r) + "}}";
            model[k] = r;
          }
        }
        rapidjson::Document d = Parse(server_.MustCall(
            "BatchWriteItem", R"({"RequestItems":{")" + t + R"(":[)" + requests + "]}}"));
        ASSERT_EQ(d["UnprocessedItems"].MemberCount(), 0u);
        break;
      }
      default:  // TransactWriteItems with a token: an ADD that must apply once per window
        TokenedAdd(t, pk);
        break;
    }
    Wrote();
  }

  // A token from a small pool, each always used with the same request (table, key, delta), so
  // that a reuse inside the 10-minute window replays and a reuse after it applies again.
  void TokenedAdd(const std::string& t, const std::string& pk) {
    const int id = Uniform(0, 7);
    const std::string token = "tok-" + t + "-" + pk + "-" + std::to_string(id);
    const std::string request = R"({"ClientRequestToken":")" + token +
                                R"(","TransactItems":[{"Update":{"TableName":")" + t +
                                R"(","Key":)" + KeyJson(pk) +
                                R"J(,"UpdateExpression":"ADD n :d SET v = if_not_exists(v, :v)",
        "ExpressionAttributeValues":{":d":{"N":")J" +
                                std::to_string(id + 1) + R"("},":v":{"S":"t"}}}}]})";
    server_.MustCall("TransactWriteItems", request);
    auto [it, fresh] = token_used_.try_emplace(token, clock_.WallMillis());
    const bool live =
        !fresh && clock_.WallMillis() - it->second <
                      std::chrono::duration_cast<milliseconds>(store::kTokenLifetime).count();
    if (live) return;  // a replay: no second effect
    it->second = clock_.WallMillis();
    Row& r = tables_[t][pk];
    if (r.v.empty()) r.v = "t";
    r.n += id + 1;
  }

  Table ScanTable(const std::string& name) {
    Table got;
    std::string start;
    do {
      std::string req = R"({"TableName":")" + name + R"(","Limit":37)";
      if (!start.empty()) req += R"(,"ExclusiveStartKey":)" + start;
      rapidjson::Document d = Parse(server_.MustCall("Scan", req + "}"));
      for (const auto& item : d["Items"].GetArray()) {
        // An UpdateItem that creates an item writes no `v` (the model's empty string).
        auto string_of = [&item](const char* name) -> std::optional<std::string> {
          auto m = item.FindMember(name);
          if (m == item.MemberEnd() || !m->value.IsObject() || !m->value.HasMember("S")) {
            return std::nullopt;
          }
          return m->value["S"].GetString();
        };
        auto n = item.FindMember("n");
        if (!string_of("pk") || n == item.MemberEnd() || !n->value.HasMember("N")) {
          ADD_FAILURE() << "malformed item in " << name;
          continue;
        }
        Row r;
        r.v = string_of("v").value_or("");
        r.n = std::stoll(n->value["N"].GetString());
        r.g = string_of("g");
        got[*string_of("pk")] = r;
      }
      start = d.HasMember("LastEvaluatedKey")
                  ? KeyJson(d["LastEvaluatedKey"]["pk"]["S"].GetString())
                  : std::string();
    } while (!start.empty());
    return got;
  }

  static std::map<std::string, int64_t> CountIndexed(const Table& model) {
    std::map<std::string, int64_t> out;
    for (const auto& [pk, r] : model) {
      if (r.g) ++out[*r.g];
    }
    return out;
  }

  std::map<std::string, int64_t> QueryIndexCount(const std::string& name) {
    std::map<std::string, int64_t> out;
    for (int g = 0; g <= 4; ++g) {
      const std::string gv = "g" + std::to_string(g);
      rapidjson::Document d = Parse(
          server_.MustCall("Query", R"({"TableName":")" + name +
                                        R"(","IndexName":"by_g","KeyConditionExpression":"g = :g",
                       "ExpressionAttributeValues":{":g":{"S":")" +
                                        gv + R"("}},"Select":"COUNT"})"));
      if (d["Count"].GetInt64() > 0) out[gv] = d["Count"].GetInt64();
    }
    return out;
  }

  int64_t Receipts() {
    auto tx = server_.db().CreateTransaction();
    auto [begin, end] = store::layout::Receipts().Range();
    Result<kv::RangeResult> r = tx->GetRange(begin, end, {.snapshot = true});
    EXPECT_TRUE(r.ok());
    if (!r.ok()) return -1;
    // A receipt is one key (4, bucket, nonce), followed by chunk keys (4, bucket, nonce, i) in
    // the chunked format (docs/format/receipts.md).
    int64_t receipts = 0;
    for (const kv::KeyValue& kv : r->kvs) {
      Result<kv::Tuple> t = kv::Tuple::Unpack(kv.key);
      EXPECT_TRUE(t.ok());
      if (t.ok() && t->size() == 3) ++receipts;
    }
    return receipts;
  }

  std::mt19937_64 rng_;
  ManualClock clock_;
  Server server_;
  std::map<std::string, Table> tables_;
  std::map<std::string, int64_t> token_used_;  // token -> wall ms of its last effect
  std::vector<int64_t> write_times_;
};

TEST(ExpiryModelTest, ReceiptsAndTokensExpireAndTheDatabaseReopensExact) {
  const int rounds = FullRun() ? 120 : 40;
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::cout << "seed " << seed << " (replay: FDYNO_SEED=" << seed
              << " build/tests/integration/integration_expiry_model_test)" << std::endl;
    const std::string dir =
        (std::filesystem::temp_directory_path() /
         ("fdyno_expiry_" + std::to_string(seed) + "_" + std::to_string(::getpid())))
            .string();
    std::filesystem::remove_all(dir);
    {
      ExpiryModel m(seed, dir);
      for (int r = 0; r < rounds; ++r) {
        ASSERT_NO_FATAL_FAILURE(m.Round());
        ASSERT_NO_FATAL_FAILURE(m.Check("round " + std::to_string(r)));
        if (r % 8 == 7) {
          m.Restart();
          ASSERT_NO_FATAL_FAILURE(m.Check("after reopen at round " + std::to_string(r)));
        }
      }
      m.Restart();
      ASSERT_NO_FATAL_FAILURE(m.Check("after the final reopen"));
    }
    std::filesystem::remove_all(dir);
  }
}

}  // namespace
}  // namespace fdyno::api
