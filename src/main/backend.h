// The database and everything that serves it short of a front end: the storage engine
// (serve_engine.h), the table catalog brought up to date, the background workers (backups and
// exports, purges, index backfills, Time to Live, streams, vector graphs, token collection) and
// the operation registry every request goes through. `fdyno serve` puts the HTTP server in front
// of it; `fdyno mcp` the Model Context Protocol (main/mcp.h).
//
// Thread-safety: registry() is thread-safe (read-only after Start); the rest is the owner's.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "api/api.h"
#include "api/capacity_governor.h"
#include "api/key_insights.h"
#include "base/clock.h"
#include "base/result.h"
#include "main/flags.h"
#include "main/serve_engine.h"
#include "store/catalog.h"
#include "store/vector_graphs.h"
#include "workers/backfill.h"
#include "workers/backups.h"
#include "workers/purge.h"
#include "workers/replication.h"
#include "workers/streams.h"
#include "workers/token_gc.h"
#include "workers/ttl.h"

namespace fdyno::main {

class Backend {
 public:
  // Opens the engine the flags name, brings its catalog to today's format, and starts the
  // workers. Errors: Validation for flags that do not fit (exit code 2), otherwise what failed
  // (exit code 1). `clock` drives the engine, the catalog and the workers.
  static Result<std::unique_ptr<Backend>> Start(const ServeFlags& flags, Clock* clock);
  // Stops the workers, then closes the engine (the embedded one flushes and releases its lock).
  ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  const api::OperationRegistry& registry() const { return *registry_; }
  kv::Database& db() const { return *engine_.db; }
  // Where the data lives, for the log.
  const std::string& description() const { return engine_.description; }
  // The directory standing for Amazon S3: exports, imports, and the S3 API beside the endpoint.
  const std::string& export_root() const { return export_root_; }
  // Contributor Insights' counts (api/key_insights.h).
  const api::KeyInsights& insights() const { return *insights_; }

 private:
  Backend() = default;
  Status StartWorkers(const ServeFlags& flags, Clock* clock);

  // Declared in the order they start; destroyed in reverse, the engine last.
  ServeEngine engine_;
  std::string export_root_;
  std::unique_ptr<store::Catalog> catalog_;
  std::unique_ptr<workers::BackupWorker> backup_worker_;
  std::unique_ptr<store::VectorGraphs> vector_graphs_;
  std::unique_ptr<workers::PurgeWorker> purge_worker_;
  std::optional<api::CapacityGovernor> capacity_;
  std::unique_ptr<api::KeyInsights> insights_;
  std::unique_ptr<api::OperationRegistry> registry_;
  std::unique_ptr<workers::IndexWorker> index_worker_;
  std::unique_ptr<workers::TtlWorker> ttl_worker_;
  std::unique_ptr<workers::StreamWorker> stream_worker_;
  std::unique_ptr<workers::ReplicationWorker> replication_worker_;
  std::unique_ptr<workers::TokenGc> token_gc_;
};

}  // namespace fdyno::main
