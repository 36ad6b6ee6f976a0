#include "kv/engines/fdb/loader.h"

#include <dlfcn.h>

namespace fdyno::kv::fdb {
namespace {

// Resolves `name` into `*fn`; false (with *missing set) when the library lacks it.
template <typename Fn>
bool Resolve(void* handle, const char* name, Fn* fn, std::string* missing) {
  *fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (*fn == nullptr && missing->empty()) *missing = name;
  return *fn != nullptr;
}

// Every function of Api, by its fdb_c name. The first missing one is named in *missing.
void ResolveAll(void* h, Api* a, std::string* missing) {
  Resolve(h, "fdb_get_error", &a->get_error, missing);
  Resolve(h, "fdb_error_predicate", &a->error_predicate, missing);
  Resolve(h, "fdb_select_api_version_impl", &a->select_api_version_impl, missing);
  Resolve(h, "fdb_get_max_api_version", &a->get_max_api_version, missing);
  Resolve(h, "fdb_get_client_version", &a->get_client_version, missing);
  Resolve(h, "fdb_network_set_option", &a->network_set_option, missing);
  Resolve(h, "fdb_setup_network", &a->setup_network, missing);
  Resolve(h, "fdb_run_network", &a->run_network, missing);
  Resolve(h, "fdb_stop_network", &a->stop_network, missing);
  Resolve(h, "fdb_future_destroy", &a->future_destroy, missing);
  Resolve(h, "fdb_future_block_until_ready", &a->future_block_until_ready, missing);
  Resolve(h, "fdb_future_is_ready", &a->future_is_ready, missing);
  Resolve(h, "fdb_future_set_callback", &a->future_set_callback, missing);
  Resolve(h, "fdb_future_get_error", &a->future_get_error, missing);
  Resolve(h, "fdb_future_get_int64", &a->future_get_int64, missing);
  Resolve(h, "fdb_future_get_key", &a->future_get_key, missing);
  Resolve(h, "fdb_future_get_value", &a->future_get_value, missing);
  Resolve(h, "fdb_future_get_keyvalue_array", &a->future_get_keyvalue_array, missing);
  Resolve(h, "fdb_create_database", &a->create_database, missing);
  Resolve(h, "fdb_database_destroy", &a->database_destroy, missing);
  Resolve(h, "fdb_database_create_transaction", &a->database_create_transaction, missing);
  Resolve(h, "fdb_transaction_destroy", &a->transaction_destroy, missing);
  Resolve(h, "fdb_transaction_cancel", &a->transaction_cancel, missing);
  Resolve(h, "fdb_transaction_reset", &a->transaction_reset, missing);
  Resolve(h, "fdb_transaction_set_option", &a->transaction_set_option, missing);
  Resolve(h, "fdb_transaction_set_read_version", &a->transaction_set_read_version, missing);
  Resolve(h, "fdb_transaction_get_read_version", &a->transaction_get_read_version, missing);
  Resolve(h, "fdb_transaction_get", &a->transaction_get, missing);
  Resolve(h, "fdb_transaction_get_range", &a->transaction_get_range, missing);
  Resolve(h, "fdb_transaction_set", &a->transaction_set, missing);
  Resolve(h, "fdb_transaction_atomic_op", &a->transaction_atomic_op, missing);
  Resolve(h, "fdb_transaction_clear", &a->transaction_clear, missing);
  Resolve(h, "fdb_transaction_clear_range", &a->transaction_clear_range, missing);
  Resolve(h, "fdb_transaction_add_conflict_range", &a->transaction_add_conflict_range, missing);
  Resolve(h, "fdb_transaction_commit", &a->transaction_commit, missing);
  Resolve(h, "fdb_transaction_get_committed_version", &a->transaction_get_committed_version,
          missing);
  Resolve(h, "fdb_transaction_get_versionstamp", &a->transaction_get_versionstamp, missing);
}

}  // namespace

Result<std::unique_ptr<Api>> LoadLibrary(const std::string& library) {
  // RTLD_NODELETE: the network thread runs code of the library until the process ends.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Error::Internal("cannot load the FoundationDB client library '" + library +
                           "': " + (why ? why : "unknown reason") +
                           ". Install FoundationDB's client package (foundationdb-clients, "
                           "7.1 or 7.3), or name the library with --fdb-library");
  }
  auto api = std::make_unique<Api>();
  std::string missing;
  ResolveAll(handle, api.get(), &missing);
  if (!missing.empty()) {
    return Error::Internal("the FoundationDB client library '" + library + "' lacks " + missing +
                           ": fdyno needs a FoundationDB 7.1 or 7.3 client");
  }
  return api;
}

}  // namespace fdyno::kv::fdb
