// The part of FoundationDB's C client API (libfdb_c) that the fdb engine uses, declared here so
// that fdyno builds without FoundationDB's headers and runs without its library: the library
// is opened at run time (loader.h) and each function is found by name.
//
// Signatures and numbers are those of fdb_c.h, fdb_c_types.h and the generated
// fdb_c_options.g.h of FoundationDB 7.1 and 7.3 (API versions 710 to 730), identical in both.
// The numbers are FoundationDB's wire ABI: never renumber them.
#pragma once

#include <cstdint>

namespace fdyno::kv::fdb {

extern "C" {
// Opaque handles (fdb_c_types.h).
struct FDB_future;
struct FDB_database;
struct FDB_transaction;
using FDBFuture = FDB_future;
using FDBDatabase = FDB_database;
using FDBTransaction = FDB_transaction;

using fdb_error_t = int;
using fdb_bool_t = int;

// fdb_c.h's FDBKeyValue (API version >= 630), packed to 4 bytes.
#pragma pack(push, 4)
struct FDBKeyValue {
  const uint8_t* key;
  int key_length;
  const uint8_t* value;
  int value_length;
};
#pragma pack(pop)

using FDBCallback = void (*)(FDBFuture* future, void* callback_parameter);
}

// The API versions this declaration speaks: FoundationDB 7.1's and 7.3's.
inline constexpr int kMinApiVersion = 710;
inline constexpr int kMaxApiVersion = 730;

// FDBNetworkOption.
inline constexpr int kNetOptionKnob = 40;  // "knob_name=knob_value"
// FDBTransactionOption.
inline constexpr int kTrOptionTimeout = 500;  // 8-byte little-endian milliseconds
// FDBStreamingMode.
inline constexpr int kStreamingWantAll = -2;
inline constexpr int kStreamingExact = 0;
// FDBConflictRangeType.
inline constexpr int kConflictRead = 0;
inline constexpr int kConflictWrite = 1;
// FDBErrorPredicate.
inline constexpr int kPredicateRetryable = 50000;
inline constexpr int kPredicateMaybeCommitted = 50001;
inline constexpr int kPredicateRetryableNotCommitted = 50002;

// The functions, as resolved from the library. Every member is non-null once loaded.
struct Api {
  int api_version = 0;  // the one selected
  const char* (*get_error)(fdb_error_t code);
  fdb_bool_t (*error_predicate)(int predicate_test, fdb_error_t code);
  fdb_error_t (*select_api_version_impl)(int runtime_version, int header_version);
  int (*get_max_api_version)();
  const char* (*get_client_version)();
  fdb_error_t (*network_set_option)(int option, const uint8_t* value, int value_length);
  fdb_error_t (*setup_network)();
  fdb_error_t (*run_network)();
  fdb_error_t (*stop_network)();

  void (*future_destroy)(FDBFuture* f);
  fdb_error_t (*future_block_until_ready)(FDBFuture* f);
  fdb_bool_t (*future_is_ready)(FDBFuture* f);
  fdb_error_t (*future_set_callback)(FDBFuture* f, FDBCallback callback, void* parameter);
  fdb_error_t (*future_get_error)(FDBFuture* f);
  fdb_error_t (*future_get_int64)(FDBFuture* f, int64_t* out);
  fdb_error_t (*future_get_key)(FDBFuture* f, const uint8_t** out_key, int* out_key_length);
  fdb_error_t (*future_get_value)(FDBFuture* f, fdb_bool_t* out_present, const uint8_t** out_value,
                                  int* out_value_length);
  fdb_error_t (*future_get_keyvalue_array)(FDBFuture* f, const FDBKeyValue** out_kv, int* out_count,
                                           fdb_bool_t* out_more);

  fdb_error_t (*create_database)(const char* cluster_file_path, FDBDatabase** out_database);
  void (*database_destroy)(FDBDatabase* d);
  fdb_error_t (*database_create_transaction)(FDBDatabase* d, FDBTransaction** out_transaction);

  void (*transaction_destroy)(FDBTransaction* tr);
  void (*transaction_cancel)(FDBTransaction* tr);
  void (*transaction_reset)(FDBTransaction* tr);
  fdb_error_t (*transaction_set_option)(FDBTransaction* tr, int option, const uint8_t* value,
                                        int value_length);
  void (*transaction_set_read_version)(FDBTransaction* tr, int64_t version);
  FDBFuture* (*transaction_get_read_version)(FDBTransaction* tr);
  FDBFuture* (*transaction_get)(FDBTransaction* tr, const uint8_t* key_name, int key_name_length,
                                fdb_bool_t snapshot);
  FDBFuture* (*transaction_get_range)(FDBTransaction* tr, const uint8_t* begin_key_name,
                                      int begin_key_name_length, fdb_bool_t begin_or_equal,
                                      int begin_offset, const uint8_t* end_key_name,
                                      int end_key_name_length, fdb_bool_t end_or_equal,
                                      int end_offset, int limit, int target_bytes, int mode,
                                      int iteration, fdb_bool_t snapshot, fdb_bool_t reverse);
  void (*transaction_set)(FDBTransaction* tr, const uint8_t* key_name, int key_name_length,
                          const uint8_t* value, int value_length);
  void (*transaction_atomic_op)(FDBTransaction* tr, const uint8_t* key_name, int key_name_length,
                                const uint8_t* param, int param_length, int operation_type);
  void (*transaction_clear)(FDBTransaction* tr, const uint8_t* key_name, int key_name_length);
  void (*transaction_clear_range)(FDBTransaction* tr, const uint8_t* begin_key_name,
                                  int begin_key_name_length, const uint8_t* end_key_name,
                                  int end_key_name_length);
  fdb_error_t (*transaction_add_conflict_range)(FDBTransaction* tr, const uint8_t* begin_key_name,
                                                int begin_key_name_length,
                                                const uint8_t* end_key_name,
                                                int end_key_name_length, int type);
  FDBFuture* (*transaction_commit)(FDBTransaction* tr);
  fdb_error_t (*transaction_get_committed_version)(FDBTransaction* tr, int64_t* out_version);
  FDBFuture* (*transaction_get_versionstamp)(FDBTransaction* tr);
};

}  // namespace fdyno::kv::fdb
