#include "workers/ttl.h"

#include <spdlog/spdlog.h>

#include <optional>
#include <utility>
#include <vector>

#include "base/metrics.h"
#include "kv/run.h"
#include "kv/tuple.h"
#include "store/layout.h"
#include "store/maintainers.h"
#include "store/mutation.h"
#include "store/ttl.h"

namespace fdyno::workers {
namespace {

Clock* ClockOf(const TtlOptions& options) {
  return options.clock != nullptr ? options.clock : Clock::Real();
}

}  // namespace

Result<std::vector<store::ExpiryEntry>> ReadExpiredEntries(kv::Database& db,
                                                           store::Catalog& catalog,
                                                           const store::QualifiedName& name,
                                                           int64_t now_ms, int limit) {
  kv::RunOptions ro;
  ro.read_only = true;
  using Entries = std::vector<store::ExpiryEntry>;
  return kv::Run(db, ro, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Entries> {
    Entries out;
    FDYNO_ASSIGN_OR_RETURN(auto table, catalog.Find(tx, name.scope(), name.name));
    if (!table || table->ttl.status != store::TtlStatus::kEnabled) return out;
    auto [begin, end] = store::ExpiredRange(table->id, now_ms);
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult r,
                           tx.GetRange(begin, end, {.limit = limit, .snapshot = true}));
    for (const kv::KeyValue& kv : r.kvs) {
      FDYNO_ASSIGN_OR_RETURN(store::ExpiryEntry e, store::DecodeExpiryKey(table->id, kv.key));
      out.push_back(std::move(e));
    }
    return out;
  });
}

namespace {

// DeleteIfExpired; nullopt when another owner holds the table's lease.
Result<std::optional<int>> DeleteBatch(kv::Database& db, store::Catalog& catalog,
                                       const store::QualifiedName& name,
                                       const std::vector<store::ExpiryEntry>& entries,
                                       int64_t now_ms, const store::LeaseOptions& lease) {
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<std::optional<int>> {
    FDYNO_ASSIGN_OR_RETURN(auto table, catalog.Find(tx, name.scope(), name.name));
    if (!table || table->ttl.status != store::TtlStatus::kEnabled) return std::optional<int>(0);
    // The fence: these deletes commit only while this owner holds the table's lease.
    FDYNO_ASSIGN_OR_RETURN(bool held, store::TakeLease(tx, store::TtlLeaseKey(table->id), lease));
    if (!held) return std::optional<int>();
    store::Mutation mutation({.now_ms = now_ms, .source = store::ChangeSource::kTimeToLive});
    int deleted = 0;
    for (const store::ExpiryEntry& e : entries) {
      FDYNO_ASSIGN_OR_RETURN(store::CurrentItem current,
                             store::ReadCurrent(tx, *table, e.item_key, /*decode=*/true));
      std::optional<int64_t> expiry =
          current.image ? store::ExpirySeconds(table->ttl, *current.image) : std::nullopt;
      if (expiry != e.expiry_s) {
        // An entry that does not match its item (never written so by the mutation path) would
        // stay at the head of the index forever: heal it.
        tx.Clear(store::ExpiryKey(table->id, e.expiry_s, e.item_key));
        if (expiry) tx.Set(store::ExpiryKey(table->id, *expiry, e.item_key), "");
        continue;
      }
      // Read again in this transaction: an item refreshed since the index was read has moved.
      if (!store::ExpiredAt(*expiry, now_ms)) continue;
      mutation.Stage(*table, std::move(current), std::nullopt);
      ++deleted;
    }
    FDYNO_ASSIGN_OR_RETURN(store::Written written, mutation.Write(tx));
    (void)written;  // deletes never grow an item collection
    return std::optional<int>(deleted);
  });
}

}  // namespace

Result<int> DeleteIfExpired(kv::Database& db, store::Catalog& catalog,
                            const store::QualifiedName& name,
                            const std::vector<store::ExpiryEntry>& entries, int64_t now_ms,
                            const store::LeaseOptions& lease) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<int> deleted,
                         DeleteBatch(db, catalog, name, entries, now_ms, lease));
  return deleted.value_or(0);
}

Result<TtlStats> SweepTable(kv::Database& db, store::Catalog& catalog,
                            const store::QualifiedName& table_name, const TtlOptions& options) {
  TtlStats stats;
  Clock* clock = ClockOf(options);
  bool leased = false;  // this sweep took the table's lease
  while (stats.deleted < options.max_per_table) {
    const int64_t now_ms = clock->WallMillis();
    FDYNO_ASSIGN_OR_RETURN(
        std::vector<store::ExpiryEntry> entries,
        ReadExpiredEntries(db, catalog, table_name, now_ms, options.delete_batch));
    if (entries.empty()) break;
    FDYNO_ASSIGN_OR_RETURN(std::optional<int> deleted,
                           DeleteBatch(db, catalog, table_name, entries, now_ms, options.lease));
    if (!deleted) {
      stats.elsewhere = 1;
      return stats;  // another owner sweeps this table
    }
    leased = true;
    stats.deleted += *deleted;
    if (static_cast<int>(entries.size()) < options.delete_batch) break;
  }
  if (leased) {
    // The sweep is done: the next may be any owner's.
    FDYNO_RETURN_IF_ERROR(kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto table, catalog.Find(tx, table_name.scope(), table_name.name));
      if (!table) return Status::Ok();
      return store::ReleaseLease(tx, store::TtlLeaseKey(table->id), options.lease);
    }));
  }
  return stats;
}

Result<TtlStats> RunTtlPass(kv::Database& db, store::Catalog& catalog, const TtlOptions& options,
                            bool sweep) {
  TtlStats total;
  FDYNO_ASSIGN_OR_RETURN(auto tables, AllTables(db, catalog));
  for (const auto& table : tables) {
    Result<TtlStats> r = TtlStats{};
    if (sweep && table->ttl.status == store::TtlStatus::kEnabled) {
      r = SweepTable(db, catalog, {table->account, table->region, table->name}, options);
    }
    if (!r.ok()) {
      spdlog::warn("TTL: table {}: {}", table->name, r.error().message);
      continue;
    }
    total.deleted += r->deleted;
    total.elsewhere += r->elsewhere;
    // A sweep that deleted something is worth a line (like a token GC pass); an idle one is not.
    if (r->deleted > 0) {
      spdlog::info("TTL sweep of table {}: {} expired item(s) deleted", table->name, r->deleted);
    }
  }
  if (total.deleted > 0) Metrics::Global().GetCounter("ttl_deleted_items").Add(total.deleted);
  return total;
}

TtlWorker::TtlWorker(kv::Database* db, store::Catalog* catalog, TtlOptions options)
    : db_(db),
      catalog_(catalog),
      options_(options),
      periodic_("fdyno-ttl", options.poll, [this] { Pass(); }) {}

void TtlWorker::Start() { periodic_.Start(); }

void TtlWorker::Stop() { periodic_.Stop(); }

void TtlWorker::Pass() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_sweep_ < options_.sweep_interval) return;
  last_sweep_ = now;
  Result<TtlStats> r = RunTtlPass(*db_, *catalog_, options_, /*sweep=*/true);
  if (!r.ok()) spdlog::warn("TTL pass: {}", r.error().message);
}

}  // namespace fdyno::workers
