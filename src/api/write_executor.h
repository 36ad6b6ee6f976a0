// The one write executor of the api layer. PutItem, UpdateItem, DeleteItem, a BatchWriteItem
// request, a TransactWriteItems action and a PartiQL INSERT, UPDATE, DELETE or EXISTS each come
// to a WriteAction, and every writer takes the same steps with one, in this order:
//   1. CheckAction, before anything is read: the key against the table's key schema, a put's
//      whole item against the table's indexes (store::ValidateNewImage), and the key-attribute
//      rule of an update (expr::CheckKeyUntouched);
//   2. ReadAction: the item as it is (store::ReadCurrent);
//   3. Evaluate: the condition on that item, then the next image: a put's item; an update
//      applied to the item (or to the key alone: the only-removes rule), checked by the update
//      size rule and ValidateNewImage of what it changed; or none;
//   4. a store::Mutation stages the change and writes it with everything derived from it.
// RunOnce wraps one attempt of a write operation with its ReplayRecord: the operation receipt,
// or the ClientRequestToken record, of an execution that already committed answers instead of
// the write executing again.
//
// The workers' writes (TTL deletes, restores, imports) have no request, condition, update or
// ReturnValues: each is a store::Mutation stage of an image already checked (an import) or
// already held by a table (a restore), so they write through store::Mutation directly.
//
// Thread-safety: pure functions over their arguments; ReplayRecord is immutable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "expr/ast.h"
#include "kv/kv.h"
#include "kv/run.h"
#include "model/attribute_value.h"
#include "store/catalog.h"
#include "store/mutation.h"
#include "store/receipts.h"
#include "store/tokens.h"

namespace fdyno::api {

enum class WriteKind { kPut, kUpdate, kDelete, kConditionCheck };

// One write on one item of a table.
struct WriteAction {
  WriteKind kind = WriteKind::kPut;
  const model::Item* item = nullptr;  // kPut: the whole item; the others: the key
  const expr::Condition* condition = nullptr;
  const expr::Update* update = nullptr;  // kUpdate; null: an UpdateItem without actions
  // A false condition is DuplicateItem (a PartiQL INSERT on an existing key) rather than
  // ConditionalCheckFailed.
  bool duplicate_on_false = false;
  // ReturnValuesOnConditionCheckFailure ALL_OLD: a false condition carries the item.
  bool return_old_on_condition_failure = false;
};

// How a put's item must carry the key: ValidateItemKey (PutItem, Put actions), or
// ValidateBatchPutKey (BatchWriteItem's wording for a key attribute of another type).
enum class PutKeyWording { kItem, kBatch };

// Step 1 (see the top of this file). The first error, as DynamoDB reports it; key schema and
// index type mismatches carry their ErrorCause (a transaction reports them per action).
Status CheckAction(const store::TableInfo& table, const WriteAction& action,
                   PutKeyWording wording = PutKeyWording::kItem);

// Step 2: the item the action addresses, decoded when `decode` or when the action needs it (a
// condition, an update) or the table does (store::NeedsOldImage). REQUIRES: CheckAction passed.
Result<store::CurrentItem> ReadAction(kv::Transaction& tx, const store::TableInfo& table,
                                      const WriteAction& action, bool decode = false);

// A false condition.
struct ConditionFailure {
  bool duplicate = false;            // DuplicateItem rather than ConditionalCheckFailed
  std::optional<model::Item> item;   // the item as it is, when the action asked for it
  std::string_view Code() const;     // a transaction's cancellation reason code
  std::string_view Message() const;  // DynamoDB's message
  Error ToError() const;             // the single-item operations' error
};

// Step 3: what the action does to `current` (read by ReadAction for it).
struct Evaluation {
  std::optional<ConditionFailure> failure;  // set: the condition is false, nothing changes
  std::optional<model::Item> next;          // the item after the action; nullopt: none
  // Whether the action changes the table (not a condition check, and not a failure).
  bool stages = false;
};
Result<Evaluation> Evaluate(const store::TableInfo& table, const WriteAction& action,
                            const store::CurrentItem& current);

// The size of the item collection `item_or_key` belongs to, as it is now (a replayed write's
// ItemCollectionMetrics: its stored result does not keep the size). REQUIRES: the table has
// item collections (store::HasItemCollections).
Result<uint64_t> CollectionSizeNow(kv::Transaction& tx, const store::TableInfo& table,
                                   const model::Item& item_or_key);

// How a tokened write finds and writes its ClientRequestToken record.
struct TokenUse {
  store::TokenKey key;
  uint32_t contract = store::kTokenContractTransactWriteItemsV1;
  store::Fingerprinter fingerprinter;  // the request's fingerprint per algorithm
  std::string fingerprint_v1;          // fingerprinter(kFingerprintSha256CanonicalV1)
};

// Where a write operation keeps its result, so that a resend replays it instead of executing
// again. Token records keep a ReceiptResult's `extra` bytes.
class ReplayRecord {
 public:
  // The operation receipt of `op_id`, looked up only by an attempt that follows one whose commit
  // outcome is unknown (store/receipts.h). `receipts` must outlive the record.
  ReplayRecord(const store::ReceiptStore& receipts, store::OperationId op_id)
      : receipts_(&receipts), op_id_(std::move(op_id)) {}
  // The ClientRequestToken record of `use`, looked up by every attempt (store/tokens.h): a
  // different request under the same token is IdempotentParameterMismatchException.
  ReplayRecord(const store::TokenStore& tokens, TokenUse use)
      : tokens_(&tokens), token_(std::move(use)) {}

  const store::OperationId* op_id() const { return receipts_ ? &op_id_ : nullptr; }

  // The result of an execution that committed, or nullopt: this attempt executes.
  Result<std::optional<store::ReceiptResult>> Find(kv::Transaction& tx, const kv::Attempt& attempt,
                                                   int64_t now_ms) const;
  // Writes `result` in tx, beside the execution's changes.
  void Keep(kv::Transaction& tx, int64_t now_ms, const store::ReceiptResult& result) const;

 private:
  const store::ReceiptStore* receipts_ = nullptr;
  store::OperationId op_id_;
  const store::TokenStore* tokens_ = nullptr;
  std::optional<TokenUse> token_;
};

// One attempt of a write operation: `replay(stored)` when `record` holds the result of an
// execution that committed; else `execute()`, whose result `keep(out)` turns into the
// ReceiptResult written beside its changes.
template <typename Out, typename Replay, typename Execute, typename Keep>
Result<Out> RunOnce(const ReplayRecord& record, kv::Transaction& tx, const kv::Attempt& attempt,
                    int64_t now_ms, Replay&& replay, Execute&& execute, Keep&& keep) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<store::ReceiptResult> stored,
                         record.Find(tx, attempt, now_ms));
  if (stored) return replay(*stored);
  FDYNO_ASSIGN_OR_RETURN(Out out, execute());
  record.Keep(tx, now_ms, keep(out));
  return out;
}

}  // namespace fdyno::api
