// Several fdyno instances in one process over one database, as several servers over one
// FoundationDB cluster are: each with its own catalog cache, its own operation registry (and so
// its own receipt store) and background work leased under its own owner name, none of them the
// sole process. What one instance does, another sees at once; tokens replay across instances;
// work an instance drops in the middle (a backfill, a TTL sweep, a restore, an import, a table
// purge) is taken over by another within its lease's duration and finished exactly once.
//
// Every test runs on the embedded engine, and on FoundationDB when FDYNO_FDB_CLUSTER_FILE names a
// cluster (FDYNO_FDB_LIBRARY: the client library); without one the fdb cases are skipped, saying
// so.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "api/api.h"
#include "api/testing/call.h"
#include "base/clock.h"
#include "kv/engines/embedded/embedded.h"
#include "kv/engines/fdb/fdb.h"
#include "kv/run.h"
#include "store/catalog.h"
#include "store/leases.h"
#include "workers/backfill.h"
#include "workers/backups.h"
#include "workers/export_files.h"
#include "workers/exports.h"
#include "workers/pausing_database_testing.h"
#include "workers/purge.h"
#include "workers/purge_testing.h"
#include "workers/ttl.h"

namespace fdyno::api {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kLease{400};  // how long an instance's lease outlives its last step

rapidjson::Document Parse(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str(), text.size());
  return d;
}

// One fdyno instance: what `fdyno serve` builds over the database, without the HTTP server.
struct Instance {
  Instance(kv::Database* db, std::string owner, std::string export_root) : db(db) {
    ApiDeps deps;
    deps.db = db;
    deps.catalog = &catalog;
    deps.export_root = std::move(export_root);
    registry = BuildOperationRegistry(deps);
    lease.owner = std::move(owner);
    lease.duration = kLease;
    lease.sole = false;
  }
  Result<std::string> Call(const std::string& op, const std::string& json) {
    return testing::CallOperation(registry, op, json);
  }
  ErrorType FailureOf(const std::string& op, const std::string& json) {
    Result<std::string> r = Call(op, json);
    EXPECT_FALSE(r.ok()) << op << " succeeded: " << *r;
    return r.ok() ? ErrorType::kInternalServerError : r.error().type;
  }
  std::shared_ptr<const store::TableInfo> Table(const std::string& name) {
    auto r = kv::Run(*db, [&](kv::Transaction& tx, const kv::Attempt&) {
      return catalog.Find(tx, {store::kSharedAccount, "us-east-1"}, name);
    });
    EXPECT_TRUE(r.ok());
    return r.ok() ? r.value() : nullptr;
  }

  kv::Database* db;
  store::Catalog catalog;
  OperationRegistry registry;
  store::LeaseOptions lease;
};

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// The database every instance shares: the embedded engine, or a prefix of its own on the
// FoundationDB cluster (cleared before and after).
Result<std::unique_ptr<kv::Database>> OpenShared(const std::string& engine,
                                                 const std::string& dir) {
  if (engine == "embedded") {
    std::filesystem::remove_all(dir);
    return kv::OpenEmbedded({.path = dir, .durability = kv::Durability::kNone});
  }
  kv::FdbOptions options;
  options.cluster_file = Env("FDYNO_FDB_CLUSTER_FILE");
  options.prefix = "fdyno_many_instances/" + std::to_string(::getpid()) + "/";
  if (std::string library = Env("FDYNO_FDB_LIBRARY"); !library.empty()) options.library = library;
  FDYNO_ASSIGN_OR_RETURN(std::unique_ptr<kv::Database> db, kv::OpenFdb(options));
  std::unique_ptr<kv::Transaction> clear = db->CreateTransaction();
  clear->ClearRange("", "\xff\xff");
  FDYNO_RETURN_IF_ERROR(clear->Commit());
  return db;
}

class ManyInstancesTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "fdb" && Env("FDYNO_FDB_CLUSTER_FILE").empty()) {
      GTEST_SKIP() << "FDYNO_FDB_CLUSTER_FILE is not set: no FoundationDB cluster to run on";
    }
    auto db = OpenShared(GetParam(), dir_);
    ASSERT_TRUE(db.ok()) << db.error().message;
    db_ = std::move(db).value();
    for (const char* owner : {"node-a", "node-b", "node-c"}) {
      nodes_.push_back(std::make_unique<Instance>(db_.get(), owner, dir_ + "-s3"));
    }
  }
  void TearDown() override {
    nodes_.clear();
    if (db_ && GetParam() == "fdb") {
      std::unique_ptr<kv::Transaction> clear = db_->CreateTransaction();
      clear->ClearRange("", "\xff\xff");
      (void)clear->Commit();
    }
    db_.reset();
    std::filesystem::remove_all(dir_);
    std::filesystem::remove_all(dir_ + "-s3");
  }
  Instance& a() { return *nodes_[0]; }
  Instance& b() { return *nodes_[1]; }
  Instance& c() { return *nodes_[2]; }

  void CreateTable(Instance& on, const std::string& name) {
    ASSERT_TRUE(on.Call("CreateTable", R"({"TableName":")" + name +
                                           R"(","BillingMode":"PAY_PER_REQUEST",
        "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
        "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}]})")
                    .ok());
  }
  static std::string Item(const std::string& table, const std::string& pk,
                          const std::string& extra = "") {
    return R"({"TableName":")" + table + R"(","Item":{"pk":{"S":")" + pk + R"("})" + extra + "}}";
  }
  // The items a consistent Scan of `table` finds, through `on`.
  static int ScanCount(Instance& on, const std::string& table) {
    int count = 0;
    std::string start;
    do {
      auto r = on.Call("Scan", R"({"TableName":")" + table + R"(","ConsistentRead":true)" +
                                   (start.empty() ? "" : R"(,"ExclusiveStartKey":)" + start) + "}");
      EXPECT_TRUE(r.ok()) << r.error().message;
      if (!r.ok()) return -1;
      rapidjson::Document d = Parse(*r);
      count += d["Count"].GetInt();
      start.clear();
      if (d.HasMember("LastEvaluatedKey")) {
        start = R"({"pk":{"S":")" + std::string(d["LastEvaluatedKey"]["pk"]["S"].GetString()) +
                R"("}})";
      }
    } while (!start.empty());
    return count;
  }
  static int ItemCount(Instance& on, const std::string& table) {
    auto described = on.Call("DescribeTable", R"({"TableName":")" + table + R"("})");
    EXPECT_TRUE(described.ok());
    return described.ok() ? Parse(*described)["Table"]["ItemCount"].GetInt() : -1;
  }
  static std::string Key(const std::string& table, const std::string& pk) {
    return R"({"TableName":")" + table + R"(","ConsistentRead":true,"Key":{"pk":{"S":")" + pk +
           R"("}}})";
  }

  // The takeover of leased work that BackupWorkerOptions drive (a restore, an import), run by
  // `run(instance, options)`: a does two batches, then stands still (its process died) until it
  // is stopped, holding the lease; b, at once, does nothing; b, once the lease has run out,
  // does the rest within bounded time. Returns what b's second run did.
  template <typename Run>
  auto DropThenTakeOver(const workers::BackupWorkerOptions& base, Run run) {
    std::atomic<bool> stop_a{false};
    std::atomic<int> steps{0};
    workers::BackupWorkerOptions a_options = base;
    a_options.lease = a().lease;
    a_options.pause_after = 2;
    a_options.steps = &steps;
    a_options.stop = &stop_a;
    std::thread a_thread([&] { EXPECT_TRUE(run(a(), a_options).ok()); });
    while (steps.load() < 2) std::this_thread::sleep_for(milliseconds(5));
    stop_a = true;
    a_thread.join();
    const auto dropped = std::chrono::steady_clock::now();

    workers::BackupWorkerOptions b_options = base;
    b_options.lease = b().lease;
    auto early = run(b(), b_options);
    EXPECT_TRUE(early.ok()) << early.error().message;
    if (early.ok()) {
      EXPECT_EQ(early->items, 0) << "b worked while a's lease held";
    }
    std::this_thread::sleep_for(kLease);
    auto rest = run(b(), b_options);
    EXPECT_LT(std::chrono::steady_clock::now() - dropped, kLease + std::chrono::seconds(10));
    return rest;
  }

  // Per process: ctest runs the cases in parallel, each in a process of its own.
  std::string dir_ = (std::filesystem::temp_directory_path() /
                      ("fdyno_many_instances_" + std::to_string(::getpid())))
                         .string();
  std::unique_ptr<kv::Database> db_;
  std::vector<std::unique_ptr<Instance>> nodes_;
};

TEST_P(ManyInstancesTest, ATokenGivenToOneInstanceReplaysOnEveryOther) {
  CreateTable(a(), "tok");
  const auto add = [](int n) {
    return R"({"ClientRequestToken":"same-token","TransactItems":[{"Update":{"TableName":"tok",)"
           R"("Key":{"pk":{"S":"c"}},"UpdateExpression":"ADD n :d",)"
           R"("ExpressionAttributeValues":{":d":{"N":")" +
           std::to_string(n) + R"("}}}}]})";
  };
  ASSERT_TRUE(a().Call("TransactWriteItems", add(1)).ok());
  ASSERT_TRUE(b().Call("TransactWriteItems", add(1)).ok());  // a replay: no second effect
  auto got = c().Call("GetItem", Key("tok", "c"));
  ASSERT_TRUE(got.ok());
  EXPECT_STREQ(Parse(*got)["Item"]["n"]["N"].GetString(), "1");
  // The same token with other parameters, on a third instance.
  EXPECT_EQ(c().FailureOf("TransactWriteItems", add(2)), ErrorType::kIdempotentParameterMismatch);
}

TEST_P(ManyInstancesTest, DdlOnOneInstanceIsSeenAtOnceByDmlOnAnother) {
  // b looks the table up before it exists (and may remember that it does not).
  EXPECT_EQ(b().FailureOf("PutItem", Item("ddl", "x")), ErrorType::kResourceNotFound);
  CreateTable(a(), "ddl");
  ASSERT_TRUE(b().Call("PutItem", Item("ddl", "x")).ok());
  auto got = c().Call("GetItem", Key("ddl", "x"));
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(Parse(*got).HasMember("Item"));
  ASSERT_TRUE(b().Call("DeleteTable", R"({"TableName":"ddl"})").ok());
  EXPECT_EQ(a().FailureOf("GetItem", Key("ddl", "x")), ErrorType::kResourceNotFound);
  CreateTable(c(), "ddl");  // recreated under the same name: none of the old data
  got = a().Call("GetItem", Key("ddl", "x"));
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(Parse(*got).HasMember("Item"));
}

// a backfills part of a new index and drops out without releasing its lease (its process died);
// b takes the backfill over once the lease has run out and finishes it; c, running all along,
// never does any of it twice. The index then holds every item exactly once.
TEST_P(ManyInstancesTest, ABackfillDroppedByItsInstanceIsTakenOverAndFinishedExactly) {
  CreateTable(a(), "bf_table");
  constexpr int kItems = 120;
  for (int i = 0; i < kItems; ++i) {
    ASSERT_TRUE(b().Call("PutItem", Item("bf_table", "k" + std::to_string(i),
                                         R"(,"g":{"S":"g)" + std::to_string(i % 3) + R"("})"))
                    .ok());
  }
  ASSERT_TRUE(c().Call("UpdateTable", R"({"TableName":"bf_table",
      "AttributeDefinitions":[{"AttributeName":"g","AttributeType":"S"}],
      "GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"by_g",
        "KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],
        "Projection":{"ProjectionType":"ALL"}}}]})")
                  .ok());
  const auto table = a().Table("bf_table");
  ASSERT_TRUE(table && !table->global_indexes.empty());
  const int64_t index_id = table->global_indexes[0].id;
  const store::QualifiedName name{std::string(store::kSharedAccount), "us-east-1", "bf_table"};
  workers::BackfillOptions a_options{.page_items = 10, .lease = a().lease};
  int copied_by_a = 0;
  for (int page = 0; page < 4; ++page) {
    auto step = workers::RunIndexStep(*db_, a().catalog, name, index_id, a_options);
    ASSERT_TRUE(step.ok()) << step.error().message;
    ASSERT_FALSE(step->elsewhere);
    copied_by_a += step->items;
  }
  ASSERT_EQ(copied_by_a, 40);
  const auto dropped = std::chrono::steady_clock::now();  // a is gone from here on
  // c's worker, started before b's, finds the lease a holds and leaves the work to it until it
  // runs out; then one of b and c takes it, and the other leaves it to that one.
  workers::IndexWorker c_worker(db_.get(), &c().catalog,
                                {.page_items = 10, .poll = milliseconds(50), .lease = c().lease});
  workers::IndexWorker b_worker(db_.get(), &b().catalog,
                                {.page_items = 10, .poll = milliseconds(50), .lease = b().lease});
  c_worker.Start();
  b_worker.Start();
  std::shared_ptr<const store::TableInfo> now;
  while (std::chrono::steady_clock::now() - dropped < std::chrono::seconds(30)) {
    now = a().Table("bf_table");
    if (now && now->global_indexes[0].status == store::IndexStatus::kActive) break;
    std::this_thread::sleep_for(milliseconds(20));
  }
  const auto took = std::chrono::steady_clock::now() - dropped;
  c_worker.Stop();
  b_worker.Stop();
  ASSERT_TRUE(now && now->global_indexes[0].status == store::IndexStatus::kActive)
      << "the backfill was not finished 30 s after its instance dropped";
  EXPECT_GE(took, kLease) << "taken over before a's lease ran out";
  EXPECT_LT(took, kLease + std::chrono::seconds(10));
  // Every item in the index exactly once, read through a fourth instance's eyes (a's).
  int seen = 0;
  for (int g = 0; g < 3; ++g) {
    auto r = a().Call("Query", R"({"TableName":"bf_table","IndexName":"by_g",
        "KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"g)" +
                                   std::to_string(g) + R"("}}})");
    ASSERT_TRUE(r.ok()) << r.error().message;
    seen += Parse(*r)["Count"].GetInt();
  }
  EXPECT_EQ(seen, kItems);
  auto described = b().Call("DescribeTable", R"({"TableName":"bf_table"})");
  ASSERT_TRUE(described.ok());
  EXPECT_EQ(Parse(*described)["Table"]["GlobalSecondaryIndexes"][0]["ItemCount"].GetInt(), kItems);
}

// a drops a table and goes away before purging it; b's purge worker purges it: every key of the
// old table gone, its purge marker with them; a table recreated under the name on c meanwhile
// sees none of the old data.
TEST_P(ManyInstancesTest, APurgeLeftByAnInstanceIsFinishedByAnother) {
  CreateTable(a(), "pg_table");
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(a().Call("PutItem", Item("pg_table", "k" + std::to_string(i))).ok());
  }
  const int64_t old_id = a().Table("pg_table")->id;
  ASSERT_TRUE(a().Call("DeleteTable", R"({"TableName":"pg_table"})").ok());  // a never purges
  ASSERT_TRUE(workers::testing::PurgePending(*db_, old_id));
  CreateTable(c(), "pg_table");  // the name is free at once
  auto got = c().Call("GetItem", Key("pg_table", "k7"));
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(Parse(*got).HasMember("Item")) << "the recreated table sees old data";
  workers::PurgeWorker b_purge(db_.get(), &b().catalog,
                               {.interval = milliseconds(50), .lease = b().lease});
  b_purge.Start();
  b_purge.Wake();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (workers::testing::PurgePending(*db_, old_id) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  b_purge.Stop();
  EXPECT_FALSE(workers::testing::PurgePending(*db_, old_id)) << "not purged within 30 s";
  EXPECT_EQ(workers::testing::TableKeys(*db_, old_id), 0u);
  EXPECT_EQ(c().Table("pg_table")->id != old_id, true);
}

// a sweeps part of a table's expired items and drops out holding the table's TTL lease; b's
// sweep leaves the table to a until the lease runs out, then deletes the rest. Every expired item
// is deleted exactly once (a's deletes plus b's are the expired items), the others stay.
TEST_P(ManyInstancesTest, ATtlSweepDroppedByItsInstanceIsTakenOverAndFinishedExactly) {
  CreateTable(a(), "ttl_table");
  ASSERT_TRUE(a().Call("UpdateTimeToLive", R"({"TableName":"ttl_table",
      "TimeToLiveSpecification":{"Enabled":true,"AttributeName":"exp"}})")
                  .ok());
  const store::QualifiedName name{std::string(store::kSharedAccount), "us-east-1", "ttl_table"};
  workers::TtlOptions a_options;
  a_options.delete_batch = 10;
  a_options.lease = a().lease;
  workers::BackfillOptions a_backfill;  // TTL ENABLED: the backfill worker fills its index
  a_backfill.lease = a().lease;
  ASSERT_TRUE(workers::RunAllIndexWork(*db_, a().catalog, a_backfill).ok());
  constexpr int kExpired = 100, kLive = 20;
  const int64_t now_s = Clock::Real()->WallMillis() / 1000;
  for (int i = 0; i < kExpired + kLive; ++i) {
    const int64_t exp = i < kExpired ? now_s - 3600 : now_s + 3600;
    ASSERT_TRUE(c().Call("PutItem", Item("ttl_table", "k" + std::to_string(i),
                                         R"(,"exp":{"N":")" + std::to_string(exp) + R"("})"))
                    .ok());
  }
  const int64_t now_ms = Clock::Real()->WallMillis();
  auto entries = workers::ReadExpiredEntries(*db_, a().catalog, name, now_ms, 30);
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  auto by_a = workers::DeleteIfExpired(*db_, a().catalog, name, *entries, now_ms, a().lease);
  ASSERT_TRUE(by_a.ok()) << by_a.error().message;
  ASSERT_EQ(*by_a, 30);
  const auto dropped = std::chrono::steady_clock::now();  // a is gone, holding the lease

  workers::TtlOptions b_options;
  b_options.delete_batch = 10;
  b_options.lease = b().lease;
  int by_b = 0;
  bool left_to_a = false;
  while (std::chrono::steady_clock::now() - dropped < std::chrono::seconds(30)) {
    auto swept = workers::SweepTable(*db_, b().catalog, name, b_options);
    ASSERT_TRUE(swept.ok()) << swept.error().message;
    by_b += swept->deleted;
    if (swept->elsewhere > 0) {
      ASSERT_LT(std::chrono::steady_clock::now() - dropped, kLease)
          << "left after the lease ran out";
      left_to_a = true;
    } else if (swept->deleted == 0) {
      break;  // nothing expired is left
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_TRUE(left_to_a) << "b swept while a's lease held";
  EXPECT_EQ(*by_a + by_b, kExpired);
  EXPECT_EQ(ScanCount(c(), "ttl_table"), kLive);
  EXPECT_EQ(ItemCount(c(), "ttl_table"), kLive);
}

// a restores part of a backup into a new table and drops out holding the restore's lease; b's
// restore leaves it to a until the lease runs out, then finishes it. The restored table holds
// every item of the backup exactly once, and turns ACTIVE.
TEST_P(ManyInstancesTest, ARestoreDroppedByItsInstanceIsTakenOverAndFinishedExactly) {
  CreateTable(a(), "rs_source");
  constexpr int kItems = 150;
  for (int i = 0; i < kItems; ++i) {
    ASSERT_TRUE(b().Call("PutItem", Item("rs_source", "k" + std::to_string(i))).ok());
  }
  auto backup = a().Call("CreateBackup", R"({"TableName":"rs_source","BackupName":"rs_backup"})");
  ASSERT_TRUE(backup.ok()) << backup.error().message;
  const std::string arn = Parse(*backup)["BackupDetails"]["BackupArn"].GetString();
  workers::BackupWorkerOptions base;
  base.restore_items = 10;
  base.lease = a().lease;
  auto made = workers::RunBackupPass(*db_, a().catalog, base);
  ASSERT_TRUE(made.ok() && made->backups_completed == 1);
  ASSERT_TRUE(c().Call("RestoreTableFromBackup",
                       R"({"TargetTableName":"rs_target","BackupArn":")" + arn + R"("})")
                  .ok());
  const int64_t target_id = c().Table("rs_target")->id;

  auto rest = DropThenTakeOver(base, [&](Instance& on, const workers::BackupWorkerOptions& o) {
    return workers::RunRestore(*db_, on.catalog, target_id, o);
  });
  ASSERT_TRUE(rest.ok()) << rest.error().message;
  EXPECT_EQ(rest->restores_completed, 1);
  EXPECT_EQ(rest->items, kItems - 20);
  auto described = a().Call("DescribeTable", R"({"TableName":"rs_target"})");
  ASSERT_TRUE(described.ok());
  EXPECT_STREQ(Parse(*described)["Table"]["TableStatus"].GetString(), "ACTIVE");
  EXPECT_EQ(ScanCount(a(), "rs_target"), kItems);
  EXPECT_EQ(ItemCount(a(), "rs_target"), kItems);
}

// a pauses in the middle of writing an export's files, past the takeover time; b takes the export
// over and finishes it; a, resuming, finds it taken over (its heartbeat's fence) and stops without
// writing a manifest. The export holds every item exactly once, as b wrote it.
TEST_P(ManyInstancesTest, AnExportPausedPastItsTakeoverIsFinishedByAnotherAndThePausedOneStops) {
  CreateTable(a(), "ex_table");
  constexpr int kItems = 150;
  for (int i = 0; i < kItems; ++i) {
    ASSERT_TRUE(c().Call("PutItem", Item("ex_table", "k" + std::to_string(i))).ok());
  }
  ASSERT_TRUE(a().Call("UpdateContinuousBackups", R"({"TableName":"ex_table",
      "PointInTimeRecoverySpecification":{"PointInTimeRecoveryEnabled":true}})")
                  .ok());
  const std::string table_arn = [&] {
    auto d = a().Call("DescribeTable", R"({"TableName":"ex_table"})");
    return d.ok() ? std::string(Parse(*d)["Table"]["TableArn"].GetString()) : "";
  }();
  auto started = c().Call("ExportTableToPointInTime",
                          R"({"TableArn":")" + table_arn + R"(","S3Bucket":"bucket"})");
  ASSERT_TRUE(started.ok()) << started.error().message;
  const std::string export_arn = Parse(*started)["ExportDescription"]["ExportArn"].GetString();
  const std::string id = export_arn.substr(export_arn.rfind('/') + 1);
  // One clock for both, past the time the export's history needs to settle.
  ManualClock clock(Clock::Real()->WallMillis() + 10'000);
  workers::BackupWorkerOptions base;
  base.export_root = dir_ + "-s3";
  base.page_keys = 10;
  base.export_file_items = 40;
  base.takeover = kLease;
  base.clock = &clock;

  workers::testing::PausingDatabase a_db(db_.get());
  std::promise<void> a_paused, a_resume;
  a_db.PauseBeforeRead(
      [&] {
        a_paused.set_value();
        a_resume.get_future().wait();
      },
      5);
  workers::BackupWorkerOptions a_options = base;
  a_options.owner = "node-a";
  Result<workers::ExportStats> by_a = workers::ExportStats{};
  std::thread a_thread([&] { by_a = workers::RunExport(a_db, a().catalog, id, a_options); });
  a_paused.get_future().wait();

  workers::BackupWorkerOptions b_options = base;
  b_options.owner = "node-b";
  auto early = workers::RunExport(*db_, b().catalog, id, b_options);
  ASSERT_TRUE(early.ok()) << early.error().message;
  EXPECT_EQ(early->exports_completed, 0) << "b took a live export over";
  clock.Advance(kLease);  // a's heartbeat is now older than the takeover time
  auto by_b = workers::RunExport(*db_, b().catalog, id, b_options);
  ASSERT_TRUE(by_b.ok()) << by_b.error().message;
  EXPECT_EQ(by_b->exports_completed, 1);
  a_resume.set_value();
  a_thread.join();
  ASSERT_TRUE(by_a.ok()) << by_a.error().message;
  EXPECT_EQ(by_a->exports_completed, 0);
  EXPECT_EQ(by_a->exports_failed, 0);

  auto described = a().Call("DescribeExport", R"({"ExportArn":")" + export_arn + R"("})");
  ASSERT_TRUE(described.ok()) << described.error().message;
  rapidjson::Document d = Parse(*described);
  EXPECT_STREQ(d["ExportDescription"]["ExportStatus"].GetString(), "COMPLETED");
  EXPECT_EQ(d["ExportDescription"]["ItemCount"].GetInt(), kItems);
  // The data files the manifest names hold every item once.
  const std::filesystem::path root = std::filesystem::path(dir_ + "-s3") / "bucket";
  std::ifstream manifest(root / d["ExportDescription"]["ExportManifest"].GetString());
  ASSERT_TRUE(manifest.good());
  std::string summary((std::istreambuf_iterator<char>(manifest)), {});
  std::ifstream files(root / Parse(summary)["manifestFilesS3Key"].GetString());
  std::set<std::string> seen;
  int lines = 0;
  for (std::string entry; std::getline(files, entry);) {
    auto reader = workers::LineReader::Open(root / Parse(entry)["dataFileS3Key"].GetString(),
                                            store::Compression::kGzip);
    ASSERT_TRUE(reader.ok());
    for (;;) {
      auto line = (*reader)->Next();
      ASSERT_TRUE(line.ok());
      if (!*line) break;
      ++lines;
      seen.insert(Parse(**line)["Item"]["pk"]["S"].GetString());
    }
  }
  EXPECT_EQ(lines, kItems);
  EXPECT_EQ(seen.size(), static_cast<size_t>(kItems));
}

// a imports part of a bucket's files into a new table and drops out holding the import's lease;
// b's import leaves it to a until the lease runs out, then finishes it. The table holds every
// item exactly once, and turns ACTIVE.
TEST_P(ManyInstancesTest, AnImportDroppedByItsInstanceIsTakenOverAndFinishedExactly) {
  constexpr int kItems = 150;
  const std::filesystem::path files = std::filesystem::path(dir_ + "-s3") / "bucket" / "in";
  std::filesystem::create_directories(files);
  for (int f = 0; f < 3; ++f) {
    std::ofstream out(files / ("part-" + std::to_string(f) + ".json"));
    for (int i = f * 50; i < (f + 1) * 50; ++i) {
      out << R"({"Item":{"pk":{"S":"k)" << i << R"("}}})"
          << "\n";
    }
  }
  auto started = c().Call("ImportTable", R"({"S3BucketSource":{"S3Bucket":"bucket",
      "S3KeyPrefix":"in/"},"InputFormat":"DYNAMODB_JSON","InputCompressionType":"NONE",
      "TableCreationParameters":{"TableName":"im_table","BillingMode":"PAY_PER_REQUEST",
        "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
        "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}]}})");
  ASSERT_TRUE(started.ok()) << started.error().message;
  const std::string arn = Parse(*started)["ImportTableDescription"]["ImportArn"].GetString();
  const std::string id = arn.substr(arn.rfind('/') + 1);
  workers::BackupWorkerOptions base;
  base.export_root = dir_ + "-s3";
  base.restore_items = 10;  // items per import batch

  auto rest = DropThenTakeOver(base, [&](Instance& on, const workers::BackupWorkerOptions& o) {
    return workers::RunImport(*db_, on.catalog, id, o);
  });
  ASSERT_TRUE(rest.ok()) << rest.error().message;
  EXPECT_EQ(rest->imports_completed, 1);
  EXPECT_EQ(rest->items, kItems - 20);
  auto described = a().Call("DescribeImport", R"({"ImportArn":")" + arn + R"("})");
  ASSERT_TRUE(described.ok()) << described.error().message;
  EXPECT_STREQ(Parse(*described)["ImportTableDescription"]["ImportStatus"].GetString(),
               "COMPLETED");
  EXPECT_EQ(ScanCount(a(), "im_table"), kItems);
  EXPECT_EQ(ItemCount(a(), "im_table"), kItems);
}

INSTANTIATE_TEST_SUITE_P(Engines, ManyInstancesTest, ::testing::Values("embedded", "fdb"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fdyno::api
