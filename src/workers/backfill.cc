#include "workers/backfill.h"

#include <utility>
#include <vector>

#include "kv/run.h"
#include "kv/tuple.h"
#include "model/item_codec.h"
#include "store/indexes.h"
#include "store/item_counts.h"
#include "store/items.h"
#include "store/layout.h"
#include "workers/tables.h"

namespace fdyno::workers {
namespace {

store::SecondaryIndex* FindById(store::TableInfo& t, int64_t id) {
  for (auto* list : {&t.global_indexes, &t.local_indexes}) {
    for (store::SecondaryIndex& i : *list) {
      if (i.id == id) return &i;
    }
  }
  return nullptr;
}

bool NeedsBackfill(const store::SecondaryIndex& i) {
  return i.status == store::IndexStatus::kCreating && i.backfilling;
}

Result<StepResult> BackfillPage(kv::Transaction& tx, store::Catalog& catalog, store::TableInfo info,
                                int64_t index_id, const BackfillOptions& options) {
  StepResult out;
  store::SecondaryIndex& index = *FindById(info, index_id);
  const std::string cursor_key = BackfillCursorKey(info.id, index.id);
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> cursor, tx.Get(cursor_key));
  int64_t entries = 0;  // items of the page that have an entry in the index
  FDYNO_ASSIGN_OR_RETURN(
      ItemPage page,
      VisitItemPage(tx, info, cursor.value_or(""), {options.page_items, options.page_bytes},
                    [&](std::string_view, const model::Item& item) -> Status {
                      store::UpdateIndex(tx, info, index, nullptr, &item);
                      if (store::HasIndexEntry(index, item)) ++entries;
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
                         store::TakeBackfillJournal(tx, info.id, index.id, begin,
                                                    last ? end : std::string_view(next)));
  store::AddItemCount(tx, info.id, index.id, entries - journaled);
  if (last) {
    // The end: the index becomes ACTIVE in this transaction. The journal left behind belongs to
    // writes that reached their item after its page, which are already counted.
    store::ClearBackfillJournal(tx, info.id, index.id);
    index.status = store::IndexStatus::kActive;
    index.backfilling = false;
    FDYNO_RETURN_IF_ERROR(catalog.Update(tx, info));
    tx.Clear(cursor_key);
    out.finished = true;
    return out;
  }
  tx.Set(cursor_key, next);
  return out;
}

Result<StepResult> DeletePage(kv::Transaction& tx, store::Catalog& catalog, store::TableInfo info,
                              int64_t index_id, const BackfillOptions& options) {
  StepResult out;
  auto [begin, end] = store::layout::Index(info.id, index_id).Range();
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
    auto& g = info.global_indexes;
    for (auto it = g.begin(); it != g.end(); ++it) {
      if (it->id == index_id) {
        g.erase(it);
        break;
      }
    }
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

Result<StepResult> RunIndexStep(kv::Database& db, store::Catalog& catalog,
                                const std::string& table_name, int64_t index_id,
                                const BackfillOptions& options) {
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<StepResult> {
    FDYNO_ASSIGN_OR_RETURN(auto found, catalog.Find(tx, table_name));
    if (!found) return StepResult{0, true};
    store::TableInfo info = *found;
    store::SecondaryIndex* index = FindById(info, index_id);
    if (index == nullptr) return StepResult{0, true};
    if (NeedsBackfill(*index)) return BackfillPage(tx, catalog, info, index_id, options);
    if (index->status == store::IndexStatus::kDeleting) {
      return DeletePage(tx, catalog, info, index_id, options);
    }
    return StepResult{0, true};
  });
}

Result<int> RunAllIndexWork(kv::Database& db, store::Catalog& catalog,
                            const BackfillOptions& options) {
  // Which (table, index) pairs need work, as of one snapshot.
  struct Work {
    std::string table;
    int64_t index_id;
  };
  FDYNO_ASSIGN_OR_RETURN(auto tables, AllTables(db, catalog));
  std::vector<Work> work;
  for (const auto& info : tables) {
    for (const auto& i : info->global_indexes) {
      if (NeedsBackfill(i) || i.status == store::IndexStatus::kDeleting) {
        work.push_back({info->name, i.id});
      }
    }
  }
  int steps = 0;
  for (const Work& w : work) {
    while (true) {
      FDYNO_ASSIGN_OR_RETURN(StepResult r, RunIndexStep(db, catalog, w.table, w.index_id, options));
      ++steps;
      if (r.finished) break;
    }
  }
  return steps;
}

IndexWorker::IndexWorker(kv::Database* db, store::Catalog* catalog, BackfillOptions options)
    : periodic_("fdyno-index", options.poll, [db, catalog, options] {
        // Errors (conflicts past the retry budget, a dropped table) are retried next round.
        (void)RunAllIndexWork(*db, *catalog, options);
      }) {}

void IndexWorker::Start() { periodic_.Start(); }

void IndexWorker::Stop() { periodic_.Stop(); }

}  // namespace fdyno::workers
