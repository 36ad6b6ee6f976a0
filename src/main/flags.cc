#include "main/flags.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace fdyno::main {
namespace {

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(seconds * 1000)));
}

}  // namespace

void AddServeFlags(CLI::App& serve, ServeFlags& f) {
  serve.add_option("--listen", f.listen, "Data listener HOST:PORT ([IPv6]:PORT, :PORT)")
      ->envname("DYNODB_LISTEN")
      ->capture_default_str();
  serve.add_option("--data-dir", f.data_dir, "Directory of the embedded engine's database")
      ->envname("DYNODB_DATA_DIR")
      ->capture_default_str();
  serve.add_option("--engine", f.engine, "Storage engine (embedded)")
      ->envname("DYNODB_ENGINE")
      ->check(CLI::IsMember({"embedded"}))
      ->capture_default_str();
  serve
      .add_option("--durability", f.durability,
                  "fsync: a commit returns once its log write is on disk. none: no fsync "
                  "(for tests and benchmarks only; a crash can lose acknowledged writes)")
      ->envname("DYNODB_DURABILITY")
      ->check(CLI::IsMember({"fsync", "none"}))
      ->capture_default_str();
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
                  "HOST:PORT of a separate listener for /metrics and /metrics/prometheus (they "
                  "then leave the data listener)")
      ->envname("DYNODB_ADMIN_LISTEN");
  serve
      .add_flag("--allow-anonymous", f.allow_anonymous,
                "Allow open mode (no --credentials) on a non-loopback address")
      ->envname("DYNODB_ALLOW_ANONYMOUS");
  serve.add_option("--region", f.region, "Region this server answers for (signature scope)")
      ->envname("DYNODB_REGION")
      ->capture_default_str();
  serve.add_option("--io-threads", f.io_threads,
                   "Network threads (0: one per core but one, at least one: the engine's "
                   "committer thread is busy under writes)")
      ->envname("DYNODB_IO_THREADS")
      ->capture_default_str();
  serve.add_option("--workers", f.workers, "Operation worker threads (0: 16 per core, >= 32)")
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
                  "Operations that may wait for a worker; beyond it requests get "
                  "ThrottlingException")
      ->envname("DYNODB_QUEUE_BOUND")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  serve
      .add_option("--operation-timeout", f.operation_timeout_s,
                  "Seconds one operation may take, retries included")
      ->envname("DYNODB_OPERATION_TIMEOUT")
      ->check(CLI::PositiveNumber)
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
  serve
      .add_option("--item-collection-size-limit", f.item_collection_size_limit,
                  "Bytes an item collection (one partition key of a table with local secondary "
                  "indexes) may hold; DynamoDB's limit is 10 GB. For tests")
      ->envname("DYNODB_ITEM_COLLECTION_SIZE_LIMIT")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  serve
      .add_option("--ttl-sweep-interval", f.ttl_sweep_interval_s,
                  "Seconds between looks for expired items (Time to Live): an expired item is "
                  "deleted within about this long, and hidden from reads until then")
      ->envname("DYNODB_TTL_SWEEP_INTERVAL")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  serve
      .add_option("--ttl-update-interval", f.ttl_update_interval_s,
                  "Seconds after an accepted UpdateTimeToLive during which another one is "
                  "refused, as DynamoDB refuses it (0: never refused)")
      ->envname("DYNODB_TTL_UPDATE_INTERVAL")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  serve
      .add_option("--stream-shards", f.stream_shards,
                  "Shards a new DynamoDB stream keeps open at once (each item's changes stay in "
                  "one shard, in order)")
      ->envname("DYNODB_STREAM_SHARDS")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  serve
      .add_option("--stream-shard-rotation", f.stream_shard_rotation_s,
                  "Seconds after which a stream's shards close and child shards open (0: never)")
      ->envname("DYNODB_STREAM_SHARD_ROTATION")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  serve.add_option("--log-level", f.log_level, "trace, debug, info, warn, error or off")
      ->envname("DYNODB_LOG_LEVEL")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
}

Result<http::ServerConfig> ToServerConfig(const ServeFlags& f) {
  http::ServerConfig c;
  FDYNO_ASSIGN_OR_RETURN(c.listen, http::ParseEndpoint(f.listen));
  if (!f.admin_listen.empty()) {
    FDYNO_ASSIGN_OR_RETURN(http::Endpoint admin, http::ParseEndpoint(f.admin_listen));
    c.admin_listen = admin;
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
  size_t cores = std::max(1u, std::thread::hardware_concurrency());
  // One core is left to the engine's committer thread (and the clients of a server that
  // shares its machine, as in development): on 2 cores, with the load generator beside it,
  // one network thread gave 13% more PutItem and GetItem than two (bench/README.md).
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
  return c;
}

}  // namespace fdyno::main
