// The table operations through the registry, over the in-memory engine: responses and
// DynamoDB's validation messages. The black-box suite (tests/pytest/test_tables.py) covers the
// same operations through HTTP and boto3.
#include "api/table_ops.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <functional>
#include <memory>
#include <string>

#include "api/pitr_ops.h"
#include "api/testing/call.h"
#include "api/ttl_ops.h"
#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "store/catalog.h"
#include "store/layout.h"

namespace fdyno::api {
namespace {

class TableOpsTest : public ::testing::Test {
 protected:
  TableOpsTest() : db_(kv::OpenMemoryEngine()), clock_(1'700'000'000'000) {
    catalog_ = std::make_unique<store::Catalog>(&clock_);
    Services s;
    s.db = db_.get();
    s.catalog = catalog_.get();
    s.clock = &clock_;
    s.wake_purge = [this] { ++wakes_; };
    RegisterTableOperations(registry_, s);
    RegisterTtlOperations(registry_, s);
    RegisterPitrOperations(registry_, s);
    ctx_.account_id = "123456789012";
    ctx_.region = "eu-west-1";
    ctx_.clock = &clock_;
  }

  // Calls `op` with the JSON body; returns the response JSON or the error.
  Result<rapidjson::Document> Call(const std::string& op, const std::string& body) {
    return testing::CallOperationJson(registry_, op, body, ctx_);
  }
  // Calls `op`; returns the response body as sent (empty for TagResource and UntagResource).
  Result<std::string> CallRaw(const std::string& op, const std::string& body) {
    return testing::CallOperation(registry_, op, body, ctx_);
  }
  // The error message of a call that must fail with `type`.
  std::string ErrorOf(const std::string& op, const std::string& body,
                      ErrorType type = ErrorType::kValidation) {
    auto r = Call(op, body);
    if (r.ok()) return "<no error>";
    EXPECT_EQ(r.error().type, type) << r.error().message;
    return r.error().message;
  }

  static std::string Simple(const std::string& name) {
    return R"({"TableName":")" + name +
           R"(","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
           R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],)"
           R"("ProvisionedThroughput":{"ReadCapacityUnits":5,"WriteCapacityUnits":5}})";
  }

  std::unique_ptr<kv::Database> db_;
  ManualClock clock_;
  std::unique_ptr<store::Catalog> catalog_;
  OperationRegistry registry_;
  RequestContext ctx_;
  int wakes_ = 0;  // DeleteTable's wakes of the purge
};

TEST_F(TableOpsTest, CreateDescribeListDelete) {
  auto created = Call("CreateTable", Simple("orders"));
  ASSERT_TRUE(created.ok()) << created.error().message;
  const auto& td = (*created)["TableDescription"];
  EXPECT_STREQ(td["TableStatus"].GetString(), "CREATING");
  EXPECT_STREQ(td["TableArn"].GetString(), "arn:aws:dynamodb:eu-west-1:123456789012:table/orders");
  EXPECT_EQ(td["CreationDateTime"].GetDouble(), 1'700'000'000.0);
  EXPECT_EQ(td["ProvisionedThroughput"]["ReadCapacityUnits"].GetInt64(), 5);
  EXPECT_FALSE(td.HasMember("BillingModeSummary"));

  auto described = Call("DescribeTable", R"({"TableName":"orders"})");
  ASSERT_TRUE(described.ok());
  const auto& t = (*described)["Table"];
  EXPECT_STREQ(t["TableStatus"].GetString(), "ACTIVE");
  EXPECT_STREQ(t["KeySchema"][0]["AttributeName"].GetString(), "pk");
  EXPECT_STREQ(t["KeySchema"][0]["KeyType"].GetString(), "HASH");
  EXPECT_EQ(t["ItemCount"].GetInt64(), 0);
  EXPECT_FALSE(t["DeletionProtectionEnabled"].GetBool());

  EXPECT_EQ(ErrorOf("CreateTable", Simple("orders"), ErrorType::kResourceInUse),
            "Table already exists: orders");

  ASSERT_TRUE(Call("CreateTable", Simple("alpha")).ok());
  auto list = Call("ListTables", R"({"Limit":1})");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)["TableNames"].Size(), 1u);
  EXPECT_STREQ((*list)["TableNames"][0].GetString(), "alpha");
  EXPECT_STREQ((*list)["LastEvaluatedTableName"].GetString(), "alpha");
  list = Call("ListTables", R"({"ExclusiveStartTableName":"alpha"})");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)["TableNames"].Size(), 1u);
  EXPECT_STREQ((*list)["TableNames"][0].GetString(), "orders");
  EXPECT_FALSE(list->HasMember("LastEvaluatedTableName"));

  auto deleted = Call("DeleteTable", R"({"TableName":"orders"})");
  ASSERT_TRUE(deleted.ok());
  EXPECT_STREQ((*deleted)["TableDescription"]["TableStatus"].GetString(), "DELETING");
  EXPECT_EQ(ErrorOf("DescribeTable", R"({"TableName":"orders"})", ErrorType::kResourceNotFound),
            "Requested resource not found: Table: orders not found");
  EXPECT_EQ(ErrorOf("DeleteTable", R"({"TableName":"orders"})", ErrorType::kResourceNotFound),
            "Requested resource not found: Table: orders not found");
  // The name is free at once.
  ASSERT_TRUE(Call("CreateTable", Simple("orders")).ok());
}

// DeleteTable drops the table and leaves its data to the purge (workers/purge.h), which it
// wakes; tests/integration/table_purge_test.cc has the purge worker behind it.
TEST_F(TableOpsTest, DeleteTableLeavesTheDataToThePurge) {
  ASSERT_TRUE(Call("CreateTable", Simple("tb1")).ok());
  int64_t id = *kv::Run(*db_, [&](kv::Transaction& txn, const kv::Attempt&) -> Result<int64_t> {
    FDYNO_ASSIGN_OR_RETURN(auto t, catalog_->Find(txn, {ctx_.account_id, ctx_.region}, "tb1"));
    for (int i = 0; i < 10; ++i) txn.Set(store::layout::Items(t->id).Pack(kv::Tuple{i}), "x");
    return t->id;
  });
  auto left = [&] {
    auto r = kv::Run(*db_, [&](kv::Transaction& txn, const kv::Attempt&) -> Result<size_t> {
      auto [b, e] = store::layout::Table(id).Range();
      FDYNO_ASSIGN_OR_RETURN(kv::RangeResult range, txn.GetRange(b, e));
      return range.kvs.size();
    });
    return r.ok() ? *r : 9999u;
  };
  ASSERT_TRUE(Call("DeleteTable", R"({"TableName":"tb1"})").ok());
  EXPECT_EQ(wakes_, 1);
  EXPECT_EQ(left(), 10u);
  auto purged = catalog_->PurgeDropped(*db_);
  ASSERT_TRUE(purged.ok()) << purged.error().message;
  EXPECT_EQ(*purged, 1);
  EXPECT_EQ(left(), 0u);
}

TEST_F(TableOpsTest, CreateTableValidationMessages) {
  EXPECT_EQ(ErrorOf("CreateTable", R"({"AttributeDefinitions":[],"KeySchema":[]})"),
            "The parameter 'TableName' is required but was not present in the request");
  EXPECT_EQ(ErrorOf("CreateTable", R"({"TableName":"ab","KeySchema":[]})"),
            "1 validation error detected: Value 'ab' at 'tableName' failed to satisfy "
            "constraint: Member must have length greater than or equal to 3");
  EXPECT_EQ(ErrorOf("CreateTable", R"({"TableName":5})", ErrorType::kSerialization),
            "NUMBER_VALUE cannot be converted to String");
  EXPECT_EQ(
      ErrorOf(
          "CreateTable",
          R"({"TableName":"good","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
          R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"pk","KeyType":"RANGE"}],)"
          R"("ProvisionedThroughput":{"ReadCapacityUnits":5,"WriteCapacityUnits":5}})"),
      "Invalid KeySchema: Some index key attribute have no definition");
  EXPECT_EQ(
      ErrorOf(
          "CreateTable",
          R"({"TableName":"good","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
          R"("KeySchema":[{"AttributeName":"pk","KeyType":"INVALID"}],)"
          R"("ProvisionedThroughput":{"ReadCapacityUnits":5,"WriteCapacityUnits":5}})"),
      "1 validation error detected: Value 'INVALID' at 'keySchema.1.member.keyType' failed to "
      "satisfy constraint: Member must satisfy enum value set: [HASH, RANGE]");
  EXPECT_EQ(
      ErrorOf(
          "CreateTable",
          R"({"TableName":"good","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"INVALID"}],)"
          R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],)"
          R"("ProvisionedThroughput":{"ReadCapacityUnits":5,"WriteCapacityUnits":5}})"),
      "1 validation error detected: Value 'INVALID' at "
      "'attributeDefinitions.1.member.attributeType' failed to satisfy constraint: Member must "
      "satisfy enum value set: [B, N, S]");
  EXPECT_EQ(
      ErrorOf(
          "CreateTable",
          R"({"TableName":"good","AttributeDefinitions":[{"AttributeName":"a","AttributeType":"S"},)"
          R"({"AttributeName":"b","AttributeType":"S"},{"AttributeName":"c","AttributeType":"S"}],)"
          R"("KeySchema":[{"AttributeName":"a","KeyType":"HASH"},{"AttributeName":"b","KeyType":"RANGE"},)"
          R"({"AttributeName":"c","KeyType":"RANGE"}],)"
          R"("ProvisionedThroughput":{"ReadCapacityUnits":5,"WriteCapacityUnits":5}})"),
      "1 validation error detected: Value '[KeySchemaElement(attributeName=a, keyType=HASH), "
      "KeySchemaElement(attributeName=b, keyType=RANGE), KeySchemaElement(attributeName=c, "
      "keyType=RANGE)]' at 'keySchema' failed to satisfy constraint: Member must have length "
      "less than or equal to 2");
  EXPECT_EQ(
      ErrorOf(
          "CreateTable",
          R"({"TableName":"good","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},)"
          R"({"AttributeName":"x","AttributeType":"N"}],)"
          R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"BillingMode":"PAY_PER_REQUEST"})"),
      "One or more parameter values were invalid: Number of attributes in KeySchema does not "
      "exactly match number of attributes defined in AttributeDefinitions");
  EXPECT_EQ(
      ErrorOf(
          "CreateTable",
          R"({"TableName":"good","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
          R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"BillingMode":"PAY_PER_REQUEST",)"
          R"("ProvisionedThroughput":{"ReadCapacityUnits":5,"WriteCapacityUnits":5}})"),
      "One or more parameter values were invalid: Neither ReadCapacityUnits nor "
      "WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST");
  EXPECT_EQ(
      ErrorOf(
          "CreateTable",
          R"({"TableName":"good","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
          R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]})"),
      "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must "
      "both be specified when BillingMode is PROVISIONED");
  EXPECT_EQ(
      ErrorOf(
          "CreateTable",
          R"({"TableName":"good","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},)"
          R"({"AttributeName":"lsiSk","AttributeType":"S"}],)"
          R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"BillingMode":"PAY_PER_REQUEST",)"
          R"("LocalSecondaryIndexes":[{"IndexName":"lsi1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},)"
          R"({"AttributeName":"lsiSk","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]})"),
      "One or more parameter values were invalid: Table KeySchema does not have a range key, "
      "which is required when specifying a LocalSecondaryIndex");
  EXPECT_EQ(
      ErrorOf(
          "CreateTable",
          R"({"TableName":"good","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},)"
          R"({"AttributeName":"g1","AttributeType":"S"},{"AttributeName":"g2","AttributeType":"S"}],)"
          R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"BillingMode":"PAY_PER_REQUEST",)"
          R"("GlobalSecondaryIndexes":[{"IndexName":"same","KeySchema":[{"AttributeName":"g1","KeyType":"HASH"}],)"
          R"("Projection":{"ProjectionType":"ALL"}},{"IndexName":"same","KeySchema":)"
          R"([{"AttributeName":"g2","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]})"),
      "One or more parameter values were invalid: Duplicate index name: same");
  EXPECT_EQ(
      ErrorOf(
          "CreateTable",
          R"({"TableName":"good","AttributeDefinitions":[{"AttributeName":"ProductId","AttributeType":"S"},)"
          R"({"AttributeName":"CreatedTime","AttributeType":"S"},{"AttributeName":"ProductDescription","AttributeType":"S"},)"
          R"({"AttributeName":"ProductName","AttributeType":"S"}],)"
          R"("KeySchema":[{"AttributeName":"ProductId","KeyType":"HASH"},{"AttributeName":"CreatedTime","KeyType":"RANGE"}],)"
          R"("BillingMode":"PAY_PER_REQUEST","GlobalSecondaryIndexes":[{"IndexName":"byName","KeySchema":)"
          R"([{"AttributeName":"ProductName","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]})"),
      "One or more parameter values were invalid: Some AttributeDefinitions are not used. "
      "AttributeDefinitions: [ProductId, CreatedTime, ProductDescription, ProductName], keys "
      "used: [CreatedTime, ProductName, ProductId]");
  // Two constraint violations are reported together.
  EXPECT_EQ(
      ErrorOf(
          "CreateTable",
          R"({"TableName":"good","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
          R"("KeySchema":[{"AttributeName":"pk","KeyType":"INVALID"}],"BillingMode":"INVALID_MODE"})"),
      "2 validation errors detected: Value 'INVALID_MODE' at 'billingMode' failed to satisfy "
      "constraint: Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]; Value "
      "'INVALID' at 'keySchema.1.member.keyType' failed to satisfy constraint: Member must "
      "satisfy enum value set: [HASH, RANGE]");
}

TEST_F(TableOpsTest, CreateTableWithIndexesStreamsAndTags) {
  auto created = Call(
      "CreateTable",
      R"({"TableName":"full","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},)"
      R"({"AttributeName":"sk","AttributeType":"N"},{"AttributeName":"l","AttributeType":"B"},)"
      R"({"AttributeName":"g","AttributeType":"S"}],)"
      R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],)"
      R"("BillingMode":"PAY_PER_REQUEST",)"
      R"("LocalSecondaryIndexes":[{"IndexName":"lsi","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},)"
      R"({"AttributeName":"l","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}],)"
      R"("GlobalSecondaryIndexes":[{"IndexName":"gsi","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],)"
      R"("Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":["a","b"]}}],)"
      R"("StreamSpecification":{"StreamEnabled":true,"StreamViewType":"NEW_IMAGE"},)"
      R"("SSESpecification":{"Enabled":true},"TableClass":"STANDARD_INFREQUENT_ACCESS",)"
      R"("DeletionProtectionEnabled":true,"Tags":[{"Key":"env","Value":"test"}]})");
  ASSERT_TRUE(created.ok()) << created.error().message;
  auto d = Call("DescribeTable", R"({"TableName":"full"})");
  ASSERT_TRUE(d.ok());
  const auto& t = (*d)["Table"];
  EXPECT_STREQ(t["BillingModeSummary"]["BillingMode"].GetString(), "PAY_PER_REQUEST");
  EXPECT_EQ(t["ProvisionedThroughput"]["ReadCapacityUnits"].GetInt64(), 0);
  EXPECT_STREQ(t["LocalSecondaryIndexes"][0]["Projection"]["ProjectionType"].GetString(),
               "KEYS_ONLY");
  EXPECT_STREQ(t["GlobalSecondaryIndexes"][0]["IndexStatus"].GetString(), "ACTIVE");
  EXPECT_STREQ(t["GlobalSecondaryIndexes"][0]["IndexArn"].GetString(),
               "arn:aws:dynamodb:eu-west-1:123456789012:table/full/index/gsi");
  EXPECT_EQ(t["GlobalSecondaryIndexes"][0]["Projection"]["NonKeyAttributes"].Size(), 2u);
  EXPECT_STREQ(t["StreamSpecification"]["StreamViewType"].GetString(), "NEW_IMAGE");
  EXPECT_STREQ(t["LatestStreamLabel"].GetString(), "2023-11-14T22:13:20.000");
  EXPECT_STREQ(t["SSEDescription"]["SSEType"].GetString(), "KMS");
  EXPECT_STREQ(t["TableClassSummary"]["TableClass"].GetString(), "STANDARD_INFREQUENT_ACCESS");
  EXPECT_TRUE(t["DeletionProtectionEnabled"].GetBool());

  EXPECT_EQ(ErrorOf("DeleteTable", R"({"TableName":"full"})"),
            "Resource cannot be deleted as it is currently protected against deletion. Disable "
            "deletion protection first.");
  ASSERT_TRUE(
      Call("UpdateTable", R"({"TableName":"full","DeletionProtectionEnabled":false})").ok());
  ASSERT_TRUE(Call("DeleteTable", R"({"TableName":"full"})").ok());
}

TEST_F(TableOpsTest, UpdateTable) {
  ASSERT_TRUE(Call("CreateTable", Simple("tb1")).ok());
  EXPECT_EQ(ErrorOf("UpdateTable", R"({"TableName":"tb1"})"),
            "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
            "GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, "
            "MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, "
            "DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is "
            "required");
  EXPECT_EQ(ErrorOf("UpdateTable",
                    R"({"TableName":"tb1","BillingMode":"PROVISIONED",)"
                    R"("ProvisionedThroughput":{"ReadCapacityUnits":5,"WriteCapacityUnits":5}})"),
            "The provisioned throughput for the table will not change. The requested value equals "
            "the current value. Current ReadCapacityUnits provisioned for the table: 5. Requested "
            "ReadCapacityUnits: 5. Current WriteCapacityUnits provisioned for the table: 5. "
            "Requested WriteCapacityUnits: 5. Refer to the Amazon DynamoDB Developer Guide for "
            "current limits and how to request higher limits.");
  EXPECT_EQ(
      ErrorOf(
          "UpdateTable",
          R"({"TableName":"tb1","ProvisionedThroughput":{"ReadCapacityUnits":0,"WriteCapacityUnits":5}})"),
      "1 validation error detected: Value '0' at 'provisionedThroughput.readCapacityUnits' "
      "failed to satisfy constraint: Member must have value greater than or equal to 1");
  EXPECT_EQ(
      ErrorOf(
          "UpdateTable",
          R"({"TableName":"nope","ProvisionedThroughput":{"ReadCapacityUnits":9,"WriteCapacityUnits":5}})",
          ErrorType::kResourceNotFound),
      "Requested resource not found: Table: nope not found");

  clock_.Advance(std::chrono::seconds(10));
  auto up = Call(
      "UpdateTable",
      R"({"TableName":"tb1","ProvisionedThroughput":{"ReadCapacityUnits":20,"WriteCapacityUnits":3}})");
  ASSERT_TRUE(up.ok()) << up.error().message;
  EXPECT_STREQ((*up)["TableDescription"]["TableStatus"].GetString(), "UPDATING");
  auto d = Call("DescribeTable", R"({"TableName":"tb1"})");
  const auto& pt = (*d)["Table"]["ProvisionedThroughput"];
  EXPECT_EQ(pt["ReadCapacityUnits"].GetInt64(), 20);
  EXPECT_EQ(pt["WriteCapacityUnits"].GetInt64(), 3);
  EXPECT_EQ(pt["NumberOfDecreasesToday"].GetInt64(), 1);
  EXPECT_EQ(pt["LastIncreaseDateTime"].GetDouble(), 1'700'000'010.0);
  EXPECT_STREQ((*d)["Table"]["TableStatus"].GetString(), "ACTIVE");

  EXPECT_EQ(ErrorOf("UpdateTable",
                    R"({"TableName":"tb1","BillingMode":"PAY_PER_REQUEST",)"
                    R"("ProvisionedThroughput":{"ReadCapacityUnits":5,"WriteCapacityUnits":5}})"),
            "One or more parameter values were invalid: ProvisionedThroughput cannot be "
            "specified when BillingMode is PAY_PER_REQUEST");
  ASSERT_TRUE(Call("UpdateTable", R"({"TableName":"tb1","BillingMode":"PAY_PER_REQUEST"})").ok());
  d = Call("DescribeTable", R"({"TableName":"tb1"})");
  EXPECT_STREQ((*d)["Table"]["BillingModeSummary"]["BillingMode"].GetString(), "PAY_PER_REQUEST");
  // On-demand to on-demand is accepted.
  ASSERT_TRUE(Call("UpdateTable", R"({"TableName":"tb1","BillingMode":"PAY_PER_REQUEST"})").ok());
  EXPECT_EQ(ErrorOf("UpdateTable", R"({"TableName":"tb1","BillingMode":"PROVISIONED"})"),
            "One or more parameter values were invalid: ProvisionedThroughput must be specified "
            "when BillingMode is PROVISIONED");
  ASSERT_TRUE(Call("UpdateTable",
                   R"({"TableName":"tb1","BillingMode":"PROVISIONED",)"
                   R"("ProvisionedThroughput":{"ReadCapacityUnits":7,"WriteCapacityUnits":8}})")
                  .ok());
  d = Call("DescribeTable", R"({"TableName":"tb1"})");
  EXPECT_STREQ((*d)["Table"]["BillingModeSummary"]["BillingMode"].GetString(), "PROVISIONED");
  EXPECT_EQ((*d)["Table"]["ProvisionedThroughput"]["WriteCapacityUnits"].GetInt64(), 8);

  // Streams.
  EXPECT_EQ(ErrorOf("UpdateTable",
                    R"({"TableName":"tb1","StreamSpecification":{"StreamEnabled":false}})"),
            "Table has no stream to disable: TableName: tb1");
  ASSERT_TRUE(
      Call(
          "UpdateTable",
          R"({"TableName":"tb1","StreamSpecification":{"StreamEnabled":true,"StreamViewType":"KEYS_ONLY"}})")
          .ok());
  EXPECT_EQ(
      ErrorOf(
          "UpdateTable",
          R"({"TableName":"tb1","StreamSpecification":{"StreamEnabled":true,"StreamViewType":"KEYS_ONLY"}})"),
      "Table already has an enabled stream: TableName: tb1");
  d = Call("DescribeTable", R"({"TableName":"tb1"})");
  EXPECT_TRUE((*d)["Table"]["StreamSpecification"]["StreamEnabled"].GetBool());
  EXPECT_TRUE((*d)["Table"].HasMember("LatestStreamArn"));
  EXPECT_EQ(
      ErrorOf("UpdateTable",
              R"({"TableName":"tb1","TableClass":"STANDARD","DeletionProtectionEnabled":true})"),
      "One or more parameter values were invalid: TableClass modification must be the only "
      "operation in the request");
  EXPECT_EQ(ErrorOf("UpdateTable", R"({"TableName":"tb1","TableClass":"GOLD"})"),
            "Invalid table-class parameter provided. Please try again with a valid table-class "
            "value: [STANDARD, STANDARD_INFREQUENT_ACCESS].");
}

// DynamoDB's budget of throughput decreases (as recorded in 2026): four in a UTC day, then one
// at most every 3600 s after the last accepted one, never later than the day's end; each global
// index has its own; increases and refused attempts do not count.
TEST_F(TableOpsTest, ThroughputDecreasesAreLimitedPerUtcDay) {
  auto created = Call(
      "CreateTable",
      R"({"TableName":"dec","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},)"
      R"({"AttributeName":"g","AttributeType":"S"}],)"
      R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],)"
      R"("ProvisionedThroughput":{"ReadCapacityUnits":10,"WriteCapacityUnits":10},)"
      R"("GlobalSecondaryIndexes":[{"IndexName":"gix","KeySchema":[{"AttributeName":"g",)"
      R"("KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"},)"
      R"("ProvisionedThroughput":{"ReadCapacityUnits":10,"WriteCapacityUnits":10}}]})");
  ASSERT_TRUE(created.ok()) << created.error().message;
  auto table = [](int read, int write) {
    return R"({"TableName":"dec","ProvisionedThroughput":{"ReadCapacityUnits":)" +
           std::to_string(read) + R"(,"WriteCapacityUnits":)" + std::to_string(write) + "}}";
  };
  auto limited = [](int count, const std::string& last, const std::string& next) {
    return "Subscriber limit exceeded: Provisioned throughput decreases are limited within a "
           "given UTC day. After the first 4 decreases, each subsequent decrease in the same UTC "
           "day can be performed at most once every 3600 seconds. Number of decreases today: " +
           std::to_string(count) + ". Last decrease at " + last +
           " Coordinated Universal Time. Next decrease can be made at " + next +
           " Coordinated Universal Time";
  };
  auto decreases = [&] {
    auto t = Call("DescribeTable", R"({"TableName":"dec"})");
    return (*t)["Table"]["ProvisionedThroughput"]["NumberOfDecreasesToday"].GetInt64();
  };
  for (int read = 9; read >= 6; --read) ASSERT_TRUE(Call("UpdateTable", table(read, 10)).ok());
  // The clock reads Tuesday, 2023-11-14 22:13:20 UTC.
  const std::string fifth = limited(4, "Tuesday, November 14, 2023 at 10:13:20 PM",
                                    "Tuesday, November 14, 2023 at 11:13:20 PM");
  EXPECT_EQ(ErrorOf("UpdateTable", table(5, 10), ErrorType::kLimitExceeded), fifth);
  EXPECT_EQ(ErrorOf("UpdateTable", table(9, 5), ErrorType::kLimitExceeded), fifth);
  ASSERT_TRUE(Call("UpdateTable", table(6, 20)).ok());  // an increase
  clock_.Advance(std::chrono::seconds(3599));
  EXPECT_EQ(ErrorOf("UpdateTable", table(5, 20), ErrorType::kLimitExceeded), fifth);
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(Call("UpdateTable", table(5, 20)).ok());
  // The sixth: an hour after the fifth would be past midnight, when the count starts again.
  EXPECT_EQ(ErrorOf("UpdateTable", table(4, 20), ErrorType::kLimitExceeded),
            limited(5, "Tuesday, November 14, 2023 at 11:13:20 PM",
                    "Wednesday, November 15, 2023 at 12:00:00 AM"));
  EXPECT_EQ(decreases(), 5);
  // The index's own budget is untouched.
  ASSERT_TRUE(Call("UpdateTable",
                   R"({"TableName":"dec","GlobalSecondaryIndexUpdates":[{"Update":{)"
                   R"("IndexName":"gix","ProvisionedThroughput":{"ReadCapacityUnits":9,)"
                   R"("WriteCapacityUnits":10}}}]})")
                  .ok());
  clock_.Advance(std::chrono::seconds(2800));  // 2023-11-15 00:00:00: the count starts again
  EXPECT_EQ(decreases(), 0);
  ASSERT_TRUE(Call("UpdateTable", table(4, 20)).ok());
  EXPECT_EQ(decreases(), 1);
}

TEST_F(TableOpsTest, Tags) {
  ASSERT_TRUE(Call("CreateTable", Simple("tb1")).ok());
  const std::string arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/tb1";
  // TagResource and UntagResource answer with an empty body, as DynamoDB does.
  auto body = [&](const std::string& op, const std::string& json) {
    auto r = CallRaw(op, json);
    return r.ok() ? "body: '" + *r + "'" : r.error().message;
  };
  EXPECT_EQ(
      body("TagResource", R"({"ResourceArn":")" + arn +
                              R"(","Tags":[{"Key":"a","Value":"1"},{"Key":"b","Value":"2"}]})"),
      "body: ''");
  EXPECT_EQ(
      body("TagResource", R"({"ResourceArn":")" + arn + R"(","Tags":[{"Key":"a","Value":"9"}]})"),
      "body: ''");
  EXPECT_EQ(body("UntagResource", R"({"ResourceArn":")" + arn + R"(","TagKeys":["b","zz"]})"),
            "body: ''");
  auto tags = Call("ListTagsOfResource", R"({"ResourceArn":")" + arn + R"("})");
  ASSERT_TRUE(tags.ok());
  ASSERT_EQ((*tags)["Tags"].Size(), 1u);
  EXPECT_STREQ((*tags)["Tags"][0]["Key"].GetString(), "a");
  EXPECT_STREQ((*tags)["Tags"][0]["Value"].GetString(), "9");

  EXPECT_EQ(
      ErrorOf("TagResource",
              R"({"ResourceArn":"not-a-valid-arn","Tags":[{"Key":"a","Value":"1"}]})"),
      "One or more parameter values were invalid: ARNs must start with 'arn:': not-a-valid-arn");
  EXPECT_EQ(ErrorOf("ListTagsOfResource",
                    R"({"ResourceArn":"arn:aws:dynamodb:eu-west-1:123456789012:table/nope"})",
                    ErrorType::kResourceNotFound),
            "Requested resource not found: ResourceArn: "
            "arn:aws:dynamodb:eu-west-1:123456789012:table/nope not found");
  auto other = ErrorOf("ListTagsOfResource",
                       R"({"ResourceArn":"arn:aws:dynamodb:eu-west-1:000000000000:table/tb1"})",
                       ErrorType::kAccessDenied);
  EXPECT_NE(other.find("is not authorized to perform: dynamodb:ListTagsOfResource"),
            std::string::npos);
  EXPECT_EQ(ErrorOf("TagResource", R"({"ResourceArn":")" + arn + R"(","Tags":[]})"),
            "Atleast one Tag needs to be provided as Input.");
  EXPECT_EQ(ErrorOf("TagResource",
                    R"({"ResourceArn":")" + arn + R"(","Tags":[{"Key":"aws:x","Value":"1"}]})"),
            "Tag Key cannot be prefixed with aws:, Key: aws:x");
  EXPECT_EQ(ErrorOf("UntagResource", R"({"ResourceArn":")" + arn + R"(","TagKeys":[]})"),
            "Atleast one Tag Key needs to be provided as Input.");
  // Tags go away with the table.
  ASSERT_TRUE(Call("DeleteTable", R"({"TableName":"tb1"})").ok());
  ASSERT_TRUE(Call("CreateTable", Simple("tb1")).ok());
  tags = Call("ListTagsOfResource", R"({"ResourceArn":")" + arn + R"("})");
  ASSERT_TRUE(tags.ok());
  EXPECT_EQ((*tags)["Tags"].Size(), 0u);
}

TEST_F(TableOpsTest, ExistingTablesCanBeNamedByArn) {
  ASSERT_TRUE(Call("CreateTable", Simple("tb1")).ok());
  const std::string arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/tb1";
  auto d = Call("DescribeTable", R"({"TableName":")" + arn + R"("})");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_STREQ((*d)["Table"]["TableName"].GetString(), "tb1");
  ASSERT_TRUE(Call("DescribeTimeToLive", R"({"TableName":")" + arn + R"("})").ok());
  ASSERT_TRUE(
      Call("UpdateTable",
           R"({"TableName":")" + arn +
               R"(","ProvisionedThroughput":{"ReadCapacityUnits":1,"WriteCapacityUnits":1}})")
          .ok());
  EXPECT_EQ(ErrorOf("DescribeTable",
                    R"({"TableName":"arn:aws:dynamodb:eu-west-1:123456789012:table/none"})",
                    ErrorType::kResourceNotFound),
            "Requested resource not found: Table: none not found");
  ErrorOf("DescribeTable", R"({"TableName":"arn:aws:dynamodb:eu-west-1:999999999999:table/tb1"})",
          ErrorType::kAccessDenied);
  ASSERT_TRUE(Call("DeleteTable", R"({"TableName":")" + arn + R"("})").ok());
  // CreateTable takes a name only.
  EXPECT_NE(ErrorOf("CreateTable", Simple(arn)).find("regular expression pattern"),
            std::string::npos);
}

TEST_F(TableOpsTest, BackupsAndTimeToLive) {
  ASSERT_TRUE(Call("CreateTable", Simple("tb1")).ok());
  auto b = Call("DescribeContinuousBackups", R"({"TableName":"tb1"})");
  ASSERT_TRUE(b.ok());
  EXPECT_STREQ((*b)["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]
                   ["PointInTimeRecoveryStatus"]
                       .GetString(),
               "DISABLED");
  EXPECT_EQ(
      ErrorOf("DescribeContinuousBackups", R"({"TableName":"nope"})", ErrorType::kTableNotFound),
      "Table not found: nope");
  auto ttl = Call("DescribeTimeToLive", R"({"TableName":"tb1"})");
  ASSERT_TRUE(ttl.ok());
  EXPECT_STREQ((*ttl)["TimeToLiveDescription"]["TimeToLiveStatus"].GetString(), "DISABLED");
}

TEST_F(TableOpsTest, ListTablesValidation) {
  EXPECT_EQ(ErrorOf("ListTables", R"({"Limit":0})"),
            "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: "
            "Member must have value greater than or equal to 1");
  EXPECT_EQ(ErrorOf("ListTables", R"({"Limit":101})"),
            "1 validation error detected: Value '101' at 'limit' failed to satisfy constraint: "
            "Member must have value less than or equal to 100");
  EXPECT_EQ(ErrorOf("ListTables", R"({"Limit":"x"})", ErrorType::kSerialization),
            "STRING_VALUE cannot be converted to Integer");
  auto empty = Call("ListTables", "{}");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)["TableNames"].Size(), 0u);
}

// Every member of valid requests, at every depth, replaced by values of every JSON type: the
// handlers answer with a DynamoDB error or succeed, and never crash.
TEST_F(TableOpsTest, MalformedMembersNeverCrash) {
  const std::vector<std::pair<std::string, std::string>> requests = {
      {"CreateTable",
       R"({"TableName":"fuzz","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},)"
       R"({"AttributeName":"sk","AttributeType":"N"},{"AttributeName":"g","AttributeType":"S"}],)"
       R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],)"
       R"("LocalSecondaryIndexes":[{"IndexName":"lsi","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},)"
       R"({"AttributeName":"g","KeyType":"RANGE"}],"Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":["a"]}}],)"
       R"("GlobalSecondaryIndexes":[{"IndexName":"gsi","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],)"
       R"("Projection":{"ProjectionType":"ALL"},"ProvisionedThroughput":{"ReadCapacityUnits":1,"WriteCapacityUnits":1}}],)"
       R"("ProvisionedThroughput":{"ReadCapacityUnits":5,"WriteCapacityUnits":5},"BillingMode":"PROVISIONED",)"
       R"("StreamSpecification":{"StreamEnabled":true,"StreamViewType":"NEW_IMAGE"},)"
       R"("SSESpecification":{"Enabled":true,"SSEType":"KMS","KMSMasterKeyId":"k"},)"
       R"("Tags":[{"Key":"a","Value":"b"}],"TableClass":"STANDARD","DeletionProtectionEnabled":false})"},
      {"UpdateTable",
       R"({"TableName":"base","BillingMode":"PROVISIONED","ProvisionedThroughput":{"ReadCapacityUnits":9,)"
       R"("WriteCapacityUnits":9},"GlobalSecondaryIndexUpdates":[{"Update":{"IndexName":"gsi",)"
       R"("ProvisionedThroughput":{"ReadCapacityUnits":2,"WriteCapacityUnits":2}}}],)"
       R"("StreamSpecification":{"StreamEnabled":true,"StreamViewType":"KEYS_ONLY"},)"
       R"("SSESpecification":{"Enabled":true},"TableClass":"STANDARD","DeletionProtectionEnabled":true})"},
      {"TagResource",
       R"({"ResourceArn":"arn:aws:dynamodb:eu-west-1:123456789012:table/base","Tags":[{"Key":"a","Value":"b"}]})"},
      {"UntagResource",
       R"({"ResourceArn":"arn:aws:dynamodb:eu-west-1:123456789012:table/base","TagKeys":["a"]})"},
      {"ListTagsOfResource",
       R"({"ResourceArn":"arn:aws:dynamodb:eu-west-1:123456789012:table/base","NextToken":"x"})"},
      {"ListTables", R"({"ExclusiveStartTableName":"abc","Limit":5})"},
      {"DescribeTable", R"({"TableName":"base"})"},
      {"DeleteTable", R"({"TableName":"nothere"})"},
      {"DescribeTimeToLive", R"({"TableName":"base"})"},
      {"DescribeContinuousBackups", R"({"TableName":"base"})"},
  };
  ASSERT_TRUE(Call("CreateTable", Simple("base")).ok());
  const std::vector<std::string> replacements = {
      "null",  "1",    "-7",   "1.5",       "\"\"",
      "\"x\"", "true", "[]",   "{}",        "[null]",
      "[1]",   "[{}]", "[[]]", "{\"a\":1}", "99999999999999999999"};
  int calls = 0;
  for (const auto& request : requests) {
    const std::string& op = request.first;  // named, not bound: clang 14 cannot capture bindings
    const std::string& json = request.second;
    rapidjson::Document base;
    base.Parse(json.c_str());
    ASSERT_FALSE(base.HasParseError()) << op;
    // Visit every value by its JSON pointer-like path of member names and indexes.
    std::function<void(rapidjson::Value&)> visit = [&](rapidjson::Value& v) {
      std::vector<rapidjson::Value*> children;
      if (v.IsObject()) {
        // By index: comparing RapidJSON 1.1's mutable member iterators is ambiguous in C++20
        // (clang's -Wambiguous-reversed-operator).
        for (rapidjson::SizeType i = 0; i < v.MemberCount(); ++i) {
          children.push_back(&(v.MemberBegin() + i)->value);
        }
      } else if (v.IsArray()) {
        for (auto& e : v.GetArray()) children.push_back(&e);
      }
      for (rapidjson::Value* child : children) {
        rapidjson::Value saved;
        saved.CopyFrom(*child, base.GetAllocator());
        for (const std::string& r : replacements) {
          rapidjson::Document repl;
          repl.Parse(r.c_str());
          child->CopyFrom(repl, base.GetAllocator());
          const Handler* h = registry_.Find(op);
          Result<std::string> out = (*h)(ctx_, base);
          ++calls;
          if (!out.ok()) {
            ErrorType t = out.error().type;
            EXPECT_TRUE(t == ErrorType::kValidation || t == ErrorType::kSerialization ||
                        t == ErrorType::kResourceNotFound || t == ErrorType::kResourceInUse ||
                        t == ErrorType::kTableNotFound || t == ErrorType::kAccessDenied)
                << op << ": " << out.error().message;
          }
          if (op == "CreateTable" && out.ok()) {
            rapidjson::Document del;
            del.Parse(R"({"TableName":"fuzz"})");
            (void)(*registry_.Find("DeleteTable"))(ctx_, del);
          }
        }
        child->CopyFrom(saved, base.GetAllocator());
        visit(*child);
      }
    };
    visit(base);
  }
  EXPECT_GT(calls, 1000);
}

}  // namespace
}  // namespace fdyno::api
