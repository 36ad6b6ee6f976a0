#include "workers/backfill.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "base/metrics.h"
#include "base/stop_flag.h"
#include "kv/run.h"
#include "kv/tuple.h"
#include "model/item_codec.h"
#include "store/indexes.h"
#include "store/item_counts.h"
#include "store/items.h"
#include "store/layout.h"
#include "store/vector_index.h"
#include "workers/tables.h"

namespace fdyno::workers {
namespace {

template <typename Table>
auto* FindById(Table& t, int64_t id) {
  for (auto* list : {&t.global_indexes, &t.local_indexes}) {
    for (auto& i : *list) {
      if (i.id == id) return &i;
    }
  }
  return static_cast<decltype(&t.global_indexes[0])>(nullptr);
}

template <typename Index>
bool NeedsBackfill(const Index& i) {
  return i.status == store::IndexStatus::kCreating && i.backfilling;
}

// What the worker does to one index of a table, secondary or vector (the TableInfo given is
// the page transaction's copy of the table).
struct IndexWork {
  store::IndexStatus status = store::IndexStatus::kActive;
  bool backfilling = false;
  kv::Subspace entries;  // every key of the index's entries
  // Writes the entry of base item `item` (stored at `item_key`); whether it has one.
  std::function<void(kv::Transaction&, std::string_view item_key, const model::Item& item)> copy;
  std::function<bool(const model::Item&)> has_entry;
  std::function<void(store::TableInfo&)> activate;  // ACTIVE, no longer backfilling
  std::function<void(store::TableInfo&)> remove;    // out of the table
};

std::optional<IndexWork> SecondaryWork(const store::TableInfo& info, int64_t id) {
  const store::SecondaryIndex* index = FindById(info, id);
  if (index == nullptr) return std::nullopt;
  IndexWork w;
  w.status = index->status;
  w.backfilling = index->backfilling;
  w.entries = store::layout::Index(info.id, id);
  w.copy = [&info, index](kv::Transaction& tx, std::string_view, const model::Item& item) {
    store::UpdateIndex(tx, info, *index, nullptr, &item);
  };
  w.has_entry = [index](const model::Item& item) { return store::HasIndexEntry(*index, item); };
  w.activate = [id](store::TableInfo& t) {
    store::SecondaryIndex& i = *FindById(t, id);
    i.status = store::IndexStatus::kActive;
    i.backfilling = false;
  };
  w.remove = [id](store::TableInfo& t) {
    std::erase_if(t.global_indexes, [id](const auto& g) { return g.id == id; });
  };
  return w;
}

std::optional<IndexWork> VectorWork(const store::TableInfo& info, int64_t id) {
  auto it = std::find_if(info.vector_indexes.begin(), info.vector_indexes.end(),
                         [id](const auto& v) { return v.id == id; });
  if (it == info.vector_indexes.end()) return std::nullopt;
  const store::VectorIndex* index = &*it;
  IndexWork w;
  w.status = index->status;
  w.backfilling = index->backfilling;
  w.entries = store::layout::VectorIndex(info.id, id);
  w.copy = [&info, index](kv::Transaction& tx, std::string_view key, const model::Item& item) {
    store::UpdateVectorIndex(tx, info, *index, key, nullptr, &item);
  };
  w.has_entry = [index](const model::Item& item) { return store::HasVectorEntry(*index, item); };
  auto find = [id](store::TableInfo& t) -> store::VectorIndex& {
    return *std::find_if(t.vector_indexes.begin(), t.vector_indexes.end(),
                         [id](const auto& v) { return v.id == id; });
  };
  w.activate = [find](store::TableInfo& t) {
    store::VectorIndex& v = find(t);
    v.status = store::IndexStatus::kActive;
    v.backfilling = false;
  };
  w.remove = [id](store::TableInfo& t) {
    std::erase_if(t.vector_indexes, [id](const auto& v) { return v.id == id; });
  };
  return w;
}

std::optional<IndexWork> WorkOf(const store::TableInfo& info, int64_t id) {
  if (std::optional<IndexWork> w = SecondaryWork(info, id)) return w;
  return VectorWork(info, id);
}

// A lifecycle line while an index's work goes on (backfill or removal) at most this often.
constexpr std::chrono::seconds kProgressLogPeriod{10};

struct WorkerMetrics {
  WorkerMetrics() {
    Metrics& m = Metrics::Global();
    m.Describe("fdyno_index_backfill_items",
               "Base items copied into global secondary indexes being backfilled.");
    m.Describe("fdyno_index_backfills_finished", "Index backfills finished (index ACTIVE).");
    m.Describe("fdyno_index_removal_keys", "Keys cleared from deleted secondary indexes.");
    m.Describe("fdyno_index_work_running",
               "Index backfills and removals in progress in this process.");
  }
  Counter& items = Metrics::Global().GetCounter("fdyno_index_backfill_items");
  Counter& finished = Metrics::Global().GetCounter("fdyno_index_backfills_finished");
  Counter& removed = Metrics::Global().GetCounter("fdyno_index_removal_keys");
  Gauge& running = Metrics::Global().GetGauge("fdyno_index_work_running");
};

WorkerMetrics& GetMetrics() {
  static WorkerMetrics* metrics = new WorkerMetrics();
  return *metrics;
}

Result<StepResult> BackfillPage(kv::Transaction& tx, store::Catalog& catalog,
                                const store::TableInfo& info, int64_t index_id,
                                const IndexWork& index, const BackfillOptions& options) {
  StepResult out;
  const std::string cursor_key = BackfillCursorKey(info.id, index_id);
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> cursor, tx.Get(cursor_key));
  int64_t entries = 0;  // items of the page that have an entry in the index
  FDYNO_ASSIGN_OR_RETURN(
      ItemPage page,
      VisitItemPage(tx, info, cursor.value_or(""), {options.page_items, options.page_bytes},
                    [&](std::string_view key, const model::Item& item) -> Status {
                      index.copy(tx, key, item);
                      if (index.has_entry(item)) ++entries;
                      return Status::Ok();
                    }));
  out.items = page.items;
  const bool last = page.last;
  const std::string end = store::layout::Items(info.id).Range().second;
  const std::string& begin = page.begin;
  const std::string& next = page.next;
  // The item count: what this page counted replaces the journaled deltas of writes that reached
  // its items first (store/item_counts.h).
  FDYNO_ASSIGN_OR_RETURN(int64_t journaled,
                         store::TakeBackfillJournal(tx, info.id, index_id, begin,
                                                    last ? end : std::string_view(next)));
  store::AddItemCount(tx, info.id, index_id, entries - journaled);
  if (last) {
    // The end: the index becomes ACTIVE in this transaction. The journal left behind belongs to
    // writes that reached their item after its page, which are already counted.
    store::ClearBackfillJournal(tx, info.id, index_id);
    store::TableInfo active = info;
    index.activate(active);
    FDYNO_RETURN_IF_ERROR(catalog.Update(tx, active));
    tx.Clear(cursor_key);
    out.finished = true;
    return out;
  }
  tx.Set(cursor_key, next);
  return out;
}

Result<StepResult> DeletePage(kv::Transaction& tx, store::Catalog& catalog, store::TableInfo info,
                              int64_t index_id, const IndexWork& index,
                              const BackfillOptions& options) {
  StepResult out;
  auto [begin, end] = index.entries.Range();
  kv::RangeOptions ro;
  ro.limit = options.page_items;
  ro.snapshot = true;
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(begin, end, ro));
  if (!rr.kvs.empty()) {
    const std::string stop = rr.more ? rr.kvs.back().key + '\x00' : end;
    tx.ClearRange(begin, stop);
    out.items = static_cast<int>(rr.kvs.size());
  }
  if (!rr.more) {
    index.remove(info);
    FDYNO_RETURN_IF_ERROR(catalog.Update(tx, info));
    tx.Clear(BackfillCursorKey(info.id, index_id));
    store::ClearIndexCounts(tx, info.id, index_id);
    out.finished = true;
  }
  return out;
}

}  // namespace

std::string BackfillCursorKey(int64_t table_id, int64_t index_id) {
  return store::layout::Leases().Pack(
      kv::Tuple().AddString("index_backfill").AddInt(table_id).AddInt(index_id));
}

std::string IndexLeaseKey(int64_t table_id, int64_t index_id) {
  return store::LeaseKey(kv::Tuple{"index", table_id, index_id});
}

Result<StepResult> RunIndexStep(kv::Database& db, store::Catalog& catalog,
                                const store::QualifiedName& table, int64_t index_id,
                                const BackfillOptions& options) {
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<StepResult> {
    FDYNO_ASSIGN_OR_RETURN(auto found, catalog.Find(tx, table.account, table.name));
    if (!found) return StepResult{0, true};
    const store::TableInfo& info = *found;
    std::optional<IndexWork> index = WorkOf(info, index_id);
    if (!index) return StepResult{0, true};
    const bool removal = index->status == store::IndexStatus::kDeleting;
    if (!NeedsBackfill(*index) && !removal) return StepResult{0, true};
    // The fence: this page commits only while this owner holds the index's lease.
    const std::string lease = IndexLeaseKey(info.id, index_id);
    FDYNO_ASSIGN_OR_RETURN(bool held, store::TakeLease(tx, lease, options.lease));
    if (!held) return StepResult{0, false, true};
    FDYNO_ASSIGN_OR_RETURN(StepResult step,
                           removal ? DeletePage(tx, catalog, info, index_id, *index, options)
                                   : BackfillPage(tx, catalog, info, index_id, *index, options));
    if (step.finished) tx.Clear(lease);
    return step;
  });
}

Result<int> RunAllIndexWork(kv::Database& db, store::Catalog& catalog,
                            const BackfillOptions& options) {
  // Which (table, index) pairs need work, as of one snapshot.
  struct Work {
    store::QualifiedName table;
    int64_t index_id;
    std::string index_name;
    bool removal;
  };
  FDYNO_ASSIGN_OR_RETURN(auto tables, AllTables(db, catalog));
  std::vector<Work> work;
  auto note = [&](const store::QualifiedName& table, const auto& i) {
    if (NeedsBackfill(i) || i.status == store::IndexStatus::kDeleting) {
      work.push_back({table, i.id, i.name, i.status == store::IndexStatus::kDeleting});
    }
  };
  for (const auto& info : tables) {
    const store::QualifiedName table{info->account, info->name};
    for (const auto& i : info->global_indexes) note(table, i);
    for (const auto& v : info->vector_indexes) note(table, v);
  }
  int steps = 0;
  WorkerMetrics& metrics = GetMetrics();
  for (const Work& w : work) {
    if (StopRequested(options.stop)) break;
    const char* what = w.removal ? "removal" : "backfill";
    const auto start = std::chrono::steady_clock::now();
    auto last_log = start;
    int64_t items = 0;
    bool started = false;
    while (true) {
      Result<StepResult> r = RunIndexStep(db, catalog, w.table, w.index_id, options);
      if (!r.ok()) {
        if (started) metrics.running.Add(-1);
        return std::move(r).error();
      }
      if (r->elsewhere) break;  // another process works on this index
      if (!started) {
        started = true;
        spdlog::info("index {} of table {}: {} started", w.index_name, w.table.name, what);
        metrics.running.Add(1);
      }
      ++steps;
      items += r->items;
      (w.removal ? metrics.removed : metrics.items).Add(r->items);
      const auto now = std::chrono::steady_clock::now();
      if (r->finished) {
        if (!w.removal) metrics.finished.Add();
        spdlog::info("index {} of table {}: {} finished: {} {} in {} ms{}", w.index_name,
                     w.table.name, what, items, w.removal ? "keys cleared" : "items copied",
                     std::chrono::duration_cast<std::chrono::milliseconds>(now - start).count(),
                     w.removal ? "" : ", index ACTIVE");
        break;
      }
      if (now - last_log >= kProgressLogPeriod) {
        last_log = now;
        spdlog::info("index {} of table {}: {} in progress: {} {} so far", w.index_name,
                     w.table.name, what, items, w.removal ? "keys cleared" : "items copied");
      }
      if (StopRequested(options.stop)) {
        // Shutdown: the cursor (or what is left to clear) is in the database; the lease lapses.
        spdlog::info("index {} of table {}: {} stopped after {} {}; it resumes at the next start",
                     w.index_name, w.table.name, what, items,
                     w.removal ? "keys cleared" : "items copied");
        break;
      }
    }
    if (started) metrics.running.Add(-1);  // not when another owner held the index throughout
  }
  return steps;
}

IndexWorker::IndexWorker(kv::Database* db, store::Catalog* catalog, BackfillOptions options)
    : periodic_("fdyno-index", options.poll, [this, db, catalog, options]() mutable {
        options.stop = periodic_.stop_flag();
        // Errors (conflicts past the retry budget, a dropped table) are retried next round.
        if (Result<int> done = RunAllIndexWork(*db, *catalog, options); !done.ok()) {
          if (auto left_out = error_log_.Allow()) {
            spdlog::warn("index worker: {} (retried in {} ms; {} such errors not logged)",
                         done.error().message, options.poll.count(), *left_out);
          }
        }
      }) {}

void IndexWorker::Start() { periodic_.Start(); }

// Work in progress returns after its current page (Periodic::stop_flag).
void IndexWorker::Stop() { periodic_.Stop(); }

}  // namespace fdyno::workers
