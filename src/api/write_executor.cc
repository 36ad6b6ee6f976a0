#include "api/write_executor.h"

#include <utility>

#include "api/item_keys.h"
#include "api/update_size.h"
#include "expr/evaluate.h"
#include "store/item_collections.h"

namespace fdyno::api {
namespace {

constexpr std::string_view kMismatchMessage =
    "DynamoDB rejected the request because you retried a request with a different payload but "
    "with an idempotent token that was already used.";

// The update's next image: applied to the item, or to its key when it is absent; none when the
// update only removes from an absent item (REMOVE and DELETE do not create one, whatever their
// paths). Checked by the update size rule and, against the item it started from, by
// ValidateNewImage.
Result<std::optional<model::Item>> NextOfUpdate(const store::TableInfo& table, const WriteAction& a,
                                                const model::Item* old) {
  using Next = std::optional<model::Item>;
  if (a.update && !old && expr::OnlyRemoves(*a.update)) return Next();
  model::Item next = old ? *old : *a.item;
  if (a.update) {
    FDYNO_ASSIGN_OR_RETURN(next, expr::ApplyUpdate(*a.update, next));
  }
  FDYNO_RETURN_IF_ERROR(CheckUpdateSize(next, table.key_schema, a.update));
  static const model::Item kNone;
  FDYNO_RETURN_IF_ERROR(store::ValidateNewImage(table, next, old ? old : &kNone));
  return Next(std::move(next));
}

}  // namespace

Status CheckAction(const store::TableInfo& table, const WriteAction& action,
                   PutKeyWording wording) {
  const store::KeySchema& schema = table.key_schema;
  if (action.kind == WriteKind::kPut) {
    FDYNO_RETURN_IF_ERROR(wording == PutKeyWording::kBatch
                              ? ValidateBatchPutKey(schema, *action.item)
                              : ValidateItemKey(schema, *action.item));
    return store::ValidateNewImage(table, *action.item);
  }
  FDYNO_RETURN_IF_ERROR(ValidateKey(schema, *action.item));
  if (action.update) return expr::CheckKeyUntouched(*action.update, schema);
  return Status::Ok();
}

Result<store::CurrentItem> ReadAction(kv::Transaction& tx, const store::TableInfo& table,
                                      const WriteAction& action, bool decode) {
  // A put's item holds its key as the other actions' key does.
  decode = decode || action.kind == WriteKind::kUpdate || action.condition != nullptr;
  return store::ReadCurrent(tx, table, StorageKey(table, *action.item), decode);
}

std::string_view ConditionFailure::Code() const {
  return duplicate ? "DuplicateItem" : "ConditionalCheckFailed";
}

std::string_view ConditionFailure::Message() const {
  return duplicate ? "Duplicate primary key exists in table" : "The conditional request failed";
}

Error ConditionFailure::ToError() const {
  if (duplicate) return Error::Make(ErrorType::kDuplicateItem, std::string(Message()));
  Error e = Error::ConditionalCheckFailed(std::string(Message()));
  if (item) e.item_json = ItemJson(*item);
  return e;
}

Result<Evaluation> Evaluate(const store::TableInfo& table, const WriteAction& action,
                            const store::CurrentItem& current) {
  Evaluation out;
  static const model::Item kEmpty;
  const model::Item* old = current.item();
  if (action.condition && !expr::EvaluateCondition(*action.condition, old ? *old : kEmpty)) {
    ConditionFailure failure;
    failure.duplicate = action.duplicate_on_false;
    if (!failure.duplicate && action.return_old_on_condition_failure && old) failure.item = *old;
    out.failure = std::move(failure);
    return out;
  }
  switch (action.kind) {
    case WriteKind::kPut:
      out.next = *action.item;  // checked by CheckAction
      break;
    case WriteKind::kUpdate: {
      FDYNO_ASSIGN_OR_RETURN(out.next, NextOfUpdate(table, action, old));
      break;
    }
    case WriteKind::kDelete:
    case WriteKind::kConditionCheck:
      break;
  }
  out.stages = action.kind != WriteKind::kConditionCheck;
  return out;
}

Result<uint64_t> CollectionSizeNow(kv::Transaction& tx, const store::TableInfo& table,
                                   const model::Item& item_or_key) {
  const store::ItemCollectionRef ref = store::CollectionOf(table, item_or_key);
  return store::ReadItemCollectionSize(tx, ref.table_id, ref.encoded_hash);
}

Result<std::optional<store::ReceiptResult>> ReplayRecord::Find(kv::Transaction& tx,
                                                               const kv::Attempt& attempt,
                                                               int64_t now_ms) const {
  using Stored = std::optional<store::ReceiptResult>;
  if (receipts_) {
    if (!attempt.maybe_committed) return Stored();
    FDYNO_ASSIGN_OR_RETURN(std::optional<store::Receipt> receipt, receipts_->Read(tx, op_id_));
    if (!receipt) return Stored();
    return Stored(std::move(receipt->result));
  }
  FDYNO_ASSIGN_OR_RETURN(store::TokenLookup look, tokens_->Check(tx, token_->key, token_->contract,
                                                                 token_->fingerprinter, now_ms));
  if (look.state == store::TokenState::kMismatch) {
    return Error::Make(ErrorType::kIdempotentParameterMismatch, std::string(kMismatchMessage));
  }
  if (look.state != store::TokenState::kReplay) return Stored();
  store::ReceiptResult result;
  result.kind = store::ReceiptKind::kTransactWrite;
  result.extra = std::move(look.record->result);
  return Stored(std::move(result));
}

void ReplayRecord::Keep(kv::Transaction& tx, int64_t now_ms,
                        const store::ReceiptResult& result) const {
  if (receipts_) {
    receipts_->ClearExpired(tx, now_ms);
    receipts_->Write(tx, op_id_, result);
    return;
  }
  store::TokenRecord record;
  record.contract_version = token_->contract;
  record.fingerprint_algorithm = store::kFingerprintSha256CanonicalV1;
  record.fingerprint = token_->fingerprint_v1;
  record.created_ms = now_ms;
  record.result_schema = store::kTokenResultSchemaV1;
  record.result = result.extra;
  tokens_->Write(tx, token_->key, record);
}

}  // namespace fdyno::api
