// UpdateContinuousBackups, DescribeContinuousBackups and RestoreTableToPointInTime at the handler
// level: DynamoDB's shapes, validation and errors, the window, and a restore run to its end by
// the worker.
#include "api/pitr_ops.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "api/item_ops.h"
#include "api/table_ops.h"
#include "api/testing/call.h"
#include "kv/testing/memory_engine.h"
#include "store/pitr.h"
#include "workers/pitr.h"

namespace fdyno::api {
namespace {

constexpr int64_t kStart = 1'700'000'000'000;

class PitrOpsTest : public ::testing::Test {
 protected:
  PitrOpsTest() : db_(kv::OpenMemoryEngine()), clock_(kStart), catalog_(&clock_) {
    Services s;
    s.db = db_.get();
    s.catalog = &catalog_;
    s.clock = &clock_;
    RegisterTableOperations(registry_, s);
    RegisterItemOperations(registry_, s);
    RegisterPitrOperations(registry_, s);
    ctx_.account_id = "123456789012";
    ctx_.region = "eu-west-1";
    ctx_.clock = &clock_;
    worker_.clock = &clock_;
    EXPECT_TRUE(Call("CreateTable",
                     R"({"TableName":"src","BillingMode":"PAY_PER_REQUEST",)"
                     R"("AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
                     R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]})")
                    .ok());
  }

  Result<rapidjson::Document> Call(const std::string& op, const std::string& body) {
    return testing::CallOperationJson(registry_, op, body, ctx_);
  }
  std::string ErrorOf(const std::string& op, const std::string& body,
                      ErrorType type = ErrorType::kValidation) {
    auto r = Call(op, body);
    if (r.ok()) return "<no error>";
    EXPECT_EQ(r.error().type, type) << r.error().message;
    return r.error().message;
  }
  Result<rapidjson::Document> Enable(const std::string& extra = "") {
    return Call("UpdateContinuousBackups",
                R"({"TableName":"src","PointInTimeRecoverySpecification":)"
                R"({"PointInTimeRecoveryEnabled":true)" +
                    extra + "}}");
  }
  void Put(const std::string& pk, const std::string& v) {
    ASSERT_TRUE(Call("PutItem", R"({"TableName":"src","Item":{"pk":{"S":")" + pk +
                                    R"("},"v":{"S":")" + v + R"("}}})")
                    .ok());
  }
  std::string Get(const std::string& table, const std::string& pk) {
    auto r =
        Call("GetItem", R"({"TableName":")" + table + R"(","Key":{"pk":{"S":")" + pk + "\"}}}");
    EXPECT_TRUE(r.ok()) << r.error().message;
    if (!r.ok() || !r->HasMember("Item")) return "-";
    return (*r)["Item"]["v"]["S"].GetString();
  }
  void Tick(int64_t ms) { clock_.Advance(std::chrono::milliseconds(ms)); }

  std::unique_ptr<kv::Database> db_;
  ManualClock clock_;
  store::Catalog catalog_;
  OperationRegistry registry_;
  RequestContext ctx_;
  workers::BackupWorkerOptions worker_;
};

TEST_F(PitrOpsTest, EnableDescribeDisable) {
  auto d = Call("DescribeContinuousBackups", R"({"TableName":"src"})");
  ASSERT_TRUE(d.ok());
  const auto& before = (*d)["ContinuousBackupsDescription"];
  EXPECT_STREQ(before["ContinuousBackupsStatus"].GetString(), "ENABLED");
  EXPECT_STREQ(before["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"].GetString(),
               "DISABLED");
  EXPECT_FALSE(before["PointInTimeRecoveryDescription"].HasMember("EarliestRestorableDateTime"));

  auto on = Enable(R"(,"RecoveryPeriodInDays":7)");
  ASSERT_TRUE(on.ok()) << on.error().message;
  const auto& p = (*on)["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"];
  EXPECT_STREQ(p["PointInTimeRecoveryStatus"].GetString(), "ENABLED");
  EXPECT_EQ(p["RecoveryPeriodInDays"].GetInt64(), 7);
  EXPECT_EQ(p["EarliestRestorableDateTime"].GetDouble(), kStart / 1000.0);
  Tick(5000);
  d = Call("DescribeContinuousBackups", R"({"TableName":"src"})");
  const auto& later = (*d)["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"];
  EXPECT_EQ(later["EarliestRestorableDateTime"].GetDouble(), kStart / 1000.0);
  EXPECT_EQ(later["LatestRestorableDateTime"].GetDouble(), (kStart + 5000) / 1000.0);

  // Enabling again keeps the window; disabling then enabling starts a new one.
  ASSERT_TRUE(Enable().ok());
  auto off =
      Call("UpdateContinuousBackups", R"({"TableName":"src","PointInTimeRecoverySpecification":)"
                                      R"({"PointInTimeRecoveryEnabled":false}})");
  ASSERT_TRUE(off.ok());
  EXPECT_STREQ((*off)["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]
                     ["PointInTimeRecoveryStatus"]
                         .GetString(),
               "DISABLED");
  Tick(1000);
  on = Enable();
  EXPECT_EQ((*on)["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]
                 ["EarliestRestorableDateTime"]
                     .GetDouble(),
            (kStart + 6000) / 1000.0);
  EXPECT_EQ((*on)["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]
                 ["RecoveryPeriodInDays"]
                     .GetInt64(),
            35);
}

TEST_F(PitrOpsTest, UpdateValidationAndErrors) {
  EXPECT_EQ(ErrorOf("UpdateContinuousBackups", R"({"TableName":"src"})"),
            "1 validation error detected: Value null at 'pointInTimeRecoverySpecification' failed "
            "to satisfy constraint: Member must not be null");
  EXPECT_EQ(ErrorOf("UpdateContinuousBackups",
                    R"({"TableName":"src","PointInTimeRecoverySpecification":{}})"),
            "1 validation error detected: Value null at "
            "'pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled' failed to satisfy "
            "constraint: Member must not be null");
  EXPECT_EQ(ErrorOf("UpdateContinuousBackups",
                    R"({"TableName":"src","PointInTimeRecoverySpecification":)"
                    R"({"PointInTimeRecoveryEnabled":true,"RecoveryPeriodInDays":36}})"),
            "1 validation error detected: Value '36' at "
            "'pointInTimeRecoverySpecification.recoveryPeriodInDays' failed to satisfy "
            "constraint: Member must have value less than or equal to 35");
  EXPECT_NE(ErrorOf("UpdateContinuousBackups",
                    R"({"TableName":"src","PointInTimeRecoverySpecification":)"
                    R"({"PointInTimeRecoveryEnabled":true,"RecoveryPeriodInDays":0}})"),
            "<no error>");
  EXPECT_EQ(ErrorOf("UpdateContinuousBackups",
                    R"({"TableName":"nope","PointInTimeRecoverySpecification":)"
                    R"({"PointInTimeRecoveryEnabled":true}})",
                    ErrorType::kTableNotFound),
            "Table not found: nope");
  EXPECT_EQ(
      ErrorOf("DescribeContinuousBackups", R"({"TableName":"nope"})", ErrorType::kTableNotFound),
      "Table not found: nope");
}

TEST_F(PitrOpsTest, RestoreErrors) {
  const std::string target = R"("TargetTableName":"dst")";
  EXPECT_EQ(ErrorOf("RestoreTableToPointInTime",
                    R"({"SourceTableName":"src",)" + target + R"(,"UseLatestRestorableTime":true})",
                    ErrorType::kPointInTimeRecoveryUnavailable),
            "Point in time recovery is not enabled for table 'src'");
  ASSERT_TRUE(Enable().ok());
  EXPECT_EQ(
      ErrorOf("RestoreTableToPointInTime",
              R"({"SourceTableName":"nope",)" + target + R"(,"UseLatestRestorableTime":true})",
              ErrorType::kTableNotFound),
      "Table not found: nope");
  EXPECT_NE(
      ErrorOf("RestoreTableToPointInTime", "{" + target + R"(,"UseLatestRestorableTime":true})"),
      "<no error>");
  EXPECT_NE(ErrorOf("RestoreTableToPointInTime", R"({"SourceTableName":"src",)" + target + "}"),
            "<no error>");
  EXPECT_NE(ErrorOf("RestoreTableToPointInTime",
                    R"({"SourceTableName":"src",)" + target +
                        R"(,"UseLatestRestorableTime":true,"RestoreDateTime":1700000000})"),
            "<no error>");
  const std::string before = std::to_string((kStart - 1000) / 1000.0);
  EXPECT_NE(
      ErrorOf("RestoreTableToPointInTime",
              R"({"SourceTableName":"src",)" + target + R"(,"RestoreDateTime":)" + before + "}",
              ErrorType::kInvalidRestoreTime),
      "<no error>");
  const std::string future = std::to_string((kStart + 60'000) / 1000.0);
  EXPECT_NE(
      ErrorOf("RestoreTableToPointInTime",
              R"({"SourceTableName":"src",)" + target + R"(,"RestoreDateTime":)" + future + "}",
              ErrorType::kInvalidRestoreTime),
      "<no error>");
  EXPECT_EQ(
      ErrorOf("RestoreTableToPointInTime",
              R"({"SourceTableName":"src","TargetTableName":"src","UseLatestRestorableTime":true})",
              ErrorType::kTableAlreadyExists),
      "Table already exists: src");
}

TEST_F(PitrOpsTest, RestoreByNameOrArnToAChosenSecond) {
  ASSERT_TRUE(Enable().ok());
  Put("a", "1");
  Put("b", "1");
  Tick(2000);
  const int64_t t = clock_.WallMillis();
  Tick(1000);
  Put("a", "2");
  ASSERT_TRUE(Call("DeleteItem", R"({"TableName":"src","Key":{"pk":{"S":"b"}}})").ok());
  Put("c", "1");
  auto r = Call("RestoreTableToPointInTime",
                R"({"SourceTableArn":"arn:aws:dynamodb:eu-west-1:123456789012:table/src",)"
                R"("TargetTableName":"dst","RestoreDateTime":)" +
                    std::to_string(t / 1000.0) + "}");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& td = (*r)["TableDescription"];
  EXPECT_STREQ(td["TableStatus"].GetString(), "CREATING");
  EXPECT_STREQ(td["RestoreSummary"]["SourceTableArn"].GetString(),
               "arn:aws:dynamodb:eu-west-1:123456789012:table/src");
  EXPECT_FALSE(td["RestoreSummary"].HasMember("SourceBackupArn"));
  EXPECT_TRUE(td["RestoreSummary"]["RestoreInProgress"].GetBool());
  EXPECT_EQ(td["RestoreSummary"]["RestoreDateTime"].GetDouble(), t / 1000.0);

  Tick(store::kPitrSettleMs);
  auto pass = workers::RunPitrPass(*db_, catalog_, worker_, /*trim=*/true);
  ASSERT_TRUE(pass.ok()) << pass.error().message;
  EXPECT_EQ(pass->restores_completed, 1);
  auto d = Call("DescribeTable", R"({"TableName":"dst"})");
  ASSERT_TRUE(d.ok());
  EXPECT_STREQ((*d)["Table"]["TableStatus"].GetString(), "ACTIVE");
  EXPECT_FALSE((*d)["Table"].HasMember("RestoreSummary"));  // left out once ACTIVE
  EXPECT_EQ((*d)["Table"]["ItemCount"].GetInt64(), 2);
  EXPECT_EQ(Get("dst", "a"), "1");
  EXPECT_EQ(Get("dst", "b"), "1");
  EXPECT_EQ(Get("dst", "c"), "-");
  // The restored table's own recovery is off, as DynamoDB leaves it.
  auto c = Call("DescribeContinuousBackups", R"({"TableName":"dst"})");
  EXPECT_STREQ((*c)["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]
                   ["PointInTimeRecoveryStatus"]
                       .GetString(),
               "DISABLED");
}

}  // namespace
}  // namespace fdyno::api
