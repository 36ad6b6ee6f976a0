#include "api/item_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "api/capacity.h"
#include "api/capacity_governor.h"
#include "api/item_keys.h"
#include "api/item_request.h"
#include "api/key_insights.h"
#include "api/partiql_ops.h"
#include "api/run_options.h"
#include "api/table_arn.h"
#include "api/write_executor.h"
#include "expr/evaluate.h"
#include "expr/legacy.h"
#include "expr/parser.h"
#include "expr/resolver.h"
#include "kv/run.h"
#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/json.h"
#include "model/key_codec.h"
#include "model/stored_json.h"
#include "store/indexes.h"
#include "store/item_collections.h"
#include "store/items.h"
#include "store/layout.h"
#include "store/mutation.h"
#include "store/ttl.h"

namespace fdyno::api {
namespace {

// What the handlers share. Lives as long as the registered handlers (shared_ptr).
struct ItemServices {
  kv::Database* db = nullptr;
  store::Catalog* catalog = nullptr;
  Clock* clock = nullptr;
  std::shared_ptr<const store::ReceiptStore> receipts;  // the registry's (Services)
  kv::SleepFunction sleep;
  uint64_t item_collection_limit = store::kItemCollectionSizeLimitBytes;
  CapacityGovernor* capacity = nullptr;  // --enforce-capacity (Services::capacity)
  KeyInsights* insights = nullptr;       // Contributor Insights (Services::insights)
};

using model::AttributeValue;
using model::Item;

// ---- expressions ---------------------------------------------------------------------------

// A request's expressions, resolved (from expression parameters or converted legacy ones).
struct Plan {
  std::optional<expr::Condition> condition;
  std::optional<expr::Update> update;
  std::optional<expr::Projection> projection;
};

Result<Plan> PlanExpressions(const ItemRequest& r) {
  Plan plan;
  // Parse every expression first: syntax errors come before resolution errors.
  std::optional<expr::parsed::Condition> condition;
  std::optional<expr::parsed::Update> update;
  std::optional<expr::parsed::Projection> projection;
  if (r.update_expression) {
    FDYNO_ASSIGN_OR_RETURN(update, expr::ParseUpdate(*r.update_expression));
  }
  if (r.condition_expression) {
    FDYNO_ASSIGN_OR_RETURN(
        condition, expr::ParseCondition(*r.condition_expression, expr::ExpressionKind::kCondition));
  }
  if (r.projection_expression) {
    FDYNO_ASSIGN_OR_RETURN(projection, expr::ParseProjection(*r.projection_expression));
  }
  FDYNO_ASSIGN_OR_RETURN(
      expr::ResolveContext ctx,
      expr::ResolveContext::ForRequest(
          r.has_expression_attribute_names ? &r.expression_attribute_names : nullptr,
          r.has_expression_attribute_values ? &r.expression_attribute_values : nullptr));
  if (update) {
    FDYNO_ASSIGN_OR_RETURN(plan.update, ctx.ResolveUpdate(*update));
  }
  if (condition) {
    FDYNO_ASSIGN_OR_RETURN(plan.condition,
                           ctx.ResolveCondition(*condition, expr::ExpressionKind::kCondition));
  }
  if (projection) {
    FDYNO_ASSIGN_OR_RETURN(plan.projection, ctx.ResolveProjection(*projection));
  }
  if (update || condition || projection) FDYNO_RETURN_IF_ERROR(ctx.CheckUnused());

  // Legacy parameters (never mixed with expressions: DecodeItemRequest checked that).
  if (r.has_expected && !r.expected.empty()) {
    auto op = r.conditional_operator == "OR" ? expr::legacy::ConditionalOperator::kOr
                                             : expr::legacy::ConditionalOperator::kAnd;
    FDYNO_ASSIGN_OR_RETURN(plan.condition, expr::legacy::ConvertExpected(r.expected, op));
  }
  if (r.has_attribute_updates && !r.attribute_updates.empty()) {
    FDYNO_ASSIGN_OR_RETURN(plan.update, expr::legacy::ConvertAttributeUpdates(r.attribute_updates));
  }
  if (r.has_attributes_to_get) {
    FDYNO_ASSIGN_OR_RETURN(plan.projection,
                           expr::legacy::ConvertAttributesToGet(r.attributes_to_get));
  }
  return plan;
}

// ---- rendering -----------------------------------------------------------------------------

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// The result of one write, as stored in its receipt and rendered in the response.
struct WriteOutcome {
  std::optional<Item> attributes;
  uint64_t old_size = 0;
  uint64_t new_size = 0;
  // Tables with local secondary indexes: the item collection (partition key) written.
  std::optional<Item> item_collection_key;
  uint64_t item_collection_bytes = 0;  // its size after the write
  // The write units of the secondary index entries written (not kept in receipts: a replayed
  // write reports the table's units only).
  ConsumedCapacity index_units;
  // The table written (set when --enforce-capacity charges it).
  std::shared_ptr<const store::TableInfo> table;
};

store::ReceiptResult ToReceipt(ItemOp op, const WriteOutcome& o) {
  store::ReceiptResult r;
  r.kind = op == ItemOp::kPutItem      ? store::ReceiptKind::kPutItem
           : op == ItemOp::kUpdateItem ? store::ReceiptKind::kUpdateItem
                                       : store::ReceiptKind::kDeleteItem;
  if (o.attributes) r.attributes = model::EncodeStoredItem(*o.attributes);
  r.old_size_bytes = o.old_size;
  r.new_size_bytes = o.new_size;
  return r;
}

Result<WriteOutcome> FromReceipt(const store::ReceiptResult& result) {
  WriteOutcome o;
  if (result.attributes) {
    FDYNO_ASSIGN_OR_RETURN(Item attrs, model::DecodeStoredItem(*result.attributes));
    o.attributes = std::move(attrs);
  }
  o.old_size = result.old_size_bytes;
  o.new_size = result.new_size_bytes;
  return o;
}

// What a single-item write consumed.
ConsumedCapacity WriteConsumed(const std::string& table_name, const WriteOutcome& o) {
  ConsumedCapacity c;
  c.table_name = table_name;
  c.is_write = true;
  c.table_units = WriteUnits(o.old_size, o.new_size);
  c.AddIndexUnits(o.index_units);
  return c;
}

// Debits what a write consumed from its table's capacity (--enforce-capacity): `key` is the
// item or key it wrote.
void ChargeWrite(const ItemServices& s, const WriteOutcome& o, const Item& key) {
  if (!o.table) return;
  CountAccess(s.insights, *o.table, "", key);
  if (s.capacity == nullptr) return;
  s.capacity->Charge(*o.table, WriteConsumed(o.table->name, o), PartitionOf(*o.table, key));
}

std::string RenderWrite(const ItemRequest& r, const WriteOutcome& o) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  if (o.attributes && !o.attributes->empty()) {
    w.Key("Attributes");
    model::WriteItem(w, *o.attributes);
  }
  if (r.return_item_collection_metrics && o.item_collection_key) {
    w.Key("ItemCollectionMetrics");
    WriteItemCollectionMetrics(w, *o.item_collection_key, o.item_collection_bytes);
  }
  WriteConsumedCapacity(w, r.return_consumed_capacity, WriteConsumed(r.table_name, o));
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

// ---- the operations ------------------------------------------------------------------------

Result<std::shared_ptr<const store::TableInfo>> FindTable(const ItemServices& s,
                                                          kv::Transaction& tx,
                                                          store::TableScope scope,
                                                          const std::string& name) {
  return FindActiveTable(*s.catalog, tx, scope, name);
}

Result<std::string> GetItemOp(const ItemServices& s, const RequestContext& ctx,
                              const rapidjson::Value& body) {
  FDYNO_ASSIGN_OR_RETURN(ItemRequest r, DecodeItemRequest(ItemOp::kGetItem, body));
  FDYNO_ASSIGN_OR_RETURN(Plan plan, PlanExpressions(r));
  std::shared_ptr<const store::TableInfo> read_table;  // for --enforce-capacity's charge
  std::shared_ptr<const store::TableInfo> found;       // for Contributor Insights
  FDYNO_ASSIGN_OR_RETURN(
      std::optional<store::StoredItem> stored,
      kv::Run(
          *s.db, RunOptionsFor(ctx, s, true),
          [&](kv::Transaction& tx, const kv::Attempt&) -> Result<std::optional<store::StoredItem>> {
            FDYNO_ASSIGN_OR_RETURN(auto table, FindTable(s, tx, CallerScope(ctx), r.table_name));
            FDYNO_RETURN_IF_ERROR(ValidateKey(table->key_schema, r.item));
            if (s.capacity != nullptr) {
              FDYNO_RETURN_IF_ERROR(CountedAdmission(
                  s.capacity->Admit(ctx.region, *table, Draw::Read(PartitionOf(*table, r.item))),
                  s.insights, *table, "", r.item));
              read_table = table;
            }
            found = table;
            FDYNO_ASSIGN_OR_RETURN(std::optional<store::StoredItem> stored,
                                   store::ReadItem(tx, StorageKey(*table, r.item)));
            // An item whose TTL has expired is hidden until the sweeper deletes it.
            if (stored) {
              FDYNO_ASSIGN_OR_RETURN(bool expired, store::StoredItemExpired(*table, stored->image,
                                                                            s.clock->WallMillis()));
              if (expired) stored.reset();
            }
            return stored;
          }));
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  uint64_t size = 0;
  if (stored) {
    w.Key("Item");
    if (plan.projection) {
      FDYNO_ASSIGN_OR_RETURN(Item item, model::DecodeStoredItem(stored->image));
      size = model::ItemSize(item);
      model::WriteItem(w, expr::Project(item, *plan.projection));
    } else {
      // Straight from the stored bytes, without building the Item.
      rapidjson::StringBuffer item;
      FDYNO_ASSIGN_OR_RETURN(size, model::WriteStoredItemJson(stored->image, item));
      w.RawValue(item.GetString(), item.GetSize(), rapidjson::kObjectType);
    }
  }
  ConsumedCapacity c;
  c.table_name = r.table_name;
  c.table_units = ReadUnits(size, r.consistent_read);
  if (read_table) s.capacity->Charge(*read_table, c, PartitionOf(*read_table, r.item));
  if (stored) CountAccess(s.insights, *found, "", r.item);
  WriteConsumedCapacity(w, r.return_consumed_capacity, c);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

// One write on one item of a table, resolved: what PutItem, UpdateItem, DeleteItem and a
// PartiQL INSERT, UPDATE or DELETE all come to: the executor's action (api/write_executor.h)
// and what the single-item operations answer with.
struct WriteSpec {
  ItemOp op = ItemOp::kPutItem;
  WriteAction action;              // points into the request or the plan
  expr::Projection updated_paths;  // the paths the update writes (UPDATED_OLD/NEW)
  ReturnValues return_values = ReturnValues::kNone;
  bool return_item_collection_metrics = false;
  bool vector_write_bytes = false;  // ReturnConsumedCapacity INDEXES
};

WriteKind KindOf(ItemOp op) {
  return op == ItemOp::kPutItem      ? WriteKind::kPut
         : op == ItemOp::kUpdateItem ? WriteKind::kUpdate
                                     : WriteKind::kDelete;
}

void SetUpdate(WriteSpec& spec, const expr::Update& update) {
  spec.action.update = &update;
  spec.updated_paths = expr::UpdatedPaths(update);
}

// A replayed write: its receipt's result, and its item collection as it is now (the receipt does
// not keep the size).
Result<WriteOutcome> Replayed(kv::Transaction& tx, const store::TableInfo& table,
                              const WriteSpec& w, const store::ReceiptResult& stored) {
  FDYNO_ASSIGN_OR_RETURN(WriteOutcome replayed, FromReceipt(stored));
  replayed.item_collection_key = CollectionKey(table, *w.action.item);
  if (replayed.item_collection_key) {
    FDYNO_ASSIGN_OR_RETURN(replayed.item_collection_bytes,
                           CollectionSizeNow(tx, table, *w.action.item));
  }
  return replayed;
}

// The attributes ReturnValues asks for, of the item before (`old`) or after (`written`).
std::optional<Item> ReturnedAttributes(const WriteSpec& w, const Item* old, const Item* written) {
  switch (w.return_values) {
    case ReturnValues::kNone:
      break;
    case ReturnValues::kAllOld:
      if (old) return *old;
      break;
    case ReturnValues::kAllNew:
      if (written) return *written;
      break;
    case ReturnValues::kUpdatedOld:
      if (old) return expr::Project(*old, w.updated_paths);
      break;
    case ReturnValues::kUpdatedNew:
      if (written) return expr::Project(*written, w.updated_paths);
      break;
  }
  return std::nullopt;
}

// The write `w` executed on `table` inside tx (api/write_executor.h): its current item, its
// condition and next image, the change through the mutation path, and ReturnValues.
Result<WriteOutcome> ExecuteWrite(const ItemServices& s, kv::Transaction& tx,
                                  const store::TableInfo& table, const WriteSpec& w) {
  FDYNO_ASSIGN_OR_RETURN(store::CurrentItem current,
                         ReadAction(tx, table, w.action, w.return_values != ReturnValues::kNone));
  FDYNO_ASSIGN_OR_RETURN(Evaluation e, Evaluate(table, w.action, current));
  if (e.failure) return e.failure->ToError();
  WriteOutcome out;
  out.item_collection_key = CollectionKey(table, *w.action.item);
  out.old_size = current.size;
  if (e.next) out.new_size = model::ItemSize(*e.next);
  store::Mutation mutation(
      {.now_ms = s.clock->WallMillis(), .item_collection_limit_bytes = s.item_collection_limit});
  mutation.Stage(table, std::move(current), std::move(e.next));
  FDYNO_ASSIGN_OR_RETURN(store::Written written, mutation.Write(tx));
  if (!written.ok()) return ItemCollectionSizeLimitExceeded();
  if (out.item_collection_key && w.return_item_collection_metrics) {
    FDYNO_ASSIGN_OR_RETURN(
        out.item_collection_bytes,
        mutation.CollectionSizeAfter(tx, store::CollectionOf(table, *w.action.item)));
  }
  const Item* old = mutation.current(0).item();
  const Item* written_item = mutation.next(0) ? &*mutation.next(0) : nullptr;
  AddIndexWriteUnits(table, old, written_item, out.index_units, w.vector_write_bytes);
  out.attributes = ReturnedAttributes(w, old, written_item);
  return out;
}

// The write `w` on `table` inside tx, once: checked, then replayed from the receipt of an
// earlier attempt of the same operation `op_id` that committed, or executed with its receipt.
Result<WriteOutcome> WriteOnTable(const ItemServices& s, kv::Transaction& tx,
                                  const kv::Attempt& attempt, const store::TableInfo& table,
                                  const WriteSpec& w, const store::OperationId& op_id,
                                  std::string_view region) {
  FDYNO_RETURN_IF_ERROR(CheckAction(table, w.action));
  if (s.capacity != nullptr) {
    FDYNO_RETURN_IF_ERROR(CountedAdmission(
        s.capacity->Admit(region, table, Draw::Write(PartitionOf(table, *w.action.item))),
        s.insights, table, "", *w.action.item));
  }
  return RunOnce<WriteOutcome>(
      ReplayRecord(*s.receipts, op_id), tx, attempt, s.clock->WallMillis(),
      [&](const store::ReceiptResult& stored) { return Replayed(tx, table, w, stored); },
      [&] { return ExecuteWrite(s, tx, table, w); },
      [&](const WriteOutcome& out) { return ToReceipt(w.op, out); });
}

struct WriteJob {
  std::string account;  // the caller's
  std::string region;   // the request's
  ItemRequest r;
  Plan plan;
  WriteSpec spec;  // points into r and plan
  // One id for every attempt of this request: the receipt written by an attempt whose commit
  // outcome is unknown is found by the next one.
  store::OperationId op_id;

  Result<WriteOutcome> Attempt(const ItemServices& s, kv::Transaction& tx,
                               const kv::Attempt& attempt) const {
    FDYNO_ASSIGN_OR_RETURN(auto table, FindTable(s, tx, {account, region}, r.table_name));
    FDYNO_ASSIGN_OR_RETURN(WriteOutcome out,
                           WriteOnTable(s, tx, attempt, *table, spec, op_id, region));
    out.table = std::move(table);
    return out;
  }

  // The answer to a write that ran: its units charged (--enforce-capacity), then rendered.
  std::string Answer(const ItemServices& s, const WriteOutcome& out) const {
    ChargeWrite(s, out, r.item);
    return RenderWrite(r, out);
  }
};

Result<std::shared_ptr<const WriteJob>> PrepareWrite(ItemOp op, const ItemServices& s,
                                                     const RequestContext& ctx,
                                                     const rapidjson::Value& body) {
  auto job = std::make_shared<WriteJob>();
  job->account = ctx.account_id;
  job->region = ctx.region;
  FDYNO_ASSIGN_OR_RETURN(job->r, DecodeItemRequest(op, body));
  if (op == ItemOp::kPutItem) FDYNO_RETURN_IF_ERROR(model::CheckItemSize(job->r.item));
  Result<Plan> plan = PlanExpressions(job->r);
  if (!plan.ok()) return Error::InEnvelope(std::move(plan).error());
  job->plan = std::move(plan).value();
  WriteSpec& spec = job->spec;
  spec.op = op;
  spec.action.kind = KindOf(op);
  spec.action.item = &job->r.item;
  if (job->plan.condition) spec.action.condition = &*job->plan.condition;
  if (job->plan.update) SetUpdate(spec, *job->plan.update);
  spec.action.return_old_on_condition_failure = job->r.return_old_on_condition_failure;
  spec.return_values = job->r.return_values;
  spec.return_item_collection_metrics = job->r.return_item_collection_metrics;
  spec.vector_write_bytes = job->r.return_consumed_capacity == ReturnConsumedCapacity::kIndexes;
  job->op_id = store::OperationId::New(*s.clock);
  return std::shared_ptr<const WriteJob>(std::move(job));
}

Result<std::string> WriteItemOp(ItemOp op, const ItemServices& s, const RequestContext& ctx,
                                const rapidjson::Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const WriteJob> job, PrepareWrite(op, s, ctx, body));
  FDYNO_ASSIGN_OR_RETURN(
      WriteOutcome outcome,
      kv::Run(*s.db, RunOptionsFor(ctx, s, false),
              [&](kv::Transaction& tx, const kv::Attempt& a) { return job->Attempt(s, tx, a); }));
  return job->Answer(s, outcome);
}

// The same write, answered through `respond` once its commit is done, without waiting for it
// on the calling thread (kv::RunAsync). Retries run on ctx.blocking.
void WriteItemAsync(ItemOp op, std::shared_ptr<const ItemServices> s, const RequestContext& ctx,
                    const rapidjson::Value& body, Respond respond) {
  Result<std::shared_ptr<const WriteJob>> prepared = PrepareWrite(op, *s, ctx, body);
  if (!prepared.ok()) return respond(std::move(prepared).error());
  std::shared_ptr<const WriteJob> job = std::move(prepared).value();
  kv::Blocking blocking = ctx.blocking;
  if (!blocking) {
    // Never the engine's commit thread, where a retry's Commit() would wait for itself.
    blocking = [](std::function<void()> task) { std::thread(std::move(task)).detach(); };
  }
  kv::RunAsync(
      *s->db, RunOptionsFor(ctx, *s, false),
      [s, job](kv::Transaction& tx, const kv::Attempt& a) { return job->Attempt(*s, tx, a); },
      [s, job, respond = std::move(respond)](Result<WriteOutcome> outcome) {
        if (!outcome.ok()) return respond(std::move(outcome).error());
        respond(job->Answer(*s, *outcome));
      },
      blocking,
      // What follows the commit (rendering up to 400 KB of ReturnValues among it) never runs on
      // the engine's commit thread: on the caller's thread, else on a blocking one.
      ctx.resume ? ctx.resume : blocking);
}

// ---- PartiQL writes --------------------------------------------------------------------------

ReturnValues ReturnValuesOf(partiql::Returning returning) {
  switch (returning) {
    case partiql::Returning::kNone:
      return ReturnValues::kNone;
    case partiql::Returning::kAllOld:
      return ReturnValues::kAllOld;
    case partiql::Returning::kAllNew:
      return ReturnValues::kAllNew;
    case partiql::Returning::kModifiedOld:
      return ReturnValues::kUpdatedOld;
    case partiql::Returning::kModifiedNew:
      return ReturnValues::kUpdatedNew;
  }
  return ReturnValues::kNone;
}

// The item operation a planned PartiQL write is: INSERT a PutItem whose condition failing is
// DuplicateItemException, UPDATE an UpdateItem, DELETE a DeleteItem. Points into `plan`.
WriteSpec SpecOf(const partiql::WritePlan& plan, const PartiqlWriteRequest& request) {
  WriteSpec spec;
  switch (plan.kind) {
    case partiql::WritePlan::Kind::kInsert:
      spec.op = ItemOp::kPutItem;
      spec.action.item = &plan.item;
      break;
    case partiql::WritePlan::Kind::kUpdate:
      spec.op = ItemOp::kUpdateItem;
      spec.action.item = &plan.key;
      SetUpdate(spec, plan.update);
      break;
    case partiql::WritePlan::Kind::kDelete:
    case partiql::WritePlan::Kind::kCheck:
      spec.op = ItemOp::kDeleteItem;
      spec.action.item = &plan.key;
      break;
  }
  spec.action.kind = KindOf(spec.op);
  if (plan.condition) spec.action.condition = &*plan.condition;
  spec.action.duplicate_on_false = plan.on_false == partiql::WritePlan::OnFalse::kDuplicateItem;
  spec.action.return_old_on_condition_failure = request.return_old_on_condition_failure;
  spec.return_values = ReturnValuesOf(plan.returning);
  return spec;
}

// One PartiQL write statement as its item operation, in one kv transaction: the statement is
// planned on the table as the transaction finds it, then written by WriteOnTable.
Result<PartiqlWriteOutcome> PartiqlWrite(const ItemServices& s, const RequestContext& ctx,
                                         const PartiqlWriteRequest& request) {
  const store::OperationId op_id = store::OperationId::New(*s.clock);
  const std::string& table_name = request.statement->table();
  std::optional<Item> written_key;  // for --enforce-capacity's charge and Contributor Insights
  FDYNO_ASSIGN_OR_RETURN(
      WriteOutcome out,
      kv::Run(*s.db, RunOptionsFor(ctx, s, false),
              [&](kv::Transaction& tx, const kv::Attempt& attempt) -> Result<WriteOutcome> {
                FDYNO_ASSIGN_OR_RETURN(auto table, FindTable(s, tx, CallerScope(ctx), table_name));
                FDYNO_ASSIGN_OR_RETURN(partiql::WritePlan plan, request.plan(*table));
                if (plan.kind == partiql::WritePlan::Kind::kCheck) {
                  return Error::Internal("A condition check is not a statement of its own");
                }
                const WriteSpec spec = SpecOf(plan, request);
                FDYNO_ASSIGN_OR_RETURN(WriteOutcome written, WriteOnTable(s, tx, attempt, *table,
                                                                          spec, op_id, ctx.region));
                if (s.capacity != nullptr || table->CountsKeyAccesses()) {
                  written.table = table;
                  written_key = KeyOf(table->key_schema, *spec.action.item);
                }
                return written;
              }));
  if (written_key) ChargeWrite(s, out, *written_key);
  PartiqlWriteOutcome outcome;
  outcome.returned = std::move(out.attributes);
  // A statement's capacity counts its indexes.
  outcome.consumed = WriteConsumed(table_name, out);
  return outcome;
}

std::shared_ptr<ItemServices> MakeItemServices(Services& services, ItemOptions options) {
  auto s = std::make_shared<ItemServices>();
  s->db = services.db;
  s->catalog = services.catalog;
  s->clock = services.clock != nullptr ? services.clock : Clock::Real();
  s->receipts = services.receipts;
  s->sleep = std::move(options.sleep);
  s->item_collection_limit = services.item_collection_size_limit_bytes;
  s->capacity = services.capacity;
  s->insights = services.insights;
  return s;
}

}  // namespace

void RegisterItemOperations(OperationRegistry& registry, Services& services, ItemOptions options) {
  std::shared_ptr<const ItemServices> s = MakeItemServices(services, std::move(options));
  registry.Register("GetItem", Bind(s, &GetItemOp));
  for (ItemOp op : {ItemOp::kPutItem, ItemOp::kUpdateItem, ItemOp::kDeleteItem}) {
    registry.Register(std::string(ItemOpName(op)),
                      [s, op](const RequestContext& ctx, const rapidjson::Value& body) {
                        return WriteItemOp(op, *s, ctx, body);
                      });
    registry.RegisterAsync(ItemOpName(op), [s, op](const RequestContext& ctx,
                                                   const rapidjson::Value& body, Respond respond) {
      WriteItemAsync(op, s, ctx, body, std::move(respond));
    });
  }
}

PartiqlWriter MakePartiqlWriter(Services& services, ItemOptions options) {
  std::shared_ptr<const ItemServices> s = MakeItemServices(services, std::move(options));
  return [s](const RequestContext& ctx, const PartiqlWriteRequest& request) {
    return PartiqlWrite(*s, ctx, request);
  };
}

}  // namespace fdyno::api
