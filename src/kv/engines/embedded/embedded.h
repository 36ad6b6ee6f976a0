// The embedded engine: the kv contract (kv/kv.h) on RocksDB, in this process.
#pragma once

#include <memory>
#include <string>

#include "base/clock.h"
#include "base/result.h"
#include "kv/kv.h"

namespace fdyno::kv {

enum class Durability {
  kFsync,  // default: a commit returns after its WAL write is fsynced (group commit)
  kNone,   // tests and benchmarks only: WAL written, not fsynced
};

struct EmbeddedOptions {
  std::string path;  // data directory, created if missing
  Durability durability = Durability::kFsync;
  Clock* clock = nullptr;  // null: Clock::Real(); drives the 5 s window
};

// Opens (creating if needed) the database in options.path and takes an exclusive lock on
// the directory. A second opener, in this or another process, gets an error naming the path.
Result<std::unique_ptr<Database>> OpenEmbedded(const EmbeddedOptions& options);

}  // namespace fdyno::kv
