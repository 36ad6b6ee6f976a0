// The storage engine `fdyno serve` runs on, opened from its flags: the embedded engine
// (engine_options.h) or FoundationDB (kv/engines/fdb/fdb.h).
#pragma once

#include <memory>
#include <string>

#include "base/clock.h"
#include "base/result.h"
#include "kv/kv.h"
#include "main/flags.h"

namespace fdyno::main {

struct ServeEngine {
  std::unique_ptr<kv::Database> db;
  std::string description;  // for the log: where the data lives
  // Whether this process is the only one that opens the database (the embedded engine locks
  // its directory); with FoundationDB any number of processes may share it.
  bool exclusive = true;
};

// Opens the engine the flags name. Errors: Validation for flags that do not fit the engine
// (an invalid --fdb-prefix, embedded-only flags with --engine fdb), whose message names the
// flag; otherwise the engine's own error (a locked directory, libfdb_c missing, a cluster that
// does not answer), with what to check.
// `clock`: null for the real clock; drives the embedded engine's 5 s window and timeouts.
Result<ServeEngine> OpenServeEngine(const ServeFlags& flags, Clock* clock);

}  // namespace fdyno::main
