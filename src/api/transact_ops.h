// The transaction operations: TransactWriteItems and TransactGetItems.
//
// TransactWriteItems validates the whole request before any I/O (transact_request.h), then
// runs one kv transaction through kv::Run that: reads the ClientRequestToken record (when a
// token is given), resolves every table, checks keys, rejects two actions on one item, reads
// every target, evaluates every condition and computes every new image. If any action fails
// it writes nothing and answers TransactionCanceledException with one CancellationReason per
// action. Otherwise the items (with their chunks) and either the token record or, for a
// tokenless request, an operation receipt commit together.
//
// Exactly once:
// * tokened: the record (store/tokens.h) is keyed by (account, operation, token); a later
//   request with the same token and the same fingerprint within 10 minutes replays the stored
//   result (capacity reported as reads) and applies nothing; a different request gets
//   IdempotentParameterMismatchException; a malformed, weak or unknown-version record fails
//   closed (InternalServerError, nothing executed, the record kept);
// * tokenless: after a commit_unknown_result the next attempt reads the receipt of this
//   request (store/receipts.h) and replays its result instead of applying the effect again.
// When the deadline passes with a commit in flight the answer is InternalServerError saying
// that the transaction outcome may be unknown (kv::Run).
//
// TransactGetItems reads up to 100 distinct items at one read version and never commits.
//
// ExecuteTransaction (PartiQL) parses, binds and plans up to 100 statements first, then runs
// all-read statements as TransactGetItems does (point reads, filter and projection) and
// all-write statements as TransactWriteItems actions through the same transaction body: INSERT
// a Put (a failed condition cancels with DuplicateItem), UPDATE an Update, DELETE a Delete,
// EXISTS a ConditionCheck. Its ClientRequestToken records are scoped to ExecuteTransaction with
// their own contract version (store::kTokenContractExecuteTransactionV1) and fingerprint
// (statement texts, parameters, ReturnValuesOnConditionCheckFailure, ReturnConsumedCapacity).
//
// Metrics (Metrics::Global()): txn_token_replays, txn_token_mismatches,
// txn_token_fail_closed, and receipt_replays{operation="TransactWriteItems"}.
//
// Thread-safety: the handlers are thread-safe; they share only thread-safe services.
#pragma once

#include "api/operation.h"
#include "api/services.h"
#include "kv/run.h"
#include "store/receipts.h"
#include "store/tokens.h"

namespace fdyno::api {

struct TransactOptions {
  store::TokenOptions tokens;
  // Sleeps between kv::Run attempts; null: real sleeps. Tests pass a no-op.
  kv::SleepFunction sleep;
  // Attempts per request (kv::RunOptions::max_attempts).
  int max_attempts = 50;
};

// Registers TransactWriteItems, TransactGetItems and ExecuteTransaction. `services` (db, catalog,
// clock) must outlive the registry's handlers.
void RegisterTransactOperations(OperationRegistry& registry, const Services& services,
                                TransactOptions options = {});

}  // namespace fdyno::api
