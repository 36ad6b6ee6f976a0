#include "main/backend.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdlib>

#include "store/leases.h"
#include "store/regions_migration.h"

namespace fdyno::main {

Result<std::unique_ptr<Backend>> Backend::Start(const ServeFlags& flags, Clock* clock) {
  std::unique_ptr<Backend> b(new Backend());
  FDYNO_ASSIGN_OR_RETURN(b->engine_, OpenServeEngine(flags, clock));
  b->catalog_ = std::make_unique<store::Catalog>(clock);
  // A catalog written before tables belonged to accounts and regions is brought to today's
  // format before anything reads it (docs/format/catalog.md, "Accounts" and "Regions").
  Result<store::FormatMigration> moved = store::MigrateFormat(*b->engine_.db, flags.region);
  if (!moved.ok()) return Error::Internal("catalog: " + moved.error().message);
  if (moved->accounts > 0) {
    spdlog::info("catalog: {} table(s) from before accounts now belong to account {}",
                 moved->accounts, store::kSharedAccount);
  }
  if (moved->regions > 0) {
    spdlog::info("catalog: {} table(s) from before regions now belong to region {}", moved->regions,
                 moved->legacy_region);
  }
  FDYNO_RETURN_IF_ERROR(b->StartWorkers(flags, clock));
  return b;
}

Status Backend::StartWorkers(const ServeFlags& flags, Clock* clock) {
  kv::Database* db = engine_.db.get();
  store::Catalog* catalog = catalog_.get();
  // Background work is leased (store/leases.h), so that several processes over one database
  // share it; the embedded engine's one process takes every lease at once.
  store::LeaseOptions lease;
  lease.clock = clock;
  lease.sole = engine_.exclusive;
  // On-demand backups and restores (workers/backups.h). When only this process opens the
  // database (the embedded engine), a backup another process owned was abandoned: take it over
  // at once. Over FoundationDB other processes may be working on theirs: take over one only
  // after a minute without progress.
  workers::BackupWorkerOptions backup_options;
  backup_options.clock = clock;
  backup_options.lease = lease;
  backup_options.takeover =
      engine_.exclusive ? std::chrono::milliseconds(0) : std::chrono::milliseconds(60'000);
  if (const char* pause = std::getenv("FDYNO_TEST_BACKUP_PAUSE_AFTER"); pause && *pause) {
    backup_options.pause_after = std::atoi(pause);  // crash tests: see workers/backups.h
  }
  // Exports and imports: a directory stands for Amazon S3 (workers/exports.h).
  backup_options.export_root =
      flags.export_root.empty() ? flags.data_dir + "/exports" : flags.export_root;
  export_root_ = backup_options.export_root;
  backup_worker_ = std::make_unique<workers::BackupWorker>(db, catalog, backup_options);
  // Approximate SearchVectors: graphs built and kept current in the background.
  store::VectorGraphsOptions graph_options;
  graph_options.threshold = flags.vector_search_threshold;
  graph_options.clock = clock;
  vector_graphs_ = std::make_unique<store::VectorGraphs>(db, catalog, graph_options);
  if (graph_options.threshold > 0) vector_graphs_->Start();
  // The data of dropped tables: DeleteTable only drops a table and wakes this worker, which
  // also finishes what an earlier process left behind (workers/purge.h).
  purge_worker_ =
      std::make_unique<workers::PurgeWorker>(db, catalog, workers::PurgeOptions{.lease = lease});
  purge_worker_->Start();

  api::ApiDeps deps;
  deps.vector_graphs = vector_graphs_.get();
  deps.wake_backups = [w = backup_worker_.get()] { w->Wake(); };
  deps.wake_purge = [w = purge_worker_.get()] { w->Wake(); };
  deps.export_root = backup_options.export_root;
  // --enforce-capacity: tables and indexes throttle at their capacity.
  if (flags.enforce_capacity) deps.capacity = &capacity_.emplace(clock);
  // Contributor Insights' counts, shown in /metrics and at the admin listener's
  // /contributor-insights.
  insights_ = std::make_unique<api::KeyInsights>(clock);
  deps.insights = insights_.get();
  deps.enforce_policies = !flags.credentials_file.empty();
  deps.db = db;
  deps.clock = clock;
  deps.catalog = catalog;
  deps.item_collection_size_limit_bytes = flags.item_collection_size_limit;
  deps.stream_slots = flags.stream_shards;
  deps.ttl_update_interval_ms = std::llround(flags.ttl_update_interval_s * 1000);
  deps.policy_update_interval_ms = std::llround(flags.policy_update_interval_s * 1000);
  deps.deletion_protection_interval_ms = std::llround(flags.deletion_protection_interval_s * 1000);
  registry_ = std::make_unique<api::OperationRegistry>(api::BuildOperationRegistry(deps));

  // Online GSI backfill and removal (UpdateTable GlobalSecondaryIndexUpdates).
  workers::BackfillOptions index_options;
  index_options.lease = lease;
  index_options.status_hold =
      std::chrono::milliseconds(std::llround(flags.index_status_delay_s * 1000));
  index_worker_ = std::make_unique<workers::IndexWorker>(db, catalog, index_options);
  index_worker_->Start();
  // Time to Live: expiry index backfill and the sweeper (workers/ttl.h).
  workers::TtlOptions ttl_options;
  ttl_options.sweep_interval =
      std::chrono::milliseconds(std::llround(flags.ttl_sweep_interval_s * 1000));
  ttl_options.clock = clock;
  ttl_options.lease = lease;
  ttl_worker_ = std::make_unique<workers::TtlWorker>(db, catalog, ttl_options);
  ttl_worker_->Start();
  // Streams: retention, shard rotation, removal (workers/streams.h). The first pass runs now,
  // before serving, so that tables whose stream an older binary enabled get theirs recorded.
  workers::StreamWorkerOptions stream_options;
  stream_options.rotation =
      std::chrono::milliseconds(std::llround(flags.stream_shard_rotation_s * 1000));
  stream_options.slots = flags.stream_shards;
  stream_options.clock = clock;
  stream_options.lease = lease;
  Result<workers::StreamStats> first = workers::RunStreamPass(*db, *catalog, stream_options);
  if (!first.ok()) return Error::Internal("streams: " + first.error().message);
  stream_worker_ = std::make_unique<workers::StreamWorker>(db, catalog, stream_options);
  stream_worker_->Start();
  // Global tables: delivery to replicas, new replicas' backfill, removals (workers/replication.h).
  workers::ReplicationOptions replication_options;
  replication_options.delay =
      std::chrono::milliseconds(std::llround(flags.replication_delay_s * 1000));
  replication_options.clock = clock;
  replication_options.lease = lease;
  replication_worker_ =
      std::make_unique<workers::ReplicationWorker>(db, catalog, replication_options);
  replication_worker_->Start();
  backup_worker_->Start();
  // Optional token GC (DYNODB_TXN_TOKEN_GC_INTERVAL, DYNODB_TXN_TOKEN_GC_MAX_SCAN); token
  // expiry never depends on it.
  FDYNO_ASSIGN_OR_RETURN(token_gc_, workers::StartTokenGcFromEnv(db, clock, lease));
  return Status::Ok();
}

// Members are destroyed in reverse order of declaration: the workers stop, then the catalog
// goes, then the engine closes.
Backend::~Backend() = default;

}  // namespace fdyno::main
