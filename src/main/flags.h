// `fdyno serve` flags. Every flag has a DYNODB_* environment variable (the flag wins), and all
// of them are documented by `fdyno serve --help`.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "base/result.h"
#include "http/config.h"

namespace fdyno::main {

// The flags as given (strings and numbers, before validation).
struct ServeFlags {
  std::string listen = "127.0.0.1:8000";
  int port = 0;  // 0: the port of --listen
  std::string data_dir = "./fdyno-data";
  std::string export_root;  // empty: <data_dir>/exports
  std::string engine = "embedded";
  std::string fdb_cluster_file;  // empty: FoundationDB's default cluster file
  std::string fdb_prefix;        // as typed: "\xNN" escapes (kv/engines/fdb/prefix.h)
  std::string fdb_library = "libfdb_c.so";
  double fdb_connect_timeout_s = 10;
  std::string durability = "fsync";
  bool in_memory = false;
  uint64_t in_memory_limit = uint64_t{1} << 30;  // bytes
  std::string credentials_file;
  std::string tls_cert;
  std::string tls_key;
  std::string admin_listen;
  std::string mcp_listen;   // empty: no Model Context Protocol listener
  std::string mcp_token;    // empty: none asked (loopback only)
  std::string faults_file;  // empty: no fault rules at start
  bool allow_fault_api = false;
  bool enforce_capacity = false;
  std::string init_dir;             // empty: no tables created at start
  double index_status_delay_s = 0;  // -delayTransientStatuses
  bool database_per_key = false;
  bool one_region = false;
  bool allow_anonymous = false;
  std::string region = "us-east-1";
  size_t io_threads = 0;  // 0: one per core but one, at least one
  size_t workers = 0;     // 0: 16 per core, at least 32
  size_t queue_bound = 1024;
  bool inline_reads = true;
  bool inline_writes = true;
  double operation_timeout_s = 30;
  double idle_timeout_s = 60;
  double header_timeout_s = 10;
  double drain_timeout_s = 30;
  std::string log_level = "info";
  std::string log_format = "text";
  std::string access_log;             // empty: none; "-": standard output
  std::string cors = "auto";          // CORS origins: "auto", "*", a list, or empty for none
  size_t max_connections = 0;         // 0: three quarters of the open-file limit
  std::string txn_token_gc_interval;  // passed on as DYNODB_TXN_TOKEN_GC_INTERVAL
  std::string txn_token_gc_max_scan;  // passed on as DYNODB_TXN_TOKEN_GC_MAX_SCAN
  uint64_t item_collection_size_limit = uint64_t{10} << 30;  // bytes (DynamoDB's 10 GB)
  double ttl_sweep_interval_s = 30;
  double ttl_update_interval_s = 1800;
  double policy_update_interval_s = 15;
  double deletion_protection_interval_s = 15;
  int stream_shards = 1;
  double stream_shard_rotation_s = 4 * 3600;
  double replication_delay_s = 0.3;          // global tables (workers/replication.h)
  int64_t vector_search_threshold = 10'000;  // entries; 0: SearchVectors is always exact
};

// Binds the serve flags to `flags` (which must outlive parsing).
void AddServeFlags(CLI::App& serve, ServeFlags& flags);
// The groups of serve's flags that other commands share (`fdyno mcp`): where the data lives
// (--data-dir, --engine and FoundationDB's, --in-memory, --durability, --export-root), the
// background workers' settings, --region, and --log-level and --log-format.
void AddStorageFlags(CLI::App& app, ServeFlags& flags);
void AddWorkerFlags(CLI::App& app, ServeFlags& flags);
void AddRegionFlag(CLI::App& app, ServeFlags& flags);
void AddLogFlags(CLI::App& app, ServeFlags& flags);

// What the flags mean, validated: the HTTP server configuration. Errors explain the flag.
// `open_files`: the process's open-file limit, from which the default connection cap comes.
Result<http::ServerConfig> ToServerConfig(const ServeFlags& flags, uint64_t open_files);

}  // namespace fdyno::main
