#include "workers/purge.h"

#include <spdlog/spdlog.h>

namespace fdyno::workers {

PurgeWorker::PurgeWorker(kv::Database* db, store::Catalog* catalog, PurgeOptions options)
    : periodic_("fdyno-purge", options.interval, [db, catalog, options] {
        // Errors (an unavailable engine) are retried at the next interval.
        Result<int> purged = catalog->PurgeDropped(*db, options.lease);
        if (!purged.ok()) {
          spdlog::warn("table purge: {}", purged.error().message);
        } else if (*purged > 0) {
          spdlog::info("purged the data of {} dropped table(s)", *purged);
        }
      }) {}

void PurgeWorker::Start() { periodic_.Start(); }

void PurgeWorker::Stop() { periodic_.Stop(); }

}  // namespace fdyno::workers
