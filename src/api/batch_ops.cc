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
#include "api/capacity.h"
#include "api/item_keys.h"
#include "api/json_util.h"
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
  std::unique_ptr<store::ReceiptStore> receipts;
  uint64_t item_collection_limit = store::kItemCollectionSizeLimitBytes;
};

kv::RunOptions RunOptionsFor(const RequestContext& ctx, const BatchServices& s, bool read_only) {
  kv::RunOptions options;
  if (ctx.deadline != std::chrono::steady_clock::time_point{}) options.deadline = ctx.deadline;
  options.clock = s.clock;
  options.sleep = s.options.sleep;
  options.read_only = read_only;
  return options;
}

Result<std::string> ReturnCapacityMode(const rapidjson::Value& body, ConstraintErrors& errors,
                                       std::optional<std::string_view> rcc) {
  (void)body;
  if (rcc) errors.Enum("returnConsumedCapacity", *rcc, {"INDEXES", "TOTAL", "NONE"});
  return rcc ? std::string(*rcc) : std::string();
}

bool ContainsDuplicate(const std::vector<Item>& keys) {
  for (size_t i = 0; i < keys.size(); ++i) {
    for (size_t j = i + 1; j < keys.size(); ++j) {
      if (keys[i] == keys[j]) return true;
    }
  }
  return false;
}

// ---- BatchGetItem --------------------------------------------------------------------------

struct GetTable {
  std::string name;
  std::vector<Item> keys;
  const rapidjson::Value* raw = nullptr;  // KeysAndAttributes (for UnprocessedKeys)
  bool consistent_read = false;
  std::optional<expr::Projection> projection;
};

Result<std::string> BatchGetOp(const BatchServices& s, const RequestContext& ctx,
                               const rapidjson::Value& body) {
  if (!body.IsObject()) {
    return Error::Serialization("Start of structure or map found where not expected");
  }
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* items,
                         GetMap(body, "RequestItems", "KeysAndAttributes"));
  if (items) {
    for (const auto& e : items->GetObject()) {
      if (e.value.IsNull()) continue;
      FDYNO_RETURN_IF_ERROR(CheckShape(e.value, JsonShape::kValueStruct, "KeysAndAttributes"));
      FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* keys, GetList(e.value, "Keys"));
      if (keys) {
        for (const auto& k : keys->GetArray()) {
          FDYNO_RETURN_IF_ERROR(CheckShape(k, JsonShape::kMap, "AttributeValue"));
          FDYNO_RETURN_IF_ERROR(model::CheckItemShape(k));
        }
      }
      FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* atg, GetList(e.value, "AttributesToGet"));
      if (atg) {
        for (const auto& v : atg->GetArray())
          FDYNO_RETURN_IF_ERROR(CheckShape(v, JsonShape::kString));
      }
      FDYNO_ASSIGN_OR_RETURN(auto cr, GetBool(e.value, "ConsistentRead"));
      (void)cr;
      FDYNO_ASSIGN_OR_RETURN(auto pe, GetString(e.value, "ProjectionExpression"));
      (void)pe;
      FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* names, GetExpressionNames(e.value));
      (void)names;
    }
  }
  FDYNO_ASSIGN_OR_RETURN(auto rcc_text, GetString(body, "ReturnConsumedCapacity"));
  // DynamoDB takes an empty RequestItems for an absent one.
  if (items == nullptr || items->ObjectEmpty()) {
    return Error::Validation("The requestItems parameter is required for BatchGetItem");
  }
  ConstraintErrors errors;
  size_t total = 0;
  for (const auto& e : items->GetObject()) {
    std::string tname(e.name.GetString(), e.name.GetStringLength());
    if (tname.size() < 3 || tname.size() > 255 || !IsValidTableNameChars(tname)) {
      CheckDataPlaneTableName(errors, &e.name, "requestItems");
    }
    const rapidjson::Value* keys = e.value.IsObject() ? Member(e.value, "Keys") : nullptr;
    std::string path = "RequestItems." + tname + ".member.Keys";  // DynamoDB's casing
    if (keys == nullptr) {
      errors.NotNull(path, false);
      continue;
    }
    size_t n = keys->GetArray().Size();
    total += n;
    if (n < 1) errors.AddWithoutValue(path, "Member must have length greater than or equal to 1");
    if (n > 100) errors.AddWithoutValue(path, "Member must have length less than or equal to 100");
  }
  FDYNO_ASSIGN_OR_RETURN(std::string rcc, ReturnCapacityMode(body, errors, rcc_text));
  FDYNO_RETURN_IF_ERROR(errors.ToStatus());
  if (total > 100) {
    return Error::Validation("Too many items requested for the BatchGetItem call");
  }
  FDYNO_ASSIGN_OR_RETURN(ReturnConsumedCapacity mode,
                         ParseReturnConsumedCapacity(rcc.empty() ? nullptr : &rcc));

  // Expression and non-expression projections never mix, not even across tables.
  bool any_atg = false, any_pe = false;
  for (const auto& e : items->GetObject()) {
    if (!e.value.IsObject()) continue;
    any_atg = any_atg || Member(e.value, "AttributesToGet") != nullptr;
    any_pe = any_pe || Member(e.value, "ProjectionExpression") != nullptr;
  }
  if (any_atg && any_pe) {
    return Error::Validation(
        "Can not use both expression and non-expression parameters in the same request: "
        "Non-expression parameters: {AttributesToGet} Expression parameters: "
        "{ProjectionExpression}");
  }
  std::vector<GetTable> tables;
  for (const auto& e : items->GetObject()) {
    GetTable t;
    t.name.assign(e.name.GetString(), e.name.GetStringLength());
    t.raw = &e.value;
    const rapidjson::Value* atg = Member(e.value, "AttributesToGet");
    const rapidjson::Value* pe = Member(e.value, "ProjectionExpression");
    const rapidjson::Value* names = Member(e.value, "ExpressionAttributeNames");
    if (names && !pe) {
      return Error::Validation(
          "ExpressionAttributeNames can only be specified when using expressions: "
          "ProjectionExpression is null");
    }
    if (const rapidjson::Value* cr = Member(e.value, "ConsistentRead")) {
      t.consistent_read = cr->GetBool();
    }
    for (const auto& k : Member(e.value, "Keys")->GetArray()) {
      FDYNO_ASSIGN_OR_RETURN(Item key, model::DecodeItem(k));
      t.keys.push_back(std::move(key));
    }
    if (ContainsDuplicate(t.keys)) {
      return Error::Validation("Provided list of item keys contains duplicates");
    }
    if (pe) {
      expr::AttributeNames name_map;
      if (names) {
        // An empty map is refused by ValidateAttributeMaps, with DynamoDB's other checks.
        if (!names->ObjectEmpty()) {
          FDYNO_ASSIGN_OR_RETURN(name_map, DecodeExpressionAttributeNames(*names));
        }
        FDYNO_RETURN_IF_ERROR(expr::ValidateAttributeMaps(&name_map, nullptr));
      }
      FDYNO_ASSIGN_OR_RETURN(expr::parsed::Projection parsed,
                             expr::ParseProjection(AsStringView(*pe)));
      expr::ResolveContext rctx(names ? &name_map : nullptr, nullptr);
      FDYNO_ASSIGN_OR_RETURN(t.projection, rctx.ResolveProjection(parsed));
      FDYNO_RETURN_IF_ERROR(rctx.CheckUnused());
    } else if (atg) {
      FDYNO_RETURN_IF_ERROR(CheckAttributeNameList(*atg));
      std::vector<std::string> list;
      for (const auto& v : atg->GetArray()) list.emplace_back(AsStringView(v));
      FDYNO_ASSIGN_OR_RETURN(t.projection, expr::legacy::ConvertAttributesToGet(list));
    }
    tables.push_back(std::move(t));
  }

  struct Out {
    std::vector<std::vector<Item>> found;          // per table
    std::vector<std::vector<size_t>> unprocessed;  // per table: key indexes
    std::vector<double> units;
  };
  FDYNO_ASSIGN_OR_RETURN(
      Out out,
      kv::Run(*s.db, RunOptionsFor(ctx, s, true),
              [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Out> {
                Out o;  // attempt-local
                o.found.resize(tables.size());
                o.unprocessed.resize(tables.size());
                o.units.resize(tables.size());
                uint64_t bytes = 0;
                for (size_t ti = 0; ti < tables.size(); ++ti) {
                  const GetTable& t = tables[ti];
                  FDYNO_ASSIGN_OR_RETURN(auto table,
                                         FindActiveTable(*s.catalog, tx, ctx.account_id, t.name));
                  for (const Item& key : t.keys) {
                    FDYNO_RETURN_IF_ERROR(ValidateKey(table->key_schema, key));
                  }
                  for (size_t ki = 0; ki < t.keys.size(); ++ki) {
                    if (bytes >= s.options.get_response_bytes) {
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
                      Item& item = *found;
                      size = model::ItemSize(item);
                      if (bytes > 0 && bytes + size > s.options.get_response_bytes) {
                        // Past the response limit: the caller asks for it again (not charged).
                        o.unprocessed[ti].push_back(ki);
                        continue;
                      }
                      bytes += size;
                      o.found[ti].push_back(t.projection ? expr::Project(item, *t.projection)
                                                         : std::move(item));
                    }
                    o.units[ti] += ReadUnits(size, t.consistent_read);
                  }
                }
                return o;
              }));

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
    const GetTable& t = tables[ti];
    w.Key(t.name.c_str(), static_cast<rapidjson::SizeType>(t.name.size()));
    w.StartObject();
    w.Key("Keys");
    w.StartArray();
    for (size_t ki : out.unprocessed[ti]) model::WriteItem(w, t.keys[ki]);
    w.EndArray();
    for (const auto& m : t.raw->GetObject()) {
      std::string_view name(m.name.GetString(), m.name.GetStringLength());
      if (name == "Keys" || m.value.IsNull()) continue;
      w.Key(m.name.GetString(), m.name.GetStringLength());
      m.value.Accept(w);
    }
    w.EndObject();
  }
  w.EndObject();
  if (mode != ReturnConsumedCapacity::kNone) {
    w.Key("ConsumedCapacity");
    w.StartArray();
    for (size_t ti = 0; ti < tables.size(); ++ti) {
      ConsumedCapacity c;
      c.table_name = tables[ti].name;
      c.table_units = out.units[ti];
      WriteConsumedCapacityObject(w, mode, c);
    }
    w.EndArray();
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

// ---- BatchWriteItem ------------------------------------------------------------------------

struct WriteRequest {
  size_t table = 0;  // index into the tables list
  bool is_put = true;
  Item item;  // put: the item; delete: the key
  const rapidjson::Value* raw = nullptr;
  uint64_t estimate = 0;  // bytes this write may add to a transaction
};

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
Result<Applied> ApplyWrites(const BatchServices& s, kv::Transaction& tx, std::string_view account,
                            std::vector<WriteTable>& tables,
                            const std::vector<const WriteRequest*>& writes, bool validate_only) {
  Applied out;
  out.units.resize(tables.size());
  out.index_units.resize(tables.size());
  out.collection_bytes.resize(writes.size());
  std::vector<double>& units = out.units;
  std::vector<std::shared_ptr<const store::TableInfo>> infos(tables.size());
  for (size_t i = 0; i < tables.size(); ++i) {
    FDYNO_ASSIGN_OR_RETURN(infos[i], FindActiveTable(*s.catalog, tx, account, tables[i].name));
    tables[i].info = infos[i];
    tables[i].has_collections = store::HasItemCollections(*infos[i]);
  }
  // Validation of every request before any write.
  std::vector<std::vector<std::string>> seen(tables.size());
  bool any_collections = false;
  for (const WriteRequest* w : writes) {
    const store::TableInfo& t = *infos[w->table];
    if (w->is_put) {
      FDYNO_RETURN_IF_ERROR(ValidateBatchPutKey(t.key_schema, w->item));
      FDYNO_RETURN_IF_ERROR(store::ValidateNewImage(t, w->item));
    } else {
      FDYNO_RETURN_IF_ERROR(ValidateKey(t.key_schema, w->item));
    }
    std::string key = StorageKey(t, w->is_put ? KeyOf(t.key_schema, w->item) : w->item);
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
  for (const WriteRequest* w : writes) {
    const store::TableInfo& t = *infos[w->table];
    const Item key = w->is_put ? KeyOf(t.key_schema, w->item) : w->item;
    FDYNO_ASSIGN_OR_RETURN(store::CurrentItem current,
                           store::ReadCurrent(tx, t, StorageKey(t, key), false));
    units[w->table] += WriteUnits(current.size, w->is_put ? model::ItemSize(w->item) : uint64_t{0});
    FDYNO_RETURN_IF_ERROR(mutation.Stage(t, std::move(current),
                                         w->is_put ? std::optional<Item>(w->item) : std::nullopt));
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
Result<std::vector<uint64_t>> CurrentCollectionSizes(
    const BatchServices& s, kv::Transaction& tx, std::string_view account,
    const std::vector<WriteTable>& tables, const std::vector<const WriteRequest*>& writes) {
  std::vector<uint64_t> sizes(writes.size(), 0);
  std::vector<std::shared_ptr<const store::TableInfo>> infos(tables.size());
  for (size_t i = 0; i < writes.size(); ++i) {
    auto& info = infos[writes[i]->table];
    if (!info) {
      FDYNO_ASSIGN_OR_RETURN(
          info, FindActiveTable(*s.catalog, tx, account, tables[writes[i]->table].name));
    }
    if (!store::HasItemCollections(*info)) continue;
    const store::ItemCollectionRef ref = store::CollectionOf(*info, writes[i]->item);
    FDYNO_ASSIGN_OR_RETURN(sizes[i],
                           store::ReadItemCollectionSize(tx, ref.table_id, ref.encoded_hash));
  }
  return sizes;
}

// Commits `writes` in one receipt-protected transaction.
Result<Applied> CommitGroup(const BatchServices& s, const RequestContext& ctx,
                            std::vector<WriteTable>& tables,
                            const std::vector<const WriteRequest*>& writes) {
  const store::OperationId op_id = store::OperationId::New(*s.clock);
  return kv::Run(*s.db, RunOptionsFor(ctx, s, false),
                 [&](kv::Transaction& tx, const kv::Attempt& attempt) -> Result<Applied> {
                   if (attempt.maybe_committed) {
                     FDYNO_ASSIGN_OR_RETURN(std::optional<store::Receipt> receipt,
                                            s.receipts->Read(tx, op_id));
                     if (receipt) {
                       Applied replayed;
                       FDYNO_ASSIGN_OR_RETURN(replayed.units,
                                              DecodeUnits(receipt->result.extra, tables.size()));
                       replayed.index_units.resize(tables.size());
                       FDYNO_ASSIGN_OR_RETURN(
                           replayed.collection_bytes,
                           CurrentCollectionSizes(s, tx, ctx.account_id, tables, writes));
                       return replayed;
                     }
                   }
                   FDYNO_ASSIGN_OR_RETURN(
                       Applied applied, ApplyWrites(s, tx, ctx.account_id, tables, writes, false));
                   store::ReceiptResult rr;
                   rr.kind = store::ReceiptKind::kBatchWrite;
                   rr.extra = EncodeUnits(applied.units);
                   s.receipts->ClearExpired(tx, s.clock->WallMillis());
                   s.receipts->Write(tx, op_id, rr);
                   return applied;
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

Result<std::string> BatchWriteOp(const BatchServices& s, const RequestContext& ctx,
                                 const rapidjson::Value& body) {
  if (!body.IsObject()) {
    return Error::Serialization("Start of structure or map found where not expected");
  }
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* items, GetMap(body, "RequestItems", "List"));
  if (items) {
    for (const auto& e : items->GetObject()) {
      if (e.value.IsNull()) continue;
      FDYNO_RETURN_IF_ERROR(CheckShape(e.value, JsonShape::kList));
      for (const auto& wr : e.value.GetArray()) {
        FDYNO_RETURN_IF_ERROR(CheckShape(wr, JsonShape::kValueStruct, "WriteRequest"));
        FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* put,
                               GetStruct(wr, "PutRequest", "PutRequest"));
        if (put) {
          FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* item,
                                 GetMap(*put, "Item", "AttributeValue"));
          if (item) FDYNO_RETURN_IF_ERROR(model::CheckItemShape(*item));
        }
        FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* del,
                               GetStruct(wr, "DeleteRequest", "DeleteRequest"));
        if (del) {
          FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* key,
                                 GetMap(*del, "Key", "AttributeValue"));
          if (key) FDYNO_RETURN_IF_ERROR(model::CheckItemShape(*key));
        }
      }
    }
  }
  FDYNO_ASSIGN_OR_RETURN(auto rcc_text, GetString(body, "ReturnConsumedCapacity"));
  FDYNO_ASSIGN_OR_RETURN(auto icm, GetString(body, "ReturnItemCollectionMetrics"));
  if (items == nullptr || items->ObjectEmpty()) {
    return Error::Validation("The requestItems parameter is required for BatchWriteItem");
  }
  ConstraintErrors errors;
  size_t total = 0;
  for (const auto& e : items->GetObject()) {
    std::string tname(e.name.GetString(), e.name.GetStringLength());
    if (tname.size() < 3 || tname.size() > 255 || !IsValidTableNameChars(tname)) {
      CheckDataPlaneTableName(errors, &e.name, "requestItems");
    }
    size_t n = e.value.IsArray() ? e.value.GetArray().Size() : 0;
    total += n;
    if (n < 1 || n > 25) {
      // DynamoDB echoes the whole map ({table=[...]}) as the value.
      rapidjson::StringBuffer dump;
      Writer dw(dump);
      e.value.Accept(dw);
      errors.Add("requestItems",
                 "{" + tname + "=" + std::string(dump.GetString(), dump.GetSize()) + "}",
                 "Map value must satisfy constraint: [Member must have length less "
                 "than or equal to 25, Member must have length greater than or "
                 "equal to 1]");
    }
  }
  FDYNO_ASSIGN_OR_RETURN(std::string rcc, ReturnCapacityMode(body, errors, rcc_text));
  if (icm) errors.Enum("returnItemCollectionMetrics", *icm, {"SIZE", "NONE"});
  FDYNO_RETURN_IF_ERROR(errors.ToStatus());
  if (total > 25) {
    return Error::Validation("Too many items requested for the BatchWriteItem call");
  }
  FDYNO_ASSIGN_OR_RETURN(ReturnConsumedCapacity mode,
                         ParseReturnConsumedCapacity(rcc.empty() ? nullptr : &rcc));

  std::vector<WriteTable> tables;
  std::vector<WriteRequest> requests;
  for (const auto& e : items->GetObject()) {
    WriteTable t;
    t.name.assign(e.name.GetString(), e.name.GetStringLength());
    t.vector_write_bytes = mode == ReturnConsumedCapacity::kIndexes;
    tables.push_back(std::move(t));
    for (const auto& wr : e.value.GetArray()) {
      const rapidjson::Value* put = Member(wr, "PutRequest");
      const rapidjson::Value* del = Member(wr, "DeleteRequest");
      if ((put == nullptr) == (del == nullptr)) {
        return Error::Validation(
            "Supplied AttributeValue has more than one datatypes set, must contain exactly one "
            "of the supported datatypes");
      }
      WriteRequest w;
      w.table = tables.size() - 1;
      w.is_put = put != nullptr;
      w.raw = &wr;
      const rapidjson::Value* value = put ? Member(*put, "Item") : Member(*del, "Key");
      if (value == nullptr) {
        return Error::Validation(
            std::string("1 validation error detected: Value null at '") +
            (put ? "requestItems." + tables.back().name + ".member.putRequest.item"
                 : "requestItems." + tables.back().name + ".member.deleteRequest.key") +
            "' failed to satisfy constraint: Member must not be null");
      }
      FDYNO_ASSIGN_OR_RETURN(w.item, model::DecodeItem(*value));
      if (w.is_put) FDYNO_RETURN_IF_ERROR(model::CheckItemSize(w.item));
      requests.push_back(std::move(w));
    }
  }

  // One transaction when it fits.
  std::vector<const WriteRequest*> all;
  for (const WriteRequest& w : requests) all.push_back(&w);
  std::vector<double> units(tables.size());
  std::vector<ConsumedCapacity> index_units(tables.size());
  std::vector<const WriteRequest*> unprocessed;
  // Item collections written (tables with local secondary indexes): the write and its
  // collection's size after its group.
  std::vector<std::pair<const WriteRequest*, uint64_t>> collections;
  auto note_collections = [&](const std::vector<const WriteRequest*>& group,
                              const Applied& applied) {
    for (size_t i = 0; i < group.size(); ++i) {
      if (tables[group[i]->table].has_collections) {
        collections.emplace_back(group[i], applied.collection_bytes[i]);
      }
    }
  };
  Result<Applied> whole = CommitGroup(s, ctx, tables, all);
  if (whole.ok()) {
    units = whole->units;
    index_units = whole->index_units;
    note_collections(all, *whole);
  } else {
    Error err = std::move(whole).error();
    if (!(err.is_kv() && err.kv_code == 2101)) return err;
    // Too large: validate everything in a transaction that never commits, then groups.
    FDYNO_RETURN_IF_ERROR(kv::Run(
        *s.db, RunOptionsFor(ctx, s, true), [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
          FDYNO_ASSIGN_OR_RETURN(Applied a, ApplyWrites(s, tx, ctx.account_id, tables, all, true));
          (void)a;
          return Status();
        }));
    std::vector<std::vector<const WriteRequest*>> groups(1);
    uint64_t group_bytes = 0;
    for (const WriteRequest& w : requests) {
      const store::TableInfo& t = *tables[w.table].info;
      uint64_t estimate = (model::ItemSize(w.item) + 1024) *
                          (1 + t.local_indexes.size() + t.global_indexes.size()) * 2;
      if (!groups.back().empty() && group_bytes + estimate > s.options.write_group_bytes) {
        groups.emplace_back();
        group_bytes = 0;
      }
      groups.back().push_back(&w);
      group_bytes += estimate;
    }
    for (const auto& group : groups) {
      Result<Applied> g = CommitGroup(s, ctx, tables, group);
      if (!g.ok()) {
        if (!CertainlyNotAppliedAndTransient(g.error())) return std::move(g).error();
        for (const WriteRequest* w : group) unprocessed.push_back(w);
        continue;
      }
      for (size_t i = 0; i < units.size(); ++i) {
        units[i] += g->units[i];
        index_units[i].AddIndexUnits(g->index_units[i]);
      }
      note_collections(group, *g);
    }
  }

  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("UnprocessedItems");
  w.StartObject();
  for (size_t ti = 0; ti < tables.size(); ++ti) {
    bool any = false;
    for (const WriteRequest* r : unprocessed) any = any || r->table == ti;
    if (!any) continue;
    w.Key(tables[ti].name.c_str(), static_cast<rapidjson::SizeType>(tables[ti].name.size()));
    w.StartArray();
    for (const WriteRequest* r : unprocessed) {
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

}  // namespace

void RegisterBatchOperations(OperationRegistry& registry, const Services& services,
                             BatchOptions options) {
  auto s = std::make_shared<BatchServices>();
  s->db = services.db;
  s->catalog = services.catalog;
  s->clock = services.clock != nullptr ? services.clock : Clock::Real();
  s->receipts = std::make_unique<store::ReceiptStore>(store::layout::Receipts(), options.receipts);
  s->options = std::move(options);
  s->item_collection_limit = services.item_collection_size_limit_bytes;
  registry.Register("BatchGetItem", [s](const RequestContext& ctx, const rapidjson::Value& body) {
    return BatchGetOp(*s, ctx, body);
  });
  registry.Register("BatchWriteItem", [s](const RequestContext& ctx, const rapidjson::Value& body) {
    return BatchWriteOp(*s, ctx, body);
  });
}

}  // namespace fdyno::api
