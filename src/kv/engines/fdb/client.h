// The FoundationDB client of this process: libfdb_c loaded once, its API version selected
// once, and its one network thread (fdb_setup_network / fdb_run_network), which FoundationDB
// allows once per process and never restarted. Every fdb Database of the process shares it.
//
// Thread-safety: StartClient may be called from any thread, any number of times.
#pragma once

#include <string>

#include "base/result.h"
#include "kv/engines/fdb/fdb_c_api.h"

namespace fdyno::kv::fdb {

// The API version to ask of a client whose newest is `max_supported`: the newest this engine
// speaks, or 0 when the client is older than FoundationDB 7.1.
int ChooseApiVersion(int max_supported);

// Loads `library` (loader.h), selects the API version (ChooseApiVersion) and starts the
// network thread, the first time, with keys allowed kMaxPrefixBytes (prefix.h) more than
// FoundationDB's 10,000 bytes (its key_size_limit knob, as FoundationDB itself does for tenant
// prefixes), so that every key the contract accepts still fits behind a prefix; later calls return
// the same client, and fail when they name another library. The network thread is stopped and
// joined when the process exits. A failed start leaves nothing started unless the API version was
// already selected, which FoundationDB cannot undo: then every later call fails the same way.
// Errors: InternalServerError explaining what is missing or too old.
Result<const Api*> StartClient(const std::string& library);

}  // namespace fdyno::kv::fdb
