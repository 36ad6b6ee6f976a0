// fdyno: a DynamoDB-compatible server. `fdyno serve` wires the layers from flags and DYNODB_*
// environment variables: engine -> operation registry -> HTTP server.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <string>

#include "api/api.h"
#include "base/metrics.h"
#include "base/scaled_clock.h"
#include "http/server.h"
#include "http/sigv4.h"
#include "kv/engines/embedded/embedded.h"
#include "main/engine_options.h"
#include "main/flags.h"
#include "store/catalog.h"
#include "store/layout.h"
#include "workers/backfill.h"
#include "workers/streams.h"
#include "workers/token_gc.h"
#include "workers/ttl.h"

namespace fdyno::main {
namespace {

// Metrics that exist from the start, so dashboards and scrapers see zeros rather than gaps:
// the kv retry runner's counters (kv::Run registers the same names when it first runs).
void PreRegisterMetrics() {
  Metrics& m = Metrics::Global();
  for (const char* name : {"kv_transaction_attempts", "kv_conflicts", "kv_unknown_results",
                           "kv_too_old", "kv_outcome_unknown"}) {
    m.GetCounter(name);
  }
}

// The process clock: the real one, or for soak tests a wall clock that runs fast
// (FDYNO_TEST_CLOCK_RATE, a factor; FDYNO_TEST_CLOCK_START_MS, where it starts, by default now).
Result<std::unique_ptr<Clock>> TestClockFromEnv() {
  const char* rate_text = std::getenv("FDYNO_TEST_CLOCK_RATE");
  if (rate_text == nullptr || *rate_text == '\0') return std::unique_ptr<Clock>();
  char* end = nullptr;
  const double rate = std::strtod(rate_text, &end);
  if (*end != '\0' || !(rate > 0) || rate > 1e6) {
    return Error::Validation("FDYNO_TEST_CLOCK_RATE must be a positive factor, not '" +
                             std::string(rate_text) + "'");
  }
  int64_t start_ms = Clock::Real()->WallMillis();
  if (const char* start = std::getenv("FDYNO_TEST_CLOCK_START_MS"); start && *start) {
    start_ms = std::strtoll(start, &end, 10);
    if (*end != '\0' || start_ms <= 0) {
      return Error::Validation("FDYNO_TEST_CLOCK_START_MS must be milliseconds since the epoch");
    }
  }
  spdlog::warn(
      "test clock: the wall clock runs {}x real time from {} ms (FDYNO_TEST_CLOCK_RATE); for "
      "tests only",
      rate, start_ms);
  return std::unique_ptr<Clock>(std::make_unique<ScaledClock>(rate, start_ms));
}

int Serve(const ServeFlags& flags) {
  spdlog::set_level(spdlog::level::from_str(flags.log_level));
  Result<http::ServerConfig> config = ToServerConfig(flags);
  if (!config.ok()) {
    spdlog::error("{}", config.error().message);
    return 2;
  }
  // kv::Run reads the operation budget from the environment; keep it equal to the flag.
  std::string timeout = std::to_string(flags.operation_timeout_s);
  setenv("DYNODB_OPERATION_TIMEOUT", timeout.c_str(), 1);

  Result<std::unique_ptr<Clock>> test_clock = TestClockFromEnv();
  if (!test_clock.ok()) {
    spdlog::error("{}", test_clock.error().message);
    return 2;
  }
  Clock* clock = *test_clock ? test_clock->get() : Clock::Real();

  http::CredentialStore credentials;
  if (!flags.credentials_file.empty()) {
    Result<http::CredentialStore> loaded = http::CredentialStore::LoadFile(flags.credentials_file);
    if (!loaded.ok()) {
      spdlog::error("{}", loaded.error().message);
      return 2;
    }
    credentials = std::move(loaded).value();
    if (credentials.empty()) {
      spdlog::error("credentials file {} lists no key", flags.credentials_file);
      return 2;
    }
  }

  Result<std::unique_ptr<kv::Database>> db = kv::OpenEmbedded(ServerEngineOptions(
      flags.data_dir, flags.durability == "none" ? kv::Durability::kNone : kv::Durability::kFsync,
      clock));
  if (!db.ok()) {
    spdlog::error("cannot open the embedded engine in {}: {}", flags.data_dir, db.error().message);
    return 1;
  }

  // Writes on the network thread need a commit that does not hold it.
  config->inline_writes = config->inline_writes && (*db)->CommitsAsynchronously();

  PreRegisterMetrics();
  int exit_code = 0;
  {
    store::Catalog catalog(clock);  // the table catalog every operation shares
    api::ApiDeps deps;
    deps.db = db->get();
    deps.clock = clock;
    deps.catalog = &catalog;
    deps.item_collection_size_limit_bytes = flags.item_collection_size_limit;
    deps.stream_slots = flags.stream_shards;
    deps.ttl_update_interval_ms = std::llround(flags.ttl_update_interval_s * 1000);
    api::OperationRegistry registry = api::BuildOperationRegistry(deps);
    // Online GSI backfill and removal (UpdateTable GlobalSecondaryIndexUpdates).
    workers::IndexWorker index_worker(db->get(), &catalog);
    index_worker.Start();
    // Time to Live: expiry index backfill and the sweeper (workers/ttl.h).
    workers::TtlOptions ttl_options;
    ttl_options.sweep_interval =
        std::chrono::milliseconds(std::llround(flags.ttl_sweep_interval_s * 1000));
    ttl_options.clock = clock;
    workers::TtlWorker ttl_worker(db->get(), &catalog, ttl_options);
    ttl_worker.Start();
    // Streams: retention, shard rotation, removal (workers/streams.h). The first pass runs now,
    // before serving, so that tables whose stream an older binary enabled get theirs recorded.
    workers::StreamWorkerOptions stream_options;
    stream_options.rotation =
        std::chrono::milliseconds(std::llround(flags.stream_shard_rotation_s * 1000));
    stream_options.slots = flags.stream_shards;
    stream_options.clock = clock;
    if (Result<workers::StreamStats> first = workers::RunStreamPass(**db, catalog, stream_options);
        !first.ok()) {
      spdlog::error("streams: {}", first.error().message);
      return 1;
    }
    workers::StreamWorker stream_worker(db->get(), &catalog, stream_options);
    stream_worker.Start();
    // Optional token GC (DYNODB_TXN_TOKEN_GC_INTERVAL, DYNODB_TXN_TOKEN_GC_MAX_SCAN); token
    // expiry never depends on it. Stopped when it goes out of scope, before the engine closes.
    Result<std::unique_ptr<workers::TokenGc>> token_gc =
        workers::StartTokenGcFromEnv(db->get(), clock);
    if (!token_gc.ok()) {
      spdlog::error("{}", token_gc.error().message);
      return 2;
    }

    http::RouterOptions router_options;
    router_options.region = flags.region;
    router_options.credentials = &credentials;  // signatures are checked against real time
    router_options.operation_timeout =
        std::chrono::milliseconds(static_cast<int64_t>(flags.operation_timeout_s * 1000));
    Result<std::unique_ptr<http::Server>> server =
        http::Server::Create(*config, registry, router_options, /*handle_signals=*/true);
    if (!server.ok()) {
      spdlog::error("{}", server.error().message);
      exit_code = 1;
    } else {
      std::string scheme = config->tls_cert_file.empty() ? "http" : "https";
      std::string admin;
      if (auto a = (*server)->admin_endpoint()) admin = ", metrics on http://" + a->ToString();
      spdlog::info(
          "fdyno serving DynamoDB on {}://{} (engine {}, data dir {}, durability {}, {}{})", scheme,
          (*server)->data_endpoint().ToString(), flags.engine, flags.data_dir, flags.durability,
          credentials.empty() ? std::string("open mode: any signature accepted")
                              : std::to_string(credentials.size()) + " credential(s)",
          admin);
      (*server)->Run();
      spdlog::info("all requests answered; closing the engine");
    }
  }
  db->reset();  // closes the engine cleanly (flushes and releases the directory lock)
  spdlog::info("fdyno stopped");
  return exit_code;
}

}  // namespace
}  // namespace fdyno::main

int main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("fdyno"));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v", spdlog::pattern_time_type::utc);

  CLI::App app{"fdyno: a DynamoDB-compatible database server"};
  app.require_subcommand(1);
  fdyno::main::ServeFlags flags;
  CLI::App* serve = app.add_subcommand("serve", "Serve the DynamoDB API");
  fdyno::main::AddServeFlags(*serve, flags);
  CLI11_PARSE(app, argc, argv);
  if (serve->parsed()) return fdyno::main::Serve(flags);
  return 0;
}
