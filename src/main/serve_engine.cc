#include "main/serve_engine.h"

#include <cmath>
#include <utility>

#include "kv/engines/embedded/embedded.h"
#include "kv/engines/fdb/fdb.h"
#include "kv/engines/fdb/prefix.h"
#include "main/engine_options.h"
#include "main/test_switches.h"

namespace fdyno::main {
namespace {

Result<ServeEngine> OpenEmbeddedEngine(const ServeFlags& flags, Clock* clock) {
  kv::EmbeddedOptions options = ServerEngineOptions(
      flags.data_dir, flags.durability == "none" ? kv::Durability::kNone : kv::Durability::kFsync,
      clock);
  options.in_memory = flags.in_memory;
  options.memory_limit_bytes = flags.in_memory_limit;
  FDYNO_ASSIGN_OR_RETURN(std::function<void()> opened, ApplyTestEngineSwitches(options));
  ServeEngine engine;
  engine.description =
      flags.in_memory
          ? "in memory, limit " + (flags.in_memory_limit == 0
                                       ? std::string("none")
                                       : std::to_string(flags.in_memory_limit >> 20) + " MiB")
          : "data dir " + flags.data_dir + ", durability " + flags.durability;
  Result<std::unique_ptr<kv::Database>> db = kv::OpenEmbedded(options);
  if (!db.ok()) {
    Error error = std::move(db).error();
    error.message =
        "cannot open the embedded engine (" + engine.description + "): " + error.message;
    return error;
  }
  engine.db = std::move(db).value();
  if (opened) opened();
  return engine;
}

Result<ServeEngine> OpenFdbEngine(const ServeFlags& flags) {
  if (flags.in_memory) {
    return Error::Validation("--in-memory applies to the embedded engine, not --engine fdb");
  }
  kv::FdbOptions options;
  options.cluster_file = flags.fdb_cluster_file;
  FDYNO_ASSIGN_OR_RETURN(options.prefix, kv::fdb::ParsePrefix(flags.fdb_prefix));
  options.library = flags.fdb_library;
  options.connect_timeout =
      std::chrono::milliseconds(std::llround(flags.fdb_connect_timeout_s * 1000));
  ServeEngine engine;
  engine.exclusive = false;
  engine.description = "FoundationDB " +
                       (flags.fdb_cluster_file.empty() ? std::string("default cluster file")
                                                       : "cluster file " + flags.fdb_cluster_file) +
                       ", key prefix '" + kv::fdb::PrintablePrefix(options.prefix) + "'";
  FDYNO_ASSIGN_OR_RETURN(engine.db, kv::OpenFdb(options));
  return engine;
}

}  // namespace

Result<ServeEngine> OpenServeEngine(const ServeFlags& flags, Clock* clock) {
  if (flags.engine == "fdb") return OpenFdbEngine(flags);
  return OpenEmbeddedEngine(flags, clock);
}

}  // namespace fdyno::main
