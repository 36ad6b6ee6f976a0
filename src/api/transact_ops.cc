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

#include "api/cancellation.h"
#include "api/capacity.h"
#include "api/capacity_governor.h"
#include "api/item_keys.h"
#include "api/json_util.h"
#include "api/key_insights.h"
#include "api/partiql_ops.h"
#include "api/request_model.h"
#include "api/run_options.h"
#include "api/table_arn.h"
#include "api/transact_request.h"
#include "api/write_executor.h"
#include "base/bytes.h"
#include "base/metrics.h"
#include "expr/evaluate.h"
#include "model/canonical.h"
#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/json.h"
#include "partiql/bind.h"
#include "partiql/parser.h"
#include "partiql/plan.h"
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

struct TransactServices {
  kv::Database* db = nullptr;
  store::Catalog* catalog = nullptr;
  Clock* clock = nullptr;
  std::shared_ptr<const store::ReceiptStore> receipts;  // the registry's (Services)
  std::unique_ptr<store::TokenStore> tokens;
  kv::SleepFunction sleep;
  int max_attempts = 50;
  uint64_t item_collection_limit = store::kItemCollectionSizeLimitBytes;
  Counter* token_replays = nullptr;
  Counter* token_mismatches = nullptr;
  Counter* token_fail_closed = nullptr;
  Counter* receipt_replays = nullptr;
  CapacityGovernor* capacity = nullptr;  // --enforce-capacity (Services::capacity)
  KeyInsights* insights = nullptr;       // Contributor Insights (Services::insights)
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
  // An executed run's tables (run.result.tables' order), for --enforce-capacity's charge.
  std::vector<std::shared_ptr<const store::TableInfo>> infos;
};

// The units a write transaction consumed, per table: transactional writes cost twice a
// standard write per item; a replay through the token costs what reading the items does,
// transactionally (twice a strongly consistent read).
std::vector<double> TransactWriteUnits(const WriteRun& run) {
  const bool reads = run.source == Source::kTokenReplay;
  std::vector<double> units(run.result.tables.size(), 0);
  for (const ActionResult& a : run.result.actions) {
    uint64_t size = std::max(a.old_size, a.new_size);
    units[a.table] += reads ? 2 * ReadUnits(size, true) : 2 * WriteUnits(a.old_size, a.new_size);
  }
  return units;
}

// ExecuteTransaction's writes answer an empty Responses list besides (`responses`), as DynamoDB.
std::string RenderWrite(const TransactWriteRequest& r, const WriteRun& run,
                        bool responses = false) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  if (responses) {
    w.Key("Responses");
    w.StartArray();
    w.EndArray();
  }
  if (r.return_consumed_capacity != ReturnConsumedCapacity::kNone) {
    const bool reads = run.source == Source::kTokenReplay;
    const std::vector<double> units = TransactWriteUnits(run);
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

// Key errors that DynamoDB reports per action (a cancellation reason) rather than for the
// request: the key does not have the schema's attributes and types, or an index key attribute
// has the wrong type. Empty key values and oversized keys (of the table or an index) are
// request-level ValidationExceptions.
bool IsSchemaMismatch(const Error& e) {
  return e.cause == ErrorCause::kKeySchemaMismatch || e.cause == ErrorCause::kIndexKeyMismatch;
}

// ---- shared planning inside the transaction ------------------------------------------------

// Tables of the actions, each looked up once; table index per action; distinct names in order
// of first use.
struct Tables {
  std::vector<std::string> names;
  std::vector<std::shared_ptr<const store::TableInfo>> infos;  // per name
  std::vector<uint32_t> of_action;
};

template <typename Actions>
Result<Tables> ResolveTables(const TransactServices& s, kv::Transaction& tx,
                             store::TableScope scope, const Actions& actions) {
  Tables t;
  std::map<std::string, uint32_t> index;
  for (const auto& a : actions) {
    auto it = index.find(a.table_name);
    if (it == index.end()) {
      FDYNO_ASSIGN_OR_RETURN(auto info, FindActiveTable(*s.catalog, tx, scope, a.table_name));
      it = index.emplace(a.table_name, static_cast<uint32_t>(t.names.size())).first;
      t.names.push_back(a.table_name);
      t.infos.push_back(std::move(info));
    }
    t.of_action.push_back(it->second);
  }
  return t;
}

// --enforce-capacity: every action's table and partition must have capacity left, else the
// transaction is cancelled with a ThrottlingError reason for the first action that has none
// (nothing applied). `keys[i]`: action i's item or key, validated.
Status AdmitActions(const TransactServices& s, std::string_view region, const Tables& tables,
                    const std::vector<const Item*>& keys, Access access) {
  if (s.capacity == nullptr) return Status::Ok();
  for (size_t i = 0; i < keys.size(); ++i) {
    const store::TableInfo& table = *tables.infos[tables.of_action[i]];
    const std::string partition = PartitionOf(table, *keys[i]);
    Status admitted = s.capacity->Admit(
        region, table, access == Access::kRead ? Draw::Read(partition) : Draw::Write(partition));
    if (admitted.ok()) continue;
    CountThrottle(s.insights, table, "", *keys[i]);
    std::vector<CancellationReason> reasons(keys.size());
    reasons[i] = {"ThrottlingError", admitted.error().message, std::nullopt};
    return TransactionCanceled(reasons);
  }
  return Status::Ok();
}

// Debits `units` (per table, in `infos`' order) from the tables' capacity (--enforce-capacity).
void ChargeTables(const TransactServices& s,
                  const std::vector<std::shared_ptr<const store::TableInfo>>& infos,
                  const std::vector<double>& units, Access access) {
  if (s.capacity == nullptr) return;
  for (size_t i = 0; i < infos.size() && i < units.size(); ++i) {
    if (!infos[i]) continue;
    ConsumedCapacity c;
    c.table_name = infos[i]->name;
    c.table_units = units[i];
    c.is_write = access == Access::kWrite;
    s.capacity->Charge(*infos[i], c);
  }
}

// ---- TransactWriteItems --------------------------------------------------------------------

// The current sizes of the item collections of a replayed result's actions (the stored result
// does not keep them; DynamoDB's estimate is not exact either). A table that no longer exists,
// or whose key changed, reports 0.
Result<std::vector<uint64_t>> ReplayedCollectionSizes(const TransactServices& s,
                                                      kv::Transaction& tx, store::TableScope scope,
                                                      const TxnResult& result) {
  std::vector<uint64_t> sizes(result.actions.size(), 0);
  std::vector<std::optional<std::shared_ptr<const store::TableInfo>>> infos(result.tables.size());
  for (size_t i = 0; i < result.actions.size(); ++i) {
    const ActionResult& a = result.actions[i];
    if (!a.collection_key) continue;
    auto& info = infos[a.table];
    if (!info) {
      FDYNO_ASSIGN_OR_RETURN(info, s.catalog->Find(tx, scope, result.tables[a.table]));
    }
    if (!*info || !a.collection_key->contains((*info)->key_schema.hash.name)) continue;
    const store::ItemCollectionRef ref = store::CollectionOf(**info, *a.collection_key);
    FDYNO_ASSIGN_OR_RETURN(sizes[i],
                           store::ReadItemCollectionSize(tx, ref.table_id, ref.encoded_hash));
  }
  return sizes;
}

// How a tokened write transaction finds and writes its ClientRequestToken record: the
// operation that scopes the token, the request contract and the request's fingerprint.
struct TokenScope {
  std::string_view operation;
  uint32_t contract = store::kTokenContractTransactWriteItemsV1;
  store::Fingerprinter fingerprinter;
  std::string fingerprint_v1;  // fingerprinter(kFingerprintSha256CanonicalV1)
};

// The token scope of request `r` of `operation` under `contract`, whose fingerprint with an
// algorithm is fingerprint(r, algorithm). `r` must outlive the scope.
template <typename Request>
Result<TokenScope> ScopeOf(std::string_view operation, uint32_t contract, const Request& r,
                           Result<std::string> (*fingerprint)(const Request&, uint32_t)) {
  TokenScope scope;
  scope.operation = operation;
  scope.contract = contract;
  if (r.client_request_token) {
    FDYNO_ASSIGN_OR_RETURN(scope.fingerprint_v1,
                           fingerprint(r, store::kFingerprintSha256CanonicalV1));
    scope.fingerprinter = [&r, fingerprint](uint32_t algorithm) {
      return fingerprint(r, algorithm);
    };
  }
  return scope;
}

// The executor's actions of `r` (api/write_executor.h), pointing into it.
std::vector<WriteAction> ActionsOf(const TransactWriteRequest& r) {
  std::vector<WriteAction> actions;
  for (const TransactWriteAction& a : r.actions) {
    const WriteKind kind = a.kind == TransactActionKind::kPut      ? WriteKind::kPut
                           : a.kind == TransactActionKind::kUpdate ? WriteKind::kUpdate
                           : a.kind == TransactActionKind::kDelete ? WriteKind::kDelete
                                                                   : WriteKind::kConditionCheck;
    actions.push_back({.kind = kind,
                       .item = &a.item,
                       .condition = a.condition ? &*a.condition : nullptr,
                       .update = a.update ? &*a.update : nullptr,
                       .duplicate_on_false = a.duplicate_on_false,
                       .return_old_on_condition_failure = a.return_old_on_condition_failure});
  }
  return actions;
}

// Whether an error of an update's next image cancels the transaction with a ValidationError
// reason, as DynamoDB reports it, rather than failing the request: a validation error other than
// an empty or over-long index key value.
bool IsCancellingUpdateError(const Error& e) {
  return e.type == ErrorType::kValidation && e.cause != ErrorCause::kIndexKeyEmpty &&
         e.cause != ErrorCause::kIndexKeyTooLong;
}

// What the actions of one attempt found: the item of each, and what each does to it.
struct Evaluated {
  std::vector<store::CurrentItem> current;
  std::vector<Evaluation> evaluations;
};

// Steps 1 to 3 of the executor for every action. The request's error, or a cancellation: the
// first invalid action (the later ones never evaluated, their reasons None), else every false
// condition.
Result<Evaluated> EvaluateActions(kv::Transaction& tx, const Tables& tables,
                                  const std::vector<WriteAction>& actions) {
  const size_t n = actions.size();
  std::vector<CancellationReason> reasons(n);
  auto table = [&](size_t i) -> const store::TableInfo& {
    return *tables.infos[tables.of_action[i]];
  };
  for (size_t i = 0; i < n; ++i) {
    Status st = CheckAction(table(i), actions[i]);
    if (st.ok()) continue;
    if (!IsSchemaMismatch(st.error())) return st.error();
    reasons[i] = {"ValidationError", st.error().message, std::nullopt};
    return TransactionCanceled(reasons);
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < n; ++i) {
    if (!seen.insert(StorageKey(table(i), *actions[i].item)).second) {
      return Error::Validation(std::string(kDuplicateMessage));
    }
  }
  Evaluated out;
  for (size_t i = 0; i < n; ++i) {
    FDYNO_ASSIGN_OR_RETURN(store::CurrentItem c, ReadAction(tx, table(i), actions[i]));
    out.current.push_back(std::move(c));
  }
  bool cancel = false;
  for (size_t i = 0; i < n; ++i) {
    Result<Evaluation> e = Evaluate(table(i), actions[i], out.current[i]);
    if (!e.ok()) {
      if (!IsCancellingUpdateError(e.error())) return std::move(e).error();
      reasons[i] = {"ValidationError", e.error().message, std::nullopt};
      return TransactionCanceled(reasons);
    }
    if (e->failure) {
      const ConditionFailure& f = *e->failure;
      reasons[i] = {std::string(f.Code()), std::string(f.Message()), f.item};
      cancel = true;
    }
    out.evaluations.push_back(std::move(e).value());
  }
  if (cancel) return TransactionCanceled(reasons);
  return out;
}

// Executes the write transaction `r` in tx (its token or receipt checked by the caller): every
// action evaluated, every change staged through the one mutation path. An action that grows an
// item collection the transaction would take past the limit cancels it.
Result<WriteRun> ExecuteActions(const TransactServices& s, kv::Transaction& tx,
                                const RequestContext& ctx, const TransactWriteRequest& r,
                                const store::OperationId& op_id) {
  const size_t n = r.actions.size();
  const std::vector<WriteAction> actions = ActionsOf(r);
  FDYNO_ASSIGN_OR_RETURN(Tables tables, ResolveTables(s, tx, CallerScope(ctx), r.actions));
  FDYNO_ASSIGN_OR_RETURN(Evaluated ev, EvaluateActions(tx, tables, actions));
  std::vector<const Item*> keys;
  for (const WriteAction& a : actions) keys.push_back(a.item);
  FDYNO_RETURN_IF_ERROR(AdmitActions(s, ctx.region, tables, keys, Access::kWrite));
  WriteRun run;
  run.infos = tables.infos;
  run.result.tables = tables.names;
  run.result.nonce = op_id.nonce;
  run.result.actions.resize(n);
  store::Mutation mutation(
      {.now_ms = s.clock->WallMillis(), .item_collection_limit_bytes = s.item_collection_limit});
  std::vector<size_t> action_of_change;
  for (size_t i = 0; i < n; ++i) {
    const store::TableInfo& table = *tables.infos[tables.of_action[i]];
    std::optional<Item>& next = ev.evaluations[i].next;
    ActionResult& out = run.result.actions[i];
    out.table = tables.of_action[i];
    out.kind = r.actions[i].kind;
    out.old_size = ev.current[i].size;
    out.new_size = !ev.evaluations[i].stages ? out.old_size : next ? model::ItemSize(*next) : 0;
    if (!ev.evaluations[i].stages) continue;
    if (next || actions[i].kind == WriteKind::kDelete) {
      out.collection_key = CollectionKey(table, *actions[i].item);
    }
    mutation.Stage(table, std::move(ev.current[i]), std::move(next));
    action_of_change.push_back(i);
  }
  FDYNO_ASSIGN_OR_RETURN(store::Written written, mutation.Write(tx));
  if (!written.ok()) {
    std::vector<CancellationReason> reasons(n);
    for (size_t change : written.collection_limit_exceeded) {
      reasons[action_of_change[change]] = {"ItemCollectionSizeLimitExceeded",
                                           std::string(kCollectionSizeMessage), std::nullopt};
    }
    return TransactionCanceled(reasons);
  }
  for (size_t i = 0; i < n; ++i) {
    uint64_t collection_bytes = 0;
    if (run.result.actions[i].collection_key && r.return_item_collection_metrics) {
      const store::TableInfo& table = *tables.infos[tables.of_action[i]];
      FDYNO_ASSIGN_OR_RETURN(
          collection_bytes,
          mutation.CollectionSizeAfter(tx, store::CollectionOf(table, *actions[i].item)));
    }
    run.collection_bytes.push_back(collection_bytes);
  }
  return run;
}

// The result a token record or receipt kept, replayed: by this request's own earlier attempt
// (the nonce is this request's) or by a resend under the same token.
Result<WriteRun> ReplayTransaction(const TransactServices& s, kv::Transaction& tx,
                                   store::TableScope scope, const TransactWriteRequest& r,
                                   const store::OperationId& op_id,
                                   const store::ReceiptResult& stored) {
  FDYNO_ASSIGN_OR_RETURN(TxnResult replayed, DecodeTxnResult(stored.extra));
  Source source = replayed.nonce == op_id.nonce ? Source::kOwnReplay : Source::kTokenReplay;
  WriteRun run{std::move(replayed), source, {}, {}};
  if (r.return_item_collection_metrics) {
    FDYNO_ASSIGN_OR_RETURN(run.collection_bytes, ReplayedCollectionSizes(s, tx, scope, run.result));
  }
  return run;
}

// Runs the write transaction `r` (TransactWriteItems, or ExecuteTransaction's statements as
// actions) once: replayed from its token record or receipt, else executed with it, in one kv
// transaction. Counts the token metrics.
Result<WriteRun> RunWriteTransaction(const TransactServices& s, const RequestContext& ctx,
                                     const TransactWriteRequest& r, const TokenScope& scope) {
  const store::OperationId op_id = store::OperationId::New(*s.clock);
  const bool tokened = r.client_request_token.has_value();
  const ReplayRecord record =
      tokened
          ? ReplayRecord(*s.tokens, TokenUse{.key = {ctx.account_id, std::string(scope.operation),
                                                     *r.client_request_token},
                                             .contract = scope.contract,
                                             .fingerprinter = scope.fingerprinter,
                                             .fingerprint_v1 = scope.fingerprint_v1})
          : ReplayRecord(*s.receipts, op_id);
  Result<WriteRun> run =
      kv::Run(*s.db, RunOptionsFor(ctx, s, false),
              [&](kv::Transaction& tx, const kv::Attempt& attempt) -> Result<WriteRun> {
                return RunOnce<WriteRun>(
                    record, tx, attempt, s.clock->WallMillis(),
                    [&](const store::ReceiptResult& stored) {
                      return ReplayTransaction(s, tx, CallerScope(ctx), r, op_id, stored);
                    },
                    [&] { return ExecuteActions(s, tx, ctx, r, op_id); },
                    [](const WriteRun& executed) {
                      store::ReceiptResult receipt;
                      receipt.kind = store::ReceiptKind::kTransactWrite;
                      receipt.extra = EncodeTxnResult(executed.result);
                      return receipt;
                    });
              });
  if (!run.ok()) {
    const Error& e = run.error();
    if (e.type == ErrorType::kIdempotentParameterMismatch) s.token_mismatches->Add();
    if (tokened && e.cause == ErrorCause::kTokenRecordUnusable) s.token_fail_closed->Add();
    return std::move(run).error();
  }
  if (run->source == Source::kTokenReplay) s.token_replays->Add();
  if (run->source == Source::kOwnReplay) (tokened ? s.token_replays : s.receipt_replays)->Add();
  ChargeTables(s, run->infos, TransactWriteUnits(*run), Access::kWrite);
  for (const std::shared_ptr<const store::TableInfo>& info : run->infos) {
    if (!info) continue;
    for (const TransactWriteAction& a : r.actions) {
      if (a.table_name == info->name) CountAccess(s.insights, *info, "", a.item);
    }
  }
  return run;
}

Result<std::string> TransactWriteItemsOp(const TransactServices& s, const RequestContext& ctx,
                                         const rapidjson::Value& body) {
  FDYNO_ASSIGN_OR_RETURN(TransactWriteRequest r, DecodeTransactWriteItems(body));
  FDYNO_ASSIGN_OR_RETURN(
      TokenScope scope,
      ScopeOf(kOperation, store::kTokenContractTransactWriteItemsV1, r, &TransactWriteFingerprint));
  FDYNO_ASSIGN_OR_RETURN(WriteRun run, RunWriteTransaction(s, ctx, r, scope));
  return RenderWrite(r, run);
}

// The units a read transaction (TransactGetItems, ExecuteTransaction's reads) consumed, per
// table: two strongly consistent read units per 4 KB of each item.
std::vector<double> TransactReadUnits(size_t tables, const std::vector<uint32_t>& table_of,
                                      const std::vector<uint64_t>& sizes) {
  std::vector<double> units(tables, 0);
  for (size_t i = 0; i < sizes.size(); ++i) units[table_of[i]] += 2 * ReadUnits(sizes[i], true);
  return units;
}

// ConsumedCapacity of a read transaction; nothing for kNone.
void WriteTransactReadCapacity(Writer& w, ReturnConsumedCapacity mode,
                               const std::vector<std::string>& tables,
                               const std::vector<uint32_t>& table_of,
                               const std::vector<uint64_t>& sizes) {
  if (mode == ReturnConsumedCapacity::kNone) return;
  const std::vector<double> units = TransactReadUnits(tables.size(), table_of, sizes);
  w.Key("ConsumedCapacity");
  w.StartArray();
  for (size_t t = 0; t < tables.size(); ++t) {
    WriteCapacityEntry(w, mode, tables[t], units[t], "ReadCapacityUnits");
  }
  w.EndArray();
}

// What a read transaction (TransactGetItems, ExecuteTransaction's reads) found: the tables in
// order of first use, each read's table, item (absent: none) and size.
struct TransactRead {
  std::vector<std::string> tables;
  std::vector<uint32_t> table_of;
  std::vector<std::optional<Item>> items;
  std::vector<uint64_t> sizes;
  std::vector<std::shared_ptr<const store::TableInfo>> infos;  // for --enforce-capacity
};

// Debits what a read transaction consumed (--enforce-capacity).
void ChargeRead(const TransactServices& s, const TransactRead& read) {
  ChargeTables(s, read.infos, TransactReadUnits(read.tables.size(), read.table_of, read.sizes),
               Access::kRead);
}

// ---- TransactGetItems ----------------------------------------------------------------------

Result<std::string> TransactGetItemsOp(const TransactServices& s, const RequestContext& ctx,
                                       const rapidjson::Value& body) {
  FDYNO_ASSIGN_OR_RETURN(TransactGetRequest r, DecodeTransactGetItems(body));
  const size_t n = r.actions.size();
  auto body_fn = [&](kv::Transaction& tx, const kv::Attempt&) -> Result<TransactRead> {
    FDYNO_ASSIGN_OR_RETURN(Tables tables, ResolveTables(s, tx, CallerScope(ctx), r.actions));
    std::vector<CancellationReason> reasons(n);
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
    if (cancel) return TransactionCanceled(reasons);
    std::vector<std::string> storage(n);
    std::set<std::string> seen;
    for (size_t i = 0; i < n; ++i) {
      storage[i] = StorageKey(*tables.infos[tables.of_action[i]], r.actions[i].key);
      if (!seen.insert(storage[i]).second) return Error::Validation(std::string(kDuplicateMessage));
    }
    std::vector<const Item*> keys;
    for (const TransactGetAction& a : r.actions) keys.push_back(&a.key);
    FDYNO_RETURN_IF_ERROR(AdmitActions(s, ctx.region, tables, keys, Access::kRead));
    TransactRead out;
    out.infos = tables.infos;
    out.tables = tables.names;
    out.table_of = tables.of_action;
    out.items.resize(n);
    out.sizes.resize(n);
    uint64_t total = 0;  // bytes of the items read
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
      total += out.sizes[i];
    }
    // DynamoDB rejects the whole request when the items it reads exceed 4 MB together.
    if (total > kMaxTransactPayloadBytes) {
      return Error::Validation(std::string(kTransactGetTooLargeMessage));
    }
    return out;
  };
  FDYNO_ASSIGN_OR_RETURN(TransactRead read, kv::Run(*s.db, RunOptionsFor(ctx, s, true), body_fn));
  ChargeRead(s, read);
  for (size_t i = 0; i < n; ++i) {
    if (read.items[i]) CountAccess(s.insights, *read.infos[read.table_of[i]], "", r.actions[i].key);
  }

  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  WriteTransactReadCapacity(w, r.return_consumed_capacity, read.tables, read.table_of, read.sizes);
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

// ---- ExecuteTransaction --------------------------------------------------------------------

constexpr std::string_view kExecuteTransaction = "ExecuteTransaction";

using TransactStatement = StatementMember;

struct ExecuteTransactionRequest {
  std::vector<TransactStatement> statements;
  std::optional<std::string> client_request_token;
  ReturnConsumedCapacity return_consumed_capacity = ReturnConsumedCapacity::kNone;
};

Result<ExecuteTransactionRequest> DecodeExecuteTransaction(const rapidjson::Value& body) {
  FDYNO_RETURN_IF_ERROR(RequireObjectBody(body));
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* statements, GetList(body, "TransactStatements"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> token,
                         GetString(body, "ClientRequestToken"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> rcc,
                         GetString(body, "ReturnConsumedCapacity"));
  ExecuteTransactionRequest r;
  ConstraintErrors errors;
  FDYNO_RETURN_IF_ERROR(DecodeStatementList(statements, "transactStatements", kMaxTransactActions,
                                            errors, r.statements));
  if (token) {
    errors.MinLength("clientRequestToken", *token, 1);
    errors.MaxLength("clientRequestToken", *token, kMaxClientRequestTokenLength);
    r.client_request_token = std::string(*token);
  }
  if (rcc) errors.Enum("returnConsumedCapacity", *rcc, request::kReturnConsumedCapacity);
  FDYNO_RETURN_IF_ERROR(errors.ToStatus());
  FDYNO_ASSIGN_OR_RETURN(r.return_consumed_capacity, ParseReturnConsumedCapacity(rcc));
  return r;
}

// The fingerprint of an ExecuteTransaction request without its token (contract
// kTokenContractExecuteTransactionV1): SHA-256 of the canonical V1 serialization of
// ReturnConsumedCapacity and every statement's text, parameters and
// ReturnValuesOnConditionCheckFailure, in order. Frozen: never change what algorithm 1 produces.
Result<std::string> ExecuteTransactionFingerprint(const ExecuteTransactionRequest& r,
                                                  uint32_t algorithm) {
  if (algorithm != store::kFingerprintSha256CanonicalV1) {
    return Error::Internal(
        "The idempotency record of this ClientRequestToken names fingerprint algorithm " +
        std::to_string(algorithm) +
        ", which this server does not retain; the request was not executed");
  }
  std::string c;
  model::AppendCanonicalStringV1(kExecuteTransaction, &c);
  model::AppendCanonicalIntV1(store::kTokenContractExecuteTransactionV1, &c);
  model::AppendCanonicalStringV1("ReturnConsumedCapacity", &c);
  model::AppendCanonicalStringV1(
      r.return_consumed_capacity == ReturnConsumedCapacity::kTotal     ? "TOTAL"
      : r.return_consumed_capacity == ReturnConsumedCapacity::kIndexes ? "INDEXES"
                                                                       : "NONE",
      &c);
  model::AppendCanonicalStringV1("TransactStatements", &c);
  model::AppendCanonicalIntV1(static_cast<int64_t>(r.statements.size()), &c);
  for (const TransactStatement& st : r.statements) {
    model::AppendCanonicalStringV1("Statement", &c);
    model::AppendCanonicalStringV1(st.statement, &c);
    model::AppendCanonicalStringV1("Parameters", &c);
    if (st.has_parameters) {
      model::AppendCanonicalIntV1(static_cast<int64_t>(st.parameters.size()), &c);
      for (const model::AttributeValue& v : st.parameters) model::AppendCanonicalV1(v, &c);
    } else {
      model::AppendCanonicalNullV1(&c);
    }
    model::AppendCanonicalStringV1("ReturnValuesOnConditionCheckFailure", &c);
    model::AppendCanonicalStringV1(st.return_old_on_condition_failure ? "ALL_OLD" : "NONE", &c);
  }
  return store::Sha256(c);
}

// A planned write statement as the TransactWriteItems action it stands for: INSERT a Put
// (DuplicateItem when its condition fails), UPDATE an Update, DELETE a Delete, EXISTS a
// ConditionCheck.
TransactWriteAction ActionOf(partiql::WritePlan plan, const TransactStatement& st) {
  TransactWriteAction a;
  a.table_name = plan.table;
  switch (plan.kind) {
    case partiql::WritePlan::Kind::kInsert:
      a.kind = TransactActionKind::kPut;
      a.item = std::move(plan.item);
      break;
    case partiql::WritePlan::Kind::kUpdate:
      a.kind = TransactActionKind::kUpdate;
      a.item = std::move(plan.key);
      a.update = std::move(plan.update);
      break;
    case partiql::WritePlan::Kind::kDelete:
      a.kind = TransactActionKind::kDelete;
      a.item = std::move(plan.key);
      break;
    case partiql::WritePlan::Kind::kCheck:
      a.kind = TransactActionKind::kConditionCheck;
      a.item = std::move(plan.key);
      break;
  }
  a.condition = std::move(plan.condition);
  a.duplicate_on_false = plan.on_false == partiql::WritePlan::OnFalse::kDuplicateItem;
  a.return_old_on_condition_failure = st.return_old_on_condition_failure;
  return a;
}

// A statement's own validation error as a transaction reports it: "Validation failed in
// TransactStatements[i]: " and the statement's message.
template <typename T>
Result<T> InStatement(size_t i, Result<T> r) {
  if (r.ok() || r.error().type != ErrorType::kValidation) return r;
  Error e = std::move(r).error();
  e.message = "Validation failed in TransactStatements[" + std::to_string(i) + "]: " + e.message;
  return e;
}

// Plans every statement on its table (partiql::Use::kTransaction) in one read of the catalog.
Result<std::vector<partiql::Plan>> PlanStatements(
    const TransactServices& s, const RequestContext& ctx,
    const std::vector<partiql::BoundStatement>& bound) {
  return kv::Run(
      *s.db, RunOptionsFor(ctx, s, true),
      [&](kv::Transaction& tx, const kv::Attempt&) -> Result<std::vector<partiql::Plan>> {
        std::vector<partiql::Plan> plans;
        std::map<std::string, partiql::TableSchema> schemas;
        for (size_t i = 0; i < bound.size(); ++i) {
          const partiql::BoundStatement& b = bound[i];
          auto it = schemas.find(b.table());
          if (it == schemas.end()) {
            FDYNO_ASSIGN_OR_RETURN(auto table,
                                   FindActiveTable(*s.catalog, tx, CallerScope(ctx), b.table()));
            it = schemas.emplace(b.table(), SchemaOf(*table)).first;
          }
          partiql::PlanOptions options;
          options.use = partiql::Use::kTransaction;
          FDYNO_ASSIGN_OR_RETURN(partiql::Plan plan,
                                 InStatement(i, partiql::PlanStatement(b, it->second, options)));
          // The plan must not point into the schema, which goes away: reads in a transaction
          // are point reads of the table, never of an index.
          plan.read.index = nullptr;
          plans.push_back(std::move(plan));
        }
        return plans;
      });
}

// Read statements: point reads of up to 100 distinct items at one read version, as
// TransactGetItems, each through the statement's filter and projection.
Result<std::string> ReadTransaction(const TransactServices& s, const RequestContext& ctx,
                                    const ExecuteTransactionRequest& r,
                                    const std::vector<partiql::Plan>& plans) {
  const size_t n = plans.size();
  std::vector<TransactGetAction> targets(n);
  for (size_t i = 0; i < n; ++i) {
    targets[i].table_name = plans[i].read.table;
    targets[i].key = plans[i].read.key;
  }
  auto body_fn = [&](kv::Transaction& tx, const kv::Attempt&) -> Result<TransactRead> {
    FDYNO_ASSIGN_OR_RETURN(Tables tables, ResolveTables(s, tx, CallerScope(ctx), targets));
    std::set<std::string> seen;
    TransactRead out;
    out.infos = tables.infos;
    out.tables = tables.names;
    out.table_of = tables.of_action;
    out.items.resize(n);
    out.sizes.resize(n);
    std::vector<const Item*> keys;
    for (size_t i = 0; i < n; ++i) {
      const store::TableInfo& table = *tables.infos[tables.of_action[i]];
      FDYNO_RETURN_IF_ERROR(ValidateKey(table.key_schema, targets[i].key));
      keys.push_back(&targets[i].key);
    }
    FDYNO_RETURN_IF_ERROR(AdmitActions(s, ctx.region, tables, keys, Access::kRead));
    for (size_t i = 0; i < n; ++i) {
      const store::TableInfo& table = *tables.infos[tables.of_action[i]];
      std::string storage = StorageKey(table, targets[i].key);
      if (!seen.insert(storage).second) return Error::Validation(std::string(kDuplicateMessage));
      FDYNO_ASSIGN_OR_RETURN(std::optional<store::StoredItem> stored, store::ReadItem(tx, storage));
      if (!stored) continue;
      FDYNO_ASSIGN_OR_RETURN(Item item, model::DecodeStoredItem(stored->image));
      if (store::ItemExpired(table, item, s.clock->WallMillis())) continue;
      out.sizes[i] = model::ItemSize(item);
      const partiql::ReadPlan& plan = plans[i].read;
      if (plan.filter && !expr::EvaluateCondition(*plan.filter, item)) continue;
      out.items[i] = partiql::ProjectOutput(item, plan);
    }
    return out;
  };
  FDYNO_ASSIGN_OR_RETURN(TransactRead read, kv::Run(*s.db, RunOptionsFor(ctx, s, true), body_fn));
  ChargeRead(s, read);
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("Responses");
  w.StartArray();
  for (size_t i = 0; i < n; ++i) {
    w.StartObject();
    if (read.items[i]) {
      w.Key("Item");
      model::WriteItem(w, *read.items[i]);
    }
    w.EndObject();
  }
  w.EndArray();
  WriteTransactReadCapacity(w, r.return_consumed_capacity, read.tables, read.table_of, read.sizes);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

// Every statement is parsed, bound and planned before anything runs (an error is the
// request's); then all reads run as a read transaction, all writes (with EXISTS checks) as
// TransactWriteItems runs its actions, with ClientRequestToken scoped to ExecuteTransaction.
Result<std::string> ExecuteTransactionOp(const TransactServices& s, const RequestContext& ctx,
                                         const rapidjson::Value& body) {
  FDYNO_ASSIGN_OR_RETURN(ExecuteTransactionRequest r, DecodeExecuteTransaction(body));
  std::vector<partiql::BoundStatement> bound;
  bool reads = false, writes = false;
  for (size_t i = 0; i < r.statements.size(); ++i) {
    const TransactStatement& st = r.statements[i];
    FDYNO_ASSIGN_OR_RETURN(partiql::ast::Statement tree,
                           InStatement(i, partiql::Parse(st.statement)));
    FDYNO_ASSIGN_OR_RETURN(partiql::BoundStatement b,
                           InStatement(i, partiql::Bind(tree, st.parameters)));
    (b.is_read() ? reads : writes) = true;
    bound.push_back(std::move(b));
  }
  if (reads && writes) {
    return Error::Validation("Transaction must contain either all reads or all writes");
  }
  FDYNO_ASSIGN_OR_RETURN(std::vector<partiql::Plan> plans, PlanStatements(s, ctx, bound));
  if (reads) return ReadTransaction(s, ctx, r, plans);

  TransactWriteRequest w;
  w.return_consumed_capacity = r.return_consumed_capacity;
  w.client_request_token = r.client_request_token;
  for (size_t i = 0; i < plans.size(); ++i) {
    w.actions.push_back(ActionOf(std::move(plans[i].write), r.statements[i]));
  }
  FDYNO_ASSIGN_OR_RETURN(TokenScope scope,
                         ScopeOf(kExecuteTransaction, store::kTokenContractExecuteTransactionV1, r,
                                 &ExecuteTransactionFingerprint));
  FDYNO_ASSIGN_OR_RETURN(WriteRun run, RunWriteTransaction(s, ctx, w, scope));
  return RenderWrite(w, run, /*responses=*/true);
}

}  // namespace

void RegisterTransactOperations(OperationRegistry& registry, const Services& services,
                                TransactOptions options) {
  auto s = std::make_shared<TransactServices>();
  s->db = services.db;
  s->catalog = services.catalog;
  s->clock = services.clock != nullptr ? services.clock : Clock::Real();
  s->receipts = services.receipts;
  s->tokens = std::make_unique<store::TokenStore>(store::layout::Tokens(), options.tokens);
  s->sleep = std::move(options.sleep);
  s->max_attempts = options.max_attempts;
  s->item_collection_limit = services.item_collection_size_limit_bytes;
  s->capacity = services.capacity;
  s->insights = services.insights;
  Metrics& m = Metrics::Global();
  s->token_replays = &m.GetCounter("txn_token_replays");
  s->token_mismatches = &m.GetCounter("txn_token_mismatches");
  s->token_fail_closed = &m.GetCounter("txn_token_fail_closed");
  s->receipt_replays = &m.GetCounter("receipt_replays", {{"operation", std::string(kOperation)}});
  registry.Register("TransactWriteItems", Bind(s, &TransactWriteItemsOp));
  registry.Register("ExecuteTransaction", Bind(s, &ExecuteTransactionOp));
  registry.Register("TransactGetItems", Bind(s, &TransactGetItemsOp));
}

}  // namespace fdyno::api
