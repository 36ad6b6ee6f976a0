// FoundationDB's error codes as the kv contract's errors. The contract's codes are
// FoundationDB's own, so most codes pass through unchanged; what this adds is the one code
// fdb_c reports that the contract names differently (1101 operation_cancelled, a future
// cancelled with its transaction, is the contract's 1025 transaction_cancelled) and
// FoundationDB's own description as the message. Whether a code is retryable or may have committed
// is kv::IsRetryable / kv::MaybeCommitted, which mirror fdb_error_predicate code for code
// (errors_test.cc checks them against the library's own predicate when it is installed).
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include "base/result.h"
#include "kv/engines/fdb/fdb_c_api.h"

namespace fdyno::kv::fdb {

// The contract's code for fdb_c's `code` (not 0).
int KvCode(fdb_error_t code);

// The kv error (type kKv, kv_code KvCode(code)) for fdb_c's `code`, its message
// FoundationDB's description (`description`, from fdb_get_error; when null, the contract's
// name of the code) and FoundationDB's code.
Error FdbError(fdb_error_t code, const char* description);

// FdbError with the description from `api`.
inline Error FdbError(const Api& api, fdb_error_t code) {
  return FdbError(code, api.get_error(code));
}

}  // namespace fdyno::kv::fdb
