// BatchWriteItem over the in-memory engine through the registry: item collection sizes of
// tables with local secondary indexes (ItemCollectionMetrics, the size limit) in the one-
// transaction path and in the validated group path.
#include "api/batch_ops.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>

#include "api/item_ops.h"
#include "api/testing/call.h"
#include "api/transact_ops.h"
#include "kv/engines/faulty/faulty.h"
#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "model/item_codec.h"
#include "model/key_codec.h"
#include "store/item_collections.h"
#include "store/items.h"
#include "store/layout.h"

namespace fdyno::api {
namespace {

// Table "lsi": pk (S), sk (N), LSI by_l (pk, l S) ALL; table "plain" has no LSI.
class BatchCollectionsTest : public ::testing::Test {
 protected:
  void Register(uint64_t limit) {
    registry_ = OperationRegistry();
    services_.item_collection_size_limit_bytes = limit;
    BatchOptions batch;
    batch.sleep = [](std::chrono::milliseconds) {};
    RegisterBatchOperations(registry_, services_, batch);
    ItemOptions items;
    items.sleep = [](std::chrono::milliseconds) {};
    RegisterItemOperations(registry_, services_, items);
  }

  void SetUp() override {
    services_.db = db_.get();
    services_.catalog = &catalog_;
    Register(2000);
    store::TableInfo t;
    t.region = "us-east-1";
    t.name = "lsi";
    t.attribute_definitions = {
        {"pk", store::ScalarType::kS}, {"sk", store::ScalarType::kN}, {"l", store::ScalarType::kS}};
    t.key_schema.hash = {"pk", store::ScalarType::kS};
    t.key_schema.range = store::AttributeDefinition{"sk", store::ScalarType::kN};
    store::SecondaryIndex index;
    index.name = "by_l";
    index.key_schema.hash = {"pk", store::ScalarType::kS};
    index.key_schema.range = store::AttributeDefinition{"l", store::ScalarType::kS};
    t.local_indexes.push_back(index);
    store::TableInfo plain;
    plain.region = "us-east-1";
    plain.name = "plain";
    plain.attribute_definitions = {{"pk", store::ScalarType::kS}};
    plain.key_schema.hash = {"pk", store::ScalarType::kS};
    for (const store::TableInfo& info : {t, plain}) {
      auto created = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
        return catalog_.Create(tx, info, {});
      });
      ASSERT_TRUE(created.ok()) << created.error().message;
      if (info.name == "lsi") table_ = *created;
    }
  }

  Result<std::string> Call(const std::string& op, const std::string& json) {
    return testing::CallOperation(registry_, op, json);
  }

  static std::string ItemJson(const std::string& pk, int sk, const std::string& payload) {
    return R"({"pk":{"S":")" + pk + R"("},"sk":{"N":")" + std::to_string(sk) +
           R"("},"l":{"S":"x"},"p":{"S":")" + payload + R"("}})";
  }
  static std::string Put(const std::string& pk, int sk, const std::string& payload) {
    return R"({"PutRequest":{"Item":)" + ItemJson(pk, sk, payload) + "}}";
  }
  static std::string Delete(const std::string& pk, int sk) {
    return R"({"DeleteRequest":{"Key":{"pk":{"S":")" + pk + R"("},"sk":{"N":")" +
           std::to_string(sk) + R"("}}}})";
  }

  uint64_t StoredSize(const std::string& pk) {
    auto r = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
      return store::ReadItemCollectionSize(tx, table_->id,
                                           model::EncodeKeyValue(model::AttributeValue::S(pk)));
    });
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : 0;
  }

  // The collection of `pk` recomputed from the stored base items; also counts the items.
  std::pair<uint64_t, int> Recomputed(const std::string& pk) {
    auto r = kv::Run(
        *db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<std::pair<uint64_t, int>> {
          auto [begin, end] = store::layout::Items(table_->id).Range();
          FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(begin, end));
          std::pair<uint64_t, int> total{0, 0};
          store::ItemAssembler assembler;
          for (const kv::KeyValue& kv : rr.kvs) {
            FDYNO_ASSIGN_OR_RETURN(auto done, assembler.Add(kv));
            if (!done) continue;
            FDYNO_ASSIGN_OR_RETURN(model::Item item, model::DecodeStoredItem(done->image));
            if (item.at("pk") == model::AttributeValue::S(pk)) {
              total.first += store::ItemCollectionBytes(*table_, item);
              ++total.second;
            }
          }
          return total;
        });
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : std::pair<uint64_t, int>{0, 0};
  }

  std::unique_ptr<kv::Database> db_ = kv::OpenMemoryEngine();
  store::Catalog catalog_;
  Services services_;
  OperationRegistry registry_;
  std::shared_ptr<const store::TableInfo> table_;
};

TEST_F(BatchCollectionsTest, MetricsPerWriteForTablesWithLocalIndexes) {
  auto r = Call("BatchWriteItem", R"({"RequestItems":{"lsi":[)" + Put("a", 1, "v") + "," +
                                      Put("b", 1, "v") + "," + Delete("a", 7) +
                                      R"(],"plain":[{"PutRequest":{"Item":{"pk":{"S":"z"}}}}]},)"
                                      R"("ReturnItemCollectionMetrics":"SIZE"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, R"({"UnprocessedItems":{},"ItemCollectionMetrics":{"lsi":[)"
                R"({"ItemCollectionKey":{"pk":{"S":"a"}},"SizeEstimateRangeGB":[0.0,1.0]},)"
                R"({"ItemCollectionKey":{"pk":{"S":"b"}},"SizeEstimateRangeGB":[0.0,1.0]},)"
                R"({"ItemCollectionKey":{"pk":{"S":"a"}},"SizeEstimateRangeGB":[0.0,1.0]}]}})");
  EXPECT_EQ(StoredSize("a"), Recomputed("a").first);
  EXPECT_EQ(StoredSize("b"), Recomputed("b").first);
  EXPECT_GT(StoredSize("a"), 0u);
  // NONE, absent, or only tables without local indexes: no metrics.
  r = Call("BatchWriteItem", R"({"RequestItems":{"lsi":[)" + Put("a", 2, "v") +
                                 R"(]},"ReturnItemCollectionMetrics":"NONE"})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, R"({"UnprocessedItems":{}})");
  r = Call("BatchWriteItem", R"({"RequestItems":{"plain":[{"PutRequest":{"Item":{"pk":)"
                             R"({"S":"y"}}}}]},"ReturnItemCollectionMetrics":"SIZE"})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, R"({"UnprocessedItems":{}})");
}

TEST_F(BatchCollectionsTest, GrowthPastTheLimitFailsTheRequestAndShrinkingSucceeds) {
  const std::string payload(300, 'p');
  // Each put counts ~ 2 x 310 + 100 bytes: two fit under 2000, three do not.
  auto r = Call("BatchWriteItem", R"({"RequestItems":{"lsi":[)" + Put("a", 1, payload) + "," +
                                      Put("a", 2, payload) + "]}}");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const uint64_t full = StoredSize("a");
  r = Call("BatchWriteItem", R"({"RequestItems":{"lsi":[)" + Put("b", 1, payload) + "," +
                                 Put("a", 3, payload) +
                                 R"(],"plain":[{"PutRequest":{"Item":{"pk":{"S":"z"}}}}]}})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kItemCollectionSizeLimitExceeded);
  EXPECT_EQ(r.error().message,
            "The total size of an item collection has exceeded the maximum limit of 10 "
            "gigabytes.");
  // Nothing of the request was written.
  EXPECT_EQ(Recomputed("b").second, 0);
  auto get = Call("BatchGetItem", R"({"RequestItems":{"plain":{"Keys":[{"pk":{"S":"z"}}]}}})");
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(*get, R"({"Responses":{"plain":[]},"UnprocessedKeys":{}})");
  EXPECT_EQ(StoredSize("a"), full);
  // At the limit: a delete plus a smaller put (net shrink) succeeds, and reports the size.
  r = Call("BatchWriteItem", R"({"RequestItems":{"lsi":[)" + Delete("a", 1) + "," +
                                 Put("a", 3, "small") +
                                 R"(]},"ReturnItemCollectionMetrics":"SIZE"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(StoredSize("a"), Recomputed("a").first);
  EXPECT_LT(StoredSize("a"), full);
}

// A batch too large for one transaction is validated first; growth past the limit is found
// there, before any group commits.
TEST_F(BatchCollectionsTest, TheGroupPathChecksTheLimitBeforeWriting) {
  const std::string payload(380 * 1000, 'q');
  std::string batch = R"({"RequestItems":{"lsi":[)";
  for (int i = 0; i < 25; ++i) batch += (i ? "," : "") + Put("big", i, payload);
  batch += R"(]},"ReturnItemCollectionMetrics":"SIZE"})";
  Register(5'000'000);
  auto r = Call("BatchWriteItem", batch);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kItemCollectionSizeLimitExceeded);
  EXPECT_EQ(Recomputed("big").second, 0);
  EXPECT_EQ(StoredSize("big"), 0u);

  // Under the real limit the same batch commits in groups; the sizes add up.
  Register(store::kItemCollectionSizeLimitBytes);
  r = Call("BatchWriteItem", batch);
  ASSERT_TRUE(r.ok()) << r.error().message;
  rapidjson::Document d;
  d.Parse(r->c_str());
  ASSERT_TRUE(d.HasMember("ItemCollectionMetrics")) << *r;
  EXPECT_EQ(d["ItemCollectionMetrics"]["lsi"].Size(), 25u);
  EXPECT_EQ(d["UnprocessedItems"].MemberCount(), 0u);
  auto [bytes, count] = Recomputed("big");
  EXPECT_EQ(count, 25);
  EXPECT_EQ(StoredSize("big"), bytes);
}

// The faulty engine with `faults` switched on from the second transaction: the batch's first
// (whole) commit reaches the engine and fails as too large, its groups meet the faults.
class FaultsAfterTheFirstTransaction : public kv::Database {
 public:
  FaultsAfterTheFirstTransaction(kv::Database* inner, kv::FaultOptions faults)
      : faulty_(kv::WrapFaulty(inner, kv::FaultOptions{})), faults_(faults) {}
  std::unique_ptr<kv::Transaction> CreateTransaction() override {
    auto tx = faulty_->CreateTransaction();
    if (++created_ == 1) faulty_->SetOptions(faults_);
    return tx;
  }
  const kv::FaultCounts counts() const { return faulty_->counts(); }

 private:
  std::unique_ptr<kv::FaultyDatabase> faulty_;
  kv::FaultOptions faults_;
  int created_ = 0;
};

// A batch too large for one transaction commits in groups. A group that certainly did not
// commit (conflicts up to the retry limit) comes back as UnprocessedItems; a group whose
// outcome is unknown must not (it may have been applied): the request fails with the outcome
// unknown error instead.
TEST_F(BatchCollectionsTest, OnlyGroupsThatCertainlyDidNotCommitAreUnprocessed) {
  const std::string payload(380 * 1000, 'q');
  std::string batch = R"({"RequestItems":{"lsi":[)";
  for (int i = 0; i < 25; ++i) batch += (i ? "," : "") + Put("g", i, payload);
  batch += "]}}";
  for (const bool unknown : {false, true}) {
    kv::FaultOptions faults;
    faults.seed = 5;
    (unknown ? faults.unknown_not_applied : faults.commit_conflict) = 1.0;
    FaultsAfterTheFirstTransaction db(db_.get(), faults);
    Services services = services_;
    services.db = &db;
    services.item_collection_size_limit_bytes = store::kItemCollectionSizeLimitBytes;
    registry_ = OperationRegistry();
    BatchOptions options;
    options.sleep = [](std::chrono::milliseconds) {};
    RegisterBatchOperations(registry_, services, options);
    auto r = Call("BatchWriteItem", batch);
    if (unknown) {
      EXPECT_GT(db.counts().unknown_not_applied, 0);
      ASSERT_FALSE(r.ok()) << *r;
      EXPECT_TRUE(kv::IsOutcomeUnknown(r.error())) << r.error().message;
    } else {
      EXPECT_GT(db.counts().conflicts, 0);
      ASSERT_TRUE(r.ok()) << r.error().message;
      rapidjson::Document d;
      d.Parse(r->c_str());
      ASSERT_TRUE(d["UnprocessedItems"].HasMember("lsi")) << *r;
      EXPECT_EQ(d["UnprocessedItems"]["lsi"].Size(), 25u);
    }
    EXPECT_EQ(Recomputed("g").second, 0);
  }
}

// Seeded random PutItem/UpdateItem/DeleteItem, TransactWriteItems and BatchWriteItem on a few
// collections, with ambiguous commits (half of them applied) injected: every tracked size
// equals the size recomputed from the stored items.
TEST_F(BatchCollectionsTest, RandomWritesOfEveryApiUnderAmbiguousCommitsKeepSizesExact) {
  auto faulty = kv::WrapFaulty(db_.get(), kv::FaultOptions{});
  Services services = services_;
  services.db = faulty.get();
  services.item_collection_size_limit_bytes = store::kItemCollectionSizeLimitBytes;
  registry_ = OperationRegistry();
  BatchOptions batch;
  batch.sleep = [](std::chrono::milliseconds) {};
  RegisterBatchOperations(registry_, services, batch);
  ItemOptions items;
  items.sleep = [](std::chrono::milliseconds) {};
  RegisterItemOperations(registry_, services, items);
  TransactOptions transact;
  transact.sleep = [](std::chrono::milliseconds) {};
  RegisterTransactOperations(registry_, services, transact);

  const uint64_t seed = 20261130;
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  kv::FaultOptions faults;
  faults.seed = seed;
  faults.unknown_applied = 0.25;
  faults.unknown_not_applied = 0.25;
  faulty->SetOptions(faults);
  const char* pks[] = {"a", "b", "c"};
  // Every draw is its own statement, so a seed replays the same requests on any compiler.
  auto draw = [&](uint64_t n) { return static_cast<int>(rng() % n); };
  for (int i = 0; i < 400; ++i) {
    std::string op, json;
    const int kind = draw(4);
    if (kind == 0) {
      op = "PutItem";
      const std::string p = pks[draw(3)];
      const int sk = draw(6);
      const int len = draw(80);
      json = R"({"TableName":"lsi","Item":)" + ItemJson(p, sk, std::string(len, 'v')) + "}";
    } else if (kind == 1) {
      op = "UpdateItem";
      const std::string p = pks[draw(3)];
      const int sk = draw(6);
      const bool remove = draw(3) == 0;
      const int len = draw(80);
      json = R"({"TableName":"lsi","Key":{"pk":{"S":")" + p + R"("},"sk":{"N":")" +
             std::to_string(sk) + R"("}},)";
      json += remove ? R"("UpdateExpression":"REMOVE l"})"
                     : R"("UpdateExpression":"SET l = :l","ExpressionAttributeValues":)"
                       R"({":l":{"S":"x)" +
                           std::string(len, 'l') + R"("}}})";
    } else if (kind == 2) {
      op = "TransactWriteItems";
      // Distinct sort keys, so no two actions address one item.
      json = R"({"TransactItems":[)";
      const int base = draw(3) * 2;
      for (int k = 0; k < 2; ++k) {
        const std::string p = pks[draw(3)];
        const bool del = draw(3) == 0;
        const int len = draw(80);
        if (k) json += ",";
        json += del ? R"({"Delete":{"TableName":"lsi","Key":{"pk":{"S":")" + p +
                          R"("},"sk":{"N":")" + std::to_string(base + k) + R"("}}}})"
                    : R"({"Put":{"TableName":"lsi","Item":)" +
                          ItemJson(p, base + k, std::string(len, 't')) + "}}";
      }
      json += R"(],"ReturnItemCollectionMetrics":"SIZE"})";
    } else {
      op = "BatchWriteItem";
      json = R"({"RequestItems":{"lsi":[)";
      for (int k = 0; k < 3; ++k) {
        const int sk = draw(6);
        const bool del = draw(3) == 0;
        const int len = draw(80);
        if (k) json += ",";
        json += del ? Delete(pks[k], sk) : Put(pks[k], sk, std::string(len, 'b'));
      }
      json += R"(]},"ReturnItemCollectionMetrics":"SIZE"})";
    }
    auto r = Call(op, json);
    ASSERT_TRUE(r.ok()) << op << " " << json << ": " << r.error().message;
  }
  faulty->SetOptions(kv::FaultOptions{});
  EXPECT_GT(faulty->counts().unknown_applied, 30);
  for (const char* p : pks) EXPECT_EQ(StoredSize(p), Recomputed(p).first) << p;
}

}  // namespace
}  // namespace fdyno::api
