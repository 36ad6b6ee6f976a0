#include "kv/contract/engines.h"

#include <cstdlib>
#include <filesystem>

#include "kv/engines/embedded/embedded.h"
#include "kv/engines/faulty/faulty.h"
#include "kv/engines/fdb/fdb.h"
#include "kv/testing/memory_engine.h"

namespace fdyno::kv::contract {
namespace {

// The FoundationDB cluster the fdb engine's tests use: FDYNO_FDB_CLUSTER_FILE, and the client
// library FDYNO_FDB_LIBRARY (default: libfdb_c.so on the loader's path).
std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

FdbOptions TestFdbOptions(const std::string& dir) {
  FdbOptions options;
  options.cluster_file = Env("FDYNO_FDB_CLUSTER_FILE");
  // Each test's database is its own prefix, named after its (unique) directory.
  options.prefix = "fdyno_contract/" + std::filesystem::path(dir).filename().string() + "/";
  if (std::string library = Env("FDYNO_FDB_LIBRARY"); !library.empty()) options.library = library;
  return options;
}

// Clears the test's prefix (every key the contract tests write sorts before "\xff\xff").
void DestroyFdb(const std::string& dir) {
  Result<std::unique_ptr<Database>> db = OpenFdb(TestFdbOptions(dir));
  if (!db.ok()) return;
  std::unique_ptr<Transaction> t = (*db)->CreateTransaction();
  t->ClearRange("", "\xff\xff");
  (void)t->Commit();
}

}  // namespace

const std::vector<EngineFactory>& ContractEngines() {
  static const std::vector<EngineFactory> engines = {
      {"embedded",
       [](const std::string& dir, Clock* clock) {
         return OpenEmbedded({.path = dir, .durability = Durability::kNone, .clock = clock});
       }},
      {"embedded_fsync",
       [](const std::string& dir, Clock* clock) {
         return OpenEmbedded({.path = dir, .durability = Durability::kFsync, .clock = clock});
       }},
      // The option that only changes speed: keys the contract tests use most served from the
      // engine's memory copy (EmbeddedOptions::memory_keys): reads must be indistinguishable.
      {"embedded_memory_keys",
       [](const std::string& dir, Clock* clock) {
         return OpenEmbedded({.path = dir,
                              .durability = Durability::kNone,
                              .clock = clock,
                              .memory_keys = {"b", "c", "k", "latest", "n", "s", "x", "zz"}});
       }},
      // The fault-injecting wrapper with every fault off must be transparent.
      {"faulty_off",
       [](const std::string& dir, Clock* clock) -> Result<std::unique_ptr<Database>> {
         FDYNO_ASSIGN_OR_RETURN(
             std::unique_ptr<Database> inner,
             OpenEmbedded({.path = dir, .durability = Durability::kNone, .clock = clock}));
         FaultOptions options;
         options.clock = clock;
         return std::unique_ptr<Database>(
             WrapFaulty(std::shared_ptr<Database>(std::move(inner)), options));
       }},
      // The embedded engine in memory (fdyno serve --in-memory), with a memory limit the tests
      // never reach, so that every commit also goes through the limit's accounting.
      {"embedded_in_memory",
       [](const std::string& dir, Clock* clock) {
         return OpenEmbedded({.path = dir,
                              .in_memory = true,
                              .memory_limit_bytes = uint64_t{256} << 20,
                              .clock = clock});
       },
       /*persistent=*/false, /*locks_directory=*/false},
      // The in-memory test engine: nothing survives a reopen and there is no directory.
      {"memory",
       [](const std::string&, Clock* clock) -> Result<std::unique_ptr<Database>> {
         return OpenMemoryEngine({.clock = clock});
       },
       /*persistent=*/false, /*locks_directory=*/false},
      // FoundationDB, when FDYNO_FDB_CLUSTER_FILE names a cluster; skipped, saying so, otherwise.
      {"fdb", [](const std::string& dir, Clock*) { return OpenFdb(TestFdbOptions(dir)); },
       /*persistent=*/true, /*locks_directory=*/false, /*follows_clock=*/false,
       [] {
         return Env("FDYNO_FDB_CLUSTER_FILE").empty()
                    ? std::string(
                          "FDYNO_FDB_CLUSTER_FILE is not set: the FoundationDB engine's "
                          "contract tests need a cluster")
                    : std::string();
       },
       DestroyFdb},
  };
  return engines;
}

}  // namespace fdyno::kv::contract
