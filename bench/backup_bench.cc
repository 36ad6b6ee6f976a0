// backup_bench: items/s of an on-demand backup and of the restore of it, on the embedded engine
// with durable commits, as the backup worker runs them (workers/backups.h).
//
//   build/bench/backup_bench [ITEMS=1000000] [GSIS=0]
//
// Loads ITEMS items of the load generator's shape (pk S, sk N, a 100-byte string; with GSIS > 0
// also an attribute that GSIS global indexes with ALL projection are keyed on) through the
// mutation path in 1,000-item transactions, then times RunBackup and RunRestore of a copy. The
// data directory is FDYNO_BENCH_DIR (default: a fresh directory under /tmp), removed afterwards.
// Prints figures; never fails on them.
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "kv/engines/embedded/embedded.h"
#include "kv/run.h"
#include "store/backups.h"
#include "store/catalog.h"
#include "store/mutation.h"
#include "workers/backups.h"

namespace {

using namespace fdyno;  // NOLINT: benchmark brevity

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

template <typename T>
T Check(Result<T> r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, r.error().message.c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

void Check(Status s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.error().message.c_str());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t items = argc > 1 ? std::atoll(argv[1]) : 1'000'000;
  const int gsis = argc > 2 ? std::atoi(argv[2]) : 0;
  std::string dir;
  if (const char* d = std::getenv("FDYNO_BENCH_DIR")) {
    dir = d;
  } else {
    dir = (std::filesystem::temp_directory_path() / "fdyno_backup_bench_XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) return 1;
  }
  auto db = Check(kv::OpenEmbedded({.path = dir}), "open");
  store::Catalog catalog;
  store::TableInfo t;
  t.region = "us-east-1";
  t.name = "bench";
  t.key_schema.hash = {"pk", store::ScalarType::kS};
  t.key_schema.range = model::KeyAttribute{"sk", store::ScalarType::kN};
  t.attribute_definitions = {{"pk", store::ScalarType::kS}, {"sk", store::ScalarType::kN}};
  if (gsis > 0) t.attribute_definitions.push_back({"g", store::ScalarType::kS});
  for (int i = 0; i < gsis; ++i) {
    store::SecondaryIndex index;
    index.name = "g" + std::to_string(i);
    index.key_schema.hash = {"g", store::ScalarType::kS};
    t.global_indexes.push_back(index);
  }
  auto table = Check(kv::Run(*db, [&](kv::Transaction& tx,
                                      const kv::Attempt&) { return catalog.Create(tx, t, {}); }),
                     "create");
  const std::string payload(100, 'x');
  auto start = std::chrono::steady_clock::now();
  for (int64_t base = 0; base < items; base += 1000) {
    Check(
        kv::Run(*db,
                [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                  store::Mutation m({.now_ms = 1});
                  for (int64_t i = base; i < std::min(items, base + 1000); ++i) {
                    model::Item item{
                        {"pk", model::AttributeValue::S("key-" + std::to_string(i))},
                        {"sk", model::AttributeValue::N(
                                   model::Number::Parse(std::to_string(i % 10)).value())},
                        {"payload", model::AttributeValue::S(payload)}};
                    if (gsis > 0) item["g"] = model::AttributeValue::S(std::to_string(i % 997));
                    FDYNO_ASSIGN_OR_RETURN(
                        store::CurrentItem current,
                        store::ReadCurrent(tx, *table, store::ItemStorageKey(*table, item), false));
                    m.Stage(*table, std::move(current), std::move(item));
                  }
                  FDYNO_ASSIGN_OR_RETURN(store::Written w, m.Write(tx));
                  (void)w;
                  return Status::Ok();
                }),
        "load");
  }
  std::printf("loaded %lld items in %.1f s (%.0f items/s)\n", static_cast<long long>(items),
              Seconds(start), static_cast<double>(items) / Seconds(start));

  const std::string id = store::NewBackupId(1);
  Check(kv::Run(*db,
                [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                  store::BackupInfo b;
                  b.id = id;
                  b.name = "bench";
                  b.table_name = table->name;
                  b.table_id = table->id;
                  store::WriteBackup(tx, b);
                  tx.Set(store::BackupTableKey(id), store::EncodeTableInfo(*table));
                  return Status::Ok();
                }),
        "start backup");
  workers::BackupWorkerOptions options;
  options.owner = "bench";
  start = std::chrono::steady_clock::now();
  auto backed = Check(workers::RunBackup(*db, catalog, id, options), "backup");
  const double backup_s = Seconds(start);
  std::printf("backup: %lld items in %.2f s: %.0f items/s\n", static_cast<long long>(backed.items),
              backup_s, static_cast<double>(backed.items) / backup_s);

  auto copy = Check(
      kv::Run(
          *db,
          [&](kv::Transaction& tx,
              const kv::Attempt&) -> Result<std::shared_ptr<const store::TableInfo>> {
            FDYNO_ASSIGN_OR_RETURN(std::optional<store::BackupInfo> b, store::ReadBackup(tx, id));
            store::TableInfo plan = *table;
            plan.name = "copy";
            plan.status = store::TableStatus::kCreating;
            FDYNO_ASSIGN_OR_RETURN(auto created, catalog.Create(tx, plan, {}));
            store::RestoreJob job{created->id,      "copy",         id, b->progress.chunks, 0, 0, 0,
                                  created->account, created->region};
            tx.Set(store::RestoreJobKey(created->id), store::EncodeRestoreJob(job));
            return created;
          }),
      "start restore");
  start = std::chrono::steady_clock::now();
  auto restored = Check(workers::RunRestore(*db, catalog, copy->id, options), "restore");
  const double restore_s = Seconds(start);
  std::printf("restore: %lld items in %.2f s: %.0f items/s\n",
              static_cast<long long>(restored.items), restore_s,
              static_cast<double>(restored.items) / restore_s);
  db.reset();
  if (std::getenv("FDYNO_BENCH_DIR") == nullptr) std::filesystem::remove_all(dir);
  return 0;
}
