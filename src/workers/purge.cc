#include "workers/purge.h"

#include <spdlog/spdlog.h>

#include "base/metrics.h"

namespace fdyno::workers {
namespace {

Counter& PurgesCounter() {
  static Counter& purges = []() -> Counter& {
    Metrics::Global().Describe("fdyno_table_purges", "Dropped tables whose data has been removed.");
    return Metrics::Global().GetCounter("fdyno_table_purges");
  }();
  return purges;
}

}  // namespace

PurgeWorker::PurgeWorker(kv::Database* db, store::Catalog* catalog, PurgeOptions options)
    : periodic_("fdyno-purge", options.interval, [this, db, catalog, options] {
        const auto start = std::chrono::steady_clock::now();
        // Errors (an unavailable engine) are retried at the next interval.
        Result<int> purged = catalog->PurgeDropped(*db, options.lease, periodic_.stop_flag());
        if (!purged.ok()) {
          spdlog::warn("table purge: {}", purged.error().message);
        } else if (*purged > 0) {
          PurgesCounter().Add(*purged);
          spdlog::info("purged the data of {} dropped table(s) in {} ms", *purged,
                       std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count());
        }
      }) {
  PurgesCounter();  // exported from the start, as 0
}

void PurgeWorker::Start() { periodic_.Start(); }

// A purge in progress returns after its current transaction (Periodic::stop_flag).
void PurgeWorker::Stop() { periodic_.Stop(); }

void PurgeWorker::Wake() { periodic_.Wake(); }

}  // namespace fdyno::workers
