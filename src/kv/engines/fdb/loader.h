// Opening libfdb_c at run time: the fdb engine's only link to FoundationDB, so that the fdyno
// binary builds and runs where FoundationDB is not installed and fails with a clear message
// only when the fdb engine is asked for.
//
// Thread-safety: LoadLibrary may be called from any thread; it keeps no state.
#pragma once

#include <memory>
#include <string>

#include "base/result.h"
#include "kv/engines/fdb/fdb_c_api.h"

namespace fdyno::kv::fdb {

// The library's name as FoundationDB's client packages install it (on the loader's path).
inline constexpr char kDefaultLibrary[] = "libfdb_c.so";

// dlopen()s `library` (a name searched on the loader's path, or a path) and resolves every
// function of Api. The API version is not selected yet (client.h does that, once per
// process), so api_version is 0 and none of the functions may be called but
// get_max_api_version, get_client_version and select_api_version_impl.
// Errors (type InternalServerError, no kv code): the library cannot be opened (the message
// names it, says why, and how to install it) or lacks a function (too old a client).
// The library stays loaded for the life of the process.
Result<std::unique_ptr<Api>> LoadLibrary(const std::string& library);

}  // namespace fdyno::kv::fdb
