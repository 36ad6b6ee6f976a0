// DeleteTable answers once the table is dropped in the catalog, as DynamoDB answers DELETING at
// once: the data of a large table is removed afterwards by the purge worker (workers/purge.h),
// not inside the request. The handlers are wired as the server wires them
// (api::BuildOperationRegistry, the purge worker woken through ApiDeps::wake_purge), over the
// in-memory engine behind a view that counts the commits that wrote something.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "api/api.h"
#include "api/testing/call.h"
#include "base/metrics.h"
#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "store/catalog.h"
#include "store/layout.h"
#include "workers/pausing_database_testing.h"
#include "workers/purge.h"
#include "workers/purge_testing.h"

namespace fdyno::api {
namespace {

constexpr int kKeys = 3000;  // about 12 purge transactions of 256 keys

class TablePurgeTest : public ::testing::Test {
 protected:
  TablePurgeTest() {
    workers::PurgeOptions options;
    options.interval = std::chrono::hours(1);  // only a wake, or the first pass, runs it
    worker_ = std::make_unique<workers::PurgeWorker>(&db_, &catalog_, options);
    ApiDeps deps;
    deps.db = &db_;
    deps.catalog = &catalog_;
    deps.wake_purge = [this] {
      ++wakes_;
      worker_->Wake();
    };
    registry_ = BuildOperationRegistry(deps);
    ctx_.account_id = "123456789012";
    ctx_.region = "eu-west-1";
    ctx_.clock = Clock::Real();
  }
  ~TablePurgeTest() override { worker_->Stop(); }

  rapidjson::Document Must(const std::string& op, const std::string& body) {
    auto r = testing::CallOperationJson(registry_, op, body, ctx_);
    EXPECT_TRUE(r.ok()) << op << ": " << r.error().message;
    return r.ok() ? std::move(*r) : rapidjson::Document();
  }

  int64_t CreateTable(const std::string& name) {
    Must("CreateTable",
         R"({"TableName":")" + name +
             R"(","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
             R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],)"
             R"("BillingMode":"PAY_PER_REQUEST"})");
    auto id = kv::Run(db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<int64_t> {
      FDYNO_ASSIGN_OR_RETURN(auto t, catalog_.Find(tx, {ctx_.account_id, ctx_.region}, name));
      return t->id;
    });
    EXPECT_TRUE(id.ok());
    return id.ok() ? *id : -1;
  }

  size_t KeysOf(int64_t id) { return workers::testing::TableKeys(*inner_, id); }
  bool PurgePending(int64_t id) { return workers::testing::PurgePending(*inner_, id); }

  // The pk values of a Scan of `table`, sorted ("n1;n2;").
  std::string ScanKeys(const std::string& table) {
    rapidjson::Document d = Must("Scan", R"({"TableName":")" + table + R"("})");
    if (!d.IsObject() || !d.HasMember("Items")) return "<no answer>";
    std::set<std::string> keys;
    for (const auto& item : d["Items"].GetArray()) keys.insert(item["pk"]["S"].GetString());
    std::string out;
    for (const auto& k : keys) out += k + ";";
    return out;
  }

  std::unique_ptr<kv::Database> inner_ = kv::OpenMemoryEngine();
  workers::testing::PausingDatabase db_{inner_.get()};
  store::Catalog catalog_;
  std::unique_ptr<workers::PurgeWorker> worker_;
  std::atomic<int> wakes_{0};
  OperationRegistry registry_;
  RequestContext ctx_;
};

TEST_F(TablePurgeTest, DeleteTableAnswersBeforeThePurgeAndARecreatedTableIsIndependent) {
  const int64_t old_id = CreateTable("big");
  // A large table: kKeys keys of 200 bytes under its id, written in one transaction.
  ASSERT_TRUE(kv::Run(*inner_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                for (int i = 0; i < kKeys; ++i) {
                  tx.Set(store::layout::Items(old_id).Pack(kv::Tuple{i}), std::string(200, 'v'));
                }
                return Status::Ok();
              }).ok());
  const size_t stored = KeysOf(old_id);
  ASSERT_GE(stored, static_cast<size_t>(kKeys));

  const int commits_before = db_.commits();
  rapidjson::Document deleted = Must("DeleteTable", R"({"TableName":"big"})");
  ASSERT_TRUE(deleted.IsObject());
  EXPECT_STREQ(deleted["TableDescription"]["TableStatus"].GetString(), "DELETING");
  // The request committed the drop and nothing else; every key is still there.
  EXPECT_EQ(db_.commits() - commits_before, 1) << "DeleteTable purged inside the request";
  EXPECT_EQ(KeysOf(old_id), stored) << "DeleteTable purged inside the request";
  EXPECT_TRUE(PurgePending(old_id));
  EXPECT_EQ(wakes_.load(), 1);

  // The name is free at once; the new table has a new id and none of the old items.
  const int64_t new_id = CreateTable("big");
  EXPECT_NE(new_id, old_id);
  Must("PutItem", R"({"TableName":"big","Item":{"pk":{"S":"n1"}}})");
  EXPECT_EQ(ScanKeys("big"), "n1;");

  // While the purge runs (between its third and fourth transactions), the new table is read and
  // written as usual and sees nothing of the old one.
  std::atomic<bool> checked{false};
  db_.PauseBeforeNextCommit(
      [&] {
        const size_t left = KeysOf(old_id);
        EXPECT_GT(left, 0u);
        EXPECT_LT(left, stored);
        EXPECT_EQ(ScanKeys("big"), "n1;");
        Must("PutItem", R"({"TableName":"big","Item":{"pk":{"S":"n2"}}})");
        EXPECT_EQ(ScanKeys("big"), "n1;n2;");
        checked = true;
      },
      3);
  Counter& purges = Metrics::Global().GetCounter("fdyno_table_purges");
  const int64_t purges_before = purges.value();
  worker_->Start();
  // The bound only keeps a broken worker from hanging the test.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (PurgePending(old_id) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  worker_->Stop();
  EXPECT_TRUE(checked.load()) << "the purge ran in fewer than four transactions";
  EXPECT_FALSE(PurgePending(old_id));
  EXPECT_EQ(KeysOf(old_id), 0u);
  EXPECT_EQ(purges.value(), purges_before + 1);
  EXPECT_EQ(ScanKeys("big"), "n1;n2;");
  EXPECT_GT(KeysOf(new_id), 0u);
}

}  // namespace
}  // namespace fdyno::api
