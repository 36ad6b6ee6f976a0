// Exports and imports against a model: a full export of a random table (with a global index)
// at a time in the past holds exactly the model's items at that time; importing it gives a
// table equal to a table written with those items (items, index entries, counts); an
// incremental export holds exactly the items changed in its window with their images at both
// ends; an import counts bad records, resumes where a stopped process left it, and fails
// cleanly (its table dropped) on a file that does not decompress; a job that fails records the
// FailureCode of its typed cause and the message alone. Replay: FDYNO_SEED=<seed>.
#include "workers/exports.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "base/test_seed.h"
#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "model/json.h"
#include "model/test_values.h"
#include "store/exports.h"
#include "store/layout.h"
#include "store/mutation.h"
#include "store/pitr.h"
#include "workers/export_files.h"

namespace fdyno::workers {
namespace {

using test::N;
using test::S;
using test::Seed;

namespace fs = std::filesystem;
using model::AttributeValue;
using model::Item;
using State = std::map<std::string, Item>;  // by pk

// A FAILED job's FailureCode is `code` and its FailureMessage the message alone: it begins with
// `message_start` (the text the failure was raised with) and carries no code.
void ExpectFailure(const std::string& got_code, const std::string& got_message,
                   const std::string& code, const std::string& message_start) {
  EXPECT_EQ(got_code, code);
  EXPECT_TRUE(got_message.starts_with(message_start)) << got_message;
  EXPECT_EQ(got_message.find('\n'), std::string::npos) << got_message;
  EXPECT_EQ(got_message.find(code), std::string::npos) << got_message;
}

// Every table and job belongs to this account (not the shared one): the workers find tables by
// the account their job records.
constexpr char kAccount[] = "123456789012";

// A hash-key table with a global index on g.
store::TableInfo SourceTable() {
  store::TableInfo t;
  t.region = "us-east-1";
  t.account = kAccount;
  t.name = "src";
  t.key_schema.hash = {"pk", store::ScalarType::kS};
  t.attribute_definitions = {{"pk", store::ScalarType::kS}, {"g", store::ScalarType::kS}};
  store::SecondaryIndex by_g;
  by_g.name = "by_g";
  by_g.key_schema.hash = {"g", store::ScalarType::kS};
  t.global_indexes.push_back(by_g);
  return t;
}

class ExportsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = Seed();
    rng_.seed(seed_);
    db_ = kv::OpenMemoryEngine();
    root_ = fs::temp_directory_path() /
            ("fdyno-exports-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    options_.clock = &clock_;
    options_.export_root = root_.string();
    options_.owner = "me";
    options_.restore_items = 7;  // many batches
    options_.page_keys = 16;
    options_.export_file_items = 10;  // many files
    Create(SourceTable());
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto t, catalog_.Find(tx, {kAccount, "us-east-1"}, "src"));
      store::TableInfo next = *t;
      next.pitr = {true, 1, 35, clock_.WallMillis()};  // what UpdateContinuousBackups stores
      return catalog_.Update(tx, next);
    });
    ASSERT_TRUE(st.ok());
    clock_.Advance(std::chrono::seconds(1));
  }
  void TearDown() override { fs::remove_all(root_); }

  std::shared_ptr<const store::TableInfo> Create(store::TableInfo t) {
    auto r = kv::Run(
        *db_, [&](kv::Transaction& tx, const kv::Attempt&) { return catalog_.Create(tx, t, {}); });
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : nullptr;
  }

  std::shared_ptr<const store::TableInfo> Table(const std::string& name) {
    auto r = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
      return catalog_.Find(tx, {kAccount, "us-east-1"}, name);
    });
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : nullptr;
  }

  Item RandomItem(const std::string& pk) {
    Item item{{"pk", S(pk)}, {"v", N(static_cast<int64_t>(rng_() % 1000))}};
    if (rng_() % 2) item["g"] = S("g" + std::to_string(rng_() % 5));
    if (rng_() % 4 == 0) item["m"] = AttributeValue::M({{"x", AttributeValue::B("\x01\xff")}});
    return item;
  }

  void Apply(const std::string& table, const std::map<std::string, std::optional<Item>>& changes) {
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto t, catalog_.Find(tx, {kAccount, "us-east-1"}, table));
      store::Mutation m({.now_ms = clock_.WallMillis()});
      for (const auto& [pk, next] : changes) {
        FDYNO_ASSIGN_OR_RETURN(
            store::CurrentItem current,
            store::ReadCurrent(tx, *t, store::ItemStorageKey(*t, Item{{"pk", S(pk)}}), false));
        m.Stage(*t, std::move(current), next);
      }
      FDYNO_ASSIGN_OR_RETURN(store::Written w, m.Write(tx));
      EXPECT_TRUE(w.ok());
      return Status::Ok();
    });
    ASSERT_TRUE(st.ok()) << st.error().message;
  }

  // `n` random puts and deletes, each a second after the last, applied to `state` too.
  void WriteRandom(int n, State* state) {
    for (int i = 0; i < n; ++i) {
      const std::string pk = "p" + std::to_string(rng_() % 40);
      std::optional<Item> next;
      if (rng_() % 5 != 0) next = RandomItem(pk);
      Apply("src", {{pk, next}});
      if (next) {
        (*state)[pk] = *next;
      } else {
        state->erase(pk);
      }
      clock_.Advance(std::chrono::milliseconds(100));
    }
  }

  // What ExportTableToPointInTime stores.
  store::ExportJob StartExport(store::ExportFormat format, int64_t time_ms,
                               std::optional<int64_t> from_ms = std::nullopt) {
    auto t = Table("src");
    store::ExportJob j;
    j.id = "0170000000" + std::to_string(1000 + next_id_++) + "-0a1b2c3d";
    j.export_arn = "arn:aws:dynamodb:us-east-1:000000000001:table/src/export/" + j.id;
    j.table_arn = "arn:aws:dynamodb:us-east-1:000000000001:table/src";
    j.account = t->account;
    j.table_name = "src";
    j.table_id = t->id;
    j.table_uuid = t->uuid;
    j.epoch = t->pitr.epoch;
    j.format = format;
    j.export_time_ms = time_ms;
    if (from_ms) {
      j.type = store::ExportType::kIncremental;
      j.from_ms = *from_ms;
    }
    j.s3 = {"bucket", "", "some/prefix"};
    j.start_ms = clock_.WallMillis();
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      store::WriteExport(tx, j);
      return Status::Ok();
    });
    EXPECT_TRUE(st.ok());
    return j;
  }

  store::ExportJob ReadExportJob(const std::string& id) {
    auto r = kv::Run(
        *db_, [&](kv::Transaction& tx, const kv::Attempt&) { return store::ReadExport(tx, id); });
    EXPECT_TRUE(r.ok() && r->has_value());
    return r.ok() && *r ? **r : store::ExportJob{};
  }

  store::ImportJob ReadImportJob(const std::string& id) {
    auto r = kv::Run(
        *db_, [&](kv::Transaction& tx, const kv::Attempt&) { return store::ReadImport(tx, id); });
    EXPECT_TRUE(r.ok() && r->has_value());
    return r.ok() && *r ? **r : store::ImportJob{};
  }

  // The lines of every data file the export's manifest names.
  std::vector<std::string> ExportLines(const store::ExportJob& job) {
    const fs::path dir = root_ / "bucket" / store::ExportKeyPrefix(job.s3.prefix, job.id);
    EXPECT_TRUE(fs::exists(dir / "manifest-summary.json"));
    EXPECT_TRUE(fs::exists(dir / "_started"));
    std::ifstream summary_in(dir / "manifest-summary.json");
    std::string summary_text((std::istreambuf_iterator<char>(summary_in)), {});
    rapidjson::Document summary;
    summary.Parse(summary_text.c_str());
    EXPECT_TRUE(summary.IsObject());
    EXPECT_EQ(summary["itemCount"].GetInt64(), job.items);
    EXPECT_EQ(std::string(summary["exportArn"].GetString()), job.export_arn);
    std::ifstream files(dir / "manifest-files.json");
    std::vector<std::string> lines;
    int64_t listed = 0;
    for (std::string entry; std::getline(files, entry);) {
      rapidjson::Document d;
      d.Parse(entry.c_str());
      const std::string key = d["dataFileS3Key"].GetString();
      EXPECT_TRUE(key.starts_with(store::ExportKeyPrefix(job.s3.prefix, job.id) + "data/"));
      listed += d["itemCount"].GetInt64();
      auto reader = LineReader::Open(root_ / "bucket" / key, store::Compression::kGzip);
      EXPECT_TRUE(reader.ok());
      int64_t in_file = 0;
      for (;;) {
        auto line = (*reader)->Next();
        EXPECT_TRUE(line.ok());
        if (!line.ok() || !*line) break;
        lines.push_back(**line);
        ++in_file;
      }
      EXPECT_EQ(in_file, d["itemCount"].GetInt64());
    }
    EXPECT_EQ(listed, job.items);
    return lines;
  }

  // What ImportTable stores: the target table (like the source: same index ids) CREATING.
  store::ImportJob StartImport(const std::string& table, store::ImportFormat format,
                               store::Compression compression, const std::string& prefix) {
    store::TableInfo plan = *Table("src");
    plan.name = table;
    plan.pitr = {};
    plan.status = store::TableStatus::kCreating;
    auto t = Create(plan);
    store::ImportJob j;
    j.id = "0170000000" + std::to_string(1000 + next_id_++) + "-0a1b2c3d";
    j.import_arn = "arn:aws:dynamodb:us-east-1:000000000001:table/" + table + "/import/" + j.id;
    j.table_arn = "arn:aws:dynamodb:us-east-1:000000000001:table/" + table;
    j.account = t->account;
    j.table_name = table;
    j.table_id = t->id;
    j.format = format;
    j.compression = compression;
    j.s3 = {"bucket", "", prefix};
    j.creation_parameters = "{}";
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      store::WriteImport(tx, j);
      return Status::Ok();
    });
    EXPECT_TRUE(st.ok());
    return j;
  }

  // Items, index entries and item counts of a table, keyed without the table's prefix.
  std::map<std::string, std::string> Contents(int64_t table_id) {
    auto r = kv::Run(
        *db_,
        [&](kv::Transaction& tx, const kv::Attempt&) -> Result<std::map<std::string, std::string>> {
          std::map<std::string, std::string> out;
          const std::string prefix = store::layout::Table(table_id).key();
          for (store::layout::TablePart part :
               {store::layout::TablePart::kItems, store::layout::TablePart::kIndex,
                store::layout::TablePart::kItemCounts}) {
            auto [b, e] = store::layout::TablePartSubspace(table_id, part).Range();
            FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(b, e));
            for (kv::KeyValue& kv : rr.kvs) {
              if (part == store::layout::TablePart::kItemCounts &&
                  kv.value == std::string(8, '\0')) {
                continue;
              }
              out[kv.key.substr(prefix.size())] = kv.value;
            }
          }
          return out;
        });
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : std::map<std::string, std::string>{};
  }

  // A table like the source (same index ids) holding exactly `state`.
  int64_t Reference(const std::string& name, const State& state) {
    store::TableInfo plan = *Table("src");
    plan.name = name;
    plan.pitr = {};
    Create(plan);
    for (const auto& [pk, item] : state) Apply(name, {{pk, item}});
    return Table(name)->id;
  }

  // Stores `job` as it is (a test changes a member of the record StartExport wrote).
  void RewriteExport(const store::ExportJob& job) {
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      store::WriteExport(tx, job);
      return Status::Ok();
    });
    ASSERT_TRUE(st.ok());
  }

  // Runs export `id` once its time settled, with `options`; it must end FAILED.
  store::ExportJob RunFailingExport(const std::string& id, const BackupWorkerOptions& options) {
    clock_.Advance(std::chrono::seconds(7));
    auto r = RunExport(*db_, catalog_, id, options);
    EXPECT_TRUE(r.ok()) << r.error().message;
    if (r.ok()) {
      EXPECT_EQ(r->exports_failed, 1);
    }
    store::ExportJob job = ReadExportJob(id);
    EXPECT_EQ(job.status, store::JobStatus::kFailed);
    return job;
  }

  void WriteFile(const std::string& key, const std::string& text) {
    const fs::path p = root_ / "bucket" / key;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }

  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  ManualClock clock_;
  std::unique_ptr<kv::Database> db_;
  store::Catalog catalog_{&clock_};
  BackupWorkerOptions options_;
  fs::path root_;
  int next_id_ = 0;
};

TEST_F(ExportsTest, FullExportAtAPastTimeThenImportEqualsTheModel) {
  SCOPED_TRACE("FDYNO_SEED=" + std::to_string(seed_));
  State state;  // the table's model across both exports: the second sees the first's writes
  for (store::ExportFormat format :
       {store::ExportFormat::kDynamoDbJson, store::ExportFormat::kIon}) {
    SCOPED_TRACE(format == store::ExportFormat::kIon ? "ION" : "DYNAMODB_JSON");
    WriteRandom(60, &state);
    const State at_export = state;
    const int64_t export_ms = clock_.WallMillis();
    clock_.Advance(std::chrono::milliseconds(500));
    WriteRandom(30, &state);  // after the export time: not in the export
    store::ExportJob job = StartExport(format, export_ms);
    // Not before the export time settled.
    auto waiting = RunExport(*db_, catalog_, job.id, options_);
    ASSERT_TRUE(waiting.ok());
    EXPECT_EQ(waiting->exports_waiting, 1);
    clock_.Advance(std::chrono::seconds(7));
    auto done = RunExport(*db_, catalog_, job.id, options_);
    ASSERT_TRUE(done.ok()) << done.error().message;
    job = ReadExportJob(job.id);
    ASSERT_EQ(job.status, store::JobStatus::kCompleted) << job.failure_message;
    EXPECT_EQ(job.items, static_cast<int64_t>(at_export.size()));
    State exported;
    for (const std::string& line : ExportLines(job)) {
      Result<std::vector<Item>> items =
          format == store::ExportFormat::kIon
              ? ParseIonLine(line)
              : Result<std::vector<Item>>(std::vector<Item>{ParseDynamoJsonLine(line).value()});
      ASSERT_TRUE(items.ok());
      for (Item& item : *items) exported[std::get<std::string>(item.at("pk").v)] = item;
    }
    EXPECT_EQ(exported, at_export);

    const std::string target = format == store::ExportFormat::kIon ? "from_ion" : "from_json";
    store::ImportJob imp = StartImport(
        target,
        format == store::ExportFormat::kIon ? store::ImportFormat::kIon
                                            : store::ImportFormat::kDynamoDbJson,
        store::Compression::kGzip, store::ExportKeyPrefix(job.s3.prefix, job.id) + "data/");
    auto imported = RunImport(*db_, catalog_, imp.id, options_);
    ASSERT_TRUE(imported.ok()) << imported.error().message;
    imp = ReadImportJob(imp.id);
    ASSERT_EQ(imp.status, store::JobStatus::kCompleted) << imp.failure_message;
    EXPECT_EQ(imp.imported_items, static_cast<int64_t>(at_export.size()));
    EXPECT_EQ(imp.processed_items, static_cast<int64_t>(at_export.size()));
    EXPECT_EQ(imp.errors, 0);
    EXPECT_EQ(Table(target)->status, store::TableStatus::kActive);
    EXPECT_EQ(Contents(Table(target)->id), Contents(Reference(target + "_ref", at_export)));
  }
}

TEST_F(ExportsTest, IncrementalExportHoldsTheWindowsChangesWithBothImages) {
  SCOPED_TRACE("FDYNO_SEED=" + std::to_string(seed_));
  State state;
  WriteRandom(40, &state);
  const State at_from = state;
  const int64_t from_ms = clock_.WallMillis();
  clock_.Advance(std::chrono::milliseconds(100));
  std::set<std::string> changed;
  for (int i = 0; i < 40; ++i) {
    const std::string pk = "p" + std::to_string(rng_() % 60);
    std::optional<Item> next;
    if (rng_() % 4 != 0) next = RandomItem(pk);
    Apply("src", {{pk, next}});
    changed.insert(pk);
    if (next) {
      state[pk] = *next;
    } else {
      state.erase(pk);
    }
    clock_.Advance(std::chrono::milliseconds(100));
  }
  const State at_to = state;
  const int64_t to_ms = clock_.WallMillis();
  clock_.Advance(std::chrono::milliseconds(100));
  WriteRandom(20, &state);  // after the window
  store::ExportJob job = StartExport(store::ExportFormat::kDynamoDbJson, to_ms, from_ms);
  clock_.Advance(std::chrono::seconds(7));
  ASSERT_TRUE(RunExport(*db_, catalog_, job.id, options_).ok());
  job = ReadExportJob(job.id);
  ASSERT_EQ(job.status, store::JobStatus::kCompleted) << job.failure_message;
  std::map<std::string, std::pair<std::optional<Item>, std::optional<Item>>> got, want;
  for (const std::string& line : ExportLines(job)) {
    rapidjson::Document d;
    d.Parse(line.c_str());
    ASSERT_TRUE(d.IsObject()) << line;
    ASSERT_TRUE(d["Metadata"]["WriteTimestampMicros"].IsObject());
    const Item keys = model::DecodeItem(d["Keys"]).value();
    std::optional<Item> now, before;
    if (d.HasMember("NewImage")) now = model::DecodeItem(d["NewImage"]).value();
    if (d.HasMember("OldImage")) before = model::DecodeItem(d["OldImage"]).value();
    got[std::get<std::string>(keys.at("pk").v)] = {now, before};
  }
  for (const std::string& pk : changed) {
    std::optional<Item> now, before;
    if (at_to.contains(pk)) now = at_to.at(pk);
    if (at_from.contains(pk)) before = at_from.at(pk);
    if (now || before) want[pk] = {now, before};
  }
  EXPECT_EQ(got, want);
}

TEST_F(ExportsTest, ImportCountsBadRecordsAndResumesWhereAStoppedProcessLeftIt) {
  // CSV with a header, a quoted cell spanning lines, and bad records: no key, a key of another
  // type (pk is S: every CSV cell is), more cells than headers; then a DynamoDB JSON file.
  std::string csv = "pk,v,g\n";
  State want;
  for (int i = 0; i < 30; ++i) {
    csv += "c" + std::to_string(i) + "," + std::to_string(i) + ",g" + std::to_string(i % 3) + "\n";
    want["c" + std::to_string(i)] = {{"pk", S("c" + std::to_string(i))},
                                     {"v", S(std::to_string(i))},
                                     {"g", S("g" + std::to_string(i % 3))}};
  }
  csv += ",no key,\n";
  csv += "a,b,c,d\n";
  csv += "multi,\"line\nvalue\",\n";
  want["multi"] = {{"pk", S("multi")}, {"v", S("line\nvalue")}};
  WriteFile("in/a.csv", csv);
  WriteFile("in/b.csv", "pk,v\nlast,1\n");
  want["last"] = {{"pk", S("last")}, {"v", S("1")}};
  store::ImportJob imp =
      StartImport("csv", store::ImportFormat::kCsv, store::Compression::kNone, "in/");

  // A process stopped after two batches: the table stays CREATING, the cursor moved.
  std::atomic<bool> stop{false};
  std::atomic<int> steps{0};
  BackupWorkerOptions paused = options_;
  paused.owner = "first";
  paused.stop = &stop;
  paused.steps = &steps;
  paused.pause_after = 2;
  std::thread first([&] { EXPECT_TRUE(RunImport(*db_, catalog_, imp.id, paused).ok()); });
  while (steps.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  stop = true;
  first.join();
  store::ImportJob half = ReadImportJob(imp.id);
  EXPECT_EQ(half.status, store::JobStatus::kInProgress);
  EXPECT_EQ(half.next_file, "in/a.csv");
  EXPECT_GT(half.next_record, 0);
  EXPECT_EQ(Table("csv")->status, store::TableStatus::kCreating);

  ASSERT_TRUE(RunImport(*db_, catalog_, imp.id, options_).ok());
  imp = ReadImportJob(imp.id);
  ASSERT_EQ(imp.status, store::JobStatus::kCompleted) << imp.failure_message;
  EXPECT_EQ(imp.errors, 2);
  EXPECT_EQ(imp.processed_items, 34);
  EXPECT_EQ(imp.imported_items, 32);
  EXPECT_EQ(Table("csv")->status, store::TableStatus::kActive);
  EXPECT_EQ(Contents(Table("csv")->id), Contents(Reference("csv_ref", want)));
}

TEST_F(ExportsTest, ImportOfAFileThatDoesNotDecompressFailsAndDropsItsTable) {
  WriteFile("bad/x.json.gz", "{\"Item\":{\"pk\":{\"S\":\"a\"}}}\n");  // not gzip
  store::ImportJob imp =
      StartImport("bad", store::ImportFormat::kDynamoDbJson, store::Compression::kGzip, "bad/");
  auto r = RunImport(*db_, catalog_, imp.id, options_);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->imports_failed, 1);
  imp = ReadImportJob(imp.id);
  EXPECT_EQ(imp.status, store::JobStatus::kFailed);
  ExpectFailure(imp.failure_code, imp.failure_message, "InvalidCompression", "");
  EXPECT_FALSE(imp.failure_message.empty());
  EXPECT_EQ(Table("bad"), nullptr);
  // No file under the prefix: FAILED as well.
  store::ImportJob none =
      StartImport("none", store::ImportFormat::kCsv, store::Compression::kNone, "nothing-here/");
  ASSERT_TRUE(RunImport(*db_, catalog_, none.id, options_).ok());
  none = ReadImportJob(none.id);
  EXPECT_EQ(none.status, store::JobStatus::kFailed);
  ExpectFailure(none.failure_code, none.failure_message, "S3NoSuchKey",
                "no file under s3://bucket/nothing-here/");
  EXPECT_EQ(Table("none"), nullptr);
}

TEST_F(ExportsTest, ImportNeverReadsAFileLinkedFromOutsideTheRoot) {
  // A symbolic link in the bucket to a file outside the root is no object of the bucket.
  const fs::path outside = root_.string() + "-outside.json";
  std::ofstream(outside) << "{\"Item\":{\"pk\":{\"S\":\"a\"}}}\n";
  WriteFile("link/a.json", "{\"Item\":{\"pk\":{\"S\":\"b\"}}}\n");
  fs::create_symlink(outside, root_ / "bucket" / "link" / "b.json");
  store::ImportJob imp =
      StartImport("linked", store::ImportFormat::kDynamoDbJson, store::Compression::kNone, "link/");
  auto r = RunImport(*db_, catalog_, imp.id, options_);
  fs::remove(outside);
  ASSERT_TRUE(r.ok()) << r.error().message;
  imp = ReadImportJob(imp.id);
  ASSERT_EQ(imp.status, store::JobStatus::kCompleted) << imp.failure_message;
  EXPECT_EQ(imp.imported_items, 1);
  EXPECT_EQ(Contents(Table("linked")->id),
            Contents(Reference("linked_ref", {{"b", Item{{"pk", S("b")}}}})));
}

TEST_F(ExportsTest, ExportOfATableWithoutRecoveryFails) {
  store::ExportJob job = StartExport(store::ExportFormat::kDynamoDbJson, clock_.WallMillis());
  auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    FDYNO_ASSIGN_OR_RETURN(auto t, catalog_.Find(tx, {kAccount, "us-east-1"}, "src"));
    store::TableInfo next = *t;
    next.pitr.enabled = false;
    return catalog_.Update(tx, next);
  });
  ASSERT_TRUE(st.ok());
  job = RunFailingExport(job.id, options_);
  ExpectFailure(job.failure_code, job.failure_message, "PointInTimeRecoveryUnavailable",
                "point-in-time recovery was disabled before the export was written");
}

TEST_F(ExportsTest, ExportOfADeletedTableFailsWithTableNotFound) {
  store::ExportJob job = StartExport(store::ExportFormat::kDynamoDbJson, clock_.WallMillis());
  auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    FDYNO_ASSIGN_OR_RETURN(auto t, catalog_.Find(tx, {kAccount, "us-east-1"}, "src"));
    return catalog_.Drop(tx, *t);
  });
  ASSERT_TRUE(st.ok());
  job = RunFailingExport(job.id, options_);
  ExpectFailure(job.failure_code, job.failure_message, "TableNotFound",
                "the table was deleted before its export was written");
}

TEST_F(ExportsTest, ExportPastTheTrimmedHistoryFailsWithInvalidExportTime) {
  const int64_t export_ms = clock_.WallMillis();
  store::ExportJob job = StartExport(store::ExportFormat::kDynamoDbJson, export_ms);
  auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    std::string trimmed(8, '\0');  // big-endian ms: the retention trimmed past the export time
    for (int i = 0; i < 8; ++i) trimmed[7 - i] = static_cast<char>((export_ms + 1) >> (8 * i));
    tx.Set(store::HistoryTrimPointKey(job.table_id, job.epoch), trimmed);
    return Status::Ok();
  });
  ASSERT_TRUE(st.ok());
  job = RunFailingExport(job.id, options_);
  ExpectFailure(job.failure_code, job.failure_message, "InvalidExportTime",
                "the point-in-time history was trimmed past the export time");
}

TEST_F(ExportsTest, ExportToABadPathFailsWithAnS3Code) {
  // A bucket that would leave the export root.
  store::ExportJob job = StartExport(store::ExportFormat::kDynamoDbJson, clock_.WallMillis());
  job.s3.bucket = "..";
  RewriteExport(job);
  job = RunFailingExport(job.id, options_);
  ExpectFailure(job.failure_code, job.failure_message, "S3InvalidPath", "");
  EXPECT_FALSE(job.failure_message.empty());
  // An export root that is a file: no directory can be made under it.
  fs::create_directories(root_);
  std::ofstream(root_ / "a-file") << "x";
  BackupWorkerOptions into_file = options_;
  into_file.export_root = (root_ / "a-file").string();
  store::ExportJob denied = StartExport(store::ExportFormat::kDynamoDbJson, clock_.WallMillis());
  denied = RunFailingExport(denied.id, into_file);
  ExpectFailure(denied.failure_code, denied.failure_message, "S3AccessDenied", "cannot create ");
}

}  // namespace
}  // namespace fdyno::workers
