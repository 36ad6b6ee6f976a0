#include "workers/backfill.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>
#include <vector>

#include "base/metrics.h"
#include "base/stop_flag.h"
#include "kv/run.h"
#include "kv/tuple.h"
#include "model/item_codec.h"
#include "store/attribute_usage.h"
#include "store/indexes.h"
#include "store/item_counts.h"
#include "store/items.h"
#include "store/layout.h"
#include "store/maintainers.h"
#include "workers/tables.h"

namespace fdyno::workers {
namespace {

// The part of `info` waiting to be filled whose id is `id`, if any.
std::optional<store::BackfillPart> PartOf(const store::TableInfo& info, int64_t id) {
  for (store::BackfillPart& part : store::BackfillParts(info)) {
    if (part.id == id) return std::move(part);
  }
  return std::nullopt;
}

// Whether index `id` of `info` (global secondary or vector) is DELETING: its entries are
// cleared, then it leaves the table.
bool IsDeleting(const store::TableInfo& info, int64_t id) {
  auto deleting = [id](const auto& i) {
    return i.id == id && i.status == store::IndexStatus::kDeleting;
  };
  return std::any_of(info.global_indexes.begin(), info.global_indexes.end(), deleting) ||
         std::any_of(info.vector_indexes.begin(), info.vector_indexes.end(), deleting);
}

// Every key of the entries of index `id` of `info`. REQUIRES: it is a global or vector index.
kv::Subspace EntriesOf(const store::TableInfo& info, int64_t id) {
  for (const auto& g : info.global_indexes) {
    if (g.id == id) return store::layout::Index(info.id, id);
  }
  return store::layout::VectorIndex(info.id, id);
}

// A lifecycle line while an index's work goes on (backfill or removal) at most this often.
constexpr std::chrono::seconds kProgressLogPeriod{10};

struct WorkerMetrics {
  WorkerMetrics() {
    Metrics& m = Metrics::Global();
    m.Describe("fdyno_index_backfill_items",
               "Base items copied into indexes being backfilled (secondary, vector, expiry).");
    m.Describe("fdyno_index_backfills_finished",
               "Backfills finished (an index ACTIVE, TTL ENABLED).");
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
                                const store::TableInfo& info, const store::BackfillPart& part,
                                const BackfillOptions& options) {
  StepResult out;
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> cursor, tx.Get(part.cursor_key));
  int64_t entries = 0;  // items of the page that have an entry in a counted part
  FDYNO_ASSIGN_OR_RETURN(
      ItemPage page,
      VisitItemPage(tx, info, cursor.value_or(""), {options.page_items, options.page_bytes},
                    [&](std::string_view key, const model::Item& item) -> Status {
                      if (part.maintainer->Backfill(tx, info, part.id, key, item)) ++entries;
                      return Status::Ok();
                    }));
  out.items = page.items;
  const bool last = page.last;
  if (part.counted) {
    // The item count: what this page counted replaces the journaled deltas of writes that
    // reached its items first (store/item_counts.h).
    const std::string end = store::layout::Items(info.id).Range().second;
    FDYNO_ASSIGN_OR_RETURN(int64_t journaled,
                           store::TakeBackfillJournal(tx, info.id, part.id, page.begin,
                                                      last ? end : std::string_view(page.next)));
    store::AddItemCount(tx, info.id, part.id, entries - journaled);
  }
  if (last) {
    // The end: the part is finished in this transaction. The journal left behind belongs to
    // writes that reached their item after its page, which are already counted.
    if (part.counted) store::ClearBackfillJournal(tx, info.id, part.id);
    store::TableInfo finished = info;
    part.maintainer->FinishBackfill(finished, part.id);
    FDYNO_RETURN_IF_ERROR(catalog.Update(tx, finished));
    tx.Clear(part.cursor_key);
    out.finished = true;
    return out;
  }
  tx.Set(part.cursor_key, page.next);
  return out;
}

Result<StepResult> DeletePage(kv::Transaction& tx, store::Catalog& catalog, store::TableInfo info,
                              int64_t index_id, const BackfillOptions& options) {
  StepResult out;
  auto [begin, end] = EntriesOf(info, index_id).Range();
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
    auto same = [index_id](const auto& i) { return i.id == index_id; };
    std::erase_if(info.global_indexes, same);
    std::erase_if(info.vector_indexes, same);
    store::DropUnusedAttributeDefinitions(info);
    FDYNO_RETURN_IF_ERROR(catalog.Update(tx, info));
    tx.Clear(store::IndexBackfillCursorKey(info.id, index_id));
    store::ClearIndexCounts(tx, info.id, index_id);
    out.finished = true;
  }
  return out;
}

}  // namespace

Result<StepResult> RunIndexStep(kv::Database& db, store::Catalog& catalog,
                                const store::QualifiedName& table, int64_t index_id,
                                const BackfillOptions& options) {
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<StepResult> {
    FDYNO_ASSIGN_OR_RETURN(auto found, catalog.Find(tx, table.scope(), table.name));
    if (!found) return StepResult{0, true};
    const store::TableInfo& info = *found;
    std::optional<store::BackfillPart> part = PartOf(info, index_id);
    const bool removal = !part && IsDeleting(info, index_id);
    if (!part && !removal) return StepResult{0, true};
    // The fence: this page commits only while this owner holds the work's lease.
    const std::string lease = part ? part->lease_key : store::IndexLeaseKey(info.id, index_id);
    FDYNO_ASSIGN_OR_RETURN(bool held, store::TakeLease(tx, lease, options.lease));
    if (!held) return StepResult{0, false, true};
    FDYNO_ASSIGN_OR_RETURN(StepResult step, removal
                                                ? DeletePage(tx, catalog, info, index_id, options)
                                                : BackfillPage(tx, catalog, info, *part, options));
    if (step.finished) tx.Clear(lease);
    return step;
  });
}

Result<int> RunAllIndexWork(kv::Database& db, store::Catalog& catalog,
                            const BackfillOptions& options) {
  // Which (table, index) pairs need work, as of one snapshot.
  struct Work {
    store::QualifiedName table;
    int64_t table_id;
    int64_t id;        // the part's or index's id
    std::string what;  // "index <name>" or "TTL"
    std::string done;  // what a finished backfill made it
    bool removal;
    bool index;  // an index's backfill or removal (not TTL's), which a status hold delays
  };
  // With a status hold: whether `w` waits still (found by a pass less than status_hold ago).
  const auto held = [&options](const Work& w) {
    if (options.status_hold.count() == 0 || options.first_found == nullptr || !w.index) {
      return false;
    }
    const auto now = std::chrono::steady_clock::now();
    const auto found = options.first_found->try_emplace({w.table_id, w.id}, now).first->second;
    return now < found + options.status_hold;
  };
  FDYNO_ASSIGN_OR_RETURN(auto tables, AllTables(db, catalog));
  std::vector<Work> work;
  auto note_removal = [&](const store::QualifiedName& table, const auto& info, const auto& i) {
    if (i.status == store::IndexStatus::kDeleting) {
      work.push_back({table, info->id, i.id, "index " + i.name, "", true, true});
    }
  };
  for (const auto& info : tables) {
    const store::QualifiedName table{info->account, info->region, info->name};
    for (const store::BackfillPart& part : store::BackfillParts(*info)) {
      work.push_back({table, info->id, part.id, part.what, part.done, false,
                      part.id != store::kExpiryIndexPart});
    }
    for (const auto& i : info->global_indexes) note_removal(table, info, i);
    for (const auto& v : info->vector_indexes) note_removal(table, info, v);
  }
  int steps = 0;
  WorkerMetrics& metrics = GetMetrics();
  for (const Work& w : work) {
    if (StopRequested(options.stop)) break;
    if (held(w)) continue;
    const char* what = w.removal ? "removal" : "backfill";
    const auto start = std::chrono::steady_clock::now();
    auto last_log = start;
    int64_t items = 0;
    bool started = false;
    while (true) {
      Result<StepResult> r = RunIndexStep(db, catalog, w.table, w.id, options);
      if (!r.ok()) {
        if (started) metrics.running.Add(-1);
        return std::move(r).error();
      }
      if (r->elsewhere) break;  // another process works on this index
      if (!started) {
        started = true;
        spdlog::info("{} of table {}: {} started", w.what, w.table.name, what);
        metrics.running.Add(1);
      }
      ++steps;
      items += r->items;
      (w.removal ? metrics.removed : metrics.items).Add(r->items);
      const auto now = std::chrono::steady_clock::now();
      if (r->finished) {
        if (options.first_found != nullptr) options.first_found->erase({w.table_id, w.id});
        if (!w.removal) metrics.finished.Add();
        spdlog::info("{} of table {}: {} finished: {} {} in {} ms{}{}", w.what, w.table.name, what,
                     items, w.removal ? "keys cleared" : "items copied",
                     std::chrono::duration_cast<std::chrono::milliseconds>(now - start).count(),
                     w.removal ? "" : ", ", w.done);
        break;
      }
      if (now - last_log >= kProgressLogPeriod) {
        last_log = now;
        spdlog::info("{} of table {}: {} in progress: {} {} so far", w.what, w.table.name, what,
                     items, w.removal ? "keys cleared" : "items copied");
      }
      if (StopRequested(options.stop)) {
        // Shutdown: the cursor (or what is left to clear) is in the database; the lease lapses.
        spdlog::info("{} of table {}: {} stopped after {} {}; it resumes at the next start", w.what,
                     w.table.name, what, items, w.removal ? "keys cleared" : "items copied");
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
        options.first_found = &first_found_;
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
