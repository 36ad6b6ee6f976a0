// Restores to a point in time against a model: writes at known times, restores to random times,
// and each restored table equals (items, index entries, item collections, item counts) a table
// written with the model's state at that time; also through injected faults, while writes go on
// during the restore, and after the history was trimmed. Replay: FDYNO_SEED=<seed>.
#include "workers/pitr.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <thread>

#include "base/test_seed.h"
#include "kv/engines/faulty/faulty.h"
#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "model/test_values.h"
#include "store/item_counts.h"
#include "store/layout.h"
#include "store/mutation.h"
#include "store/pitr.h"

namespace fdyno::workers {
namespace {

using test::N;
using test::S;
using test::Seed;

using model::AttributeValue;
using model::Item;
using State = std::map<std::string, Item>;  // by pk

// A hash-key table with a global index (projection ALL) and a KEYS_ONLY one.
store::TableInfo SourceTable() {
  store::TableInfo t;
  t.region = "us-east-1";
  t.name = "src";
  t.key_schema.hash = {"pk", store::ScalarType::kS};
  t.attribute_definitions = {
      {"pk", store::ScalarType::kS}, {"g", store::ScalarType::kS}, {"n", store::ScalarType::kN}};
  store::SecondaryIndex all;
  all.name = "by_g";
  all.key_schema.hash = {"g", store::ScalarType::kS};
  t.global_indexes.push_back(all);
  store::SecondaryIndex keys;
  keys.name = "by_n";
  keys.key_schema.hash = {"n", store::ScalarType::kN};
  keys.projection.type = store::ProjectionType::kKeysOnly;
  t.global_indexes.push_back(keys);
  return t;
}

class PitrRestoreTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    seed_ = Seed();
    rng_.seed(seed_);
    inner_ = kv::OpenMemoryEngine();
    db_ = kv::WrapFaulty(inner_.get(), {});
    options_.clock = &clock_;
    options_.restore_items = 5;  // many batches
    options_.page_keys = 16;
    options_.purge_keys = 8;
    Create(SourceTable());
    EnablePitr();
    if (GetParam()) {  // every write and batch through conflicts and ambiguous commits
      kv::FaultOptions faults;
      faults.seed = seed_;
      faults.commit_conflict = 0.1;
      faults.unknown_applied = 0.1;
      faults.unknown_not_applied = 0.1;
      db_->SetOptions(faults);
    }
  }

  std::shared_ptr<const store::TableInfo> Create(store::TableInfo t) {
    auto r = kv::Run(*inner_, [&](kv::Transaction& tx, const kv::Attempt&) {
      return catalog_.Create(tx, t, {});
    });
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : nullptr;
  }

  std::shared_ptr<const store::TableInfo> Table(const std::string& name) {
    auto r = kv::Run(*inner_, [&](kv::Transaction& tx, const kv::Attempt&) {
      return catalog_.Find(tx, {store::kSharedAccount, "us-east-1"}, name);
    });
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : nullptr;
  }

  // What UpdateContinuousBackups stores when it enables recovery.
  void EnablePitr() {
    auto st = kv::Run(*inner_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto t,
                             catalog_.Find(tx, {store::kSharedAccount, "us-east-1"}, "src"));
      store::TableInfo next = *t;
      next.pitr = {true, t->pitr.epoch + 1, 35, clock_.WallMillis()};
      return catalog_.Update(tx, next);
    });
    ASSERT_TRUE(st.ok()) << st.error().message;
  }

  Item RandomItem(const std::string& pk) {
    Item item{{"pk", S(pk)}, {"v", N(static_cast<int64_t>(rng_() % 1000))}};
    if (rng_() % 2) item["g"] = S("g" + std::to_string(rng_() % 5));
    if (rng_() % 3) item["n"] = N(static_cast<int64_t>(rng_() % 7));
    return item;
  }

  // One transaction of 1-3 random puts and deletes on `table`, stamped now; applied to `state`
  // as well.
  void WriteRandom(kv::Database& db, const std::string& table, State* state) {
    std::map<std::string, std::optional<Item>> changes;
    const int n = 1 + static_cast<int>(rng_() % 3);
    for (int i = 0; i < n; ++i) {
      const std::string pk = "p" + std::to_string(rng_() % 25);
      std::optional<Item> next;
      if (rng_() % 5 != 0) next = RandomItem(pk);
      changes[pk] = std::move(next);
    }
    Apply(db, table, changes);
    for (auto& [pk, next] : changes) {
      if (next) {
        (*state)[pk] = *next;
      } else {
        state->erase(pk);
      }
    }
  }

  void Apply(kv::Database& db, const std::string& table,
             const std::map<std::string, std::optional<Item>>& changes) {
    auto st = kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto t,
                             catalog_.Find(tx, {store::kSharedAccount, "us-east-1"}, table));
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

  // What RestoreTableToPointInTime stores.
  void StartRestore(const std::string& target, int64_t time_ms) {
    auto st = kv::Run(*inner_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto source,
                             catalog_.Find(tx, {store::kSharedAccount, "us-east-1"}, "src"));
      store::TableInfo plan = *source;
      plan.name = target;
      plan.pitr = {};
      plan.status = store::TableStatus::kCreating;
      plan.restore = store::RestoreSummary{"", "src", time_ms, true};
      FDYNO_ASSIGN_OR_RETURN(auto t, catalog_.Create(tx, plan, {}));
      store::PitrRestoreJob job;
      job.region = t->region;
      job.table_id = t->id;
      job.table_name = target;
      job.source_id = source->id;
      job.source_name = "src";
      job.epoch = source->pitr.epoch;
      job.time_ms = time_ms;
      tx.Set(store::PitrRestoreJobKey(t->id), store::EncodePitrRestoreJob(job));
      return Status::Ok();
    });
    ASSERT_TRUE(st.ok()) << st.error().message;
  }

  // A table like the source (same index ids) holding exactly `state`.
  std::shared_ptr<const store::TableInfo> Reference(const std::string& name, const State& state) {
    store::TableInfo plan = *Table("src");
    plan.name = name;
    plan.pitr = {};
    Create(plan);
    for (const auto& [pk, item] : state) Apply(*inner_, name, {{pk, item}});
    return Table(name);
  }

  // Everything a table owns that a restore rebuilds, keyed without the table's prefix; item
  // counts of zero left out.
  std::map<std::string, std::string> Contents(int64_t table_id) {
    auto r = kv::Run(
        *inner_,
        [&](kv::Transaction& tx, const kv::Attempt&) -> Result<std::map<std::string, std::string>> {
          std::map<std::string, std::string> out;
          const std::string prefix = store::layout::Table(table_id).key();
          for (store::layout::TablePart part :
               {store::layout::TablePart::kItems, store::layout::TablePart::kIndex,
                store::layout::TablePart::kItemCounts}) {
            auto [b, e] = store::layout::TablePartSubspace(table_id, part).Range();
            FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(b, e));
            for (kv::KeyValue& kv : rr.kvs) {
              // A count that went back to zero equals one never written.
              if (part == store::layout::TablePart::kItemCounts &&
                  kv.value == std::string(kv.value.size(), '\0')) {
                continue;
              }
              out[kv.key.substr(prefix.size())] = std::move(kv.value);
            }
          }
          return out;
        });
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : std::map<std::string, std::string>{};
  }

  // Restores to `time_ms` into `target` and checks it against the model's state then.
  void RestoreAndCheck(const std::string& target, int64_t time_ms, const State& expected) {
    StartRestore(target, time_ms);
    ASSERT_EQ(Table(target)->status, store::TableStatus::kCreating);
    auto r = RunPitrRestore(*db_, catalog_, Table(target)->id, options_);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->restores_completed, 1) << "restore to " << time_ms;
    auto restored = Table(target);
    EXPECT_EQ(restored->status, store::TableStatus::kActive);
    ASSERT_TRUE(restored->restore);
    EXPECT_FALSE(restored->restore->in_progress);
    auto reference = Reference(target + "_ref", expected);
    EXPECT_EQ(Contents(restored->id), Contents(reference->id)) << "restore to " << time_ms;
  }

  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  ManualClock clock_;
  std::unique_ptr<kv::Database> inner_;
  std::unique_ptr<kv::FaultyDatabase> db_;
  store::Catalog catalog_;
  BackupWorkerOptions options_;
};

TEST_P(PitrRestoreTest, RestoresToRandomTimesEqualTheModelThen) {
  SCOPED_TRACE("FDYNO_SEED=" + std::to_string(seed_));
  // The model: the state after each transaction, by its time.
  std::map<int64_t, State> states{{clock_.WallMillis(), {}}};
  State state;
  for (int i = 0; i < 150; ++i) {
    clock_.Advance(std::chrono::milliseconds(1 + rng_() % 40));
    WriteRandom(*db_, "src", &state);
    states[clock_.WallMillis()] = state;
  }
  const int64_t first = states.begin()->first, last = states.rbegin()->first;
  clock_.Advance(std::chrono::milliseconds(store::kPitrSettleMs));
  for (int i = 0; i < 6; ++i) {
    // Any millisecond of the window, its ends included.
    const int64_t t = i == 0   ? first
                      : i == 1 ? last
                               : first + static_cast<int64_t>(rng_() % (last - first));
    const State& expected = std::prev(states.upper_bound(t))->second;
    RestoreAndCheck("r" + std::to_string(i), t, expected);
  }
}

TEST_P(PitrRestoreTest, WritesDuringTheRestoreDoNotReachIt) {
  SCOPED_TRACE("FDYNO_SEED=" + std::to_string(seed_));
  State state;
  for (int i = 0; i < 60; ++i) {
    clock_.Advance(std::chrono::milliseconds(10));
    WriteRandom(*db_, "src", &state);
  }
  const int64_t t = clock_.WallMillis();
  const State expected = state;
  clock_.Advance(std::chrono::milliseconds(store::kPitrSettleMs));
  StartRestore("during", t);
  std::atomic<bool> done{false};
  std::mt19937_64 writer_rng(seed_ + 1);
  std::thread writer([&] {
    State ignored;
    while (!done.load()) {
      std::map<std::string, std::optional<Item>> changes;
      const std::string pk = "p" + std::to_string(writer_rng() % 25);
      if (writer_rng() % 3 != 0)
        changes[pk] = Item{{"pk", S(pk)}, {"v", S("later")}};
      else
        changes[pk] = std::nullopt;
      Apply(*inner_, "src", changes);
    }
  });
  auto r = RunPitrRestore(*db_, catalog_, Table("during")->id, options_);
  done = true;
  writer.join();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->restores_completed, 1);
  auto reference = Reference("during_ref", expected);
  EXPECT_EQ(Contents(Table("during")->id), Contents(reference->id));
}

TEST_P(PitrRestoreTest, ARestoreWaitsUntilItsTimeIsSettled) {
  State state;
  WriteRandom(*db_, "src", &state);
  StartRestore("soon", clock_.WallMillis());
  auto r = RunPitrRestore(*db_, catalog_, Table("soon")->id, options_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->restores_waiting, 1);
  EXPECT_EQ(Table("soon")->status, store::TableStatus::kCreating);
  clock_.Advance(std::chrono::milliseconds(store::kPitrSettleMs));
  r = RunPitrRestore(*db_, catalog_, Table("soon")->id, options_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->restores_completed, 1);
}

TEST_P(PitrRestoreTest, TrimmingKeepsTheWindowAndWhatARestoreReads) {
  SCOPED_TRACE("FDYNO_SEED=" + std::to_string(seed_));
  std::map<int64_t, State> states;
  State state;
  const int64_t day = store::kMsPerDay;
  for (int i = 0; i < 40; ++i) {
    clock_.Advance(std::chrono::milliseconds(day / 2));  // 20 days of history
    WriteRandom(*db_, "src", &state);
    states[clock_.WallMillis()] = state;
  }
  // A restore to 19 days ago is pending while the period shrinks to 1 day.
  const int64_t old_time = clock_.WallMillis() - 19 * day;
  StartRestore("old", old_time);
  auto st = kv::Run(*inner_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    FDYNO_ASSIGN_OR_RETURN(auto t, catalog_.Find(tx, {store::kSharedAccount, "us-east-1"}, "src"));
    store::TableInfo next = *t;
    next.pitr.recovery_days = 1;
    return catalog_.Update(tx, next);
  });
  ASSERT_TRUE(st.ok());
  auto trimmed = TrimHistories(*db_, catalog_, options_);
  ASSERT_TRUE(trimmed.ok()) << trimmed.error().message;
  EXPECT_GT(trimmed->trim_transactions, 0);
  RestoreAndCheck("old_again", old_time, std::prev(states.upper_bound(old_time))->second);
  auto r = RunPitrRestore(*db_, catalog_, Table("old")->id, options_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->restores_completed, 1);
  // With no restore left, the history older than a day goes, and the window starts a day ago.
  ASSERT_TRUE(TrimHistories(*db_, catalog_, options_).ok());
  auto trim_point = kv::Run(*inner_, [&](kv::Transaction& tx, const kv::Attempt&) {
    return store::ReadHistoryTrimPoint(tx, Table("src")->id, 1);
  });
  ASSERT_TRUE(trim_point.ok());
  EXPECT_GE(*trim_point, clock_.WallMillis() - 2 * day);
  EXPECT_LT(*trim_point, clock_.WallMillis() - day);
  const int64_t recent = clock_.WallMillis() - day / 4;
  RestoreAndCheck("recent", recent, std::prev(states.upper_bound(recent))->second);
}

TEST_P(PitrRestoreTest, ARestoreWhoseSourceIsDeletedDropsItsTable) {
  State state;
  WriteRandom(*db_, "src", &state);
  StartRestore("orphan", clock_.WallMillis());
  const int64_t id = Table("orphan")->id;
  auto st = kv::Run(*inner_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    FDYNO_ASSIGN_OR_RETURN(auto t, catalog_.Find(tx, {store::kSharedAccount, "us-east-1"}, "src"));
    return catalog_.Drop(tx, *t);
  });
  ASSERT_TRUE(st.ok());
  clock_.Advance(std::chrono::milliseconds(store::kPitrSettleMs));
  auto r = RunPitrRestore(*db_, catalog_, id, options_);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->restores_failed, 1);
  EXPECT_EQ(Table("orphan"), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Faults, PitrRestoreTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Faulty" : "Clean"; });

}  // namespace
}  // namespace fdyno::workers
