#include "main/flags.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <thread>

namespace fdyno::main {
namespace {

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(seconds * 1000)));
}

}  // namespace

void AddStorageFlags(CLI::App& app, ServeFlags& f) {
  app.add_option("--data-dir", f.data_dir, "Directory of the embedded engine's database")
      ->envname("DYNODB_DATA_DIR")
      ->capture_default_str();
  app.add_option("--export-root", f.export_root,
                 "Directory standing for Amazon S3 in ExportTableToPointInTime and ImportTable: "
                 "bucket B, key K is the file <root>/B/K (default: <data-dir>/exports)")
      ->envname("DYNODB_EXPORT_ROOT");
  app.add_option("--engine", f.engine,
                 "Storage engine: embedded (in this process, in --data-dir) or fdb (a "
                 "FoundationDB cluster, which many fdyno processes can share)")
      ->envname("DYNODB_ENGINE")
      ->check(CLI::IsMember({"embedded", "fdb"}))
      ->capture_default_str();
  app.add_option("--fdb-cluster-file", f.fdb_cluster_file,
                 "With --engine fdb: the cluster file (default: FoundationDB's, "
                 "/etc/foundationdb/fdb.cluster)")
      ->envname("DYNODB_FDB_CLUSTER_FILE");
  app.add_option("--fdb-prefix", f.fdb_prefix,
                 "With --engine fdb: bytes before every key fdyno stores, so that several "
                 "deployments share one cluster ('\\xNN' for any byte, at most 256 bytes, not "
                 "starting with \\xff)")
      ->envname("DYNODB_FDB_PREFIX");
  app.add_option("--fdb-library", f.fdb_library,
                 "With --engine fdb: FoundationDB's client library, a name on the loader's "
                 "path or a path (FoundationDB 7.1 or 7.3)")
      ->envname("DYNODB_FDB_LIBRARY")
      ->capture_default_str();
  app.add_option("--fdb-connect-timeout", f.fdb_connect_timeout_s,
                 "With --engine fdb: seconds to wait at start for the cluster to answer")
      ->envname("DYNODB_FDB_CONNECT_TIMEOUT")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--in-memory", f.in_memory,
               "Keep every table in memory only (like DynamoDB Local's -inMemory): nothing is "
               "written to disk and everything is lost when fdyno stops; --data-dir and "
               "--durability do not apply. For tests and CI")
      ->envname("DYNODB_IN_MEMORY");
  app.add_option("--in-memory-limit", f.in_memory_limit,
                 "With --in-memory: bytes the stored data may take ('512MiB', '2GiB'); a write "
                 "past it gets LimitExceededException. 0: no limit")
      ->envname("DYNODB_IN_MEMORY_LIMIT")
      ->transform(CLI::AsSizeValue(false))
      ->default_str("1GiB");
  app.add_option("--durability", f.durability,
                 "fsync: a commit returns once its log write is on disk. none: no fsync "
                 "(for tests and benchmarks only; a crash can lose acknowledged writes)")
      ->envname("DYNODB_DURABILITY")
      ->check(CLI::IsMember({"fsync", "none"}))
      ->capture_default_str();
}

void AddWorkerFlags(CLI::App& app, ServeFlags& f) {
  app.add_option("--item-collection-size-limit", f.item_collection_size_limit,
                 "Bytes an item collection (one partition key of a table with local secondary "
                 "indexes) may hold; DynamoDB's limit is 10 GB. For tests")
      ->envname("DYNODB_ITEM_COLLECTION_SIZE_LIMIT")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--ttl-sweep-interval", f.ttl_sweep_interval_s,
                 "Seconds between looks for expired items (Time to Live): an expired item is "
                 "deleted within about this long, and hidden from reads until then")
      ->envname("DYNODB_TTL_SWEEP_INTERVAL")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--ttl-update-interval", f.ttl_update_interval_s,
                 "Seconds after an accepted UpdateTimeToLive during which another one is "
                 "refused, as DynamoDB refuses it (0: never refused)")
      ->envname("DYNODB_TTL_UPDATE_INTERVAL")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--policy-update-interval", f.policy_update_interval_s,
                 "Seconds after a change of a resource policy during which another one is "
                 "refused with ThrottlingException, as DynamoDB refuses it (0: never refused)")
      ->envname("DYNODB_POLICY_UPDATE_INTERVAL")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--deletion-protection-interval", f.deletion_protection_interval_s,
                 "Seconds after a change of a table's deletion protection during which setting "
                 "it again is refused with ThrottlingException, as DynamoDB refuses it (0: never "
                 "refused)")
      ->envname("DYNODB_DELETION_PROTECTION_INTERVAL")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--stream-shards", f.stream_shards,
                 "Shards a new DynamoDB stream keeps open at once (each item's changes stay in "
                 "one shard, in order)")
      ->envname("DYNODB_STREAM_SHARDS")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--vector-search-threshold", f.vector_search_threshold,
                 "Vector indexes of at least this many entries are searched through an "
                 "in-memory HNSW graph, with exact reranking (0: SearchVectors is always exact)")
      ->envname("DYNODB_VECTOR_SEARCH_THRESHOLD")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--index-status-delay", f.index_status_delay_s,
                 "Seconds an index that UpdateTable adds or deletes stays CREATING or DELETING "
                 "before its backfill or removal begins, as DynamoDB Local's "
                 "-delayTransientStatuses holds them (0: at once)")
      ->envname("DYNODB_INDEX_STATUS_DELAY")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--replication-delay", f.replication_delay_s,
                 "Seconds a global table's change waits before it is applied to the other "
                 "replicas (DynamoDB's replication is asynchronous; 0: as soon as the worker runs)")
      ->envname("DYNODB_REPLICATION_DELAY")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--stream-shard-rotation", f.stream_shard_rotation_s,
                 "Seconds after which a stream's shards close and child shards open (0: never)")
      ->envname("DYNODB_STREAM_SHARD_ROTATION")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

void AddRegionFlag(CLI::App& app, ServeFlags& f) {
  app.add_option("--region", f.region,
                 "The server's own region: accepted as a signature's region even if it is not "
                 "AWS's; tables from before regions belong to it; --one-region acts in it")
      ->envname("DYNODB_REGION")
      ->capture_default_str();
}

void AddLogFlags(CLI::App& app, ServeFlags& f) {
  app.add_option("--log-level", f.log_level, "trace, debug, info, warn, error or off")
      ->envname("DYNODB_LOG_LEVEL")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
  app.add_option("--log-format", f.log_format,
                 "text, or json: one JSON object a line ({\"time\",\"level\",\"msg\"}); also "
                 "the access log's format")
      ->envname("DYNODB_LOG_FORMAT")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

void AddServeFlags(CLI::App& serve, ServeFlags& f) {
  serve.add_option("--listen", f.listen, "Data listener HOST:PORT ([IPv6]:PORT, :PORT)")
      ->envname("DYNODB_LISTEN")
      ->capture_default_str();
  serve.add_option("--port,-p", f.port, "Port of the data listener (replaces --listen's port)")
      ->envname("DYNODB_PORT")
      ->check(CLI::Range(1, 65535));
  AddStorageFlags(serve, f);
  serve
      .add_option("--credentials", f.credentials_file,
                  "File of accepted keys, one 'ACCESS_KEY_ID SECRET_ACCESS_KEY ACCOUNT_ID' per "
                  "line ('#' starts a comment). Without it the server runs in open mode: any "
                  "well-formed signature is accepted")
      ->envname("DYNODB_CREDENTIALS");
  serve.add_option("--tls-cert", f.tls_cert, "PEM certificate chain; with --tls-key enables TLS")
      ->envname("DYNODB_TLS_CERT");
  serve.add_option("--tls-key", f.tls_key, "PEM private key for --tls-cert")
      ->envname("DYNODB_TLS_KEY");
  serve
      .add_option("--admin-listen", f.admin_listen,
                  "HOST:PORT of a separate listener for /metrics, /metrics/prometheus and the "
                  "browser console /console/ (they then leave the data listener)")
      ->envname("DYNODB_ADMIN_LISTEN");
  serve
      .add_option("--mcp-listen", f.mcp_listen,
                  "HOST:PORT of a listener for the Model Context Protocol over HTTP (POST /mcp), "
                  "for coding agents; off loopback it needs --mcp-token")
      ->envname("DYNODB_MCP_LISTEN");
  serve
      .add_option("--mcp-token", f.mcp_token,
                  "Bearer token every --mcp-listen request must carry (Authorization: Bearer "
                  "TOKEN)")
      ->envname("DYNODB_MCP_TOKEN");
  serve
      .add_option("--faults", f.faults_file,
                  "File of fault rules (JSON, docs/testing-your-application.md): matching "
                  "requests lose their answer after committing, answer an unknown outcome, are "
                  "throttled, conflict or are delayed, so an application's retries can be "
                  "tested. Rules can also be set at run time with PUT /faults on the admin "
                  "listener")
      ->envname("DYNODB_FAULTS")
      ->check(CLI::ExistingFile);
  serve
      .add_flag("--allow-fault-api", f.allow_fault_api,
                "Also answer PUT, GET and DELETE /faults on the data listener (unauthenticated: "
                "for test environments only)")
      ->envname("DYNODB_ALLOW_FAULT_API");
  serve
      .add_option("--init", f.init_dir,
                  "Directory of tables to create and load before serving: <Table>.json (the "
                  "CreateTable request) and <Table>.items.json (DynamoDB JSON lines) or "
                  "<Table>.csv. An existing table of the same definition is left alone")
      ->envname("DYNODB_INIT")
      ->check(CLI::ExistingDirectory);
  serve
      .add_flag("--database-per-key", f.database_per_key,
                "Open mode only: each access key and region has its own tables, and requests "
                "act in the region they are signed for (DynamoDB Local without -sharedDb)")
      ->envname("DYNODB_DATABASE_PER_KEY");
  serve
      .add_flag("--one-region", f.one_region,
                "Every request acts in --region, whatever region it is signed for (DynamoDB "
                "Local's -sharedDb); without it, each region has its own tables, as in DynamoDB")
      ->envname("DYNODB_ONE_REGION");
  serve
      .add_flag("--enforce-capacity", f.enforce_capacity,
                "Throttle as DynamoDB does: provisioned tables and global secondary indexes at "
                "their read and write capacity (with up to 300 seconds of unused capacity "
                "banked), on-demand tables at their OnDemandThroughput maximums, every partition "
                "key at 3,000 read and 1,000 write units a second")
      ->envname("DYNODB_ENFORCE_CAPACITY");
  serve
      .add_flag("--allow-anonymous", f.allow_anonymous,
                "Allow open mode (no --credentials) on a non-loopback address")
      ->envname("DYNODB_ALLOW_ANONYMOUS");
  AddRegionFlag(serve, f);
  serve
      .add_option("--io-threads", f.io_threads,
                  "Network threads (0: one per core but one, at least one: the engine's "
                  "committer thread is busy under writes)")
      ->envname("DYNODB_IO_THREADS")
      ->capture_default_str();
  serve
      .add_option("--workers", f.workers,
                  "Most operation worker threads, started as needed (0: 16 per core, >= 32)")
      ->envname("DYNODB_WORKERS")
      ->capture_default_str();
  serve
      .add_option("--inline-reads", f.inline_reads,
                  "Run GetItem (one item, at most 400 KB, never waiting for a commit), and "
                  "Query and Scan pages of at most 64 KB, on the network thread instead of "
                  "handing them to a worker and back")
      ->envname("DYNODB_INLINE_READS")
      ->capture_default_str();
  serve
      .add_option("--inline-writes", f.inline_writes,
                  "Run PutItem, UpdateItem and DeleteItem on the network thread up to their "
                  "commit, which completes without a waiting thread (engines that commit "
                  "asynchronously); retries run on a worker")
      ->envname("DYNODB_INLINE_WRITES")
      ->capture_default_str();
  serve
      .add_option("--queue-bound", f.queue_bound,
                  "Operations in progress or waiting for a worker, counting those run on a "
                  "network thread; beyond it requests get ThrottlingException")
      ->envname("DYNODB_QUEUE_BOUND")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  serve
      .add_option("--operation-timeout", f.operation_timeout_s,
                  "Seconds one operation may take, retries included (at most 300: receipts "
                  "that make retries exactly-once live 600)")
      ->envname("DYNODB_OPERATION_TIMEOUT")
      ->check(CLI::Range(0.001, 300.0))
      ->capture_default_str();
  serve.add_option("--idle-timeout", f.idle_timeout_s, "Seconds a keep-alive connection may idle")
      ->envname("DYNODB_IDLE_TIMEOUT")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  serve
      .add_option("--header-timeout", f.header_timeout_s,
                  "Seconds from a request's first byte to the end of its headers")
      ->envname("DYNODB_HEADER_TIMEOUT")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  serve
      .add_option("--drain-timeout", f.drain_timeout_s,
                  "Seconds shutdown waits for requests in flight")
      ->envname("DYNODB_DRAIN_TIMEOUT")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  AddWorkerFlags(serve, f);
  AddLogFlags(serve, f);
  serve
      .add_option("--access-log", f.access_log,
                  "File to append one line per request to (time, request id, account, "
                  "operation, table, status, error type, latency, bytes; never item data or "
                  "secrets); '-' for standard output")
      ->envname("DYNODB_ACCESS_LOG");
  serve
      .add_option("--cors", f.cors,
                  "Origins a browser page may call from (CORS): '*' for any, a comma-separated "
                  "list, or '' for none. auto: '*' with --credentials (signatures protect every "
                  "call), none in open mode, where '*' would let any web page a local browser "
                  "opens read and write every table")
      ->envname("DYNODB_CORS")
      ->capture_default_str();
  serve
      .add_option("--max-connections", f.max_connections,
                  "Open connections beyond which new ones get 503 ServiceUnavailable (0: three "
                  "quarters of the open-file limit, which fdyno raises to its hard limit)")
      ->envname("DYNODB_MAX_CONNECTIONS")
      ->capture_default_str();
  serve
      .add_option("--txn-token-gc-interval", f.txn_token_gc_interval,
                  "Time between passes of the ClientRequestToken record GC ('30', '500ms', "
                  "'30s', '5m', '1h'); unset or 0: no GC (tokens still expire after 10 minutes)")
      ->envname("DYNODB_TXN_TOKEN_GC_INTERVAL");
  serve
      .add_option("--txn-token-gc-max-scan", f.txn_token_gc_max_scan,
                  "Token records one GC pass examines (default 1000)")
      ->envname("DYNODB_TXN_TOKEN_GC_MAX_SCAN");
}

Result<http::ServerConfig> ToServerConfig(const ServeFlags& f, uint64_t open_files) {
  http::ServerConfig c;
  FDYNO_ASSIGN_OR_RETURN(c.listen, http::ParseEndpoint(f.listen));
  if (f.port != 0) c.listen.port = static_cast<uint16_t>(f.port);
  if (!f.admin_listen.empty()) {
    FDYNO_ASSIGN_OR_RETURN(http::Endpoint admin, http::ParseEndpoint(f.admin_listen));
    c.admin_listen = admin;
  }
  if (!f.mcp_listen.empty()) {
    FDYNO_ASSIGN_OR_RETURN(http::Endpoint mcp, http::ParseEndpoint(f.mcp_listen));
    if (f.mcp_token.empty() && !http::IsLoopbackHost(mcp.host)) {
      return Error::Validation("refusing to serve the Model Context Protocol on " + mcp.ToString() +
                               " without --mcp-token: anyone who can reach it could read and "
                               "write every table");
    }
    c.mcp_listen = mcp;
  } else if (!f.mcp_token.empty()) {
    return Error::Validation("--mcp-token is for --mcp-listen");
  }
  if (f.tls_cert.empty() != f.tls_key.empty()) {
    return Error::Validation("--tls-cert and --tls-key must be given together");
  }
  c.tls_cert_file = f.tls_cert;
  c.tls_key_file = f.tls_key;
  if (f.credentials_file.empty() && !http::IsLoopbackHost(c.listen.host) && !f.allow_anonymous) {
    return Error::Validation(
        "refusing to listen on " + c.listen.ToString() +
        " in open mode (no --credentials): anyone who can reach it could read and write every "
        "table. Give --credentials FILE, listen on a loopback address, or pass "
        "--allow-anonymous");
  }
  // The region names tables in the catalog and is a part of every ARN and credential scope:
  // letters, digits, '-' and '_' only (AWS's regions, or a name of the user's such as "local").
  if (f.region.empty() || f.region.size() > 64 ||
      !std::all_of(f.region.begin(), f.region.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_';
      })) {
    return Error::Validation("--region must be 1 to 64 letters, digits, '-' or '_', not '" +
                             f.region + "'");
  }
  if (f.database_per_key && !f.credentials_file.empty()) {
    return Error::Validation(
        "--database-per-key is for open mode: with --credentials each account has its tables");
  }
  size_t cores = std::max(1u, std::thread::hardware_concurrency());
  // One core is left to the engine's committer thread (and the clients of a server that
  // shares its machine, as in development): on 2 cores, with the load generator beside it,
  // one network thread served more PutItem and GetItem than two (bench/README.md, "Figures
  // behind settings in the code").
  c.io_threads = f.io_threads ? f.io_threads : std::max<size_t>(1, cores - 1);
  // Workers block through a durable commit's fsync; enough of them let group commit batch many.
  c.workers = f.workers ? f.workers : std::max<size_t>(32, 16 * cores);
  c.queue_bound = f.queue_bound;
  c.inline_reads = f.inline_reads;
  c.inline_writes = f.inline_writes;
  c.idle_timeout = Millis(f.idle_timeout_s);
  c.header_timeout = Millis(f.header_timeout_s);
  c.body_timeout = std::max(c.header_timeout, std::chrono::milliseconds(60'000));
  c.drain_timeout = Millis(f.drain_timeout_s);
  // A quarter of the descriptors stays for the engine's files, the listeners and the log.
  c.max_connections = f.max_connections
                          ? f.max_connections
                          : static_cast<size_t>(std::max<uint64_t>(16, open_files / 4 * 3));
  return c;
}

}  // namespace fdyno::main
