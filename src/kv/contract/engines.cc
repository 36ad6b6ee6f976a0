#include "kv/contract/engines.h"

#include "kv/engines/embedded/embedded.h"
#include "kv/engines/faulty/faulty.h"
#include "kv/testing/memory_engine.h"

namespace fdyno::kv::contract {

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
      // The FoundationDB engine joins here.
  };
  return engines;
}

}  // namespace fdyno::kv::contract
