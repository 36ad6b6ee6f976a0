// TransactWriteItems / TransactGetItems over real engines (in-memory, embedded) through the
// registry, and the exactly-once proofs under injected commit_unknown_result.
#include "api/transact_ops.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "api/item_ops.h"
#include "api/testing/call.h"
#include "api/transact_request.h"
#include "base/metrics.h"
#include "kv/engines/embedded/embedded.h"
#include "kv/engines/faulty/faulty.h"
#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "store/layout.h"
#include "store/tokens.h"

namespace fdyno::api {
namespace {

constexpr char kAccount[] = "123456789012";

// One "service instance": catalog and registry over a database.
struct Instance {
  // `collection_limit`: the item collection size limit (0: DynamoDB's). `max_attempts`: the
  // transaction attempts of one TransactWriteItems (0: the default).
  Instance(kv::Database* db, Clock* clock, uint64_t collection_limit = 0, int max_attempts = 0) {
    services.db = db;
    services.catalog = &catalog;
    services.clock = clock;
    if (collection_limit != 0) services.item_collection_size_limit_bytes = collection_limit;
    TransactOptions t;
    t.sleep = [](std::chrono::milliseconds) {};
    if (max_attempts > 0) t.max_attempts = max_attempts;
    RegisterTransactOperations(registry, services, t);
    ItemOptions i;
    i.sleep = [](std::chrono::milliseconds) {};
    RegisterItemOperations(registry, services, i);
  }
  Result<std::string> Call(const std::string& op, const std::string& json) {
    RequestContext ctx;
    ctx.account_id = kAccount;
    ctx.deadline = services.clock->Now() + std::chrono::seconds(30);
    return testing::CallOperation(registry, op, json, ctx);
  }
  store::Catalog catalog;
  Services services;
  OperationRegistry registry;
};

Status CreateTable(kv::Database& db, store::Catalog& catalog, const std::string& name,
                   bool with_range = false) {
  store::TableInfo t;
  t.region = "us-east-1";
  t.account = kAccount;
  t.name = name;
  t.attribute_definitions = {{"pk", store::ScalarType::kS}};
  t.key_schema.hash = {"pk", store::ScalarType::kS};
  if (with_range) {
    t.attribute_definitions.push_back({"sk", store::ScalarType::kN});
    t.key_schema.range = store::AttributeDefinition{"sk", store::ScalarType::kN};
  }
  auto created = kv::Run(
      db, [&](kv::Transaction& tx, const kv::Attempt&) { return catalog.Create(tx, t, {}); });
  if (!created.ok()) return created.error();
  return Status::Ok();
}

std::string AddCounter(const std::string& token, const std::string& pk = "n") {
  std::string r =
      R"({"TransactItems":[{"Update":{"TableName":"tbl","Key":{"pk":{"S":")" + pk +
      R"("}},"UpdateExpression":"ADD n :one","ExpressionAttributeValues":{":one":{"N":"1"}}}},)"
      R"({"Put":{"TableName":"other","Item":{"pk":{"S":"log-)" +
      (token.empty() ? std::string("x") : token) + R"("}}}}])";
  if (!token.empty()) r += R"(,"ClientRequestToken":")" + token + "\"";
  return r + "}";
}

int64_t CounterValue(Instance& in, const std::string& pk = "n") {
  auto get = in.Call(
      "GetItem", R"({"TableName":"tbl","Key":{"pk":{"S":")" + pk + R"("}},"ConsistentRead":true})");
  EXPECT_TRUE(get.ok());
  rapidjson::Document d;
  d.Parse(get->c_str());
  if (!d.HasMember("Item")) return 0;
  return std::stoll(d["Item"]["n"]["N"].GetString());
}

class TransactTest : public ::testing::Test {
 protected:
  void SetUp() override {
    faulty_ = kv::WrapFaulty(inner_.get(), kv::FaultOptions{});
    in_ = std::make_unique<Instance>(faulty_.get(), &clock_);
    ASSERT_TRUE(CreateTable(*inner_, in_->catalog, "tbl").ok());
    ASSERT_TRUE(CreateTable(*inner_, in_->catalog, "other").ok());
    ASSERT_TRUE(CreateTable(*inner_, in_->catalog, "comp", true).ok());
  }
  Result<std::string> Call(const std::string& op, const std::string& json) {
    return in_->Call(op, json);
  }

  ManualClock clock_;
  std::unique_ptr<kv::Database> inner_ = kv::OpenMemoryEngine();
  std::unique_ptr<kv::FaultyDatabase> faulty_;
  std::unique_ptr<Instance> in_;
};

TEST_F(TransactTest, PutUpdateDeleteCheckAcrossTables) {
  ASSERT_TRUE(Call("PutItem", R"({"TableName":"tbl","Item":{"pk":{"S":"d"}}})").ok());
  ASSERT_TRUE(
      Call("PutItem", R"({"TableName":"tbl","Item":{"pk":{"S":"c"},"s":{"S":"on"}}})").ok());
  auto r =
      Call("TransactWriteItems",
           R"({"TransactItems":[)"
           R"({"Put":{"TableName":"tbl","Item":{"pk":{"S":"p"},"v":{"N":"1"}}}},)"
           R"({"Update":{"TableName":"comp","Key":{"pk":{"S":"u"},"sk":{"N":"2"}},)"
           R"("UpdateExpression":"SET v = :v","ExpressionAttributeValues":{":v":{"S":"x"}}}},)"
           R"({"Delete":{"TableName":"tbl","Key":{"pk":{"S":"d"}}}},)"
           R"({"ConditionCheck":{"TableName":"tbl","Key":{"pk":{"S":"c"}},)"
           R"("ConditionExpression":"s = :on","ExpressionAttributeValues":{":on":{"S":"on"}}}}],)"
           R"("ReturnConsumedCapacity":"TOTAL"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(
      *r,
      R"({"ConsumedCapacity":[{"TableName":"tbl","CapacityUnits":6.0,"WriteCapacityUnits":6.0},)"
      R"({"TableName":"comp","CapacityUnits":2.0,"WriteCapacityUnits":2.0}]})");
  auto get = Call("TransactGetItems",
                  R"({"TransactItems":[{"Get":{"TableName":"tbl","Key":{"pk":{"S":"p"}}}},)"
                  R"({"Get":{"TableName":"comp","Key":{"pk":{"S":"u"},"sk":{"N":"2"}},)"
                  R"("ProjectionExpression":"#v","ExpressionAttributeNames":{"#v":"v"}}},)"
                  R"({"Get":{"TableName":"tbl","Key":{"pk":{"S":"d"}}}}],)"
                  R"("ReturnConsumedCapacity":"TOTAL"})");
  ASSERT_TRUE(get.ok()) << get.error().message;
  EXPECT_EQ(
      *get,
      R"({"ConsumedCapacity":[{"TableName":"tbl","CapacityUnits":4.0,"ReadCapacityUnits":4.0},)"
      R"({"TableName":"comp","CapacityUnits":2.0,"ReadCapacityUnits":2.0}],)"
      R"("Responses":[{"Item":{"pk":{"S":"p"},"v":{"N":"1"}}},{"Item":{"v":{"S":"x"}}},{}]})");
}

TEST_F(TransactTest, RemovalOnlyUpdateDoesNotCreateAMissingItem) {
  auto r = Call(
      "TransactWriteItems",
      R"({"TransactItems":[)"
      R"({"Update":{"TableName":"tbl","Key":{"pk":{"S":"gone"}},"UpdateExpression":"REMOVE a"}},)"
      R"({"Update":{"TableName":"tbl","Key":{"pk":{"S":"made"}},"UpdateExpression":"SET a = :v",)"
      R"("ExpressionAttributeValues":{":v":{"N":"1"}}}}]})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto gone = Call("GetItem", R"({"TableName":"tbl","Key":{"pk":{"S":"gone"}}})");
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(*gone, "{}");
  auto made = Call("GetItem", R"({"TableName":"tbl","Key":{"pk":{"S":"made"}}})");
  ASSERT_TRUE(made.ok());
  EXPECT_EQ(*made, R"({"Item":{"a":{"N":"1"},"pk":{"S":"made"}}})");
}

TEST_F(TransactTest, TransactGetItemsNeverCommits) {
  ASSERT_TRUE(Call("PutItem", R"({"TableName":"tbl","Item":{"pk":{"S":"r"}}})").ok());
  int64_t commits = faulty_->counts().commits_passed;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(Call("TransactGetItems",
                     R"({"TransactItems":[{"Get":{"TableName":"tbl","Key":{"pk":{"S":"r"}}}}]})")
                    .ok());
  }
  EXPECT_EQ(faulty_->counts().commits_passed, commits);
}

TEST_F(TransactTest, ItemCollectionMetricsForTablesWithLocalIndexes) {
  store::TableInfo t;
  t.region = "us-east-1";
  t.account = kAccount;
  t.name = "lsi";
  t.attribute_definitions = {
      {"pk", store::ScalarType::kS}, {"sk", store::ScalarType::kS}, {"l", store::ScalarType::kS}};
  t.key_schema.hash = {"pk", store::ScalarType::kS};
  t.key_schema.range = store::AttributeDefinition{"sk", store::ScalarType::kS};
  store::SecondaryIndex index;
  index.name = "by_l";
  index.key_schema.hash = {"pk", store::ScalarType::kS};
  index.key_schema.range = store::AttributeDefinition{"l", store::ScalarType::kS};
  t.local_indexes.push_back(index);
  ASSERT_TRUE(kv::Run(*inner_, [&](kv::Transaction& tx, const kv::Attempt&) {
                return in_->catalog.Create(tx, t, {});
              }).ok());
  auto r = Call("TransactWriteItems",
                R"({"TransactItems":[)"
                R"({"Put":{"TableName":"lsi","Item":{"pk":{"S":"a"},"sk":{"S":"1"}}}},)"
                R"({"Put":{"TableName":"tbl","Item":{"pk":{"S":"plain"}}}}],)"
                R"("ReturnItemCollectionMetrics":"SIZE"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, R"({"ItemCollectionMetrics":{"lsi":[{"ItemCollectionKey":{"pk":{"S":"a"}},)"
                R"("SizeEstimateRangeGB":[0.0,1.0]}]}})");
}

// Growing a collection past the limit cancels the transaction with the reason on the growing
// action; a transaction whose changes shrink the collection succeeds; metrics report the size.
TEST_F(TransactTest, ItemCollectionLimitCancelsWithItsReason) {
  Instance small(faulty_.get(), &clock_, /*collection_limit=*/1200);
  store::TableInfo t;
  t.region = "us-east-1";
  t.account = kAccount;
  t.name = "lsi";
  t.attribute_definitions = {
      {"pk", store::ScalarType::kS}, {"sk", store::ScalarType::kS}, {"l", store::ScalarType::kS}};
  t.key_schema.hash = {"pk", store::ScalarType::kS};
  t.key_schema.range = store::AttributeDefinition{"sk", store::ScalarType::kS};
  store::SecondaryIndex index;
  index.name = "by_l";
  index.key_schema.hash = {"pk", store::ScalarType::kS};
  index.key_schema.range = store::AttributeDefinition{"l", store::ScalarType::kS};
  t.local_indexes.push_back(index);
  ASSERT_TRUE(kv::Run(*inner_, [&](kv::Transaction& tx, const kv::Attempt&) {
                return small.catalog.Create(tx, t, {});
              }).ok());
  const std::string payload(200, 'p');
  auto put = [&](const std::string& pk, const std::string& sk, const std::string& p) {
    return R"({"Put":{"TableName":"lsi","Item":{"pk":{"S":")" + pk + R"("},"sk":{"S":")" + sk +
           R"("},"l":{"S":"x"},"p":{"S":")" + p + R"("}}}})";
  };
  const std::string check =
      R"x({"ConditionCheck":{"TableName":"lsi","Key":{"pk":{"S":"a"},"sk":{"S":"1"}},)x"
      R"x("ConditionExpression":"attribute_exists(pk)"}})x";
  // Two puts of ~550 bytes each (item + ALL-projected entry + 100) fit; a third does not.
  auto r = small.Call("TransactWriteItems", R"({"TransactItems":[)" + put("a", "1", payload) + "," +
                                                put("a", "2", payload) +
                                                R"(],"ReturnItemCollectionMetrics":"SIZE"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, R"({"ItemCollectionMetrics":{"lsi":[)"
                R"({"ItemCollectionKey":{"pk":{"S":"a"}},"SizeEstimateRangeGB":[0.0,1.0]},)"
                R"({"ItemCollectionKey":{"pk":{"S":"a"}},"SizeEstimateRangeGB":[0.0,1.0]}]}})");
  r = small.Call("TransactWriteItems", R"({"TransactItems":[)" + put("b", "1", "small") + "," +
                                           put("a", "3", payload) + "," + check + "]}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kTransactionCanceled);
  EXPECT_EQ(r.error().message,
            "Transaction cancelled, please refer cancellation reasons for specific reasons "
            "[None, ItemCollectionSizeLimitExceeded, None]");
  EXPECT_EQ(r.error().cancellation_reasons_json,
            R"([{"Code":"None"},{"Code":"ItemCollectionSizeLimitExceeded",)"
            R"("Message":"Collection size exceeded."},{"Code":"None"}])");
  // Nothing was written, not even the put to the other collection.
  auto get = small.Call("GetItem", R"({"TableName":"lsi","Key":{"pk":{"S":"b"},"sk":{"S":"1"}}})");
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(*get, "{}");
  // Replacing an item by a smaller one and adding a small one: the net change shrinks.
  r = small.Call("TransactWriteItems", R"({"TransactItems":[)" + put("a", "1", "tiny") + "," +
                                           put("a", "3", "tiny") + "]}");
  ASSERT_TRUE(r.ok()) << r.error().message;
  // Growing the replaced item back and adding another one would not fit.
  r = small.Call("TransactWriteItems", R"({"TransactItems":[)" + put("a", "1", payload) + "," +
                                           put("a", "4", payload) + "]}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "Transaction cancelled, please refer cancellation reasons for specific reasons "
            "[ItemCollectionSizeLimitExceeded, ItemCollectionSizeLimitExceeded]");
  // A delete is always allowed.
  r = small.Call("TransactWriteItems",
                 R"({"TransactItems":[{"Delete":{"TableName":"lsi","Key":{"pk":{"S":"a"},)"
                 R"("sk":{"S":"2"}}}}],"ReturnItemCollectionMetrics":"SIZE"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, R"({"ItemCollectionMetrics":{"lsi":[)"
                R"({"ItemCollectionKey":{"pk":{"S":"a"}},"SizeEstimateRangeGB":[0.0,1.0]}]}})");
  // A token replay reports the collection too.
  const std::string tokened =
      R"({"TransactItems":[)" + put("c", "1", "v") +
      R"(],"ReturnItemCollectionMetrics":"SIZE","ClientRequestToken":"t1"})";
  auto first = small.Call("TransactWriteItems", tokened);
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto replay = small.Call("TransactWriteItems", tokened);
  ASSERT_TRUE(replay.ok()) << replay.error().message;
  EXPECT_EQ(*first, *replay);
  EXPECT_NE(first->find("ItemCollectionMetrics"), std::string::npos);
}

TEST_F(TransactTest, IndexEntriesChangeWithTheItems) {
  store::TableInfo t;
  t.region = "us-east-1";
  t.account = kAccount;
  t.name = "gsi";
  t.attribute_definitions = {{"pk", store::ScalarType::kS}, {"g", store::ScalarType::kS}};
  t.key_schema.hash = {"pk", store::ScalarType::kS};
  store::SecondaryIndex index;
  index.name = "by_g";
  index.key_schema.hash = {"g", store::ScalarType::kS};
  t.global_indexes.push_back(index);
  auto created = kv::Run(*inner_, [&](kv::Transaction& tx, const kv::Attempt&) {
    return in_->catalog.Create(tx, t, {});
  });
  ASSERT_TRUE(created.ok()) << created.error().message;
  const int64_t table_id = (*created)->id;
  auto index_entries = [&]() -> size_t {
    auto range = kv::Run(*inner_, [&](kv::Transaction& tx, const kv::Attempt&) {
      auto [b, e] =
          store::layout::TablePartSubspace(table_id, store::layout::TablePart::kIndex).Range();
      return tx.GetRange(b, e);
    });
    EXPECT_TRUE(range.ok());
    return range.ok() ? range->kvs.size() : 0;
  };
  ASSERT_TRUE(Call("TransactWriteItems",
                   R"({"TransactItems":[)"
                   R"({"Put":{"TableName":"gsi","Item":{"pk":{"S":"a"},"g":{"S":"x"}}}},)"
                   R"({"Put":{"TableName":"gsi","Item":{"pk":{"S":"b"},"g":{"S":"y"}}}}]})")
                  .ok());
  EXPECT_EQ(index_entries(), 2u);
  ASSERT_TRUE(Call("TransactWriteItems",
                   R"({"TransactItems":[{"Delete":{"TableName":"gsi","Key":{"pk":{"S":"a"}}}},)"
                   R"({"Update":{"TableName":"gsi","Key":{"pk":{"S":"b"}},)"
                   R"("UpdateExpression":"REMOVE g"}}]})")
                  .ok());
  EXPECT_EQ(index_entries(), 0u);
  // A wrong-typed index key cancels with ValidationError.
  auto r = Call("TransactWriteItems",
                R"({"TransactItems":[{"Put":{"TableName":"gsi","Item":{"pk":{"S":"c"},)"
                R"("g":{"N":"1"}}}}]})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kTransactionCanceled);
  EXPECT_EQ(index_entries(), 0u);
}

TEST_F(TransactTest, CancellationWritesNothingAndListsReasons) {
  ASSERT_TRUE(Call("PutItem", R"({"TableName":"tbl","Item":{"pk":{"S":"e"},"x":{"S":"y"}}})").ok());
  auto r =
      Call("TransactWriteItems", R"({"TransactItems":[)"
                                 R"({"Put":{"TableName":"other","Item":{"pk":{"S":"unrelated"}}}},)"
                                 R"({"Put":{"TableName":"tbl","Item":{"pk":{"S":"e"}},)"
                                 R"J("ConditionExpression":"attribute_not_exists(pk)",)J"
                                 R"("ReturnValuesOnConditionCheckFailure":"ALL_OLD"}}]})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kTransactionCanceled);
  EXPECT_EQ(r.error().message,
            "Transaction cancelled, please refer cancellation reasons for specific reasons "
            "[None, ConditionalCheckFailed]");
  EXPECT_EQ(r.error().cancellation_reasons_json,
            R"([{"Code":"None"},{"Code":"ConditionalCheckFailed","Item":{"pk":{"S":"e"},)"
            R"("x":{"S":"y"}},"Message":"The conditional request failed"}])");
  auto get = Call("GetItem", R"({"TableName":"other","Key":{"pk":{"S":"unrelated"}}})");
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(*get, "{}");
}

TEST_F(TransactTest, ValidationMessages) {
  auto expect = [&](const std::string& op, const std::string& body, ErrorType type,
                    const std::string& message) {
    auto r = Call(op, body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.error().type, type) << body;
    EXPECT_EQ(r.error().message, message) << body;
  };
  expect("TransactWriteItems", R"({"TransactItems":[]})", ErrorType::kValidation,
         "1 validation error detected: Value '[]' at 'transactItems' failed to satisfy "
         "constraint: Member must have length greater than or equal to 1");
  expect("TransactGetItems", R"({"TransactItems":[]})", ErrorType::kValidation,
         "1 validation error detected: Value '[]' at 'transactItems' failed to satisfy "
         "constraint: Member must have length greater than or equal to 1");
  expect("TransactWriteItems",
         R"({"TransactItems":[{"Put":{"TableName":"tbl","Item":{"pk":{"S":"a"}}}},)"
         R"({"Delete":{"TableName":"tbl","Key":{"pk":{"S":"a"}}}}]})",
         ErrorType::kValidation,
         "Transaction request cannot include multiple operations on one item");
  expect("TransactGetItems",
         R"({"TransactItems":[{"Get":{"TableName":"tbl","Key":{"pk":{"S":"a"}}}},)"
         R"({"Get":{"TableName":"tbl","Key":{"pk":{"S":"a"}}}}]})",
         ErrorType::kValidation,
         "Transaction request cannot include multiple operations on one item");
  expect("TransactWriteItems",
         R"({"TransactItems":[{"Put":{"TableName":"nope","Item":{"pk":{"S":"a"}}}}]})",
         ErrorType::kResourceNotFound, "Requested resource not found");
  expect("TransactWriteItems",
         R"({"TransactItems":[{"Put":{"TableName":"tbl","Item":{"pk":{"S":"a"}}},)"
         R"("Delete":{"TableName":"tbl","Key":{"pk":{"S":"b"}}}}]})",
         ErrorType::kValidation,
         "TransactItems can only contain one of Check, Put, Update or Delete");
  expect("TransactWriteItems",
         R"({"TransactItems":[{"Put":{"TableName":"tbl","Item":{"pk":{"S":"a"}}}}],)"
         R"("ClientRequestToken":"0123456789012345678901234567890123456"})",
         ErrorType::kValidation,
         "1 validation error detected: Value '0123456789012345678901234567890123456' at "
         "'clientRequestToken' failed to satisfy constraint: Member must have length less than "
         "or equal to 36");
  expect("TransactWriteItems",
         R"({"TransactItems":[{"Put":{"TableName":"tbl","Item":{"pk":{"S":""}}}}]})",
         ErrorType::kValidation,
         "One or more parameter values are not valid. The AttributeValue for a key attribute "
         "cannot contain an empty string value. Key: pk");
  expect("TransactGetItems",
         R"({"TransactItems":[{"Get":{"TableName":"tbl","Key":{"pk":{"S":"a"}},)"
         R"("ProjectionExpression":"!!!"}}]})",
         ErrorType::kValidation,
         R"(Invalid ProjectionExpression: Syntax error; token: "!", near: "!!")");
  // Closed schema: members the contract does not define are rejected, never ignored.
  auto unknown = Call("TransactWriteItems",
                      R"({"TransactItems":[{"Put":{"TableName":"tbl","Item":{"pk":{"S":"a"}},)"
                      R"("Extra":1}}]})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().type, ErrorType::kValidation);
  EXPECT_NE(unknown.error().message.find("'Extra'"), std::string::npos);
  unknown = Call("TransactWriteItems",
                 R"({"TransactItems":[{"Put":{"TableName":"tbl","Item":{"pk":{"S":"a"}}}}],)"
                 R"("Future":"x"})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().type, ErrorType::kValidation);

  std::string many = R"({"TransactItems":[)";
  for (int i = 0; i < 101; ++i) {
    many += std::string(i ? "," : "") + R"({"Put":{"TableName":"tbl","Item":{"pk":{"S":"k)" +
            std::to_string(i) + R"("}}}})";
  }
  auto r = Call("TransactWriteItems", many + "]}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("1 validation error detected: Value '[", 0), 0u);
  EXPECT_NE(r.error().message.find("]' at 'transactItems' failed to satisfy constraint: Member "
                                   "must have length less than or equal to 100"),
            std::string::npos);
  // 4 MB of items in total.
  std::string big = R"({"TransactItems":[)";
  for (int i = 0; i < 12; ++i) {
    big += std::string(i ? "," : "") + R"({"Put":{"TableName":"tbl","Item":{"pk":{"S":"b)" +
           std::to_string(i) + R"("},"p":{"S":")" + std::string(350'000, 'x') + R"("}}}})";
  }
  expect("TransactWriteItems", big + "]}", ErrorType::kValidation,
         "Transaction request size cannot exceed 4 MB");
}

TEST_F(TransactTest, KeySchemaMismatchIsACancellationReason) {
  auto r = Call("TransactGetItems", R"({"TransactItems":[{"Get":{"TableName":"tbl","Key":{}}}]})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kTransactionCanceled);
  EXPECT_EQ(r.error().message,
            "Transaction cancelled, please refer cancellation reasons for specific reasons "
            "[ValidationError]");
  r = Call("TransactWriteItems",
           R"({"TransactItems":[{"Put":{"TableName":"tbl","Item":{"pk":{"S":"ok"}}}},)"
           R"({"Delete":{"TableName":"tbl","Key":{"pk":{"N":"1"}}}}]})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kTransactionCanceled);
  EXPECT_EQ(r.error().cancellation_reasons_json,
            R"([{"Code":"None"},{"Code":"ValidationError","Message":"The provided key element )"
            R"(does not match the schema"}])");
  // An update whose operand has the wrong type cancels with ValidationError.
  ASSERT_TRUE(Call("PutItem", R"({"TableName":"tbl","Item":{"pk":{"S":"s"},"n":{"S":"x"}}})").ok());
  r = Call("TransactWriteItems",
           R"({"TransactItems":[{"Update":{"TableName":"tbl","Key":{"pk":{"S":"s"}},)"
           R"("UpdateExpression":"ADD n :one","ExpressionAttributeValues":{":one":{"N":"1"}}}}]})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kTransactionCanceled);
  EXPECT_NE(r.error().cancellation_reasons_json.find("ValidationError"), std::string::npos);
  // The actions after the first invalid one are never evaluated: None, even when invalid too.
  r = Call("TransactWriteItems",
           R"({"TransactItems":[{"Delete":{"TableName":"tbl","Key":{"pk":{"N":"1"}}}},)"
           R"({"Delete":{"TableName":"tbl","Key":{"pk":{"N":"2"}}}},)"
           R"({"Put":{"TableName":"tbl","Item":{"pk":{"S":"ok2"}}}}]})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().cancellation_reasons_json,
            R"([{"Code":"ValidationError","Message":"The provided key element does not match )"
            R"(the schema"},{"Code":"None"},{"Code":"None"}])");
  r = Call("TransactGetItems", R"({"TransactItems":[{"Get":{"TableName":"tbl","Key":{}}},)"
                               R"({"Get":{"TableName":"tbl","Key":{}}}]})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "Transaction cancelled, please refer cancellation reasons for specific reasons "
            "[ValidationError, None]");
}

TEST_F(TransactTest, TokenReplaysMismatchesAndExpires) {
  Counter& replays = Metrics::Global().GetCounter("txn_token_replays");
  Counter& mismatches = Metrics::Global().GetCounter("txn_token_mismatches");
  int64_t replays0 = replays.value(), mismatches0 = mismatches.value();
  std::string req = AddCounter("tok-a");
  auto first = Call("TransactWriteItems", req);
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto again = Call("TransactWriteItems", req);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(CounterValue(*in_), 1);
  EXPECT_EQ(replays.value(), replays0 + 1);
  // Capacity of a replay is reported as reads.
  std::string with_capacity =
      req.substr(0, req.size() - 1) + R"(,"ReturnConsumedCapacity":"TOTAL"})";
  auto mismatch = Call("TransactWriteItems", with_capacity);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().type, ErrorType::kIdempotentParameterMismatch);
  EXPECT_EQ(mismatches.value(), mismatches0 + 1);
  std::string tok_b = AddCounter("tok-b");
  tok_b = tok_b.substr(0, tok_b.size() - 1) + R"(,"ReturnConsumedCapacity":"TOTAL"})";
  auto b1 = Call("TransactWriteItems", tok_b);
  ASSERT_TRUE(b1.ok()) << b1.error().message;
  EXPECT_NE(b1->find("WriteCapacityUnits"), std::string::npos);
  auto b2 = Call("TransactWriteItems", tok_b);
  ASSERT_TRUE(b2.ok());
  EXPECT_NE(b2->find("ReadCapacityUnits"), std::string::npos);
  EXPECT_EQ(CounterValue(*in_), 2);
  // Semantically equal requests (number spelling, map order) are the same request.
  std::string respelled =
      R"({"ClientRequestToken":"tok-b","ReturnConsumedCapacity":"TOTAL","TransactItems":[)"
      R"({"Update":{"ExpressionAttributeValues":{":one":{"N":"1.0E0"}},"UpdateExpression":"ADD n :one",)"
      R"("Key":{"pk":{"S":"n"}},"TableName":"tbl"}},{"Put":{"Item":{"pk":{"S":"log-tok-b"}},)"
      R"("TableName":"other"}}]})";
  auto b3 = Call("TransactWriteItems", respelled);
  ASSERT_TRUE(b3.ok()) << b3.error().message;
  EXPECT_EQ(CounterValue(*in_), 2);
  // Ten minutes after creation the token starts a new request.
  clock_.Advance(store::kTokenLifetime - std::chrono::milliseconds(1));
  ASSERT_TRUE(Call("TransactWriteItems", req).ok());
  EXPECT_EQ(CounterValue(*in_), 2);
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(Call("TransactWriteItems", req).ok());
  EXPECT_EQ(CounterValue(*in_), 3);
  ASSERT_TRUE(Call("TransactWriteItems", req).ok());
  EXPECT_EQ(CounterValue(*in_), 3);
}

TEST_F(TransactTest, MalformedAndUnknownVersionRecordsFailClosed) {
  store::TokenStore tokens(store::layout::Tokens());
  store::TokenKey key{kAccount, "TransactWriteItems", "bad"};
  for (std::string value : {std::string("garbage"), std::string("\x02\0\0\0\1", 5)}) {
    ASSERT_TRUE(kv::Run(*inner_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                  tx.Set(tokens.KeyOf(key), value);
                  return Status::Ok();
                }).ok());
    for (int i = 0; i < 2; ++i) {
      auto r = Call("TransactWriteItems", AddCounter("bad"));
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.error().type, ErrorType::kInternalServerError);
      EXPECT_NE(r.error().message.find("not executed"), std::string::npos);
      clock_.Advance(std::chrono::hours(1));  // expiry never unlocks a malformed record
    }
    auto stored = kv::Run(*inner_, [&](kv::Transaction& tx, const kv::Attempt&) {
      return tx.Get(tokens.KeyOf(key));
    });
    ASSERT_TRUE(stored.ok());
    EXPECT_EQ(**stored, value);  // never overwritten
  }
  EXPECT_EQ(CounterValue(*in_), 0);
  // A well-formed record whose fingerprint algorithm this build does not retain.
  store::TokenRecord rec;
  rec.fingerprint_algorithm = 9;
  rec.fingerprint = std::string(32, 'f');
  rec.created_ms = clock_.WallMillis();
  ASSERT_TRUE(kv::Run(*inner_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                tokens.Write(tx, {kAccount, "TransactWriteItems", "alg9"}, rec);
                return Status::Ok();
              }).ok());
  auto r = Call("TransactWriteItems", AddCounter("alg9"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kInternalServerError);
  EXPECT_EQ(CounterValue(*in_), 0);
}

TEST_F(TransactTest, FingerprintV1IsFrozen) {
  rapidjson::Document d;
  d.Parse(AddCounter("ignored").c_str());
  auto req = DecodeTransactWriteItems(d);
  ASSERT_TRUE(req.ok());
  auto fp = TransactWriteFingerprint(*req, store::kFingerprintSha256CanonicalV1);
  ASSERT_TRUE(fp.ok());
  std::string hex;
  for (unsigned char c : *fp) {
    static const char* k = "0123456789abcdef";
    hex += k[c >> 4];
    hex += k[c & 15];
  }
  // Golden value: if this changes, algorithm 1 changed; add a new algorithm id instead.
  EXPECT_EQ(hex, "f78e091fce657f5e2cfb9467a879ea0c0cc111f93db0d769e745947ae13a86ba");
  // The token itself is not part of the fingerprint.
  d.Parse(AddCounter("other-token").c_str());
  auto req2 = DecodeTransactWriteItems(d);
  ASSERT_TRUE(req2.ok());
  // (log-<token> item differs, so compare against a request differing only in the token)
  req2->actions[1].item = req->actions[1].item;
  EXPECT_EQ(*TransactWriteFingerprint(*req2, 1), *fp);
  EXPECT_FALSE(TransactWriteFingerprint(*req, 2).ok());
}

// Thousands of 1021s, both variants, on tokened requests with resends of the same request:
// every token's effect is applied at most once, and exactly once after a final resend. With
// three attempts per request many requests end with their outcome unknown, so the resends are
// the client's retries after a lost answer that the token must make safe.
TEST_F(TransactTest, TokenedAddUnderUnknownResultsAppliesOncePerToken) {
  in_ = std::make_unique<Instance>(faulty_.get(), &clock_, 0, /*max_attempts=*/3);
  kv::FaultOptions faults;
  faults.seed = 61;
  faults.unknown_applied = 0.35;
  faults.unknown_not_applied = 0.35;
  faults.commit_conflict = 0.05;
  faulty_->SetOptions(faults);
  std::mt19937 rng(faults.seed);
  constexpr int kTokens = 3000;
  int succeeded = 0;
  std::vector<bool> acknowledged(kTokens);
  int unknown = 0;  // sends that ended with their outcome unknown
  for (int t = 0; t < kTokens; ++t) {
    std::string req = AddCounter("tok-" + std::to_string(t));
    int sends = 1 + static_cast<int>(rng() % 3);  // resends after a "lost" response
    bool ok = false;
    for (int i = 0; i < sends; ++i) {
      auto r = Call("TransactWriteItems", req);
      if (r.ok()) {
        ok = true;
      } else {
        EXPECT_TRUE(kv::IsOutcomeUnknown(r.error())) << r.error().message;
        ++unknown;
      }
    }
    succeeded += ok;
    acknowledged[t] = ok;
  }
  kv::FaultCounts counts = faulty_->counts();
  faulty_->SetOptions(kv::FaultOptions{});
  EXPECT_GT(counts.unknown_applied, 1000);
  EXPECT_GT(counts.unknown_not_applied, 1000);
  EXPECT_GT(unknown, 300) << "too few requests ended unknown to test the resends";
  EXPECT_LT(succeeded, kTokens);
  // Each token's fate from its marker (the transaction's Put of log-<token>): the counter moved
  // exactly once per token applied, and every acknowledged token was applied.
  int applied = 0;
  for (int t = 0; t < kTokens; ++t) {
    auto marker = Call("GetItem", R"({"TableName":"other","Key":{"pk":{"S":"log-tok-)" +
                                      std::to_string(t) + R"("}},"ConsistentRead":true})");
    ASSERT_TRUE(marker.ok());
    rapidjson::Document d;
    d.Parse(marker->c_str());
    const bool marked = d.HasMember("Item");
    EXPECT_TRUE(marked || !acknowledged[t]) << "token " << t << " acknowledged, not applied";
    applied += marked;
  }
  EXPECT_EQ(CounterValue(*in_), applied);
  EXPECT_LT(succeeded, applied) << "no token ended unknown and applied: the case is untested";
  // Resending every token once more (no faults) applies nothing new for committed tokens and
  // completes the rest: exactly one effect per token.
  for (int t = 0; t < kTokens; ++t) {
    ASSERT_TRUE(Call("TransactWriteItems", AddCounter("tok-" + std::to_string(t))).ok());
  }
  EXPECT_EQ(CounterValue(*in_), kTokens);
  std::printf("seed %llu: %lld unknown-applied, %lld unknown-not-applied, %d/%d first-round ok\n",
              static_cast<unsigned long long>(faults.seed),
              static_cast<long long>(counts.unknown_applied),
              static_cast<long long>(counts.unknown_not_applied), succeeded, kTokens);
}

// Tokenless: receipts make each accepted request apply once within its retries.
TEST_F(TransactTest, TokenlessAddUnderUnknownResultsAppliesOncePerRequest) {
  Counter& receipt_replays =
      Metrics::Global().GetCounter("receipt_replays", {{"operation", "TransactWriteItems"}});
  int64_t before = receipt_replays.value();
  kv::FaultOptions faults;
  faults.seed = 62;
  faults.unknown_applied = 0.35;
  faults.unknown_not_applied = 0.35;
  faulty_->SetOptions(faults);
  constexpr int kRequests = 2000;
  for (int i = 0; i < kRequests; ++i) {
    auto r = Call("TransactWriteItems", AddCounter(""));
    ASSERT_TRUE(r.ok()) << "request " << i << ": " << r.error().message;
  }
  kv::FaultCounts counts = faulty_->counts();
  faulty_->SetOptions(kv::FaultOptions{});
  EXPECT_GT(counts.unknown_applied, 500);
  EXPECT_GT(counts.unknown_not_applied, 500);
  EXPECT_EQ(CounterValue(*in_), kRequests);
  EXPECT_GE(receipt_replays.value() - before, counts.unknown_applied / 2);
}

TEST_F(TransactTest, OutcomeUnknownWhenEveryCommitIsAmbiguous) {
  kv::FaultOptions faults;
  faults.seed = 63;
  faults.unknown_not_applied = 1.0;
  faulty_->SetOptions(faults);
  auto r = Call("TransactWriteItems", AddCounter("amb"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kInternalServerError);
  EXPECT_NE(r.error().message.find("outcome may be unknown"), std::string::npos);
  EXPECT_TRUE(kv::IsOutcomeUnknown(r.error()));
  faulty_->SetOptions(kv::FaultOptions{});
  EXPECT_EQ(CounterValue(*in_), 0);
  // Always-applied 1021s: the retry finds its own token record and replays.
  faults.unknown_not_applied = 0;
  faults.unknown_applied = 1.0;
  faulty_->SetOptions(faults);
  ASSERT_TRUE(Call("TransactWriteItems", AddCounter("amb")).ok());
  ASSERT_TRUE(Call("TransactWriteItems", AddCounter("")).ok());
  faulty_->SetOptions(kv::FaultOptions{});
  EXPECT_EQ(CounterValue(*in_), 2);
}

TEST_F(TransactTest, ConcurrentSameTokenOneEffect) {
  constexpr int kThreads = 8;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        auto r = in_->Call("TransactWriteItems", AddCounter("shared-" + std::to_string(i)));
        if (r.ok()) ok.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), kThreads * 20);
  EXPECT_EQ(CounterValue(*in_), 20);
}

TEST_F(TransactTest, TwoServiceInstancesReplayEachOthersTokens) {
  Instance second(faulty_.get(), &clock_);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Instance& in = t % 2 ? second : *in_;
      for (int i = 0; i < 25; ++i) {
        if (in.Call("TransactWriteItems", AddCounter("x-" + std::to_string(i))).ok()) ++ok;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 100);
  EXPECT_EQ(CounterValue(second), 25);
  auto mismatch = second.Call("TransactWriteItems", AddCounter("x-1", "other-counter"));
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().type, ErrorType::kIdempotentParameterMismatch);
}

TEST(TransactRestartTest, TokenSurvivesRestart) {
  std::string dir = ::testing::TempDir() + "/transact_restart_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  ManualClock clock;
  {
    kv::EmbeddedOptions options;
    options.path = dir;
    options.durability = kv::Durability::kNone;
    auto db = kv::OpenEmbedded(options);
    ASSERT_TRUE(db.ok()) << db.error().message;
    Instance in(db->get(), &clock);
    ASSERT_TRUE(CreateTable(**db, in.catalog, "tbl").ok());
    ASSERT_TRUE(CreateTable(**db, in.catalog, "other").ok());
    ASSERT_TRUE(in.Call("TransactWriteItems", AddCounter("persist")).ok());
    EXPECT_EQ(CounterValue(in), 1);
  }
  {
    kv::EmbeddedOptions options;
    options.path = dir;
    auto db = kv::OpenEmbedded(options);
    ASSERT_TRUE(db.ok()) << db.error().message;
    Instance in(db->get(), &clock);
    ASSERT_TRUE(in.Call("TransactWriteItems", AddCounter("persist")).ok());
    EXPECT_EQ(CounterValue(in), 1);
    auto mismatch = in.Call("TransactWriteItems", AddCounter("persist", "elsewhere"));
    ASSERT_FALSE(mismatch.ok());
    EXPECT_EQ(mismatch.error().type, ErrorType::kIdempotentParameterMismatch);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fdyno::api
