// What operation handlers need from the rest of the process, wired once by main: the kv
// database, the table catalog, the clock and the options that shape behaviour. Handlers hold
// a reference to one Services for the life of the process.
//
// Ownership: Services does not own what it points to; main keeps every pointee alive for as
// long as the OperationRegistry that holds handlers using it. Thread-safety: read-only after
// start-up; every pointee is thread-safe. Other operation families may add fields here.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/clock.h"
#include "kv/kv.h"
#include "store/catalog.h"
#include "store/item_collections.h"
#include "store/layout.h"
#include "store/receipts.h"

namespace fdyno::store {
class VectorGraphs;
}

namespace fdyno::api {

class CapacityGovernor;
class KeyInsights;

struct Services {
  kv::Database* db = nullptr;
  store::Catalog* catalog = nullptr;
  Clock* clock = Clock::Real();
  // The receipts every writer over this database reads and writes (store/receipts.h): one
  // store, so that each expired bucket is cleared once per boundary (ClearExpired).
  std::shared_ptr<const store::ReceiptStore> receipts =
      std::make_shared<const store::ReceiptStore>(store::layout::Receipts());

  // Tells the purge worker (workers/purge.h) that DeleteTable dropped a table, whose data it
  // removes in the background; null: it finds the drop at its next poll. DeleteTable itself
  // only drops the table in the catalog and answers DELETING, as DynamoDB does.
  std::function<void()> wake_purge = {};

  // Item collections (tables with local secondary indexes) may not grow past this many bytes:
  // DynamoDB's 10 GB unless DYNODB_ITEM_COLLECTION_SIZE_LIMIT says otherwise (tests).
  uint64_t item_collection_size_limit_bytes = store::kItemCollectionSizeLimitBytes;

  // An UpdateTimeToLive within this long of the last accepted one is refused, as DynamoDB
  // refuses it (about 30 minutes there): --ttl-update-interval. 0 allows any.
  int64_t ttl_update_interval_ms = 30 * 60 * 1000;

  // A resource policy changed less than this long ago is not changed again
  // (ThrottlingException), as DynamoDB's 15 seconds: --policy-update-interval. 0 allows any.
  int64_t policy_update_interval_ms = 15 * 1000;

  // Deletion protection changed less than this long ago is not set again (ThrottlingException),
  // as DynamoDB's 15 seconds: --deletion-protection-interval. 0 allows any.
  int64_t deletion_protection_interval_ms = 15 * 1000;

  // Shards open at once in a new stream (store/streams.h "slots"): --stream-shards.
  int stream_slots = 1;

  // Tells the backup worker (workers/backups.h) that a backup or restore waits; null: it finds
  // the work at its next poll.
  std::function<void()> wake_backups = {};

  // The process's vector search graphs (store/vector_graphs.h); null: SearchVectors is exact.
  store::VectorGraphs* vector_graphs = nullptr;

  // --enforce-capacity: tables and indexes throttle at their capacity (api/capacity_governor.h);
  // null: they never do.
  CapacityGovernor* capacity = nullptr;
  // Contributor Insights' counts of the keys accessed and throttled (api/key_insights.h); null:
  // nothing is counted (insights settings are still kept and described).
  KeyInsights* insights = nullptr;
  // The directory standing for Amazon S3 in exports and imports (api/export_ops.h): a bucket is
  // a subdirectory of it. Empty: exports and imports are refused.
  std::string export_root;
};

}  // namespace fdyno::api
