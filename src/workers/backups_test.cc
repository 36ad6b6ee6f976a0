// Backups and restores against the store: a restored table equals its source key for key (items,
// index entries, item counts, item collections), also through injected faults; a backup is one
// consistent snapshot while writes go on; on an engine without snapshot transactions a backup
// whose read version ages out fails instead of mixing snapshots.
#include "workers/backups.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <random>
#include <thread>
#include <unordered_set>

#include "base/test_seed.h"
#include "kv/engines/embedded/embedded.h"
#include "kv/engines/faulty/faulty.h"
#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "model/item_codec.h"
#include "model/test_values.h"
#include "store/backups.h"
#include "store/item_counts.h"
#include "store/layout.h"
#include "store/mutation.h"

namespace fdyno::workers {
namespace {

const store::TableScope kScope{store::kSharedAccount, "us-east-1"};

using test::N;
using test::S;
using test::Seed;

using model::AttributeValue;
using model::Item;

// A table with a sort key, a local index and global indexes of every projection type.
store::TableInfo SourceTable() {
  store::TableInfo t;
  t.region = "us-east-1";
  t.name = "src";
  t.key_schema.hash = {"pk", store::ScalarType::kS};
  t.key_schema.range = model::KeyAttribute{"sk", store::ScalarType::kN};
  t.attribute_definitions = {{"pk", store::ScalarType::kS},
                             {"sk", store::ScalarType::kN},
                             {"l", store::ScalarType::kN},
                             {"g", store::ScalarType::kS},
                             {"n", store::ScalarType::kN}};
  store::SecondaryIndex lsi;
  lsi.name = "by_l";
  lsi.key_schema.hash = t.key_schema.hash;
  lsi.key_schema.range = model::KeyAttribute{"l", store::ScalarType::kN};
  t.local_indexes.push_back(lsi);
  store::SecondaryIndex all;
  all.name = "by_g";
  all.key_schema.hash = {"g", store::ScalarType::kS};
  t.global_indexes.push_back(all);
  store::SecondaryIndex keys = all;
  keys.name = "by_g_n";
  keys.key_schema.range = model::KeyAttribute{"n", store::ScalarType::kN};
  keys.projection.type = store::ProjectionType::kKeysOnly;
  t.global_indexes.push_back(keys);
  store::SecondaryIndex include = all;
  include.name = "by_n";
  include.key_schema.hash = {"n", store::ScalarType::kN};
  include.projection = {store::ProjectionType::kInclude, {"v"}};
  t.global_indexes.push_back(include);
  return t;
}

class BackupsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    seed_ = Seed();
    rng_.seed(seed_);
    std::string tmpl = (std::filesystem::temp_directory_path() / "fdyno_backups_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    Open(nullptr);
    options_.chunk_bytes = 4096;  // many chunks
    options_.page_keys = 64;
    options_.restore_items = 7;  // cursors inside chunks
    options_.owner = "test";
  }
  void TearDown() override {
    db_.reset();
    inner_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Open(Clock* clock) {
    db_.reset();
    inner_.reset();
    if (GetParam() == "memory") {
      inner_ = kv::OpenMemoryEngine({.clock = clock});
    } else {
      auto db =
          kv::OpenEmbedded({.path = dir_, .durability = kv::Durability::kNone, .clock = clock});
      ASSERT_TRUE(db.ok()) << db.error().message;
      inner_ = std::move(db).value();
    }
    db_ = kv::WrapFaulty(inner_.get(), {});
  }

  void CreateTable(store::TableInfo t) {
    auto r = kv::Run(
        *db_, [&](kv::Transaction& tx, const kv::Attempt&) { return catalog_.Create(tx, t, {}); });
    ASSERT_TRUE(r.ok()) << r.error().message;
  }

  std::shared_ptr<const store::TableInfo> Table(const std::string& name) {
    auto r = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
      return catalog_.Find(tx, kScope, name);
    });
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : nullptr;
  }

  Item RandomItem() {
    std::uniform_int_distribution<int> pct(0, 99);
    Item item{{"pk", S("p" + std::to_string(rng_() % 20))},
              {"sk", N(static_cast<int64_t>(rng_() % 50))}};
    if (pct(rng_) < 70) item["l"] = N(static_cast<int64_t>(rng_() % 1000));
    if (pct(rng_) < 60) item["g"] = S("g" + std::to_string(rng_() % 7));
    if (pct(rng_) < 50) item["n"] = N(static_cast<int64_t>(rng_() % 9));
    if (pct(rng_) < 50) item["v"] = S(std::string(rng_() % 40, 'v'));
    // Now and then an item larger than one engine value.
    const size_t size = pct(rng_) < 3 ? 150'000 + rng_() % 200'000 : rng_() % 300;
    item["payload"] = S(std::string(size, static_cast<char>('a' + rng_() % 26)));
    return item;
  }

  // Writes (or, with `remove`, deletes) an item of table `name` through the mutation path, on
  // `via` (default: the fault-injecting wrapper).
  void Write(const std::string& name, const Item& item, bool remove, kv::Database* via = nullptr) {
    auto st = kv::Run(via ? *via : *db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto table, catalog_.Find(tx, kScope, name));
      FDYNO_ASSIGN_OR_RETURN(store::CurrentItem current,
                             store::ReadCurrent(tx, *table, store::ItemStorageKey(*table, item),
                                                /*decode=*/false));
      store::Mutation m({.now_ms = 1});
      std::optional<Item> next;
      if (!remove) next = item;
      m.Stage(*table, std::move(current), std::move(next));
      FDYNO_ASSIGN_OR_RETURN(store::Written w, m.Write(tx));
      EXPECT_TRUE(w.ok());
      return Status::Ok();
    });
    ASSERT_TRUE(st.ok()) << st.error().message;
  }

  // What CreateBackup stores.
  std::string StartBackup(const std::string& table_name) {
    const std::string id = store::NewBackupId(Clock::Real()->WallMillis());
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto t, catalog_.Find(tx, kScope, table_name));
      store::StartBackup(tx, store::NewBackupRecord(*t, id, "b", store::BackupType::kUser, 1, 0),
                         *t);
      return Status::Ok();
    });
    EXPECT_TRUE(st.ok()) << st.error().message;
    return id;
  }

  std::optional<store::BackupInfo> Backup(const std::string& id) {
    auto r = kv::Run(
        *db_, [&](kv::Transaction& tx, const kv::Attempt&) { return store::ReadBackup(tx, id); });
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : std::nullopt;
  }

  // What RestoreTableFromBackup stores, without overrides.
  void StartRestore(const std::string& backup_id, const std::string& target) {
    const std::string uuid = store::NewTableUuid();
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt& attempt) -> Status {
      if (attempt.maybe_committed) {
        FDYNO_ASSIGN_OR_RETURN(auto mine, catalog_.FindCreated(tx, kScope, target, uuid));
        if (mine) return Status::Ok();
      }
      FDYNO_ASSIGN_OR_RETURN(std::optional<store::BackupInfo> b, store::ReadBackup(tx, backup_id));
      FDYNO_ASSIGN_OR_RETURN(store::TableInfo plan, store::ReadBackupTable(tx, backup_id));
      plan.name = target;
      plan.status = store::TableStatus::kCreating;
      plan.restore = store::RestoreSummary{backup_id, b->table_name, b->created_ms, true};
      FDYNO_ASSIGN_OR_RETURN(auto t, catalog_.Create(tx, plan, {}, uuid));
      store::RestoreJob job{t->id, t->name, backup_id,  b->progress.chunks, 0,
                            0,     0,       t->account, t->region};
      tx.Set(store::RestoreJobKey(t->id), store::EncodeRestoreJob(job));
      return Status::Ok();
    });
    ASSERT_TRUE(st.ok()) << st.error().message;
  }

  // Everything a table owns that a restore rebuilds, keyed without the table's prefix: items,
  // index entries, item collection sizes and item counts.
  std::map<std::string, std::string> Contents(int64_t table_id) {
    auto r = kv::Run(
        *inner_,
        [&](kv::Transaction& tx, const kv::Attempt&) -> Result<std::map<std::string, std::string>> {
          std::map<std::string, std::string> out;
          const std::string prefix = store::layout::Table(table_id).key();
          for (store::layout::TablePart part :
               {store::layout::TablePart::kItems, store::layout::TablePart::kIndex,
                store::layout::TablePart::kItemCollections,
                store::layout::TablePart::kItemCounts}) {
            auto [b, e] = store::layout::TablePartSubspace(table_id, part).Range();
            FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(b, e));
            for (kv::KeyValue& kv : rr.kvs) out[kv.key.substr(prefix.size())] = std::move(kv.value);
          }
          return out;
        });
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : std::map<std::string, std::string>{};
  }

  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  std::string dir_;
  std::unique_ptr<kv::Database> inner_;
  std::unique_ptr<kv::FaultyDatabase> db_;
  store::Catalog catalog_;
  BackupWorkerOptions options_;
};

TEST_P(BackupsTest, BackupThenRestoreEqualsTheSource) {
  SCOPED_TRACE("FDYNO_SEED=" + std::to_string(seed_));
  CreateTable(SourceTable());
  for (int i = 0; i < 400; ++i) Write("src", RandomItem(), rng_() % 8 == 0);
  const std::string id = StartBackup("src");
  auto pass = RunBackupPass(*db_, catalog_, options_);
  ASSERT_TRUE(pass.ok()) << pass.error().message;
  EXPECT_EQ(pass->backups_completed, 1);
  std::optional<store::BackupInfo> b = Backup(id);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->status, store::BackupStatus::kAvailable);
  EXPECT_GT(b->progress.chunks, 10);
  auto counts = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
    return store::ReadItemCounts(tx, *Table("src"));
  });
  EXPECT_EQ(b->progress.items, counts->table);

  StartRestore(id, "copy");
  EXPECT_EQ(Table("copy")->status, store::TableStatus::kCreating);
  pass = RunBackupPass(*db_, catalog_, options_);
  ASSERT_TRUE(pass.ok()) << pass.error().message;
  EXPECT_EQ(pass->restores_completed, 1);
  auto copy = Table("copy");
  EXPECT_EQ(copy->status, store::TableStatus::kActive);
  ASSERT_TRUE(copy->restore);
  EXPECT_FALSE(copy->restore->in_progress);
  EXPECT_EQ(Contents(copy->id), Contents(Table("src")->id));
  EXPECT_GT(Contents(copy->id).size(), 400u);
}

// What DeleteTable does to a table with point-in-time recovery: the drop holds the data for the
// SYSTEM backup, which copies it from the dropped table, releases it to the purge, and is removed
// once its 35 days are over.
TEST_P(BackupsTest, ADeletedTablesSystemBackupHoldsItsDataThenExpires) {
  SCOPED_TRACE("FDYNO_SEED=" + std::to_string(seed_));
  CreateTable(SourceTable());
  for (int i = 0; i < 100; ++i) Write("src", RandomItem(), false);
  const auto source = Table("src");
  const auto before = Contents(source->id);
  const int64_t now_ms = Clock::Real()->WallMillis();
  const std::string id = store::SystemBackupId(now_ms);
  ASSERT_TRUE(kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                FDYNO_RETURN_IF_ERROR(catalog_.Drop(tx, *source, /*hold=*/true));
                store::StartBackup(tx,
                                   store::NewBackupRecord(*source, id, "src$DeletedTableBackup",
                                                          store::BackupType::kSystem, now_ms, 0),
                                   *source);
                return Status::Ok();
              }).ok());
  EXPECT_EQ(*catalog_.PurgeDropped(*db_), 0);  // held
  auto pass = RunBackupPass(*db_, catalog_, options_);
  ASSERT_TRUE(pass.ok()) << pass.error().message;
  EXPECT_EQ(pass->backups_completed, 1);
  EXPECT_EQ(Backup(id)->status, store::BackupStatus::kAvailable);
  EXPECT_EQ(*catalog_.PurgeDropped(*db_), 1);  // released by the backup
  EXPECT_TRUE(Contents(source->id).empty());
  StartRestore(id, "copy");
  ASSERT_TRUE(RunBackupPass(*db_, catalog_, options_).ok());
  EXPECT_EQ(Contents(Table("copy")->id), before);

  ManualClock later(now_ms + store::kSystemBackupRetentionMs - 1);
  options_.clock = &later;
  ASSERT_TRUE(RunBackupPass(*db_, catalog_, options_).ok());
  EXPECT_TRUE(Backup(id));
  later.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(RunBackupPass(*db_, catalog_, options_).ok());
  EXPECT_FALSE(Backup(id));
}

TEST_P(BackupsTest, BackupAndRestoreThroughInjectedFaultsAreExact) {
  SCOPED_TRACE("FDYNO_SEED=" + std::to_string(seed_));
  CreateTable(SourceTable());
  for (int i = 0; i < 200; ++i) Write("src", RandomItem(), false);
  kv::FaultOptions faults;
  faults.seed = seed_;
  faults.commit_conflict = 0.1;
  faults.unknown_applied = 0.1;
  faults.unknown_not_applied = 0.1;
  db_->SetOptions(faults);
  const std::string id = StartBackup("src");
  for (int pass = 0; pass < 20 && Backup(id)->status != store::BackupStatus::kAvailable; ++pass) {
    ASSERT_TRUE(RunBackupPass(*db_, catalog_, options_).ok());
  }
  ASSERT_EQ(Backup(id)->status, store::BackupStatus::kAvailable);
  StartRestore(id, "copy");
  for (int pass = 0; pass < 20 && Table("copy")->status != store::TableStatus::kActive; ++pass) {
    ASSERT_TRUE(RunBackupPass(*db_, catalog_, options_).ok());
  }
  db_->SetOptions({});
  EXPECT_GT(db_->counts().unknown_applied, 0);
  ASSERT_EQ(Table("copy")->status, store::TableStatus::kActive);
  EXPECT_EQ(Contents(Table("copy")->id), Contents(Table("src")->id));
}

// Items only, for comparing a restored table with the states a writer went through.
uint64_t StateHash(const std::map<std::string, std::string>& items) {
  uint64_t h = 0;
  for (const auto& [k, v] : items)
    h += std::hash<std::string>{}(k)*31 + std::hash<std::string>{}(v);
  return h;
}

TEST_P(BackupsTest, ABackupTakenDuringWritesIsOneOfTheStatesTheWriterLeft) {
  SCOPED_TRACE("FDYNO_SEED=" + std::to_string(seed_));
  store::TableInfo t = SourceTable();
  CreateTable(t);
  std::vector<Item> keys;
  for (int i = 0; i < 300; ++i) {
    keys.push_back(RandomItem());
    Write("src", keys.back(), false);
  }
  const int64_t src_id = Table("src")->id;
  const std::string items_tag =
      kv::Tuple{static_cast<int64_t>(store::layout::TablePart::kItems)}.Pack();
  auto items_of = [&](int64_t table_id) {
    std::map<std::string, std::string> out;
    for (auto& [k, v] : Contents(table_id)) {
      if (k.starts_with(items_tag)) out[k] = v;
    }
    return out;
  };
  // One writer, on the engine itself; the hash of the items after each of its commits, in order.
  std::vector<uint64_t> states{StateHash(items_of(src_id))};
  std::atomic<bool> stop{false};
  std::atomic<int> writes{0};
  std::thread writer([&] {
    std::mt19937_64 rng(seed_ + 1);
    while (!stop.load()) {
      Item item = keys[rng() % keys.size()];
      item["payload"] = S(std::to_string(rng()));
      Write("src", item, rng() % 5 == 0, inner_.get());
      states.push_back(StateHash(items_of(src_id)));
      ++writes;
    }
  });
  const std::string id = StartBackup("src");
  // Every read and commit of the backup waits for one more write: they interleave.
  kv::FaultOptions interleave;
  interleave.latency = 1.0;
  interleave.sleep = [&](std::chrono::microseconds) {
    const int seen = writes.load();
    while (writes.load() == seen) std::this_thread::yield();
  };
  db_->SetOptions(interleave);
  const int before = writes.load();
  auto pass = RunBackupPass(*db_, catalog_, options_);
  const int during = writes.load() - before;
  db_->SetOptions({});
  stop = true;
  writer.join();
  ASSERT_TRUE(pass.ok()) << pass.error().message;
  ASSERT_EQ(Backup(id)->status, store::BackupStatus::kAvailable);
  EXPECT_GT(during, 0) << "no write ran while the backup did";
  StartRestore(id, "copy");
  ASSERT_TRUE(RunBackupPass(*db_, catalog_, options_).ok());
  const uint64_t restored = StateHash(items_of(Table("copy")->id));
  EXPECT_NE(std::find(states.begin(), states.end(), restored), states.end())
      << "the backup is no state the table was in (" << states.size() << " states)";
}

INSTANTIATE_TEST_SUITE_P(Engines, BackupsTest, ::testing::Values("memory", "embedded"),
                         [](const auto& info) { return info.param; });

// Without snapshot transactions (the memory engine, like FoundationDB), every page shares one
// read version: once it is older than 5 s the backup fails and is removed rather than reading
// the rest of the table at a newer version. The embedded engine's snapshot never ages out.
TEST(BackupSnapshotTest, AnAgedOutReadVersionFailsTheBackupOnlyWithoutASnapshot) {
  for (const std::string engine : {"memory", "embedded"}) {
    SCOPED_TRACE(engine);
    ManualClock clock;
    std::string dir = (std::filesystem::temp_directory_path() / "fdyno_backups_XXXXXX").string();
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    std::unique_ptr<kv::Database> inner;
    if (engine == "memory") {
      inner = kv::OpenMemoryEngine({.clock = &clock});
    } else {
      inner = std::move(
          kv::OpenEmbedded({.path = dir, .durability = kv::Durability::kNone, .clock = &clock})
              .value());
    }
    store::Catalog catalog(&clock);
    store::TableInfo t = SourceTable();
    ASSERT_TRUE(kv::Run(*inner, [&](kv::Transaction& tx, const kv::Attempt&) {
                  return catalog.Create(tx, t, {});
                }).ok());
    auto table = *kv::Run(*inner, [&](kv::Transaction& tx, const kv::Attempt&) {
      return catalog.Find(tx, kScope, "src");
    });
    ASSERT_TRUE(kv::Run(*inner, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                  store::Mutation m({.now_ms = 1});
                  for (int i = 0; i < 100; ++i) {
                    Item item{{"pk", S("p" + std::to_string(i))},
                              {"sk", N(i)},
                              {"payload", S(std::string(500, 'x'))}};
                    FDYNO_ASSIGN_OR_RETURN(
                        auto current,
                        store::ReadCurrent(tx, *table, store::ItemStorageKey(*table, item), false));
                    m.Stage(*table, std::move(current), item);
                  }
                  return m.Write(tx).ok() ? Status::Ok() : Status(Error::Internal("write"));
                }).ok());
    const std::string id = store::NewBackupId(1);
    ASSERT_TRUE(kv::Run(*inner, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                  store::BackupInfo b;
                  b.region = "us-east-1";
                  b.id = id;
                  b.name = "b";
                  b.table_name = "src";
                  b.table_id = table->id;
                  store::WriteBackup(tx, b);
                  tx.Set(store::BackupTableKey(id), store::EncodeTableInfo(*table));
                  return Status::Ok();
                }).ok());
    // Every chunk written moves the clock 2 s on.
    kv::FaultOptions faults;
    faults.latency = 1.0;
    faults.clock = &clock;
    faults.sleep = [&](std::chrono::microseconds) { clock.Advance(std::chrono::seconds(1)); };
    auto faulty = kv::WrapFaulty(inner.get(), faults);
    BackupWorkerOptions options;
    options.chunk_bytes = 4096;
    options.page_keys = 10;
    options.owner = "test";
    options.clock = &clock;
    auto pass = RunBackupPass(*faulty, catalog, options);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    auto b = *kv::Run(
        *inner, [&](kv::Transaction& tx, const kv::Attempt&) { return store::ReadBackup(tx, id); });
    if (engine == "memory") {
      EXPECT_EQ(pass->backups_failed, 1);
      EXPECT_FALSE(b) << "a failed backup is removed";
    } else {
      EXPECT_EQ(pass->backups_completed, 1);
      ASSERT_TRUE(b);
      EXPECT_EQ(b->progress.items, 100);
    }
    faulty.reset();
    inner.reset();
    std::filesystem::remove_all(dir);
  }
}

}  // namespace
}  // namespace fdyno::workers
