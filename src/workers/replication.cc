#include "workers/replication.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "base/metrics.h"
#include "base/stop_flag.h"
#include "kv/run.h"
#include "kv/tuple.h"
#include "model/item_codec.h"
#include "store/layout.h"
#include "store/replication.h"
#include "store/streams.h"
#include "workers/tables.h"

namespace fdyno::workers {
namespace {

struct ReplicationMetrics {
  ReplicationMetrics() {
    Metrics& m = Metrics::Global();
    m.Describe("fdyno_replication_applied", "Global table changes applied to a replica.");
    m.Describe("fdyno_replication_superseded",
               "Global table changes dropped because a later write of the item won.");
    m.Describe("fdyno_replica_backfill_items", "Items copied into new global table replicas.");
    m.Describe("fdyno_replication_lag_seconds",
               "Age of each global table change when delivered to a replica (the delay "
               "included), in seconds.");
  }
  Counter& applied = Metrics::Global().GetCounter("fdyno_replication_applied");
  Counter& superseded = Metrics::Global().GetCounter("fdyno_replication_superseded");
  Counter& backfilled = Metrics::Global().GetCounter("fdyno_replica_backfill_items");
  Histogram& lag = Metrics::Global().GetHistogram("fdyno_replication_lag_seconds");
};

ReplicationMetrics& GetMetrics() {
  static ReplicationMetrics* metrics = new ReplicationMetrics();
  return *metrics;
}

std::string BackfillCursorKey(int64_t source_id, int64_t replica_id) {
  return store::layout::Leases().Pack(
      kv::Tuple().AddString("replica_backfill").AddInt(source_id).AddInt(replica_id));
}

// The replica in `region` of `source`'s group when its record is there and is that replica.
Result<std::shared_ptr<const store::TableInfo>> FindReplicaTable(kv::Transaction& tx,
                                                                 store::Catalog& catalog,
                                                                 const store::TableInfo& source,
                                                                 const store::Replica& r) {
  FDYNO_ASSIGN_OR_RETURN(auto found, catalog.Find(tx, {source.account, r.region}, source.name));
  if (found && found->id != r.table_id) found = nullptr;
  return found;
}

Result<ReplicationStep> DeliverPage(kv::Transaction& tx, store::Catalog& catalog,
                                    const store::TableInfo& source, const store::Replica& r,
                                    const ReplicationOptions& options) {
  const int64_t now_ms = options.clock->WallMillis();
  const int64_t due_us = (now_ms - options.delay.count()) * 1000;
  FDYNO_ASSIGN_OR_RETURN(store::OutboxPage page,
                         store::ReadOutbox(tx, source.id, r.region, due_us, options.page_items));
  ReplicationStep step;
  step.finished = static_cast<int>(page.entries.size()) < options.page_items;
  if (page.entries.empty()) return step;
  FDYNO_ASSIGN_OR_RETURN(auto target, FindReplicaTable(tx, catalog, source, r));
  const bool deliver = target && r.status != store::ReplicaStatus::kDeleting;
  for (const store::OutboxEntry& e : page.entries) {
    tx.Clear(e.kv_key);
    if (!deliver) continue;
    std::optional<model::Item> image;
    if (e.image) {
      FDYNO_ASSIGN_OR_RETURN(image, model::DecodeStoredItem(*e.image));
    }
    FDYNO_ASSIGN_OR_RETURN(
        bool applied,
        store::ApplyReplicated(tx, *target, e.suffix, {e.time_us, source.region}, image, now_ms));
    ++(applied ? step.done : step.superseded);
    GetMetrics().lag.Observe(now_ms * 1000 - e.time_us);
  }
  return step;
}

// The replica's backfill cursor: 'i' and the kv key of the next item to copy, then 't' and the
// kv key of the next clock whose tombstone to copy.
constexpr char kItemsPhase = 'i';
constexpr char kTombstonesPhase = 't';

// Copies a page of `source`'s items into the replica, each with its clock's stamp; returns the
// cursor after it (empty: the items are done).
Result<std::string> CopyItems(kv::Transaction& tx, const store::TableInfo& source,
                              const store::TableInfo& target, std::string begin,
                              const ReplicationOptions& options, ReplicationStep& step) {
  const int64_t now_ms = options.clock->WallMillis();
  FDYNO_ASSIGN_OR_RETURN(
      ItemPage page,
      VisitItemPage(
          tx, source, std::move(begin), {options.page_items, options.page_bytes},
          [&](std::string_view key, const model::Item& item) -> Status {
            const std::string_view suffix = store::ItemKeySuffix(source.id, key);
            FDYNO_ASSIGN_OR_RETURN(auto clock, store::ReadReplicaClock(tx, source.id, suffix));
            const store::ReplicaStamp stamp =
                clock ? clock->stamp : store::ReplicaStamp{0, source.region};
            FDYNO_ASSIGN_OR_RETURN(bool applied,
                                   store::ApplyReplicated(tx, target, suffix, stamp, item, now_ms));
            step.done += applied ? 1 : 0;
            return Status::Ok();
          }));
  return page.last ? std::string() : std::string(1, kItemsPhase) + page.next;
}

// Copies a page of `source`'s tombstones into the replica: without them, an older write of a
// deleted item still on its way from a third replica would bring the item back in the new one
// alone. Returns the cursor after it (empty: done).
Result<std::string> CopyTombstones(kv::Transaction& tx, const store::TableInfo& source,
                                   const store::TableInfo& target, std::string begin,
                                   const ReplicationOptions& options) {
  FDYNO_ASSIGN_OR_RETURN(store::ClockPage page,
                         store::ReadClockPage(tx, source.id, std::move(begin), options.page_items));
  for (const auto& [suffix, clock] : page.clocks) {
    if (!clock.deleted) continue;
    FDYNO_ASSIGN_OR_RETURN(bool applied,
                           store::ApplyReplicated(tx, target, suffix, clock.stamp, std::nullopt,
                                                  options.clock->WallMillis()));
    (void)applied;
  }
  return page.last ? std::string() : std::string(1, kTombstonesPhase) + page.next;
}

// One page of the replica's backfill: items, then tombstones; the last page makes the replica
// ACTIVE on every record of the group.
Result<ReplicationStep> BackfillPage(kv::Transaction& tx, store::Catalog& catalog,
                                     const store::TableInfo& source, const store::Replica& r,
                                     const store::TableInfo& target,
                                     const ReplicationOptions& options) {
  const std::string cursor_key = BackfillCursorKey(source.id, r.table_id);
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> cursor, tx.Get(cursor_key));
  ReplicationStep step;
  std::string next;
  if (!cursor || cursor->empty() || (*cursor)[0] == kItemsPhase) {
    FDYNO_ASSIGN_OR_RETURN(
        next, CopyItems(tx, source, target, cursor && !cursor->empty() ? cursor->substr(1) : "",
                        options, step));
    if (next.empty()) next = std::string(1, kTombstonesPhase);
  } else {
    FDYNO_ASSIGN_OR_RETURN(next, CopyTombstones(tx, source, target, cursor->substr(1), options));
  }
  if (!next.empty()) {
    tx.Set(cursor_key, next);
    return step;
  }
  // The end: the replica is ACTIVE on every record of the group.
  tx.Clear(cursor_key);
  FDYNO_RETURN_IF_ERROR(store::UpdateReplicaGroup(tx, catalog, source, [&r](store::TableInfo& t) {
    for (store::Replica& each : t.replicas) {
      if (each.region != r.region) continue;
      each.status = store::ReplicaStatus::kActive;
    }
    if (t.region == r.region) t.status = store::TableStatus::kActive;
    store::SettleReplicaStatus(t);
  }));
  step.finished = true;
  return step;
}

// Runs `page` under `lease_key` on `source` as of one transaction; finished when the table is
// gone or `page` needs nothing of it.
template <typename Page>
Result<ReplicationStep> LeasedStep(kv::Database& db, store::Catalog& catalog,
                                   const store::QualifiedName& table,
                                   const ReplicationOptions& options, Page&& page) {
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<ReplicationStep> {
    FDYNO_ASSIGN_OR_RETURN(auto info, catalog.Find(tx, table.scope(), table.name));
    if (!info) return ReplicationStep{.finished = true};
    return page(tx, *info, [&](const std::string& lease_key) -> Result<bool> {
      return store::TakeLease(tx, lease_key, options.lease);
    });
  });
}

}  // namespace

Result<ReplicationStep> DeliverStep(kv::Database& db, store::Catalog& catalog,
                                    const store::QualifiedName& source, const std::string& region,
                                    const ReplicationOptions& options) {
  return LeasedStep(
      db, catalog, source, options,
      [&](kv::Transaction& tx, const store::TableInfo& info,
          const auto& take) -> Result<ReplicationStep> {
        const store::Replica* r = info.FindReplica(region);
        if (r == nullptr || region == info.region) {
          // No longer a replica: what waits for it goes (LeaveReplicaGroup cleared it already
          // unless the whole group went).
          const auto [begin, end] = store::Outbox(info.id, region).Range();
          tx.ClearRange(begin, end);
          return ReplicationStep{.finished = true};
        }
        const std::string lease = store::LeaseKey(kv::Tuple{"replication", info.id, region});
        FDYNO_ASSIGN_OR_RETURN(bool held, take(lease));
        if (!held) return ReplicationStep{.elsewhere = true};
        return DeliverPage(tx, catalog, info, *r, options);
      });
}

Result<ReplicationStep> ReplicaBackfillStep(kv::Database& db, store::Catalog& catalog,
                                            const store::QualifiedName& source,
                                            const std::string& region,
                                            const ReplicationOptions& options) {
  return LeasedStep(db, catalog, source, options,
                    [&](kv::Transaction& tx, const store::TableInfo& info,
                        const auto& take) -> Result<ReplicationStep> {
                      const store::Replica* r = info.FindReplica(region);
                      if (r == nullptr || r->status != store::ReplicaStatus::kCreating ||
                          r->filled_from != info.region) {
                        return ReplicationStep{.finished = true};
                      }
                      const std::string lease =
                          store::LeaseKey(kv::Tuple{"replica_backfill", info.id, r->table_id});
                      FDYNO_ASSIGN_OR_RETURN(bool held, take(lease));
                      if (!held) return ReplicationStep{.elsewhere = true};
                      FDYNO_ASSIGN_OR_RETURN(auto target, FindReplicaTable(tx, catalog, info, *r));
                      if (!target) return ReplicationStep{.finished = true};
                      FDYNO_ASSIGN_OR_RETURN(ReplicationStep step,
                                             BackfillPage(tx, catalog, info, *r, *target, options));
                      if (step.finished) tx.Clear(lease);
                      return step;
                    });
}

Result<ReplicationStep> ReplicaRemovalStep(kv::Database& db, store::Catalog& catalog,
                                           const store::QualifiedName& replica,
                                           const ReplicationOptions& options) {
  return LeasedStep(
      db, catalog, replica, options,
      [&](kv::Transaction& tx, const store::TableInfo& info,
          const auto& take) -> Result<ReplicationStep> {
        const store::Replica* self = info.FindReplica(info.region);
        if (self == nullptr || self->status != store::ReplicaStatus::kDeleting) {
          return ReplicationStep{.finished = true};
        }
        const std::string lease = store::LeaseKey(kv::Tuple{"replica_removal", info.id});
        FDYNO_ASSIGN_OR_RETURN(bool held, take(lease));
        if (!held) return ReplicationStep{.elsewhere = true};
        const int64_t now_ms = options.clock->WallMillis();
        FDYNO_RETURN_IF_ERROR(store::LeaveReplicaGroup(tx, catalog, info));
        FDYNO_RETURN_IF_ERROR(catalog.Drop(tx, info));
        FDYNO_RETURN_IF_ERROR(store::SyncStream(tx, &info, nullptr, info.stream.slots, now_ms));
        tx.Clear(lease);
        return ReplicationStep{.done = 1, .finished = true};
      });
}

Result<ReplicationPass> RunAllReplication(kv::Database& db, store::Catalog& catalog,
                                          const ReplicationOptions& options) {
  FDYNO_ASSIGN_OR_RETURN(auto tables, AllTables(db, catalog));
  ReplicationMetrics& metrics = GetMetrics();
  ReplicationPass pass;
  int& steps = pass.steps;
  // Runs `step` until it finishes, another owner has the work, or a stop.
  const auto drive = [&](const auto& step) -> Result<int> {
    int done = 0;
    while (!StopRequested(options.stop)) {
      FDYNO_ASSIGN_OR_RETURN(ReplicationStep r, step());
      ++steps;
      done += r.done;
      metrics.superseded.Add(r.superseded);
      if (r.finished || r.elsewhere) break;
    }
    return done;
  };
  for (const auto& info : tables) {
    pass.any_global = pass.any_global || !info->replicas.empty();
    const store::QualifiedName name{info->account, info->region, info->name};
    for (const store::Replica& r : info->replicas) {
      if (r.region == info->region) {
        if (r.status != store::ReplicaStatus::kDeleting) continue;
        FDYNO_ASSIGN_OR_RETURN(
            int removed, drive([&] { return ReplicaRemovalStep(db, catalog, name, options); }));
        if (removed > 0) spdlog::info("replica of table {} in {} removed", name.name, r.region);
        continue;
      }
      FDYNO_ASSIGN_OR_RETURN(
          int delivered, drive([&] { return DeliverStep(db, catalog, name, r.region, options); }));
      metrics.applied.Add(delivered);
      if (r.status == store::ReplicaStatus::kCreating && r.filled_from == info->region) {
        FDYNO_ASSIGN_OR_RETURN(int copied, drive([&] {
                                 return ReplicaBackfillStep(db, catalog, name, r.region, options);
                               }));
        metrics.backfilled.Add(copied);
        if (copied > 0) {
          spdlog::info("replica of table {} in {}: {} items copied from {}", name.name, r.region,
                       copied, info->region);
        }
      }
    }
  }
  return pass;
}

namespace {

// The catalog's metadata version as stored (store/layout.h), as of a snapshot.
Result<std::optional<std::string>> CatalogVersion(kv::Database& db) {
  kv::RunOptions options;
  options.read_only = true;
  return kv::Run(db, options, [](kv::Transaction& tx, const kv::Attempt&) {
    return tx.Get(store::layout::MetadataVersionKey(), /*snapshot=*/true);
  });
}

}  // namespace

ReplicationWorker::ReplicationWorker(kv::Database* db, store::Catalog* catalog,
                                     ReplicationOptions options)
    : periodic_("fdyno-replicate", options.poll, [this, db, catalog, options]() mutable {
        options.stop = periodic_.stop_flag();
        // Read before the pass: a table made global during it changes the version.
        Result<std::optional<std::string>> version = CatalogVersion(*db);
        const std::string seen = version.ok() ? version->value_or("") : std::string("?");
        if (idle_version_ && version.ok() && *idle_version_ == seen) return;
        Result<ReplicationPass> done = RunAllReplication(*db, *catalog, options);
        if (done.ok()) {
          idle_version_.reset();
          if (!done->any_global && version.ok()) idle_version_ = seen;
          return;
        }
        // Errors (conflicts past the retry budget, a dropped table) are retried next round.
        if (auto left_out = error_log_.Allow()) {
          spdlog::warn("replication worker: {} (retried in {} ms; {} such errors not logged)",
                       done.error().message, options.poll.count(), *left_out);
        }
      }) {}

void ReplicationWorker::Start() { periodic_.Start(); }

void ReplicationWorker::Stop() { periodic_.Stop(); }

}  // namespace fdyno::workers
