#include "api/batch_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/batch_receipt.h"
#include "api/batch_request.h"
#include "api/capacity.h"
#include "api/capacity_governor.h"
#include "api/item_keys.h"
#include "api/json_util.h"
#include "api/key_insights.h"
#include "api/run_options.h"
#include "api/table_arn.h"
#include "api/write_executor.h"
#include "expr/evaluate.h"
#include "expr/legacy.h"
#include "expr/parser.h"
#include "expr/resolver.h"
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

struct BatchServices {
  kv::Database* db = nullptr;
  store::Catalog* catalog = nullptr;
  Clock* clock = nullptr;
  BatchOptions options;
  std::shared_ptr<const store::ReceiptStore> receipts;  // the registry's (Services)
  uint64_t item_collection_limit = store::kItemCollectionSizeLimitBytes;
  CapacityGovernor* capacity = nullptr;  // --enforce-capacity (Services::capacity)
  KeyInsights* insights = nullptr;       // Contributor Insights (Services::insights)
};

// ---- BatchGetItem --------------------------------------------------------------------------

// What one BatchGetItem read found, per table of the request.
struct BatchGetRead {
  std::vector<std::vector<Item>> found;          // the items found (projected)
  std::vector<std::vector<size_t>> unprocessed;  // indexes of the keys left for the caller
  std::vector<std::vector<size_t>> read;         // indexes of the keys of the items found
  std::vector<std::vector<size_t>> refused;      // indexes of the keys throttled
  std::vector<double> units;
  // --enforce-capacity: the tables read, and the keys their capacity left unprocessed.
  std::vector<std::shared_ptr<const store::TableInfo>> infos;
  size_t throttled_keys = 0;
  std::optional<Error> throttled;  // the first throttling error
};

// --enforce-capacity: whether key `ki` of table `ti` may be read now (the units the request
// read of the table so far count); a key that may not is left unprocessed.
bool AdmitKey(const BatchServices& s, std::string_view region, const store::TableInfo& table,
              const Item& key, size_t ti, size_t ki, BatchGetRead& o) {
  if (s.capacity == nullptr) return true;
  const std::string partition = PartitionOf(table, key);
  Status admitted = s.capacity->Admit(region, table, Draw::Read(partition, {}, o.units[ti]));
  if (admitted.ok()) return true;
  ++o.throttled_keys;
  o.refused[ti].push_back(ki);
  if (!o.throttled) o.throttled = std::move(admitted).error();
  return false;
}

// Reads the keys of table `ti` of the request in tx into `o`, until the response holds
// s.options.get_response_bytes (`bytes` so far): the rest are unprocessed.
Status ReadBatchTable(const BatchServices& s, kv::Transaction& tx, const RequestContext& ctx,
                      const BatchGetTable& t, size_t ti, uint64_t& bytes, BatchGetRead& o) {
  FDYNO_ASSIGN_OR_RETURN(auto table, FindActiveTable(*s.catalog, tx, CallerScope(ctx), t.name));
  o.infos[ti] = table;
  for (const Item& key : t.keys) FDYNO_RETURN_IF_ERROR(ValidateKey(table->key_schema, key));
  for (size_t ki = 0; ki < t.keys.size(); ++ki) {
    if (bytes >= s.options.get_response_bytes ||
        !AdmitKey(s, ctx.region, *table, t.keys[ki], ti, ki, o)) {
      o.unprocessed[ti].push_back(ki);
      continue;
    }
    FDYNO_ASSIGN_OR_RETURN(std::optional<store::StoredItem> stored,
                           store::ReadItem(tx, StorageKey(*table, t.keys[ki])));
    uint64_t size = 0;
    std::optional<Item> found;
    if (stored) {
      FDYNO_ASSIGN_OR_RETURN(found, model::DecodeStoredItem(stored->image));
      // Hidden once its TTL has expired, until the sweeper deletes it.
      if (store::ItemExpired(*table, *found, s.clock->WallMillis())) found.reset();
    }
    if (found) {
      size = model::ItemSize(*found);
      if (bytes > 0 && bytes + size > s.options.get_response_bytes) {
        // Past the response limit: the caller asks for it again (not charged).
        o.unprocessed[ti].push_back(ki);
        continue;
      }
      bytes += size;
      o.read[ti].push_back(ki);
      o.found[ti].push_back(t.projection ? expr::Project(*found, *t.projection)
                                         : std::move(*found));
    }
    o.units[ti] += ReadUnits(size, t.consistent_read);
  }
  return Status::Ok();
}

// Contributor Insights: the keys read and throttled.
void CountBatchGet(const BatchServices& s, const BatchGetRequest& request, const BatchGetRead& o) {
  for (size_t ti = 0; ti < request.tables.size(); ++ti) {
    if (!o.infos[ti]) continue;
    const std::vector<Item>& keys = request.tables[ti].keys;
    for (size_t ki : o.read[ti]) CountAccess(s.insights, *o.infos[ti], "", keys[ki]);
    for (size_t ki : o.refused[ti]) CountThrottle(s.insights, *o.infos[ti], "", keys[ki]);
  }
}

std::string RenderBatchGet(const BatchGetRequest& request, const BatchGetRead& out) {
  const std::vector<BatchGetTable>& tables = request.tables;
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("Responses");
  w.StartObject();
  for (size_t ti = 0; ti < tables.size(); ++ti) {
    w.Key(tables[ti].name.c_str(), static_cast<rapidjson::SizeType>(tables[ti].name.size()));
    w.StartArray();
    for (const Item& item : out.found[ti]) model::WriteItem(w, item);
    w.EndArray();
  }
  w.EndObject();
  w.Key("UnprocessedKeys");
  w.StartObject();
  for (size_t ti = 0; ti < tables.size(); ++ti) {
    if (out.unprocessed[ti].empty()) continue;
    const BatchGetTable& t = tables[ti];
    w.Key(t.name.c_str(), static_cast<rapidjson::SizeType>(t.name.size()));
    w.StartObject();
    w.Key("Keys");
    w.StartArray();
    for (size_t ki : out.unprocessed[ti]) model::WriteItem(w, t.keys[ki]);
    w.EndArray();
    // The table's other request members, as sent.
    for (const auto& m : t.raw->GetObject()) {
      std::string_view name(m.name.GetString(), m.name.GetStringLength());
      if (name == "Keys" || m.value.IsNull()) continue;
      w.Key(m.name.GetString(), m.name.GetStringLength());
      m.value.Accept(w);
    }
    w.EndObject();
  }
  w.EndObject();
  if (request.mode != ReturnConsumedCapacity::kNone) {
    w.Key("ConsumedCapacity");
    w.StartArray();
    for (size_t ti = 0; ti < tables.size(); ++ti) {
      ConsumedCapacity c;
      c.table_name = tables[ti].name;
      c.table_units = out.units[ti];
      WriteConsumedCapacityObject(w, request.mode, c);
    }
    w.EndArray();
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

Result<std::string> BatchGetOp(const BatchServices& s, const RequestContext& ctx,
                               const rapidjson::Value& body) {
  FDYNO_ASSIGN_OR_RETURN(BatchGetRequest request, DecodeBatchGet(body));
  const size_t n = request.tables.size();
  FDYNO_ASSIGN_OR_RETURN(
      BatchGetRead out,
      kv::Run(*s.db, RunOptionsFor(ctx, s, true),
              [&](kv::Transaction& tx, const kv::Attempt&) -> Result<BatchGetRead> {
                BatchGetRead o;  // attempt-local
                o.found.resize(n);
                o.unprocessed.resize(n);
                o.read.resize(n);
                o.refused.resize(n);
                o.units.resize(n);
                o.infos.resize(n);
                uint64_t bytes = 0;
                for (size_t ti = 0; ti < n; ++ti) {
                  FDYNO_RETURN_IF_ERROR(
                      ReadBatchTable(s, tx, ctx, request.tables[ti], ti, bytes, o));
                }
                return o;
              }));
  CountBatchGet(s, request, out);
  if (out.throttled) {
    // DynamoDB answers the error only when no key at all could be read for want of capacity.
    size_t keys = 0;
    for (const BatchGetTable& t : request.tables) keys += t.keys.size();
    if (out.throttled_keys == keys) return *out.throttled;
  }
  if (s.capacity != nullptr) {
    for (size_t ti = 0; ti < n; ++ti) {
      ConsumedCapacity c;
      c.table_name = request.tables[ti].name;
      c.table_units = out.units[ti];
      s.capacity->Charge(*out.infos[ti], c);
    }
  }
  return RenderBatchGet(request, out);
}

// ---- BatchWriteItem ------------------------------------------------------------------------

struct WriteTable {
  std::string name;
  std::shared_ptr<const store::TableInfo> info;  // from the last ApplyWrites
  bool has_collections = false;                  // local secondary indexes: ItemCollectionMetrics
  bool vector_write_bytes = false;               // ReturnConsumedCapacity INDEXES
};

// What one group of writes did.
struct Applied {
  std::vector<double> units;  // write units per table
  // Per table: the write units of the secondary index entries written (not kept in receipts).
  std::vector<ConsumedCapacity> index_units;
  // Per write (in `writes` order): the size of its item collection after the group, for
  // tables with local secondary indexes (0 otherwise).
  std::vector<uint64_t> collection_bytes;
};

// Applies `writes` in tx: reads each old image, writes the item, its index entries and its
// item collection's size. ItemCollectionSizeLimitExceededException when the writes would grow
// a collection past the limit. With `validate_only`, checks the requests (and the collection
// limit) without writing.
Result<Applied> ApplyWrites(const BatchServices& s, kv::Transaction& tx, store::TableScope scope,
                            std::vector<WriteTable>& tables,
                            const std::vector<const BatchWrite*>& writes, bool validate_only) {
  Applied out;
  out.units.resize(tables.size());
  out.index_units.resize(tables.size());
  out.collection_bytes.resize(writes.size());
  std::vector<double>& units = out.units;
  std::vector<std::shared_ptr<const store::TableInfo>> infos(tables.size());
  for (size_t i = 0; i < tables.size(); ++i) {
    FDYNO_ASSIGN_OR_RETURN(infos[i], FindActiveTable(*s.catalog, tx, scope, tables[i].name));
    tables[i].info = infos[i];
    tables[i].has_collections = store::HasItemCollections(*infos[i]);
  }
  // Validation of every request before any write.
  std::vector<WriteAction> actions;
  std::vector<std::vector<std::string>> seen(tables.size());
  bool any_collections = false;
  for (const BatchWrite* w : writes) {
    const store::TableInfo& t = *infos[w->table];
    actions.push_back({.kind = w->is_put ? WriteKind::kPut : WriteKind::kDelete, .item = &w->item});
    FDYNO_RETURN_IF_ERROR(CheckAction(t, actions.back(), PutKeyWording::kBatch));
    std::string key = StorageKey(t, w->item);  // an item holds its key
    for (const std::string& k : seen[w->table]) {
      if (k == key) return Error::Validation("Provided list of item keys contains duplicates");
    }
    seen[w->table].push_back(std::move(key));
    any_collections = any_collections || store::HasItemCollections(t);
  }
  if (validate_only && !any_collections) return out;
  // Every write through the one mutation path. A validation run writes too: its transaction
  // never commits, and the item collection limit is checked the same way.
  store::Mutation mutation(
      {.now_ms = s.clock->WallMillis(), .item_collection_limit_bytes = s.item_collection_limit});
  for (size_t i = 0; i < writes.size(); ++i) {
    const store::TableInfo& t = *infos[writes[i]->table];
    FDYNO_ASSIGN_OR_RETURN(store::CurrentItem current, ReadAction(tx, t, actions[i]));
    FDYNO_ASSIGN_OR_RETURN(Evaluation e, Evaluate(t, actions[i], current));
    units[writes[i]->table] += WriteUnits(current.size, e.next ? model::ItemSize(*e.next) : 0);
    mutation.Stage(t, std::move(current), std::move(e.next));
  }
  FDYNO_ASSIGN_OR_RETURN(store::Written written, mutation.Write(tx));
  if (!written.ok()) return ItemCollectionSizeLimitExceeded();
  if (validate_only) return out;
  for (size_t i = 0; i < writes.size(); ++i) {
    const store::TableInfo& t = *infos[writes[i]->table];
    AddIndexWriteUnits(
        t, mutation.current(i).item(), mutation.next(i) ? &*mutation.next(i) : nullptr,
        out.index_units[writes[i]->table], tables[writes[i]->table].vector_write_bytes);
    if (!store::HasItemCollections(t)) continue;
    FDYNO_ASSIGN_OR_RETURN(
        out.collection_bytes[i],
        mutation.CollectionSizeAfter(tx, store::CollectionOf(t, writes[i]->item)));
  }
  return out;
}

// The current sizes of the item collections of `writes` (a replayed group: its receipt keeps
// only the units).
Result<std::vector<uint64_t>> CurrentCollectionSizes(const BatchServices& s, kv::Transaction& tx,
                                                     store::TableScope scope,
                                                     const std::vector<WriteTable>& tables,
                                                     const std::vector<const BatchWrite*>& writes) {
  std::vector<uint64_t> sizes(writes.size(), 0);
  std::vector<std::shared_ptr<const store::TableInfo>> infos(tables.size());
  for (size_t i = 0; i < writes.size(); ++i) {
    auto& info = infos[writes[i]->table];
    if (!info) {
      FDYNO_ASSIGN_OR_RETURN(info,
                             FindActiveTable(*s.catalog, tx, scope, tables[writes[i]->table].name));
    }
    if (!store::HasItemCollections(*info)) continue;
    FDYNO_ASSIGN_OR_RETURN(sizes[i], CollectionSizeNow(tx, *info, writes[i]->item));
  }
  return sizes;
}

// Commits `writes` in one receipt-protected transaction.
Result<Applied> CommitGroup(const BatchServices& s, const RequestContext& ctx,
                            std::vector<WriteTable>& tables,
                            const std::vector<const BatchWrite*>& writes) {
  const ReplayRecord record(*s.receipts, store::OperationId::New(*s.clock));
  auto replay = [&](kv::Transaction& tx, const store::ReceiptResult& stored) -> Result<Applied> {
    Applied replayed;
    FDYNO_ASSIGN_OR_RETURN(replayed.units, DecodeUnits(stored.extra, tables.size()));
    replayed.index_units.resize(tables.size());
    FDYNO_ASSIGN_OR_RETURN(replayed.collection_bytes,
                           CurrentCollectionSizes(s, tx, CallerScope(ctx), tables, writes));
    return replayed;
  };
  return kv::Run(*s.db, RunOptionsFor(ctx, s, false),
                 [&](kv::Transaction& tx, const kv::Attempt& attempt) -> Result<Applied> {
                   return RunOnce<Applied>(
                       record, tx, attempt, s.clock->WallMillis(),
                       [&](const store::ReceiptResult& stored) { return replay(tx, stored); },
                       [&] { return ApplyWrites(s, tx, CallerScope(ctx), tables, writes, false); },
                       [](const Applied& applied) {
                         store::ReceiptResult rr;
                         rr.kind = store::ReceiptKind::kBatchWrite;
                         rr.extra = EncodeUnits(applied.units);
                         return rr;
                       });
                 });
}

// Whether a group that failed goes back to the caller as UnprocessedItems: only when it
// certainly did not commit (a conflict or a too-old read at the retry limit, or the deadline
// passing before its commit) and the same writes sent again may succeed. A group whose commit
// may have been applied must never be reported as not applied, and a permanent error is the
// request's error: both end the request with that error (the groups before it stay applied,
// which a resend of the whole batch repeats harmlessly: puts and deletes set the final state).
bool CertainlyNotAppliedAndTransient(const Error& error) {
  if (kv::IsOutcomeUnknown(error)) return false;
  if (kv::IsTimedOutBeforeCommit(error)) return true;
  return error.is_kv() && kv::RetryableNotCommitted(error.kv_code);
}

// What a BatchWriteItem did, over all its groups.
struct BatchWritten {
  std::vector<WriteTable> tables;  // the request's, in its order
  std::vector<double> units;       // per table
  std::vector<ConsumedCapacity> index_units;
  std::vector<const BatchWrite*> unprocessed;
  // Item collections written (tables with local secondary indexes): the write and its
  // collection's size after its group.
  std::vector<std::pair<const BatchWrite*, uint64_t>> collections;

  // Adds what `group` did.
  void Add(const std::vector<const BatchWrite*>& group, const Applied& applied) {
    for (size_t i = 0; i < units.size(); ++i) {
      units[i] += applied.units[i];
      index_units[i].AddIndexUnits(applied.index_units[i]);
    }
    for (size_t i = 0; i < group.size(); ++i) {
      if (tables[group[i]->table].has_collections) {
        collections.emplace_back(group[i], applied.collection_bytes[i]);
      }
    }
  }
};

// The writes in groups each small enough for one transaction, by an estimate of their bytes
// with their index entries. REQUIRES: the tables' `info` (ApplyWrites ran).
std::vector<std::vector<const BatchWrite*>> Groups(const BatchServices& s,
                                                   const std::vector<WriteTable>& tables,
                                                   const std::vector<const BatchWrite*>& writes) {
  std::vector<std::vector<const BatchWrite*>> groups(1);
  uint64_t group_bytes = 0;
  for (const BatchWrite* p : writes) {
    const BatchWrite& w = *p;
    const store::TableInfo& t = *tables[w.table].info;
    uint64_t estimate = (model::ItemSize(w.item) + 1024) *
                        (1 + t.local_indexes.size() + t.global_indexes.size()) * 2;
    if (!groups.back().empty() && group_bytes + estimate > s.options.write_group_bytes) {
      groups.emplace_back();
      group_bytes = 0;
    }
    groups.back().push_back(p);
    group_bytes += estimate;
  }
  return groups;
}

// A batch too large for one transaction: every write validated in a transaction that never
// commits, then the groups committed one by one; a group certainly not applied is unprocessed.
Status CommitInGroups(const BatchServices& s, const RequestContext& ctx,
                      const std::vector<const BatchWrite*>& all, BatchWritten& out) {
  FDYNO_RETURN_IF_ERROR(kv::Run(
      *s.db, RunOptionsFor(ctx, s, true), [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
        FDYNO_RETURN_IF_ERROR(ApplyWrites(s, tx, CallerScope(ctx), out.tables, all, true));
        return Status::Ok();
      }));
  for (const auto& group : Groups(s, out.tables, all)) {
    Result<Applied> g = CommitGroup(s, ctx, out.tables, group);
    if (g.ok()) {
      out.Add(group, *g);
    } else if (CertainlyNotAppliedAndTransient(g.error())) {
      out.unprocessed.insert(out.unprocessed.end(), group.begin(), group.end());
    } else {
      return std::move(g).error();
    }
  }
  return Status::Ok();
}

std::string RenderBatchWrite(const BatchWriteRequest& request, const BatchWritten& out) {
  const ReturnConsumedCapacity mode = request.mode;
  const std::optional<std::string>& icm = request.item_collection_metrics;
  const std::vector<WriteTable>& tables = out.tables;
  const std::vector<const BatchWrite*>& unprocessed = out.unprocessed;
  const std::vector<std::pair<const BatchWrite*, uint64_t>>& collections = out.collections;
  const std::vector<double>& units = out.units;
  const std::vector<ConsumedCapacity>& index_units = out.index_units;
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("UnprocessedItems");
  w.StartObject();
  for (size_t ti = 0; ti < tables.size(); ++ti) {
    bool any = false;
    for (const BatchWrite* r : unprocessed) any = any || r->table == ti;
    if (!any) continue;
    w.Key(tables[ti].name.c_str(), static_cast<rapidjson::SizeType>(tables[ti].name.size()));
    w.StartArray();
    for (const BatchWrite* r : unprocessed) {
      if (r->table == ti) r->raw->Accept(w);
    }
    w.EndArray();
  }
  w.EndObject();
  if (icm && *icm == "SIZE" && !collections.empty()) {
    w.Key("ItemCollectionMetrics");
    w.StartObject();
    for (size_t ti = 0; ti < tables.size(); ++ti) {
      if (!tables[ti].has_collections) continue;
      w.Key(tables[ti].name.c_str(), static_cast<rapidjson::SizeType>(tables[ti].name.size()));
      w.StartArray();
      for (const auto& [write, bytes] : collections) {
        if (write->table != ti) continue;
        std::optional<Item> key = CollectionKey(*tables[ti].info, write->item);
        if (key) WriteItemCollectionMetrics(w, *key, bytes);
      }
      w.EndArray();
    }
    w.EndObject();
  }
  if (mode != ReturnConsumedCapacity::kNone) {
    w.Key("ConsumedCapacity");
    w.StartArray();
    for (size_t ti = 0; ti < tables.size(); ++ti) {
      ConsumedCapacity c;
      c.table_name = tables[ti].name;
      c.is_write = true;
      c.table_units = units[ti];
      c.AddIndexUnits(index_units[ti]);
      WriteConsumedCapacityObject(w, mode, c);
    }
    w.EndArray();
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

// --enforce-capacity: the writes the tables' capacity admits now, in request order (the units
// of the earlier ones count); the others go to out.unprocessed. The throttling error when no
// write is admitted.
Result<std::vector<const BatchWrite*>> AdmitWrites(const BatchServices& s,
                                                   const RequestContext& ctx,
                                                   const BatchWriteRequest& request,
                                                   BatchWritten& out) {
  using Infos = std::vector<std::shared_ptr<const store::TableInfo>>;
  FDYNO_ASSIGN_OR_RETURN(Infos infos,
                         kv::Run(*s.db, RunOptionsFor(ctx, s, true),
                                 [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Infos> {
                                   Infos found;
                                   for (const WriteTable& t : out.tables) {
                                     FDYNO_ASSIGN_OR_RETURN(
                                         auto info,
                                         FindActiveTable(*s.catalog, tx, CallerScope(ctx), t.name));
                                     found.push_back(std::move(info));
                                   }
                                   return found;
                                 }));
  std::vector<double> pending(infos.size(), 0);
  std::vector<const BatchWrite*> admitted;
  std::optional<Error> throttled;
  for (const BatchWrite& w : request.writes) {
    const store::TableInfo& t = *infos[w.table];
    // An item without its key is admitted, to fail the request's validation as it would.
    if (w.item.contains(t.key_schema.hash.name)) {
      const std::string partition = PartitionOf(t, w.item);
      Status st = s.capacity->Admit(ctx.region, t, Draw::Write(partition, pending[w.table]));
      if (!st.ok()) {
        CountThrottle(s.insights, t, "", w.item);
        out.unprocessed.push_back(&w);
        if (!throttled) throttled = std::move(st).error();
        continue;
      }
    }
    pending[w.table] += WriteUnits(0, w.is_put ? model::ItemSize(w.item) : 0);
    admitted.push_back(&w);
  }
  if (admitted.empty() && throttled) return *throttled;
  return admitted;
}

// Debits what the batch wrote from its tables' capacity (--enforce-capacity).
void ChargeWrites(const BatchServices& s, const BatchWritten& out) {
  if (s.capacity == nullptr) return;
  for (size_t ti = 0; ti < out.tables.size(); ++ti) {
    if (!out.tables[ti].info) continue;
    ConsumedCapacity c;
    c.table_name = out.tables[ti].name;
    c.is_write = true;
    c.table_units = out.units[ti];
    c.AddIndexUnits(out.index_units[ti]);
    s.capacity->Charge(*out.tables[ti].info, c);
  }
}

Result<std::string> BatchWriteOp(const BatchServices& s, const RequestContext& ctx,
                                 const rapidjson::Value& body) {
  FDYNO_ASSIGN_OR_RETURN(BatchWriteRequest request, DecodeBatchWrite(body));
  BatchWritten out;
  for (const std::string& name : request.tables) {
    WriteTable t;
    t.name = name;
    t.vector_write_bytes = request.mode == ReturnConsumedCapacity::kIndexes;
    out.tables.push_back(std::move(t));
  }
  out.units.resize(out.tables.size());
  out.index_units.resize(out.tables.size());
  std::vector<const BatchWrite*> all;
  if (s.capacity != nullptr) {
    FDYNO_ASSIGN_OR_RETURN(all, AdmitWrites(s, ctx, request, out));
  } else {
    for (const BatchWrite& w : request.writes) all.push_back(&w);
  }
  // One transaction when it fits.
  Result<Applied> whole = CommitGroup(s, ctx, out.tables, all);
  if (whole.ok()) {
    out.Add(all, *whole);
  } else if (whole.error().is_kv() && whole.error().kv_code == kv::kTransactionTooLarge) {
    FDYNO_RETURN_IF_ERROR(CommitInGroups(s, ctx, all, out));
  } else {
    return std::move(whole).error();
  }
  ChargeWrites(s, out);
  for (const BatchWrite* w : all) {
    if (const auto& info = out.tables[w->table].info) CountAccess(s.insights, *info, "", w->item);
  }
  return RenderBatchWrite(request, out);
}

}  // namespace

void RegisterBatchOperations(OperationRegistry& registry, const Services& services,
                             BatchOptions options) {
  auto s = std::make_shared<BatchServices>();
  s->db = services.db;
  s->catalog = services.catalog;
  s->clock = services.clock != nullptr ? services.clock : Clock::Real();
  s->receipts = services.receipts;
  s->options = std::move(options);
  s->item_collection_limit = services.item_collection_size_limit_bytes;
  s->capacity = services.capacity;
  s->insights = services.insights;
  registry.Register("BatchGetItem", Bind(s, &BatchGetOp));
  registry.Register("BatchWriteItem", Bind(s, &BatchWriteOp));
}

}  // namespace fdyno::api
