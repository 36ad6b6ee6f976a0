#include "api/transact_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/capacity.h"
#include "api/item_keys.h"
#include "api/transact_request.h"
#include "base/bytes.h"
#include "base/metrics.h"
#include "expr/evaluate.h"
#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/json.h"
#include "store/indexes.h"
#include "store/item_collections.h"
#include "store/items.h"
#include "store/layout.h"
#include "store/mutation.h"
#include "store/ttl.h"

namespace fdyno::api {
namespace {

using model::Item;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr std::string_view kOperation = "TransactWriteItems";
constexpr std::string_view kDuplicateMessage =
    "Transaction request cannot include multiple operations on one item";
// The cancellation reason message DynamoDB documents for ItemCollectionSizeLimitExceeded.
constexpr std::string_view kCollectionSizeMessage = "Collection size exceeded.";
constexpr std::string_view kMismatchMessage =
    "DynamoDB rejected the request because you retried a request with a different payload but "
    "with an idempotent token that was already used.";

struct TransactServices {
  kv::Database* db = nullptr;
  store::Catalog* catalog = nullptr;
  Clock* clock = nullptr;
  std::unique_ptr<store::ReceiptStore> receipts;
  std::unique_ptr<store::TokenStore> tokens;
  kv::SleepFunction sleep;
  int max_attempts = 50;
  uint64_t item_collection_limit = store::kItemCollectionSizeLimitBytes;
  Counter* token_replays = nullptr;
  Counter* token_mismatches = nullptr;
  Counter* token_fail_closed = nullptr;
  Counter* receipt_replays = nullptr;
};

// ---- the replayable result (result schema v1) ----------------------------------------------
//
// Stored in the token record (store/tokens.h, result_schema 1) and, for tokenless requests,
// in the operation receipt's `extra` bytes. Persisted: never change schema 1; a new layout is
// a new result schema version.
//   u32 table count, then per table: u32 length + name bytes
//   u32 action count, then per action: u32 table index, u8 kind (TransactActionKind + 1),
//       u64 old size, u64 new size, u8 has collection key, [u32 length + item codec bytes]
//   u32 length + nonce bytes (the operation id of the request that executed)

struct ActionResult {
  uint32_t table = 0;
  TransactActionKind kind = TransactActionKind::kPut;
  uint64_t old_size = 0;
  uint64_t new_size = 0;
  std::optional<Item> collection_key;
};

struct TxnResult {
  std::vector<std::string> tables;
  std::vector<ActionResult> actions;
  std::string nonce;
};

std::string EncodeTxnResult(const TxnResult& r) {
  std::string out;
  PutU32(out, static_cast<uint32_t>(r.tables.size()));
  for (const std::string& t : r.tables) PutLengthPrefixed(out, t);
  PutU32(out, static_cast<uint32_t>(r.actions.size()));
  for (const ActionResult& a : r.actions) {
    PutU32(out, a.table);
    out.push_back(static_cast<char>(static_cast<uint8_t>(a.kind) + 1));
    PutU64(out, a.old_size);
    PutU64(out, a.new_size);
    out.push_back(a.collection_key ? 1 : 0);
    if (a.collection_key) PutLengthPrefixed(out, model::EncodeStoredItem(*a.collection_key));
  }
  PutLengthPrefixed(out, r.nonce);
  return out;
}

Result<TxnResult> DecodeTxnResult(std::string_view bytes) {
  auto corrupt = [] {
    return Error::Internal(
        "The stored result of this transaction is malformed; the request was not executed");
  };
  ByteReader rd(bytes);
  TxnResult r;
  uint32_t n = 0;
  if (!rd.U32(n) || n > kMaxTransactActions) return corrupt();
  for (uint32_t i = 0; i < n; ++i) {
    std::string_view t;
    if (!rd.LengthPrefixed(t)) return corrupt();
    r.tables.emplace_back(t);
  }
  if (!rd.U32(n) || n > kMaxTransactActions) return corrupt();
  for (uint32_t i = 0; i < n; ++i) {
    ActionResult a;
    uint8_t kind = 0, has_key = 0;
    if (!rd.U32(a.table) || a.table >= r.tables.size() || !rd.U8(kind) || kind < 1 || kind > 4 ||
        !rd.U64(a.old_size) || !rd.U64(a.new_size) || !rd.U8(has_key) || has_key > 1) {
      return corrupt();
    }
    a.kind = static_cast<TransactActionKind>(kind - 1);
    if (has_key) {
      std::string_view k;
      if (!rd.LengthPrefixed(k)) return corrupt();
      Result<Item> item = model::DecodeStoredItem(k);
      if (!item.ok()) return corrupt();
      a.collection_key = std::move(item).value();
    }
    r.actions.push_back(std::move(a));
  }
  std::string_view nonce;
  if (!rd.LengthPrefixed(nonce) || !rd.done()) return corrupt();
  r.nonce = std::string(nonce);
  return r;
}

// ---- rendering -----------------------------------------------------------------------------

void WriteCapacityEntry(Writer& w, ReturnConsumedCapacity mode, const std::string& table,
                        double units, const char* kind_key) {
  w.StartObject();
  w.Key("TableName");
  w.String(table.data(), static_cast<rapidjson::SizeType>(table.size()));
  w.Key("CapacityUnits");
  w.Double(units);
  w.Key(kind_key);
  w.Double(units);
  if (mode == ReturnConsumedCapacity::kIndexes) {
    w.Key("Table");
    w.StartObject();
    w.Key("CapacityUnits");
    w.Double(units);
    w.Key(kind_key);
    w.Double(units);
    w.EndObject();
  }
  w.EndObject();
}

enum class Source { kExecuted, kOwnReplay, kTokenReplay };

struct WriteRun {
  TxnResult result;
  Source source = Source::kExecuted;
  // Per action: the size of its item collection after the transaction (actions with a
  // collection key). Not part of the stored result: a replay reads the sizes again.
  std::vector<uint64_t> collection_bytes;
};

// Transactional writes cost twice a standard write per item; a replay through the token costs
// what reading the items does, transactionally (twice a strongly consistent read).
std::string RenderWrite(const TransactWriteRequest& r, const WriteRun& run) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  if (r.return_consumed_capacity != ReturnConsumedCapacity::kNone) {
    const bool reads = run.source == Source::kTokenReplay;
    std::vector<double> units(run.result.tables.size(), 0);
    for (const ActionResult& a : run.result.actions) {
      uint64_t size = std::max(a.old_size, a.new_size);
      units[a.table] += reads ? 2 * ReadUnits(size, true) : 2 * WriteUnits(a.old_size, a.new_size);
    }
    w.Key("ConsumedCapacity");
    w.StartArray();
    for (size_t i = 0; i < run.result.tables.size(); ++i) {
      WriteCapacityEntry(w, r.return_consumed_capacity, run.result.tables[i], units[i],
                         reads ? "ReadCapacityUnits" : "WriteCapacityUnits");
    }
    w.EndArray();
  }
  if (r.return_item_collection_metrics) {
    std::map<uint32_t, std::vector<std::pair<const Item*, uint64_t>>> per_table;
    for (size_t i = 0; i < run.result.actions.size(); ++i) {
      const ActionResult& a = run.result.actions[i];
      const uint64_t bytes = i < run.collection_bytes.size() ? run.collection_bytes[i] : 0;
      if (a.collection_key) per_table[a.table].emplace_back(&*a.collection_key, bytes);
    }
    if (!per_table.empty()) {
      w.Key("ItemCollectionMetrics");
      w.StartObject();
      for (const auto& [table, keys] : per_table) {
        const std::string& name = run.result.tables[table];
        w.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
        w.StartArray();
        for (const auto& [key, bytes] : keys) WriteItemCollectionMetrics(w, *key, bytes);
        w.EndArray();
      }
      w.EndObject();
    }
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

// ---- cancellation --------------------------------------------------------------------------

struct Reason {
  std::string code = "None";
  std::string message;
  std::optional<Item> item;
};

Error Cancelled(const std::vector<Reason>& reasons) {
  std::string codes;
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartArray();
  for (size_t i = 0; i < reasons.size(); ++i) {
    if (i > 0) codes += ", ";
    codes += reasons[i].code;
    w.StartObject();
    w.Key("Code");
    w.String(reasons[i].code.data(), static_cast<rapidjson::SizeType>(reasons[i].code.size()));
    if (reasons[i].item) {
      w.Key("Item");
      model::WriteItem(w, *reasons[i].item);
    }
    if (!reasons[i].message.empty()) {
      w.Key("Message");
      w.String(reasons[i].message.data(),
               static_cast<rapidjson::SizeType>(reasons[i].message.size()));
    }
    w.EndObject();
  }
  w.EndArray();
  Error e = Error::Make(
      ErrorType::kTransactionCanceled,
      "Transaction cancelled, please refer cancellation reasons for specific reasons [" + codes +
          "]");
  e.cancellation_reasons_json = std::string(buffer.GetString(), buffer.GetSize());
  return e;
}

// Key errors that DynamoDB reports per action (a cancellation reason) rather than for the
// request: the key does not have the schema's attributes and types, or an index key attribute
// has the wrong type. Empty key values and oversized keys are request-level ValidationExceptions.
bool IsSchemaMismatch(const Error& e) {
  return e.cause == ErrorCause::kKeySchemaMismatch || e.cause == ErrorCause::kIndexKeyMismatch;
}

// ---- shared planning inside the transaction ------------------------------------------------

kv::RunOptions RunOptionsFor(const RequestContext& ctx, const TransactServices& s, bool read_only) {
  kv::RunOptions options;
  if (ctx.deadline != std::chrono::steady_clock::time_point{}) options.deadline = ctx.deadline;
  options.clock = s.clock;
  options.sleep = s.sleep;
  options.read_only = read_only;
  options.max_attempts = s.max_attempts;
  return options;
}

// Tables of the actions, each looked up once; table index per action; distinct names in order
// of first use.
struct Tables {
  std::vector<std::string> names;
  std::vector<std::shared_ptr<const store::TableInfo>> infos;  // per name
  std::vector<uint32_t> of_action;
};

template <typename Actions>
Result<Tables> ResolveTables(const TransactServices& s, kv::Transaction& tx,
                             const Actions& actions) {
  Tables t;
  std::map<std::string, uint32_t> index;
  for (const auto& a : actions) {
    auto it = index.find(a.table_name);
    if (it == index.end()) {
      FDYNO_ASSIGN_OR_RETURN(auto info, FindActiveTable(*s.catalog, tx, a.table_name));
      it = index.emplace(a.table_name, static_cast<uint32_t>(t.names.size())).first;
      t.names.push_back(a.table_name);
      t.infos.push_back(std::move(info));
    }
    t.of_action.push_back(it->second);
  }
  return t;
}

// ---- TransactWriteItems --------------------------------------------------------------------

// The current sizes of the item collections of a replayed result's actions (the stored result
// does not keep them; DynamoDB's estimate is not exact either). A table that no longer exists,
// or whose key changed, reports 0.
Result<std::vector<uint64_t>> ReplayedCollectionSizes(const TransactServices& s,
                                                      kv::Transaction& tx,
                                                      const TxnResult& result) {
  std::vector<uint64_t> sizes(result.actions.size(), 0);
  std::vector<std::optional<std::shared_ptr<const store::TableInfo>>> infos(result.tables.size());
  for (size_t i = 0; i < result.actions.size(); ++i) {
    const ActionResult& a = result.actions[i];
    if (!a.collection_key) continue;
    auto& info = infos[a.table];
    if (!info) {
      FDYNO_ASSIGN_OR_RETURN(info, s.catalog->Find(tx, result.tables[a.table]));
    }
    if (!*info || !a.collection_key->contains((*info)->key_schema.hash.name)) continue;
    const store::ItemCollectionRef ref = store::CollectionOf(**info, *a.collection_key);
    FDYNO_ASSIGN_OR_RETURN(sizes[i],
                           store::ReadItemCollectionSize(tx, ref.table_id, ref.encoded_hash));
  }
  return sizes;
}

Result<std::string> TransactWriteItemsOp(const TransactServices& s, const RequestContext& ctx,
                                         const rapidjson::Value& body) {
  FDYNO_ASSIGN_OR_RETURN(TransactWriteRequest r, DecodeTransactWriteItems(body));
  const size_t n = r.actions.size();
  const store::OperationId op_id = store::OperationId::New(*s.clock);
  std::optional<store::TokenKey> token_key;
  store::Fingerprinter fingerprinter;
  std::string fingerprint_v1;
  if (r.client_request_token) {
    token_key = store::TokenKey{ctx.account_id, std::string(kOperation), *r.client_request_token};
    FDYNO_ASSIGN_OR_RETURN(fingerprint_v1,
                           TransactWriteFingerprint(r, store::kFingerprintSha256CanonicalV1));
    fingerprinter = [&r](uint32_t algorithm) { return TransactWriteFingerprint(r, algorithm); };
  }
  // Attributes each update writes, for the key-attribute check.
  std::vector<std::vector<std::string>> updated(n);
  for (size_t i = 0; i < n; ++i) {
    if (r.actions[i].update) updated[i] = expr::UpdatedTopLevelAttributes(*r.actions[i].update);
  }

  auto body_fn = [&](kv::Transaction& tx, const kv::Attempt& attempt) -> Result<WriteRun> {
    if (token_key) {
      FDYNO_ASSIGN_OR_RETURN(
          store::TokenLookup look,
          s.tokens->Check(tx, *token_key, store::kTokenContractTransactWriteItemsV1, fingerprinter,
                          s.clock->WallMillis()));
      if (look.state == store::TokenState::kMismatch) {
        return Error::Make(ErrorType::kIdempotentParameterMismatch, std::string(kMismatchMessage));
      }
      if (look.state == store::TokenState::kReplay) {
        FDYNO_ASSIGN_OR_RETURN(TxnResult replayed, DecodeTxnResult(look.record->result));
        Source source = replayed.nonce == op_id.nonce ? Source::kOwnReplay : Source::kTokenReplay;
        WriteRun run{std::move(replayed), source, {}};
        if (r.return_item_collection_metrics) {
          FDYNO_ASSIGN_OR_RETURN(run.collection_bytes, ReplayedCollectionSizes(s, tx, run.result));
        }
        return run;
      }
    } else if (attempt.maybe_committed) {
      FDYNO_ASSIGN_OR_RETURN(std::optional<store::Receipt> receipt, s.receipts->Read(tx, op_id));
      if (receipt) {
        FDYNO_ASSIGN_OR_RETURN(TxnResult replayed, DecodeTxnResult(receipt->result.extra));
        WriteRun run{std::move(replayed), Source::kOwnReplay, {}};
        if (r.return_item_collection_metrics) {
          FDYNO_ASSIGN_OR_RETURN(run.collection_bytes, ReplayedCollectionSizes(s, tx, run.result));
        }
        return run;
      }
    }

    FDYNO_ASSIGN_OR_RETURN(Tables tables, ResolveTables(s, tx, r.actions));
    std::vector<Reason> reasons(n);
    bool cancel = false;
    std::vector<Item> keys(n);
    for (size_t i = 0; i < n; ++i) {
      const TransactWriteAction& a = r.actions[i];
      const store::KeySchema& schema = tables.infos[tables.of_action[i]]->key_schema;
      Status st = a.kind == TransactActionKind::kPut ? ValidateItemKey(schema, a.item)
                                                     : ValidateKey(schema, a.item);
      if (st.ok() && a.kind == TransactActionKind::kPut) {
        st = store::ValidateIndexKeys(*tables.infos[tables.of_action[i]], a.item);
      }
      if (!st.ok()) {
        if (!IsSchemaMismatch(st.error())) return st.error();
        // The actions after the first invalid one are never evaluated: their reasons stay
        // None.
        reasons[i].code = "ValidationError";
        reasons[i].message = st.error().message;
        cancel = true;
        break;
      }
      for (const std::string& name : updated[i]) {
        if (name == schema.hash.name || (schema.range && name == schema.range->name)) {
          return Error::Validation(
              "One or more parameter values were invalid: Cannot update attribute " + name +
              ". This attribute is part of the key");
        }
      }
      keys[i] = a.kind == TransactActionKind::kPut ? KeyOf(schema, a.item) : a.item;
    }
    if (cancel) return Cancelled(reasons);

    std::vector<std::string> storage(n);
    std::set<std::string> seen;
    for (size_t i = 0; i < n; ++i) {
      storage[i] = StorageKey(*tables.infos[tables.of_action[i]], keys[i]);
      if (!seen.insert(storage[i]).second) return Error::Validation(std::string(kDuplicateMessage));
    }

    std::vector<store::CurrentItem> current(n);
    for (size_t i = 0; i < n; ++i) {
      FDYNO_ASSIGN_OR_RETURN(current[i], store::ReadCurrent(tx, *tables.infos[tables.of_action[i]],
                                                            storage[i], /*decode=*/true));
    }

    static const Item kEmpty;
    std::vector<std::optional<Item>> next(n);
    for (size_t i = 0; i < n; ++i) {
      const TransactWriteAction& a = r.actions[i];
      const Item* old = current[i].item();
      if (a.condition && !expr::EvaluateCondition(*a.condition, old ? *old : kEmpty)) {
        reasons[i].code = "ConditionalCheckFailed";
        reasons[i].message = "The conditional request failed";
        if (a.return_old_on_condition_failure && old) reasons[i].item = *old;
        cancel = true;
        continue;
      }
      if (a.kind == TransactActionKind::kPut) {
        next[i] = a.item;
      } else if (a.kind == TransactActionKind::kUpdate) {
        // An update that only removes leaves a missing item missing, whatever its paths.
        if (!old && expr::OnlyRemoves(*a.update)) continue;
        Result<Item> updated_item = expr::ApplyUpdate(*a.update, old ? *old : keys[i]);
        Status size_ok = updated_item.ok() ? model::CheckUpdatedItemSize(*updated_item)
                                           : Status(updated_item.error());
        if (size_ok.ok()) {
          size_ok = store::ValidateNewImage(*tables.infos[tables.of_action[i]], *updated_item,
                                            old ? old : &kEmpty);
        }
        if (!size_ok.ok()) {
          // An empty index key value fails the whole request, as DynamoDB does.
          if (size_ok.error().type != ErrorType::kValidation ||
              size_ok.error().cause == ErrorCause::kIndexKeyEmpty) {
            return size_ok.error();
          }
          reasons[i].code = "ValidationError";
          reasons[i].message = size_ok.error().message;
          cancel = true;
          break;
        }
        // An update that only removes (REMOVE, DELETE) does not create a missing item.
        if (old || !expr::OnlyRemoves(*a.update)) next[i] = std::move(updated_item).value();
      }
    }
    if (cancel) return Cancelled(reasons);

    // Every change through the one mutation path; an action that grows an item collection the
    // transaction would take past the limit cancels it.
    WriteRun run;
    run.result.tables = tables.names;
    run.result.nonce = op_id.nonce;
    run.result.actions.resize(n);
    store::Mutation mutation(
        {.now_ms = s.clock->WallMillis(), .item_collection_limit_bytes = s.item_collection_limit});
    std::vector<size_t> action_of_change;
    for (size_t i = 0; i < n; ++i) {
      const TransactWriteAction& a = r.actions[i];
      ActionResult& out = run.result.actions[i];
      out.table = tables.of_action[i];
      out.kind = a.kind;
      out.old_size = current[i].size;
      out.new_size = a.kind == TransactActionKind::kConditionCheck ? out.old_size
                     : next[i]                                     ? model::ItemSize(*next[i])
                                                                   : 0;
      if (a.kind == TransactActionKind::kConditionCheck) continue;
      const store::TableInfo& table = *tables.infos[tables.of_action[i]];
      if (next[i] || a.kind == TransactActionKind::kDelete) {
        out.collection_key = CollectionKey(table, keys[i]);
      }
      FDYNO_RETURN_IF_ERROR(mutation.Stage(table, std::move(current[i]), std::move(next[i]),
                                           a.kind == TransactActionKind::kUpdate
                                               ? store::StageKind::kUpdate
                                               : store::StageKind::kReplace));
      action_of_change.push_back(i);
    }
    FDYNO_ASSIGN_OR_RETURN(store::Written written, mutation.Write(tx));
    if (!written.ok()) {
      for (size_t change : written.collection_limit_exceeded) {
        reasons[action_of_change[change]].code = "ItemCollectionSizeLimitExceeded";
        reasons[action_of_change[change]].message = std::string(kCollectionSizeMessage);
      }
      return Cancelled(reasons);
    }
    for (size_t i = 0; i < n; ++i) {
      uint64_t collection_bytes = 0;
      if (run.result.actions[i].collection_key && r.return_item_collection_metrics) {
        const store::TableInfo& table = *tables.infos[tables.of_action[i]];
        FDYNO_ASSIGN_OR_RETURN(collection_bytes, mutation.CollectionSizeAfter(
                                                     tx, store::CollectionOf(table, keys[i])));
      }
      run.collection_bytes.push_back(collection_bytes);
    }
    const int64_t now_ms = s.clock->WallMillis();
    if (token_key) {
      store::TokenRecord record;
      record.contract_version = store::kTokenContractTransactWriteItemsV1;
      record.fingerprint_algorithm = store::kFingerprintSha256CanonicalV1;
      record.fingerprint = fingerprint_v1;
      record.created_ms = now_ms;
      record.result_schema = store::kTokenResultSchemaV1;
      record.result = EncodeTxnResult(run.result);
      s.tokens->Write(tx, *token_key, record);
    } else {
      store::ReceiptResult receipt;
      receipt.kind = store::ReceiptKind::kTransactWrite;
      receipt.extra = EncodeTxnResult(run.result);
      s.receipts->ClearExpired(tx, now_ms);
      s.receipts->Write(tx, op_id, receipt);
    }
    return run;
  };

  Result<WriteRun> run = kv::Run(*s.db, RunOptionsFor(ctx, s, false), body_fn);
  if (!run.ok()) {
    const Error& e = run.error();
    if (e.type == ErrorType::kIdempotentParameterMismatch) s.token_mismatches->Add();
    if (token_key && e.cause == ErrorCause::kTokenRecordUnusable) {
      s.token_fail_closed->Add();
    }
    return std::move(run).error();
  }
  if (run->source == Source::kTokenReplay) s.token_replays->Add();
  if (run->source == Source::kOwnReplay) {
    (token_key ? s.token_replays : s.receipt_replays)->Add();
  }
  return RenderWrite(r, *run);
}

// ---- TransactGetItems ----------------------------------------------------------------------

Result<std::string> TransactGetItemsOp(const TransactServices& s, const RequestContext& ctx,
                                       const rapidjson::Value& body) {
  FDYNO_ASSIGN_OR_RETURN(TransactGetRequest r, DecodeTransactGetItems(body));
  const size_t n = r.actions.size();
  struct Read {
    std::vector<std::string> tables;
    std::vector<uint32_t> table_of;
    std::vector<std::optional<Item>> items;
    std::vector<uint64_t> sizes;
  };
  auto body_fn = [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Read> {
    FDYNO_ASSIGN_OR_RETURN(Tables tables, ResolveTables(s, tx, r.actions));
    std::vector<Reason> reasons(n);
    bool cancel = false;
    for (size_t i = 0; i < n; ++i) {
      Status st = ValidateKey(tables.infos[tables.of_action[i]]->key_schema, r.actions[i].key);
      if (!st.ok()) {
        if (!IsSchemaMismatch(st.error())) return st.error();
        reasons[i].code = "ValidationError";
        reasons[i].message = st.error().message;
        cancel = true;
        break;  // the later actions are never evaluated: None
      }
    }
    if (cancel) return Cancelled(reasons);
    std::vector<std::string> storage(n);
    std::set<std::string> seen;
    for (size_t i = 0; i < n; ++i) {
      storage[i] = StorageKey(*tables.infos[tables.of_action[i]], r.actions[i].key);
      if (!seen.insert(storage[i]).second) return Error::Validation(std::string(kDuplicateMessage));
    }
    Read out;
    out.tables = tables.names;
    out.table_of = tables.of_action;
    out.items.resize(n);
    out.sizes.resize(n);
    for (size_t i = 0; i < n; ++i) {
      FDYNO_ASSIGN_OR_RETURN(std::optional<store::StoredItem> stored,
                             store::ReadItem(tx, storage[i]));
      if (!stored) continue;
      FDYNO_ASSIGN_OR_RETURN(Item item, model::DecodeStoredItem(stored->image));
      // Hidden once its TTL has expired, until the sweeper deletes it.
      if (store::ItemExpired(*tables.infos[tables.of_action[i]], item, s.clock->WallMillis())) {
        continue;
      }
      out.sizes[i] = model::ItemSize(item);
      out.items[i] = std::move(item);
    }
    return out;
  };
  FDYNO_ASSIGN_OR_RETURN(Read read, kv::Run(*s.db, RunOptionsFor(ctx, s, true), body_fn));

  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  if (r.return_consumed_capacity != ReturnConsumedCapacity::kNone) {
    std::vector<double> units(read.tables.size(), 0);
    for (size_t i = 0; i < n; ++i) units[read.table_of[i]] += 2 * ReadUnits(read.sizes[i], true);
    w.Key("ConsumedCapacity");
    w.StartArray();
    for (size_t t = 0; t < read.tables.size(); ++t) {
      WriteCapacityEntry(w, r.return_consumed_capacity, read.tables[t], units[t],
                         "ReadCapacityUnits");
    }
    w.EndArray();
  }
  w.Key("Responses");
  w.StartArray();
  for (size_t i = 0; i < n; ++i) {
    w.StartObject();
    if (read.items[i] && r.actions[i].projection) {
      // A projection that selects nothing of the item leaves Item out, as DynamoDB does.
      model::Item projected = expr::Project(*read.items[i], *r.actions[i].projection);
      if (!projected.empty()) {
        w.Key("Item");
        model::WriteItem(w, projected);
      }
    } else if (read.items[i]) {
      w.Key("Item");
      model::WriteItem(w, *read.items[i]);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace

void RegisterTransactOperations(OperationRegistry& registry, const Services& services,
                                TransactOptions options) {
  auto s = std::make_shared<TransactServices>();
  s->db = services.db;
  s->catalog = services.catalog;
  s->clock = services.clock != nullptr ? services.clock : Clock::Real();
  s->receipts = std::make_unique<store::ReceiptStore>(store::layout::Receipts(), options.receipts);
  s->tokens = std::make_unique<store::TokenStore>(store::layout::Tokens(), options.tokens);
  s->sleep = std::move(options.sleep);
  s->max_attempts = options.max_attempts;
  s->item_collection_limit = services.item_collection_size_limit_bytes;
  Metrics& m = Metrics::Global();
  s->token_replays = &m.GetCounter("txn_token_replays");
  s->token_mismatches = &m.GetCounter("txn_token_mismatches");
  s->token_fail_closed = &m.GetCounter("txn_token_fail_closed");
  s->receipt_replays = &m.GetCounter("receipt_replays", {{"operation", std::string(kOperation)}});
  registry.Register("TransactWriteItems",
                    [s](const RequestContext& ctx, const rapidjson::Value& body) {
                      return TransactWriteItemsOp(*s, ctx, body);
                    });
  registry.Register("TransactGetItems",
                    [s](const RequestContext& ctx, const rapidjson::Value& body) {
                      return TransactGetItemsOp(*s, ctx, body);
                    });
}

}  // namespace fdyno::api
