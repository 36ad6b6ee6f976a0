// Control-plane operations under ambiguous commits. A commit that was applied but reported
// commit_unknown_result (1021) is retried; the retry must recognise the earlier attempt's effect
// and answer the request's own success: never "Table already exists" for the table it created,
// "not found" for the table or backup it deleted, "will not change" for the update it made, a
// second backup, nor a second start of point-in-time recovery's window. Every call either succeeds
// with exactly one effect or reports that its outcome is unknown. The backup worker runs when the
// handlers wake it, on the engine without faults.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <memory>
#include <string>

#include "api/backup_ops.h"
#include "api/pitr_ops.h"
#include "api/table_ops.h"
#include "api/testing/call.h"
#include "api/ttl_ops.h"
#include "kv/engines/faulty/faulty.h"
#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "store/catalog.h"
#include "workers/backups.h"

namespace fdyno::api {
namespace {

constexpr int kCalls = 30;

class ControlPlaneFaultsTest : public ::testing::Test {
 protected:
  ControlPlaneFaultsTest() {
    faulty_ = kv::WrapFaulty(inner_.get(), kv::FaultOptions{});
    Services s;
    s.db = faulty_.get();
    s.catalog = &catalog_;
    s.clock = &clock_;
    s.ttl_update_interval_ms = 0;
    s.wake_backups = [this] {
      auto pass = workers::RunBackupPass(*inner_, catalog_, workers::BackupWorkerOptions{});
      EXPECT_TRUE(pass.ok()) << pass.error().message;
    };
    RegisterTableOperations(registry_, s);
    RegisterTtlOperations(registry_, s);
    RegisterBackupOperations(registry_, s);
    RegisterPitrOperations(registry_, s);
    ctx_.account_id = "123456789012";
    ctx_.region = "eu-west-1";
    ctx_.clock = &clock_;
  }

  // Half of the commits from now on are applied and then reported unknown (the fault engine's
  // seed is the one it was made with).
  void InjectUnknownResults() {
    kv::FaultOptions faults;
    faults.unknown_applied = 0.5;
    faulty_->SetOptions(faults);
  }
  void NoFaults() { faulty_->SetOptions(kv::FaultOptions{}); }

  Result<rapidjson::Document> Call(const std::string& op, const std::string& body) {
    return testing::CallOperationJson(registry_, op, body, ctx_);
  }
  // `op` under injected unknown results: its document, or null when the outcome is unknown
  // (any other error fails the test).
  std::unique_ptr<rapidjson::Document> CallFaulty(int call, const std::string& op,
                                                  const std::string& body) {
    InjectUnknownResults();
    auto r = Call(op, body);
    NoFaults();
    if (r.ok()) {
      ++answered_;
      return std::make_unique<rapidjson::Document>(std::move(*r));
    }
    EXPECT_TRUE(kv::IsOutcomeUnknown(r.error()))
        << op << " answered " << r.error().message << " (call " << call << ")";
    return nullptr;
  }
  rapidjson::Document Must(const std::string& op, const std::string& body) {
    auto r = Call(op, body);
    EXPECT_TRUE(r.ok()) << op << ": " << r.error().message;
    return r.ok() ? std::move(*r) : rapidjson::Document();
  }
  void ExpectRetriesHappened() {
    EXPECT_GE(faulty_->counts().unknown_applied, kCalls / 3);
    EXPECT_GT(answered_, kCalls / 3);
  }

  static std::string Table(const std::string& name) {
    return R"({"TableName":")" + name +
           R"(","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
           R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],)"
           R"("ProvisionedThroughput":{"ReadCapacityUnits":5,"WriteCapacityUnits":5}})";
  }
  std::string Created(const std::string& name) {
    Must("CreateTable", Table(name));
    return name;
  }
  static std::string Named(const std::string& name) { return R"({"TableName":")" + name + R"("})"; }
  int BackupsOf(const std::string& table) {
    auto listed = Must("ListBackups", Named(table));
    return listed.HasMember("BackupSummaries") ? listed["BackupSummaries"].Size() : -1;
  }

  std::unique_ptr<kv::Database> inner_ = kv::OpenMemoryEngine();
  std::unique_ptr<kv::FaultyDatabase> faulty_;
  ManualClock clock_;
  store::Catalog catalog_{&clock_};
  OperationRegistry registry_;
  RequestContext ctx_;
  int answered_ = 0;
};

TEST_F(ControlPlaneFaultsTest, CreateTableAnswersItsOwnTable) {
  for (int i = 0; i < kCalls; ++i) {
    const std::string name = "tbl" + std::to_string(i);
    auto created = CallFaulty(i, "CreateTable", Table(name));
    if (!created) continue;
    auto described = Must("DescribeTable", Named(name));
    EXPECT_STREQ((*created)["TableDescription"]["TableId"].GetString(),
                 described["Table"]["TableId"].GetString());
  }
  ExpectRetriesHappened();
}

TEST_F(ControlPlaneFaultsTest, DeleteTableAnswersTheTableItDeleted) {
  for (int i = 0; i < kCalls; ++i) {
    const std::string name = Created("tbl" + std::to_string(i));
    const std::string id = Must("DescribeTable", Named(name))["Table"]["TableId"].GetString();
    auto deleted = CallFaulty(i, "DeleteTable", Named(name));
    if (deleted) {
      EXPECT_EQ((*deleted)["TableDescription"]["TableId"].GetString(), id);
    }
  }
  ExpectRetriesHappened();
}

TEST_F(ControlPlaneFaultsTest, UpdateTableAnswersItsOwnUpdate) {
  const std::string name = Created("tbl");
  for (int i = 0; i < kCalls; ++i) {
    const std::string units = std::to_string(10 + i);
    auto updated =
        CallFaulty(i, "UpdateTable",
                   R"({"TableName":"tbl","ProvisionedThroughput":{"ReadCapacityUnits":)" + units +
                       R"(,"WriteCapacityUnits":5}})");
    if (!updated) continue;
    EXPECT_EQ(
        Must("DescribeTable", Named(name))["Table"]["ProvisionedThroughput"]["ReadCapacityUnits"]
            .GetInt64(),
        10 + i);
  }
  ExpectRetriesHappened();
}

TEST_F(ControlPlaneFaultsTest, UpdateTimeToLiveAnswersItsOwnChange) {
  const std::string name = Created("tbl");
  for (int i = 0; i < kCalls; ++i) {
    clock_.Advance(std::chrono::milliseconds(1));
    const bool enable = i % 2 == 0;
    auto changed = CallFaulty(
        i, "UpdateTimeToLive",
        R"({"TableName":"tbl","TimeToLiveSpecification":{"AttributeName":"exp","Enabled":)" +
            std::string(enable ? "true" : "false") + "}}");
    // An unknown outcome leaves the state unknown too: bring it where the next call expects.
    auto ttl = Must("DescribeTimeToLive", Named(name));
    const std::string status = ttl["TimeToLiveDescription"]["TimeToLiveStatus"].GetString();
    if (changed) {
      EXPECT_EQ(status, enable ? "ENABLED" : "DISABLED");
    }
    if (!changed && (status == "ENABLED") != enable) {
      clock_.Advance(std::chrono::milliseconds(1));
      Must("UpdateTimeToLive",
           R"({"TableName":"tbl","TimeToLiveSpecification":{"AttributeName":"exp","Enabled":)" +
               std::string(enable ? "true" : "false") + "}}");
    }
  }
  ExpectRetriesHappened();
}

TEST_F(ControlPlaneFaultsTest, CreateBackupMakesOneBackup) {
  for (int i = 0; i < kCalls; ++i) {
    const std::string name = Created("tbl" + std::to_string(i));
    auto made =
        CallFaulty(i, "CreateBackup", R"({"TableName":")" + name + R"(","BackupName":"bak"})");
    EXPECT_EQ(BackupsOf(name), made ? 1 : BackupsOf(name) > 0 ? 1 : 0) << "call " << i;
  }
  ExpectRetriesHappened();
}

TEST_F(ControlPlaneFaultsTest, DeleteBackupAnswersTheBackupItDeleted) {
  const std::string name = Created("tbl");
  for (int i = 0; i < kCalls; ++i) {
    auto made = Must("CreateBackup", R"({"TableName":"tbl","BackupName":"bak"})");
    const std::string arn = made["BackupDetails"]["BackupArn"].GetString();
    auto deleted = CallFaulty(i, "DeleteBackup", R"({"BackupArn":")" + arn + R"("})");
    if (deleted) {
      EXPECT_EQ(deleted->operator[]("BackupDescription")["BackupDetails"]["BackupArn"].GetString(),
                arn);
    }
  }
  ExpectRetriesHappened();
}

TEST_F(ControlPlaneFaultsTest, RestoreTableFromBackupAnswersItsOwnTable) {
  const std::string name = Created("tbl");
  const std::string arn =
      Must("CreateBackup",
           R"({"TableName":"tbl","BackupName":"bak"})")["BackupDetails"]["BackupArn"]
          .GetString();
  for (int i = 0; i < kCalls; ++i) {
    const std::string target = "restored" + std::to_string(i);
    auto restored =
        CallFaulty(i, "RestoreTableFromBackup",
                   R"({"TargetTableName":")" + target + R"(","BackupArn":")" + arn + R"("})");
    if (!restored) continue;
    EXPECT_STREQ((*restored)["TableDescription"]["TableId"].GetString(),
                 Must("DescribeTable", Named(target))["Table"]["TableId"].GetString());
  }
  ExpectRetriesHappened();
}

TEST_F(ControlPlaneFaultsTest, UpdateContinuousBackupsAnswersItsOwnChange) {
  const std::string name = Created("tbl");
  auto pitr = [](const rapidjson::Document& d) -> const rapidjson::Value& {
    return d["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"];
  };
  for (int i = 0; i < kCalls; ++i) {
    clock_.Advance(std::chrono::milliseconds(1000));
    const bool enable = i % 2 == 0;
    auto changed = CallFaulty(
        i, "UpdateContinuousBackups",
        R"({"TableName":"tbl","PointInTimeRecoverySpecification":{"PointInTimeRecoveryEnabled":)" +
            std::string(enable ? "true" : "false") + "}}");
    auto now = Must("DescribeContinuousBackups", Named(name));
    const std::string status = pitr(now)["PointInTimeRecoveryStatus"].GetString();
    if (changed) {
      EXPECT_EQ(pitr(*changed)["PointInTimeRecoveryStatus"].GetString(),
                std::string(enable ? "ENABLED" : "DISABLED"));
      EXPECT_EQ(status, enable ? "ENABLED" : "DISABLED");
      if (enable) {  // the window its own enable started: now, not a later retry's
        EXPECT_EQ(pitr(*changed)["EarliestRestorableDateTime"].GetDouble(),
                  clock_.WallMillis() / 1000.0);
        EXPECT_EQ(pitr(now)["EarliestRestorableDateTime"].GetDouble(),
                  clock_.WallMillis() / 1000.0);
      }
    }
    if (!changed && (status == "ENABLED") != enable) {
      Must(
          "UpdateContinuousBackups",
          R"({"TableName":"tbl","PointInTimeRecoverySpecification":{"PointInTimeRecoveryEnabled":)" +
              std::string(enable ? "true" : "false") + "}}");
    }
  }
  ExpectRetriesHappened();
}

TEST_F(ControlPlaneFaultsTest, RestoreTableToPointInTimeAnswersItsOwnTable) {
  Created("tbl");
  Must(
      "UpdateContinuousBackups",
      R"({"TableName":"tbl","PointInTimeRecoverySpecification":{"PointInTimeRecoveryEnabled":true}})");
  for (int i = 0; i < kCalls; ++i) {
    const std::string target = "restored" + std::to_string(i);
    auto restored = CallFaulty(i, "RestoreTableToPointInTime",
                               R"({"SourceTableName":"tbl","TargetTableName":")" + target +
                                   R"(","UseLatestRestorableTime":true})");
    if (!restored) continue;
    EXPECT_STREQ((*restored)["TableDescription"]["TableId"].GetString(),
                 Must("DescribeTable", Named(target))["Table"]["TableId"].GetString());
  }
  ExpectRetriesHappened();
}

}  // namespace
}  // namespace fdyno::api
