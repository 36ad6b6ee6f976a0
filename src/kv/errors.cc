#include "kv/kv.h"

namespace fdyno::kv {

// Mirrors FoundationDB's fdb_error_predicate (flow/error_definitions.h).
bool RetryableNotCommitted(int code) {
  switch (code) {
    case kNotCommitted:
    case kTransactionTooOld:
    case kFutureVersion:
    case kProcessBehind:
    case kDatabaseLocked:
    case kCommitProxyMemoryLimitExceeded:
    case kBatchTransactionThrottled:
    case kGrvProxyMemoryLimitExceeded:
    case kTagThrottled:
    case kProxyTagThrottled:
      return true;
    default:
      return false;
  }
}

bool MaybeCommitted(int code) {
  return code == kCommitUnknownResult || code == kClusterVersionChanged;
}

bool IsRetryable(int code) { return RetryableNotCommitted(code) || MaybeCommitted(code); }

std::string_view ErrorName(int code) {
  switch (code) {
    case kTransactionTooOld: return "transaction_too_old";
    case kFutureVersion: return "future_version";
    case kNotCommitted: return "not_committed";
    case kCommitUnknownResult: return "commit_unknown_result";
    case kTransactionCancelled: return "transaction_cancelled";
    case kTransactionTimedOut: return "transaction_timed_out";
    case kProcessBehind: return "process_behind";
    case kDatabaseLocked: return "database_locked";
    case kClusterVersionChanged: return "cluster_version_changed";
    case kCommitProxyMemoryLimitExceeded: return "commit_proxy_memory_limit_exceeded";
    case kBatchTransactionThrottled: return "batch_transaction_throttled";
    case kGrvProxyMemoryLimitExceeded: return "grv_proxy_memory_limit_exceeded";
    case kTagThrottled: return "tag_throttled";
    case kProxyTagThrottled: return "proxy_tag_throttled";
    case kAccessedUnreadable: return "accessed_unreadable";
    case kClientInvalidOperation: return "client_invalid_operation";
    case kInvertedRange: return "inverted_range";
    case kUsedDuringCommit: return "used_during_commit";
    case kNoCommitVersion: return "no_commit_version";
    case kInvalidMutationType: return "invalid_mutation_type";
    case kTransactionTooLarge: return "transaction_too_large";
    case kKeyTooLarge: return "key_too_large";
    case kValueTooLarge: return "value_too_large";
    case kIoError: return "io_error";
    case kInternalError: return "internal_error";
    default: return "unknown_error";
  }
}

}  // namespace fdyno::kv
