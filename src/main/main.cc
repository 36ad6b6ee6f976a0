// fdyno: a DynamoDB-compatible server. `fdyno serve` wires the layers from flags and DYNODB_*
// environment variables: engine -> operation registry -> HTTP server.
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/api.h"
#include "base/metrics.h"
#include "base/scaled_clock.h"
#include "http/faults.h"
#include "http/mcp_endpoint.h"
#include "http/server.h"
#include "http/sigv4.h"
#include "main/backend.h"
#include "main/dynamodb_local.h"
#include "main/flags.h"
#include "main/health.h"
#include "main/init_tables.h"
#include "main/logging.h"
#include "main/mcp_command.h"
#include "main/test_switches.h"
#include "main/version.h"
#include "mcp/session.h"
#include "s3/service.h"
#include "store/catalog.h"

namespace fdyno::main {
namespace {

// Metrics that exist from the start, so dashboards and scrapers see zeros rather than gaps,
// with the help text of those registered where they are counted (kv::Run, the transaction
// operations, the stream and TTL workers).
void PreRegisterMetrics() {
  Metrics& m = Metrics::Global();
  const std::pair<const char*, const char*> counters[] = {
      {"kv_transaction_attempts", "Transaction attempts run by the kv retry runner."},
      {"kv_conflicts", "Commits refused for a conflict (1020 not_committed), then retried."},
      {"kv_unknown_results",
       "Commits whose outcome was unknown (1021 commit_unknown_result), then retried."},
      {"kv_too_old", "Transactions older than 5 s (1007 transaction_too_old), then retried."},
      {"kv_outcome_unknown",
       "Operations answered 500 because the deadline passed with a commit's outcome unknown."},
      {"receipt_replays",
       "Writes whose retry found the receipt of its own earlier commit and replayed it."},
      {"txn_token_replays",
       "TransactWriteItems answered from a ClientRequestToken record without a second effect."},
      {"txn_token_mismatches",
       "ClientRequestToken reused with different parameters (IdempotentParameterMismatch)."},
      {"txn_token_fail_closed", "ClientRequestToken records refused as malformed or unknown."},
      {"stream_records_trimmed", "Stream records removed after the 24-hour retention."},
      {"stream_shard_rotations", "Stream shards closed and replaced by their child shards."},
      {"streams_deleted",
       "Streams removed 24 hours after they were disabled or their table was deleted."},
      {"ttl_deleted_items", "Items the Time to Live sweeper deleted because they expired."},
  };
  for (const auto& [name, help] : counters) {
    m.Describe(name, help);
    if (std::string_view(name) != "receipt_replays") m.GetCounter(name);
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

// Raises the soft open-file limit to the hard one (1024 by default on Linux, too few for a
// server: every connection is a descriptor) and returns the limit now in force.
uint64_t RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    const rlim_t before = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) == 0) {
      spdlog::info("raised the open-file limit from {} to its hard limit {}", before,
                   limit.rlim_max);
    } else {
      spdlog::warn("cannot raise the open-file limit from {} to {}: {}", before, limit.rlim_max,
                   std::strerror(errno));
      limit.rlim_cur = before;
    }
  }
  return limit.rlim_cur == RLIM_INFINITY ? uint64_t{1} << 20 : limit.rlim_cur;
}

// Flags read by lower layers from the environment: set it from the flags, which win.
void ExportToEnvironment(const ServeFlags& flags) {
  // kv::Run reads the operation budget from the environment; keep it equal to the flag.
  std::string timeout = std::to_string(flags.operation_timeout_s);
  setenv("DYNODB_OPERATION_TIMEOUT", timeout.c_str(), 1);
  if (!flags.txn_token_gc_interval.empty()) {
    setenv("DYNODB_TXN_TOKEN_GC_INTERVAL", flags.txn_token_gc_interval.c_str(), 1);
  }
  if (!flags.txn_token_gc_max_scan.empty()) {
    setenv("DYNODB_TXN_TOKEN_GC_MAX_SCAN", flags.txn_token_gc_max_scan.c_str(), 1);
  }
}

// Sets the rules of --faults `path` (none when empty).
Status LoadFaults(const std::string& path, http::FaultInjector& faults) {
  if (path.empty()) return {};
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return Error::Validation("--faults: cannot read " + path);
  if (Status set = faults.Replace(text.str()); !set.ok()) {
    return Error::Validation(path + ": " + set.error().message);
  }
  spdlog::warn("fault rules from {} are on: matching requests fail on purpose", path);
  return {};
}

// The keys of --credentials (none: open mode).
Result<http::CredentialStore> LoadCredentials(const ServeFlags& flags) {
  if (flags.credentials_file.empty()) return http::CredentialStore();
  FDYNO_ASSIGN_OR_RETURN(http::CredentialStore loaded,
                         http::CredentialStore::LoadFile(flags.credentials_file));
  if (loaded.empty()) {
    return Error::Validation("credentials file " + flags.credentials_file + " lists no key");
  }
  return loaded;
}

// What the routers of both listeners share.
http::RouterOptions RouterOptionsFor(const ServeFlags& flags,
                                     const http::CredentialStore& credentials,
                                     http::FaultInjector* faults,
                                     std::shared_ptr<spdlog::logger> access_log,
                                     LogFormat log_format) {
  http::RouterOptions o;
  o.database_per_key = flags.database_per_key;
  o.one_region = flags.one_region;
  o.faults = faults;
  o.serve_fault_api = flags.allow_fault_api;
  o.region = flags.region;
  o.credentials = &credentials;  // signatures are checked against real time
  o.operation_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(flags.operation_timeout_s * 1000));
  o.access_log = std::move(access_log);
  o.access_log_json = log_format == LogFormat::kJson;
  o.cors_origins = flags.cors != "auto"  ? flags.cors
                   : credentials.empty() ? std::string()
                                         : std::string("*");
  return o;
}

// The account the server itself acts for (--init's tables, --mcp-listen's tools): open mode's,
// or the first key's with --credentials.
std::string OwnAccount(const http::CredentialStore& credentials) {
  return credentials.empty() ? std::string(http::kOpenModeAccount) : credentials.FirstAccount();
}

// --init DIR, for the tables of the server's own account.
Status InitFromFlags(const ServeFlags& flags, const http::CredentialStore& credentials,
                     const api::OperationRegistry& registry, Clock* clock) {
  if (flags.init_dir.empty()) return {};
  InitOptions options;
  options.dir = flags.init_dir;
  options.account = OwnAccount(credentials);
  options.region = flags.region;
  options.clock = clock;
  return InitTables(registry, options);
}

int Serve(const ServeFlags& flags) {
  const LogFormat log_format = flags.log_format == "json" ? LogFormat::kJson : LogFormat::kText;
  ConfigureLogging(log_format, flags.log_level);
  const uint64_t open_files = RaiseOpenFileLimit();
  Result<http::ServerConfig> config = ToServerConfig(flags, open_files);
  if (!config.ok()) {
    spdlog::error("{}", config.error().message);
    return 2;
  }
  ExportToEnvironment(flags);
  std::shared_ptr<spdlog::logger> access_log;
  if (!flags.access_log.empty()) {
    Result<std::shared_ptr<spdlog::logger>> opened = OpenAccessLog(flags.access_log);
    if (!opened.ok()) {
      spdlog::error("{}", opened.error().message);
      return 2;
    }
    access_log = std::move(opened).value();
  }

  Result<std::unique_ptr<Clock>> test_clock = TestClockFromEnv();
  if (!test_clock.ok()) {
    spdlog::error("{}", test_clock.error().message);
    return 2;
  }
  Clock* clock = *test_clock ? test_clock->get() : Clock::Real();

  Result<http::CredentialStore> loaded = LoadCredentials(flags);
  if (!loaded.ok()) {
    spdlog::error("{}", loaded.error().message);
    return 2;
  }
  const http::CredentialStore credentials = std::move(loaded).value();

  PreRegisterMetrics();
  // Open mode's callers own what was written before accounts (store/catalog.h).
  static_assert(http::kOpenModeAccount == store::kSharedAccount);
  Result<std::unique_ptr<Backend>> started = Backend::Start(flags, clock);
  if (!started.ok()) {
    spdlog::error("{}", started.error().message);
    return started.error().type == ErrorType::kValidation ? 2 : 1;
  }
  std::unique_ptr<Backend> backend = std::move(started).value();
  const api::OperationRegistry& registry = backend->registry();
  // Writes on the network thread need a commit that does not hold it.
  config->inline_writes = config->inline_writes && backend->db().CommitsAsynchronously();
  int exit_code = 0;
  {
    // Fault rules for applications (http/faults.h): from --faults, and set at run time.
    http::FaultInjector faults;
    if (Status loaded = LoadFaults(flags.faults_file, faults); !loaded.ok()) {
      spdlog::error("{}", loaded.error().message);
      return 2;
    }
    // --init: tables created and loaded before any request is accepted.
    if (Status init = InitFromFlags(flags, credentials, registry, clock); !init.ok()) {
      spdlog::error("{}", init.error().message);
      return init.error().type == ErrorType::kValidation ? 2 : 1;
    }
    http::RouterOptions router_options =
        RouterOptionsFor(flags, credentials, &faults, access_log, log_format);
    // --mcp-listen: the Model Context Protocol over HTTP (http/mcp_endpoint.h), its tools acting
    // for the server's own account.
    api::RequestContext mcp_context;
    mcp_context.account_id = OwnAccount(credentials);
    mcp_context.region = flags.region;
    mcp_context.access_key_id = "mcp";
    mcp_context.clock = clock;
    const mcp::Session mcp_session(mcp::LocalInvoke(registry, mcp_context), FDYNO_VERSION);
    const http::McpHttp mcp_http{
        .handle = [&mcp_session](std::string_view m) { return mcp_session.Handle(m); },
        .token = flags.mcp_token};
    if (config->mcp_listen) router_options.mcp = &mcp_http;
    // The S3 API over the export root, beside the DynamoDB endpoint (http/s3_endpoint.h).
    s3::ObjectStore s3_store(backend->export_root());
    s3::Service s3_service(s3_store);
    router_options.s3 = &s3_service;
    // Contributor Insights' most accessed and throttled keys: in /metrics and on their own page.
    const api::KeyInsights& insights = backend->insights();
    router_options.metrics_pages["/contributor-insights"] = [&insights] {
      return insights.ReportJson();
    };
    const uint64_t insights_collector =
        Metrics::Global().AddCollector([&insights] { insights.Publish(Metrics::Global()); });
    Result<std::unique_ptr<http::Server>> server =
        http::Server::Create(*config, registry, router_options, /*handle_signals=*/true);
    if (!server.ok()) {
      spdlog::error("{}", server.error().message);
      exit_code = 1;
    } else {
      // Both listeners speak TLS when it is configured.
      std::string scheme = config->tls_cert_file.empty() ? "http" : "https";
      std::string admin;
      if (auto a = (*server)->admin_endpoint()) {
        admin = ", metrics on " + scheme + "://" + a->ToString();
      }
      if (auto m = (*server)->mcp_endpoint()) {
        admin += ", MCP on " + scheme + "://" + m->ToString() + std::string(http::kMcpPath);
      }
      spdlog::info("fdyno serving DynamoDB on {}://{} (engine {}, {}, {}{})", scheme,
                   (*server)->data_endpoint().ToString(), flags.engine, backend->description(),
                   credentials.empty() ? std::string("open mode: any signature accepted")
                                       : std::to_string(credentials.size()) + " credential(s)",
                   admin);
      (*server)->Run();
      spdlog::info("all requests answered; closing the engine");
    }
    Metrics::Global().RemoveCollector(insights_collector);
  }
  backend.reset();  // stops the workers, closes the engine (flushed, its lock released)
  spdlog::info("fdyno stopped");
  return exit_code;
}

}  // namespace
}  // namespace fdyno::main

int main(int argc, char** argv) {
  fdyno::main::ConfigureLogging(fdyno::main::LogFormat::kText, "info");

  // Started as DynamoDB Local is (an image or compose file's `-jar DynamoDBLocal.jar ...`):
  // its options read as `serve` flags (main/dynamodb_local.h).
  std::vector<std::string> args(argv, argv + argc);
  std::vector<char*> translated;
  if (fdyno::main::IsDynamoDbLocalCommand({args.begin() + 1, args.end()})) {
    fdyno::Result<fdyno::main::LocalCommand> local =
        fdyno::main::FromDynamoDbLocal({args.begin() + 1, args.end()});
    if (!local.ok()) {
      std::fprintf(stderr, "%s\n", local.error().message.c_str());
      return 2;
    }
    if (local->help) {
      std::fputs(fdyno::main::DynamoDbLocalHelp().c_str(), stdout);
      return 0;
    }
    args.resize(1);
    args.push_back("serve");
    args.insert(args.end(), local->serve_args.begin(), local->serve_args.end());
    for (std::string& a : args) translated.push_back(a.data());
    argc = static_cast<int>(translated.size());
    argv = translated.data();
  }

  CLI::App app{"fdyno: a DynamoDB-compatible database server"};
  app.set_version_flag("--version", fdyno::main::VersionText());
  app.require_subcommand(1);
  fdyno::main::ServeFlags flags;
  CLI::App* serve = app.add_subcommand("serve", "Serve the DynamoDB API");
  fdyno::main::AddServeFlags(*serve, flags);
  CLI::App* health = fdyno::main::AddHealthCommand(app);
  fdyno::main::ServeFlags mcp_flags;
  std::string mcp_endpoint;
  CLI::App* mcp = fdyno::main::AddMcpCommand(app, mcp_flags, mcp_endpoint);
  CLI::App* power_cut = fdyno::main::AddTestPowerCutCommand(app);
  CLI11_PARSE(app, argc, argv);
  if (serve->parsed()) return fdyno::main::Serve(flags);
  if (health->parsed()) return fdyno::main::RunHealth(*health);
  if (mcp->parsed()) return fdyno::main::RunMcp(mcp_flags, mcp_endpoint);
  if (power_cut->parsed()) return fdyno::main::RunTestPowerCut(*power_cut);
  return 0;
}
