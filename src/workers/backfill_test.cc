#include "workers/backfill.h"

#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "base/metrics.h"
#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "model/item_codec.h"
#include "model/key_codec.h"
#include "model/test_values.h"
#include "store/indexes.h"
#include "store/item_counts.h"
#include "store/items.h"
#include "store/layout.h"
#include "store/leases.h"
#include "store/maintainers.h"
#include "workers/pausing_database_testing.h"

namespace fdyno::workers {
namespace {

const store::TableScope kScope{store::kSharedAccount, "us-east-1"};

using test::S;

using model::AttributeValue;
using model::Item;

const store::QualifiedName kTable{std::string(store::kSharedAccount), "us-east-1", "bf"};

class BackfillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store::TableInfo t;
    t.region = "us-east-1";
    t.name = "bf";
    t.key_schema.hash = {"pk", store::ScalarType::kS};
    t.attribute_definitions = {{"pk", store::ScalarType::kS}, {"g", store::ScalarType::kS}};
    auto created = kv::Run(
        *db_, [&](kv::Transaction& tx, const kv::Attempt&) { return catalog_.Create(tx, t, {}); });
    ASSERT_TRUE(created.ok()) << created.error().message;
  }

  std::shared_ptr<const store::TableInfo> Table() {
    auto r = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
      return catalog_.Find(tx, kScope, "bf");
    });
    EXPECT_TRUE(r.ok());
    return r.value();
  }

  // Waits until the worker thread has finished the backfill of the table's first GSI. The
  // bound (60 s) only keeps a broken worker from hanging the test; the checks that follow
  // decide whether the backfill was right.
  void AwaitBackfillDone() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (Table()->global_indexes[0].backfilling && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  // The write path of the item operations: item and maintained indexes in one transaction.
  void Write(const std::string& pk, std::optional<std::string> g) {
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto table, catalog_.Find(tx, kScope, "bf"));
      std::string key = store::ItemKey(table->id, model::EncodeKeyValue(S(pk)), nullptr);
      FDYNO_ASSIGN_OR_RETURN(auto stored, store::ReadItem(tx, key));
      std::optional<Item> old;
      if (stored) {
        FDYNO_ASSIGN_OR_RETURN(old, model::DecodeStoredItem(stored->image));
      }
      Item item{{"pk", S(pk)}};
      if (g) item["g"] = S(*g);
      store::WriteItem(tx, key, model::EncodeStoredItem(item), store::OldItem::Of(stored));
      store::UpdateIndexes(tx, *table, old ? &*old : nullptr, &item);
      model_[pk] = item;
      return Status();
    });
    ASSERT_TRUE(st.ok()) << st.error().message;
  }

  // Deletes item `pk` through the same write path.
  void Delete(const std::string& pk) {
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto table, catalog_.Find(tx, kScope, "bf"));
      std::string key = store::ItemKey(table->id, model::EncodeKeyValue(S(pk)), nullptr);
      FDYNO_ASSIGN_OR_RETURN(auto stored, store::ReadItem(tx, key));
      if (!stored) return Status();
      FDYNO_ASSIGN_OR_RETURN(Item old, model::DecodeStoredItem(stored->image));
      store::DeleteItem(tx, key, store::OldItem::Of(stored));
      store::UpdateIndexes(tx, *table, &old, nullptr);
      return Status();
    });
    ASSERT_TRUE(st.ok()) << st.error().message;
    model_.erase(pk);
  }

  store::ItemCounts Counts() {
    auto r =
        kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<store::ItemCounts> {
          FDYNO_ASSIGN_OR_RETURN(auto table, catalog_.Find(tx, kScope, "bf"));
          return store::ReadItemCounts(tx, *table);
        });
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? r.value() : store::ItemCounts{};
  }

  void AddIndex() {
    auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto table, catalog_.Find(tx, kScope, "bf"));
      store::TableInfo info = *table;
      store::SecondaryIndex i;
      i.name = "gi";
      i.id = info.next_index_id++;
      i.key_schema.hash = {"g", store::ScalarType::kS};
      i.status = store::IndexStatus::kCreating;
      i.backfilling = true;
      info.global_indexes.push_back(i);
      return catalog_.Update(tx, info);
    });
    ASSERT_TRUE(st.ok()) << st.error().message;
  }

  std::map<std::string, Item> IndexContents(int64_t table_id, int64_t index_id) {
    auto r = kv::Run(
        *db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<std::map<std::string, Item>> {
          std::map<std::string, Item> out;
          auto [b, e] = store::layout::Index(table_id, index_id).Range();
          FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(b, e));
          store::ItemAssembler a;
          for (const auto& kv : rr.kvs) {
            FDYNO_ASSIGN_OR_RETURN(auto whole, a.Add(kv));
            if (whole) {
              FDYNO_ASSIGN_OR_RETURN(Item item, model::DecodeStoredItem(whole->image));
              out.emplace(whole->key, item);
            }
          }
          return out;
        });
    EXPECT_TRUE(r.ok());
    return r.value();
  }

  // GSI "gi" (g S, ALL) by the test's own rule, not store::ComputeIndexEntry: an entry, the
  // whole item, for each item that has g.
  std::map<std::string, Item> Expected(const store::TableInfo& t, const store::SecondaryIndex& i) {
    std::map<std::string, Item> out;
    for (const auto& [pk, item] : model_) {
      if (item.count("g") == 0) continue;
      out.emplace(store::IndexEntryKey(t.id, i, t.key_schema, item), item);
    }
    return out;
  }

  std::unique_ptr<kv::Database> db_ = kv::OpenMemoryEngine();
  store::Catalog catalog_;
  std::map<std::string, Item> model_;
};

TEST_F(BackfillTest, BackfillWithWritesBetweenPagesThenActiveThenDelete) {
  std::mt19937_64 rng(42);
  auto random_g = [&]() -> std::optional<std::string> {
    if (rng() % 3 == 0) return std::nullopt;
    return "g" + std::to_string(rng() % 4);
  };
  for (int i = 0; i < 60; ++i) Write("k" + std::to_string(i), random_g());
  AddIndex();
  auto table = Table();
  ASSERT_EQ(table->global_indexes.size(), 1u);
  const int64_t index_id = table->global_indexes[0].id;
  BackfillOptions options;
  options.page_items = 7;
  int steps = 0;
  while (true) {
    // Writes between pages (new and already-copied keys alike) keep the index exact.
    for (int w = 0; w < 3; ++w) Write("k" + std::to_string(rng() % 80), random_g());
    Delete("k" + std::to_string(rng() % 80));
    auto r = RunIndexStep(*db_, catalog_, kTable, index_id, options);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ++steps;
    ASSERT_LE(r.value().items, options.page_items);
    if (r.value().finished) break;
    ASSERT_LT(steps, 100);
  }
  EXPECT_GT(steps, 5);
  table = Table();
  EXPECT_EQ(table->global_indexes[0].status, store::IndexStatus::kActive);
  EXPECT_FALSE(table->global_indexes[0].backfilling);
  EXPECT_EQ(IndexContents(table->id, index_id), Expected(*table, table->global_indexes[0]));
  // Item counts are exact once the index is ACTIVE, and stay exact under more writes.
  store::ItemCounts counts = Counts();
  EXPECT_EQ(counts.table, static_cast<int64_t>(model_.size()));
  EXPECT_EQ(counts.Index(index_id),
            static_cast<int64_t>(IndexContents(table->id, index_id).size()));
  for (int w = 0; w < 20; ++w) {
    Write("k" + std::to_string(rng() % 80), random_g());
    Delete("k" + std::to_string(rng() % 80));
  }
  counts = Counts();
  EXPECT_EQ(counts.table, static_cast<int64_t>(model_.size()));
  EXPECT_EQ(counts.Index(index_id),
            static_cast<int64_t>(IndexContents(table->id, index_id).size()));
  // No journal is left behind.
  auto journal = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<size_t> {
    auto [b, e] = store::layout::ItemCountJournal(table->id, index_id).Range();
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(b, e));
    return rr.kvs.size();
  });
  ASSERT_TRUE(journal.ok());
  EXPECT_EQ(journal.value(), 0u);

  // Delete: DELETING is cleared in bounded transactions, then removed from the catalog.
  auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    store::TableInfo info = *table;
    info.global_indexes[0].status = store::IndexStatus::kDeleting;
    return catalog_.Update(tx, info);
  });
  ASSERT_TRUE(st.ok());
  auto n = RunAllIndexWork(*db_, catalog_, options);
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_GT(n.value(), 1);
  EXPECT_TRUE(IndexContents(table->id, index_id).empty());
  EXPECT_TRUE(Table()->global_indexes.empty());
  // The removed index's counter goes with it.
  auto counter = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
    return tx.Get(store::ItemCountKey(table->id, index_id));
  });
  ASSERT_TRUE(counter.ok());
  EXPECT_FALSE(counter.value().has_value());
}

// Writer threads change items (puts that add, move and drop index keys, and deletes) while the
// worker backfills in small pages: when the index turns ACTIVE its item count equals its
// entries, and the table's its items. Each thread owns its keys, so the model is exact.
TEST_F(BackfillTest, ItemCountExactAfterBackfillUnderConcurrentWriters) {
  for (int i = 0; i < 200; ++i) Write("t" + std::to_string(i % 4) + "-" + std::to_string(i), "g");
  AddIndex();
  const int64_t index_id = Table()->global_indexes[0].id;
  BackfillOptions options;
  options.page_items = 3;
  options.poll = std::chrono::milliseconds(1);
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  std::vector<std::map<std::string, std::optional<Item>>> finals(4);
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      std::mt19937_64 rng(1000 + w);
      while (!stop.load()) {
        std::string pk = "t" + std::to_string(w) + "-" + std::to_string(4 * (rng() % 60) + w);
        const int op = static_cast<int>(rng() % 4);
        auto st = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
          FDYNO_ASSIGN_OR_RETURN(auto table, catalog_.Find(tx, kScope, "bf"));
          std::string key = store::ItemKey(table->id, model::EncodeKeyValue(S(pk)), nullptr);
          FDYNO_ASSIGN_OR_RETURN(auto stored, store::ReadItem(tx, key));
          std::optional<Item> old;
          if (stored) {
            FDYNO_ASSIGN_OR_RETURN(old, model::DecodeStoredItem(stored->image));
          }
          if (op == 0) {
            if (stored) store::DeleteItem(tx, key, store::OldItem::Of(stored));
            store::UpdateIndexes(tx, *table, old ? &*old : nullptr, nullptr);
            return Status();
          }
          Item item{{"pk", S(pk)}};
          if (op != 1) item["g"] = S("g" + std::to_string(op));
          store::WriteItem(tx, key, model::EncodeStoredItem(item), store::OldItem::Of(stored));
          store::UpdateIndexes(tx, *table, old ? &*old : nullptr, &item);
          return Status();
        });
        if (!st.ok()) continue;  // retries exhausted: nothing was written
        std::optional<Item> after;
        if (op != 0) {
          after = Item{{"pk", S(pk)}};
          if (op != 1) (*after)["g"] = S("g" + std::to_string(op));
        }
        finals[w][pk] = after;
      }
    });
  }
  IndexWorker worker(db_.get(), &catalog_, options);
  worker.Start();
  AwaitBackfillDone();
  stop = true;
  for (auto& t : writers) t.join();
  worker.Stop();
  auto table = Table();
  ASSERT_EQ(table->global_indexes[0].status, store::IndexStatus::kActive);
  for (const auto& f : finals) {
    for (const auto& [pk, item] : f) {
      if (item) {
        model_[pk] = *item;
      } else {
        model_.erase(pk);
      }
    }
  }
  EXPECT_EQ(IndexContents(table->id, index_id), Expected(*table, table->global_indexes[0]));
  store::ItemCounts counts = Counts();
  EXPECT_EQ(counts.table, static_cast<int64_t>(model_.size()));
  EXPECT_EQ(counts.Index(index_id),
            static_cast<int64_t>(Expected(*table, table->global_indexes[0]).size()));
}

// Items written before the index with a value the index cannot hold (an empty string, a
// partition key over 2,048 bytes) are left out, as DynamoDB's backfill leaves them out: the
// index turns ACTIVE with the others and its count matches its entries.
TEST_F(BackfillTest, ItemsWhoseKeyTheIndexCannotHoldAreSkipped) {
  Write("empty", "");
  Write("long", std::string(2049, 'x'));
  Write("longest", std::string(2048, 'x'));
  Write("ok", "g");
  Write("none", std::nullopt);
  AddIndex();
  const int64_t index_id = Table()->global_indexes[0].id;
  auto n = RunAllIndexWork(*db_, catalog_, BackfillOptions{});
  ASSERT_TRUE(n.ok()) << n.error().message;
  auto table = Table();
  EXPECT_EQ(table->global_indexes[0].status, store::IndexStatus::kActive);
  std::set<std::string> indexed;
  for (const auto& [key, item] : IndexContents(table->id, index_id)) {
    indexed.insert(std::get<std::string>(item.at("pk").v));
  }
  EXPECT_EQ(indexed, (std::set<std::string>{"longest", "ok"}));
  EXPECT_EQ(Counts().Index(index_id), 2);
  // Rewritten unchanged, the skipped item stays out; given a valid value, it enters.
  Write("long", std::string(2049, 'x'));
  EXPECT_EQ(IndexContents(table->id, index_id).size(), 2u);
  Write("long", "short");
  EXPECT_EQ(IndexContents(table->id, index_id).size(), 3u);
  EXPECT_EQ(Counts().Index(index_id), 3);
}

TEST_F(BackfillTest, ResumesFromItsCursor) {
  for (int i = 0; i < 20; ++i) Write("k" + std::to_string(i), "g");
  AddIndex();
  auto table = Table();
  const int64_t index_id = table->global_indexes[0].id;
  BackfillOptions options;
  options.page_items = 5;
  auto r = RunIndexStep(*db_, catalog_, kTable, index_id, options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().items, 5);
  // A fresh catalog (another process, or after a restart) continues from the stored cursor.
  store::Catalog other;
  int copied = 5;
  while (true) {
    auto step = RunIndexStep(*db_, other, kTable, index_id, options);
    ASSERT_TRUE(step.ok());
    copied += step.value().items;
    if (step.value().finished) break;
  }
  EXPECT_EQ(copied, 20);
  table = Table();
  EXPECT_EQ(IndexContents(table->id, index_id).size(), 20u);
}

TEST_F(BackfillTest, WorkerThreadFinishesTheBackfill) {
  for (int i = 0; i < 30; ++i) Write("k" + std::to_string(i), "g");
  AddIndex();
  BackfillOptions options;
  options.poll = std::chrono::milliseconds(5);
  IndexWorker worker(db_.get(), &catalog_, options);
  worker.Start();
  AwaitBackfillDone();
  worker.Stop();
  auto table = Table();
  EXPECT_EQ(table->global_indexes[0].status, store::IndexStatus::kActive);
  EXPECT_EQ(IndexContents(table->id, table->global_indexes[0].id).size(), 30u);
}

// Shutdown during a long backfill: IndexWorker::Stop returns after the page in progress instead
// of waiting for the whole backfill, and the next worker resumes from the stored cursor, copying
// each item once.
TEST_F(BackfillTest, StopReturnsDuringALongBackfillWhichResumesFromItsCursor) {
  constexpr int kItems = 200;
  for (int i = 0; i < kItems; ++i) Write("k" + std::to_string(i), "g");
  AddIndex();
  const int64_t table_id = Table()->id;
  const int64_t index_id = Table()->global_indexes[0].id;
  Counter& copied = Metrics::Global().GetCounter("fdyno_index_backfill_items");
  const int64_t copied_before = copied.value();
  testing::PausingDatabase db(db_.get());
  BackfillOptions options;
  options.page_items = 1;  // kItems pages
  options.poll = std::chrono::milliseconds(5);
  IndexWorker worker(&db, &catalog_, options);
  // The worker pauses before its fifth page's commit until the owner has begun to stop it.
  std::atomic<bool> paused{false}, stopping{false};
  db.PauseBeforeNextCommit(
      [&] {
        paused = true;
        const auto bound = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (!stopping && std::chrono::steady_clock::now() < bound) std::this_thread::yield();
      },
      5);
  worker.Start();
  const auto bound = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!paused && std::chrono::steady_clock::now() < bound) std::this_thread::yield();
  ASSERT_TRUE(paused.load());
  stopping = true;
  worker.Stop();
  const int pages = db.commits();
  std::cout << "stopped after " << pages << " of " << kItems << " pages\n";
  EXPECT_GE(pages, 5);
  EXPECT_LE(pages, 6) << "Stop waited for the backfill";
  EXPECT_TRUE(Table()->global_indexes[0].backfilling);
  auto cursor = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
    return tx.Get(store::IndexBackfillCursorKey(table_id, index_id));
  });
  ASSERT_TRUE(cursor.ok());
  EXPECT_TRUE(cursor->has_value()) << "no cursor to resume from";
  EXPECT_EQ(copied.value() - copied_before, pages);

  // The next start (here the same worker; in a restarted server a new one) resumes.
  worker.Start();
  AwaitBackfillDone();
  worker.Stop();
  EXPECT_EQ(Table()->global_indexes[0].status, store::IndexStatus::kActive);
  EXPECT_EQ(IndexContents(table_id, index_id).size(), static_cast<size_t>(kItems));
  EXPECT_EQ(copied.value() - copied_before, kItems) << "pages copied again after the restart";
}

// An index whose lease another process holds is left to it, and this process's gauge of index
// work in progress stays as it was (it once went down by one for each such index and pass).
TEST_F(BackfillTest, AnIndexLeftToAnotherOwnerLeavesTheRunningGaugeAlone) {
  Write("k", "g");
  AddIndex();
  auto table = Table();
  store::LeaseOptions other;
  other.owner = "another-process";
  ASSERT_TRUE(kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
                return store::TakeLease(
                    tx, store::IndexLeaseKey(table->id, table->global_indexes[0].id), other);
              }).ok());
  Gauge& running = Metrics::Global().GetGauge("fdyno_index_work_running");
  const int64_t before = running.value();
  auto steps = RunAllIndexWork(*db_, catalog_);
  ASSERT_TRUE(steps.ok()) << steps.error().message;
  EXPECT_EQ(*steps, 0);
  EXPECT_EQ(running.value(), before);
  EXPECT_TRUE(Table()->global_indexes[0].backfilling);
}

// Several processes over one database: owners a, b and c, each with its own clock and its own
// view of the database (counting the commits it wrote).
struct Owner {
  Owner(kv::Database* db, std::string name) : db(db) {
    options.page_items = 7;
    options.lease.owner = std::move(name);
    options.lease.clock = &clock;
  }
  Result<StepResult> Step(store::Catalog& catalog, int64_t index_id) {
    Result<StepResult> r = RunIndexStep(db, catalog, kTable, index_id, options);
    if (r.ok()) items += r->items;
    return r;
  }
  ManualClock clock;
  testing::PausingDatabase db;
  BackfillOptions options;
  int items = 0;
};

TEST_F(BackfillTest, LeasedBackfillIsDoneByOneOwnerAndTakenOverAfterItsLeaseExpires) {
  for (int i = 0; i < 60; ++i) Write("k" + std::to_string(i), "g" + std::to_string(i % 4));
  AddIndex();
  const int64_t index_id = Table()->global_indexes[0].id;
  Owner a(db_.get(), "a"), b(db_.get(), "b"), c(db_.get(), "c");
  for (int step = 0; step < 3; ++step) {
    auto r = a.Step(catalog_, index_id);
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->elsewhere);
    for (Owner* other : {&b, &c}) {
      auto o = other->Step(catalog_, index_id);
      ASSERT_TRUE(o.ok());
      EXPECT_TRUE(o->elsewhere);
    }
  }
  EXPECT_EQ(a.items, 21);
  // a stops without releasing its lease (a dead process): b takes over once it has expired.
  b.clock.Advance(std::chrono::milliseconds(9'999));
  ASSERT_TRUE(b.Step(catalog_, index_id)->elsewhere);
  b.clock.Advance(std::chrono::milliseconds(1));
  for (int steps = 0;; ++steps) {
    ASSERT_LT(steps, 20);
    auto r = b.Step(catalog_, index_id);
    ASSERT_TRUE(r.ok());
    ASSERT_FALSE(r->elsewhere);
    if (r->finished) break;
    ASSERT_TRUE(c.Step(catalog_, index_id)->elsewhere);  // b renews at every page
  }
  EXPECT_EQ(a.items + b.items, 60);  // every item copied by exactly one owner
  EXPECT_EQ(c.items, 0);
  EXPECT_EQ(c.db.commits(), 0);
  auto table = Table();
  EXPECT_EQ(table->global_indexes[0].status, store::IndexStatus::kActive);
  EXPECT_EQ(IndexContents(table->id, index_id), Expected(*table, table->global_indexes[0]));
  EXPECT_EQ(Counts().Index(index_id), 60);
  auto lease = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
    return store::ReadLease(tx, store::IndexLeaseKey(table->id, index_id));
  });
  ASSERT_TRUE(lease.ok());
  EXPECT_FALSE(*lease);  // released by the last page
}

TEST_F(BackfillTest, StaleOwnerResumingAfterItsLeaseWasTakenCommitsNothing) {
  for (int i = 0; i < 60; ++i) Write("k" + std::to_string(i), "g" + std::to_string(i % 4));
  AddIndex();
  const int64_t index_id = Table()->global_indexes[0].id;
  Owner a(db_.get(), "a"), b(db_.get(), "b");
  ASSERT_TRUE(a.Step(catalog_, index_id).ok());
  // a has read its lease and copied its second page; before it commits it pauses past its
  // lease, and b takes the index over and copies a page.
  a.db.PauseBeforeNextCommit([&] {
    b.clock.Advance(std::chrono::milliseconds(10'000));
    auto r = b.Step(catalog_, index_id);
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->elsewhere);
  });
  auto resumed = a.Step(catalog_, index_id);
  ASSERT_TRUE(resumed.ok());
  EXPECT_TRUE(resumed->elsewhere);
  EXPECT_EQ(resumed->items, 0);
  EXPECT_EQ(a.db.commits(), 1);  // its first page only
  for (int steps = 0; !b.Step(catalog_, index_id)->finished; ++steps) ASSERT_LT(steps, 20);
  EXPECT_EQ(a.items, 7);
  EXPECT_EQ(b.items, 53);
  auto table = Table();
  EXPECT_EQ(IndexContents(table->id, index_id), Expected(*table, table->global_indexes[0]));
  EXPECT_EQ(Counts().Index(index_id), 60);
}

}  // namespace
}  // namespace fdyno::workers
