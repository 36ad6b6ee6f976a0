#include "api/table_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/json_util.h"
#include "api/projection_request.h"
#include "api/table_arn.h"
#include "api/table_handlers.h"
#include "api/table_render.h"
#include "api/table_request.h"
#include "api/table_rules.h"
#include "api/vector_table_ops.h"
#include "base/metrics.h"
#include "base/utf8.h"
#include "kv/run.h"
#include "store/streams.h"

namespace fdyno::api::tables {
namespace {

using rapidjson::Value;
using store::TableInfo;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

std::string Json(const rapidjson::StringBuffer& buffer) {
  return std::string(buffer.GetString(), buffer.GetSize());
}

void Str(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

Result<std::optional<std::vector<std::string>>> StringList(const Value& obj,
                                                           std::string_view name) {
  FDYNO_ASSIGN_OR_RETURN(const Value* list, GetList(obj, name));
  if (list == nullptr) return std::optional<std::vector<std::string>>();
  std::vector<std::string> out;
  for (const Value& v : list->GetArray()) {
    FDYNO_RETURN_IF_ERROR(CheckShape(v, JsonShape::kString));
    out.push_back(v.IsString() ? std::string(AsStringView(v)) : std::string());
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

// ==== DescribeTable, DeleteTable ==========================================================

Result<std::string> DescribeTable(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string name, ReadExistingTableName(ctx, body, "DescribeTable"));
  // The table and its item counts (store/item_counts.h) as of one snapshot.
  struct Described {
    std::shared_ptr<const TableInfo> table;
    store::ItemCounts counts;
  };
  kv::RunOptions options = RunOptionsFor(ctx, s);
  options.read_only = true;
  FDYNO_ASSIGN_OR_RETURN(
      Described d,
      kv::Run(*s.db, options, [&](kv::Transaction& txn, const kv::Attempt&) -> Result<Described> {
        Described out;
        FDYNO_ASSIGN_OR_RETURN(out.table, s.catalog->Find(txn, ctx.account_id, name));
        if (out.table) {
          FDYNO_ASSIGN_OR_RETURN(out.counts, store::ReadItemCounts(txn, *out.table));
        }
        return out;
      }));
  if (!d.table) return TableNotFound(name);
  return DescriptionResponse("Table", ctx, *d.table, d.table->status, &d.counts);
}

// fdyno_table_purges_total: dropped tables whose data was removed.
Counter& PurgesCounter() {
  static Counter& purges = []() -> Counter& {
    Metrics::Global().Describe("fdyno_table_purges", "Dropped tables whose data has been removed.");
    return Metrics::Global().GetCounter("fdyno_table_purges");
  }();
  return purges;
}

Result<std::string> DeleteTable(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string name, ReadExistingTableName(ctx, body, "DeleteTable"));
  std::shared_ptr<const TableInfo> seen;  // what the latest attempt dropped
  FDYNO_ASSIGN_OR_RETURN(
      std::shared_ptr<const TableInfo> dropped,
      kv::Run(*s.db, RunOptionsFor(ctx, s),
              [&](kv::Transaction& txn,
                  const kv::Attempt& attempt) -> Result<std::shared_ptr<const TableInfo>> {
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                                       s.catalog->Find(txn, ctx.account_id, name));
                // After an ambiguous commit, the table being gone (or replaced) is the
                // earlier attempt's drop.
                if (attempt.maybe_committed && seen && (!t || t->uuid != seen->uuid)) return seen;
                if (!t) return TableNotFound(name);
                FDYNO_RETURN_IF_ERROR(CheckNotCreating(*t));
                if (t->deletion_protection) {
                  return Error::Validation(
                      "Resource cannot be deleted as it is currently protected against deletion. "
                      "Disable deletion protection first.");
                }
                FDYNO_RETURN_IF_ERROR(s.catalog->Drop(txn, *t));
                seen = t;
                // Its stream stays readable for 24 hours, closed.
                FDYNO_RETURN_IF_ERROR(store::SyncStream(txn, t.get(), nullptr, s.stream_slots,
                                                        s.clock->WallMillis()));
                return t;
              }));
  spdlog::info("deleted table {} (id {}, account {})", name, dropped->id, ctx.account_id);
  if (s.purge_on_delete) {
    // The table is gone for every reader once the drop committed; removing its data is
    // housekeeping. A failure leaves the pending-purge marker for the next PurgeDropped.
    const auto start = std::chrono::steady_clock::now();
    Result<int> purged = s.catalog->PurgeDropped(*s.db);
    if (!purged.ok()) {
      spdlog::warn("DeleteTable {}: data removal deferred: {}", name, purged.error().message);
    } else {
      PurgesCounter().Add(*purged);
      spdlog::info("purged the data of {} dropped table(s) in {} ms", *purged,
                   std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now() - start)
                       .count());
    }
  }
  return DescriptionResponse("TableDescription", ctx, *dropped, store::TableStatus::kDeleting);
}

// ==== ListTables ============================================================================

Result<std::string> ListTables(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> start,
                         GetString(body, "ExclusiveStartTableName"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<int64_t> limit, GetInteger(body, "Limit"));
  ConstraintErrors e;
  if (start) {
    e.Pattern("exclusiveStartTableName", *start, IsValidTableNameChars(*start), kNamePattern);
    e.MinLength("exclusiveStartTableName", *start, 3);
    e.MaxLength("exclusiveStartTableName", *start, 255);
  }
  if (limit) {
    e.MinValue("limit", *limit, 1);
    e.MaxValue("limit", *limit, 100);
  }
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  std::string start_name(start.value_or(""));
  int page_size = static_cast<int>(limit.value_or(100));
  kv::RunOptions options = RunOptionsFor(ctx, s);
  options.read_only = true;
  FDYNO_ASSIGN_OR_RETURN(store::TableNamePage page,
                         kv::Run(*s.db, options, [&](kv::Transaction& txn, const kv::Attempt&) {
                           return s.catalog->List(txn, ctx.account_id, start_name, page_size);
                         }));
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("TableNames");
  w.StartArray();
  for (const auto& n : page.names) Str(w, n);
  w.EndArray();
  if (page.more && !page.names.empty()) {
    w.Key("LastEvaluatedTableName");
    Str(w, page.names.back());
  }
  w.EndObject();
  return Json(buffer);
}

// ==== UpdateTable ===========================================================================

struct GsiUpdateIn {
  std::optional<std::string> update_name;
  std::optional<ThroughputIn> update_throughput;
  bool has_update = false;
  bool has_create = false;
  std::optional<std::string> create_name;
  IndexIn create;  // KeySchema, Projection, ProvisionedThroughput of a Create
  bool has_delete = false;
  std::optional<std::string> delete_name;
};

struct UpdateTableRequest {
  std::optional<std::string> table_name;
  std::optional<std::vector<AttributeIn>> attribute_definitions;
  std::optional<std::string> billing_mode;
  std::optional<ThroughputIn> throughput;
  std::optional<std::vector<GsiUpdateIn>> gsi_updates;
  std::optional<StreamIn> stream;
  std::optional<SseIn> sse;
  const Value* replica_updates = nullptr;
  std::optional<std::string> table_class;
  std::optional<bool> deletion_protection;
  std::optional<OnDemandIn> on_demand;
  std::optional<std::vector<VectorIndexUpdateIn>> vector_updates;
};

Result<UpdateTableRequest> ParseUpdateTable(const Value& body) {
  UpdateTableRequest r;
  FDYNO_ASSIGN_OR_RETURN(r.attribute_definitions, ParseAttributeDefinitions(body));
  FDYNO_ASSIGN_OR_RETURN(r.table_name, GetOwnedString(body, "TableName"));
  FDYNO_ASSIGN_OR_RETURN(r.billing_mode, GetOwnedString(body, "BillingMode"));
  FDYNO_ASSIGN_OR_RETURN(r.throughput, ParseThroughput(body, "ProvisionedThroughput"));
  FDYNO_ASSIGN_OR_RETURN(auto updates, GetStructList(body, "GlobalSecondaryIndexUpdates",
                                                     "GlobalSecondaryIndexUpdate"));
  if (updates) {
    r.gsi_updates.emplace();
    for (const Value* u : *updates) {
      GsiUpdateIn g;
      if (u->IsObject()) {
        FDYNO_ASSIGN_OR_RETURN(const Value* up,
                               GetStruct(*u, "Update", "UpdateGlobalSecondaryIndexAction"));
        if (up != nullptr) {
          g.has_update = true;
          FDYNO_ASSIGN_OR_RETURN(g.update_name, GetOwnedString(*up, "IndexName"));
          FDYNO_ASSIGN_OR_RETURN(g.update_throughput,
                                 ParseThroughput(*up, "ProvisionedThroughput"));
        }
        FDYNO_ASSIGN_OR_RETURN(const Value* cr,
                               GetStruct(*u, "Create", "CreateGlobalSecondaryIndexAction"));
        if (cr != nullptr) {
          g.has_create = true;
          FDYNO_ASSIGN_OR_RETURN(g.create_name, GetOwnedString(*cr, "IndexName"));
          g.create.name = g.create_name;
          FDYNO_ASSIGN_OR_RETURN(g.create.key_schema, ParseKeySchema(*cr));
          FDYNO_ASSIGN_OR_RETURN(g.create.projection, ParseProjection(*cr));
          FDYNO_ASSIGN_OR_RETURN(g.create.throughput,
                                 ParseThroughput(*cr, "ProvisionedThroughput"));
        }
        FDYNO_ASSIGN_OR_RETURN(const Value* de,
                               GetStruct(*u, "Delete", "DeleteGlobalSecondaryIndexAction"));
        if (de != nullptr) {
          g.has_delete = true;
          FDYNO_ASSIGN_OR_RETURN(g.delete_name, GetOwnedString(*de, "IndexName"));
        }
      }
      r.gsi_updates->push_back(std::move(g));
    }
  }
  FDYNO_ASSIGN_OR_RETURN(r.stream, ParseStream(body));
  FDYNO_ASSIGN_OR_RETURN(r.sse, ParseSse(body));
  FDYNO_ASSIGN_OR_RETURN(r.replica_updates, GetList(body, "ReplicaUpdates"));
  FDYNO_ASSIGN_OR_RETURN(r.table_class, GetOwnedString(body, "TableClass"));
  FDYNO_ASSIGN_OR_RETURN(r.deletion_protection, GetBool(body, "DeletionProtectionEnabled"));
  FDYNO_ASSIGN_OR_RETURN(r.on_demand, ParseOnDemand(body));
  FDYNO_ASSIGN_OR_RETURN(r.vector_updates, ParseVectorIndexUpdates(body));
  return r;
}

Status CheckUpdateTableRequest(const UpdateTableRequest& r) {
  ConstraintErrors e;
  CheckAttributeDefinitionConstraints(e, r.attribute_definitions);
  CheckThroughputConstraints(e, r.throughput, "provisionedThroughput");
  if (r.billing_mode) e.Enum("billingMode", *r.billing_mode, {"PROVISIONED", "PAY_PER_REQUEST"});
  if (r.gsi_updates) {
    for (size_t i = 0; i < r.gsi_updates->size(); ++i) {
      const GsiUpdateIn& g = (*r.gsi_updates)[i];
      std::string p = MemberPath("globalSecondaryIndexUpdates", i);
      if (g.has_update) {
        CheckIndexNameConstraints(e, g.update_name, p + ".update.indexName");
        e.NotNull(p + ".update.provisionedThroughput", g.update_throughput.has_value());
        CheckThroughputConstraints(e, g.update_throughput, p + ".update.provisionedThroughput");
      }
      if (g.has_create) {
        CheckIndexNameConstraints(e, g.create_name, p + ".create.indexName");
        if (g.create.key_schema) {
          CheckKeySchemaConstraints(e, g.create.key_schema, p + ".create.keySchema", false,
                                    kMaxGlobalIndexKeySchema);
        }
        if (g.create.projection) {
          CheckProjectionConstraints(e, *g.create.projection, p + ".create.projection");
        }
      }
      if (g.has_delete) CheckIndexNameConstraints(e, g.delete_name, p + ".delete.indexName");
    }
  }
  CheckStreamConstraints(e, r.stream);
  CheckSseConstraints(e, r.sse);
  CheckVectorIndexUpdateConstraints(e, r.vector_updates);
  FDYNO_RETURN_IF_ERROR(e.ToStatus());

  const bool gsi = r.gsi_updates && !r.gsi_updates->empty();
  const size_t vector_changes = CountVectorIndexChanges(r.vector_updates);
  if (!r.throughput && !r.billing_mode && !r.stream && !gsi && !r.sse && !r.replica_updates &&
      !r.deletion_protection && !r.table_class && !r.on_demand && vector_changes == 0) {
    return Error::Validation(
        "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
        "GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, "
        "ReplicaTransitRoleArn, MultiRegionConsistency, DeletionProtectionEnabled, "
        "OnDemandThroughput, WarmThroughput or TableClass is required");
  }
  if (r.billing_mode && *r.billing_mode == "PROVISIONED" && !r.throughput) {
    return Invalid("ProvisionedThroughput must be specified when BillingMode is PROVISIONED");
  }
  if (r.throughput) FDYNO_RETURN_IF_ERROR(CheckCapacityBounds(*r.throughput));
  if (r.gsi_updates) {
    std::set<std::string> names;
    for (const GsiUpdateIn& g : *r.gsi_updates) {
      int actions = int{g.has_update} + int{g.has_create} + int{g.has_delete};
      if (actions == 0) {
        return Invalid(
            "One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, "
            "GlobalSecondaryIndexUpdate.Delete must not be null");
      }
      if (actions > 1) {
        return Invalid(
            "Only one global secondary index action is allowed per "
            "GlobalSecondaryIndexUpdate object");
      }
      const std::string& name = g.has_update   ? *g.update_name
                                : g.has_create ? *g.create_name
                                               : *g.delete_name;
      if (!names.insert(name).second) {
        return Invalid(
            "Only one global secondary index update per index is allowed "
            "simultaneously. Index: " +
            name);
      }
    }
  }
  if (r.vector_updates) FDYNO_RETURN_IF_ERROR(CheckVectorIndexUpdates(*r.vector_updates));
  // Kinds of change that must come alone (vector index changes count as index changes).
  const bool iops = r.throughput || r.billing_mode;
  const bool gsi_create_delete =
      vector_changes > 0 ||
      (r.gsi_updates &&
       std::any_of(r.gsi_updates->begin(), r.gsi_updates->end(),
                   [](const GsiUpdateIn& g) { return g.has_create || g.has_delete; }));
  const int kinds = int{iops} + int{r.stream.has_value()} + int{gsi || vector_changes > 0} +
                    int{r.sse.has_value()} + int{r.table_class.has_value()} +
                    int{r.deletion_protection.has_value()} + int{r.replica_updates != nullptr};
  if (r.sse && kinds > 1) {
    return Invalid("Server-Side Encryption modification must be the only operation in the request");
  }
  if (r.table_class && kinds > 1) {
    return Invalid("TableClass modification must be the only operation in the request");
  }
  if (r.deletion_protection && kinds > 1) {
    return Invalid("DeletionProtection modification must be the only operation in the request");
  }
  if (iops && r.stream) return Invalid("You cannot modify stream status while updating table IOPS");
  if (iops && gsi_create_delete) {
    return Invalid("You cannot create or delete index while updating table IOPS");
  }
  if (r.stream && gsi_create_delete) {
    return Invalid("You cannot create or delete index while changing stream status");
  }
  if (r.table_class && !ParseTableClass(*r.table_class)) return InvalidTableClass();
  if (r.sse) FDYNO_RETURN_IF_ERROR(CheckSse(*r.sse));
  if (r.stream) {
    if (*r.stream->enabled && !r.stream->view_type) {
      return Invalid("If stream is being enabled then UpdateViewType is required");
    }
    if (!*r.stream->enabled && r.stream->view_type) {
      return Invalid("If stream is being disabled, then UpdateViewType must not be specified");
    }
  }
  if (r.replica_updates) {
    return Invalid("Replica modification is not supported: this server has one region");
  }
  if (gsi_create_delete && r.gsi_updates) {
    // Online index changes (workers/backfill.h): Create needs its key schema and projection.
    for (const GsiUpdateIn& g : *r.gsi_updates) {
      if (g.has_create && (!g.create.key_schema || !g.create.projection)) {
        return Invalid("Both KeySchema and Projection are required to create index: " +
                       *g.create_name);
      }
    }
  }
  if (gsi_create_delete) {
    // One index (secondary or vector) is created or deleted at a time.
    const size_t online =
        vector_changes +
        (r.gsi_updates
             ? std::count_if(r.gsi_updates->begin(), r.gsi_updates->end(),
                             [](const GsiUpdateIn& g) { return g.has_create || g.has_delete; })
             : 0);
    if (online > 1) {
      return Error::Make(ErrorType::kLimitExceeded,
                         "Subscriber limit exceeded: Only 1 online index can be created or "
                         "deleted simultaneously per table");
    }
  }
  return Status::Ok();
}

bool SameUtcDay(int64_t a_ms, int64_t b_ms) { return a_ms / 86'400'000 == b_ms / 86'400'000; }

// Applies a throughput change, keeping DynamoDB's increase/decrease bookkeeping.
void ChangeThroughput(store::Throughput& t, int64_t read, int64_t write, int64_t now_ms) {
  if (read > t.read_capacity_units || write > t.write_capacity_units) t.last_increase_ms = now_ms;
  if (read < t.read_capacity_units || write < t.write_capacity_units) {
    t.number_of_decreases_today =
        (t.last_decrease_ms != 0 && SameUtcDay(t.last_decrease_ms, now_ms))
            ? t.number_of_decreases_today + 1
            : 1;
    t.last_decrease_ms = now_ms;
  }
  t.read_capacity_units = read;
  t.write_capacity_units = write;
}

std::string ThroughputUnchanged(std::string_view what, const store::Throughput& cur,
                                const ThroughputIn& req) {
  std::string r = std::to_string(*req.read), w = std::to_string(*req.write);
  std::string cr = std::to_string(cur.read_capacity_units);
  std::string cw = std::to_string(cur.write_capacity_units);
  return "The provisioned throughput for the " + std::string(what) +
         " will not change. The requested value equals the current value. Current "
         "ReadCapacityUnits provisioned for the " +
         std::string(what == "table" ? "table" : "index") + ": " + cr +
         ". Requested ReadCapacityUnits: " + r +
         ". Current WriteCapacityUnits provisioned for the " +
         std::string(what == "table" ? "table" : "index") + ": " + cw +
         ". Requested WriteCapacityUnits: " + w +
         ". Refer to the Amazon DynamoDB Developer Guide for current limits and how to request "
         "higher limits.";
}

// The new table, or the error DynamoDB gives for this change of `current`.
Result<std::pair<TableInfo, bool>> PlanUpdateTable(const UpdateTableRequest& r,
                                                   const TableInfo& current, int64_t now_ms) {
  TableInfo t = current;
  bool updating = false;  // the response reports UPDATING
  const bool was_on_demand = current.billing_mode == store::BillingMode::kPayPerRequest;
  const bool on_demand = r.billing_mode ? *r.billing_mode == "PAY_PER_REQUEST" : was_on_demand;
  if (r.throughput && on_demand) {
    return Invalid(
        "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when "
        "BillingMode is PAY_PER_REQUEST");
  }
  if (on_demand && !was_on_demand) {
    t.billing_mode = store::BillingMode::kPayPerRequest;
    t.last_update_to_pay_per_request_ms = now_ms;
    ChangeThroughput(t.throughput, 0, 0, now_ms);
    for (auto& g : t.global_indexes) ChangeThroughput(g.throughput, 0, 0, now_ms);
    updating = true;
  } else if (!on_demand && was_on_demand) {
    // Every GSI needs its throughput in GlobalSecondaryIndexUpdates.
    std::vector<std::string> missing;
    for (const auto& g : current.global_indexes) {
      bool given = r.gsi_updates &&
                   std::any_of(r.gsi_updates->begin(), r.gsi_updates->end(), [&](const auto& u) {
                     return u.has_update && *u.update_name == g.name;
                   });
      if (!given) missing.push_back(g.name);
    }
    if (!missing.empty()) {
      std::string names;
      for (const auto& n : missing) names += (names.empty() ? "" : ",") + n;
      return Invalid("ProvisionedThroughput must be specified for index: " + names);
    }
    t.billing_mode = store::BillingMode::kProvisioned;
    t.throughput.read_capacity_units = *r.throughput->read;
    t.throughput.write_capacity_units = *r.throughput->write;
    updating = true;
  } else if (r.throughput) {
    if (*r.throughput->read == current.throughput.read_capacity_units &&
        *r.throughput->write == current.throughput.write_capacity_units) {
      return Error::Validation(ThroughputUnchanged("table", current.throughput, *r.throughput));
    }
    ChangeThroughput(t.throughput, *r.throughput->read, *r.throughput->write, now_ms);
    updating = true;
  }
  if (r.gsi_updates) {
    for (const GsiUpdateIn& u : *r.gsi_updates) {
      if (u.has_create) {
        // A new GSI: CREATING and backfilling; the index worker fills it, then marks it ACTIVE.
        const std::string& name = *u.create_name;
        if (current.FindIndex(name) != nullptr) {
          return Invalid("Attempting to create an index which already exists");
        }
        // The new index's key attributes must be defined in this request, even those the
        // table already defines, and with the types they already have.
        std::vector<AttributeIn> defs;
        if (r.attribute_definitions) defs = *r.attribute_definitions;
        for (const AttributeIn& d : defs) {
          for (const auto& known : current.attribute_definitions) {
            if (known.name == *d.name && store::ScalarTypeName(known.type) != *d.type) {
              return Invalid("Cannot change the type of attribute " + known.name + " from " +
                             std::string(store::ScalarTypeName(known.type)) + " to " + *d.type);
            }
          }
        }
        FDYNO_ASSIGN_OR_RETURN(store::KeySchema iks,
                               ResolveKeySchema(*u.create.key_schema, defs, true));
        FDYNO_ASSIGN_OR_RETURN(store::Projection projection,
                               ResolveProjection(*u.create.projection));
        if (on_demand && u.create.throughput) {
          return Invalid("ProvisionedThroughput should not be specified for index: " + name +
                         " when BillingMode is PAY_PER_REQUEST");
        }
        if (!on_demand && !u.create.throughput) {
          return Invalid("ProvisionedThroughput is not specified for index: " + name);
        }
        store::SecondaryIndex index;
        index.name = name;
        index.id = t.next_index_id++;
        for (const model::KeyAttribute& k : iks.Attributes()) {
          bool known = std::any_of(t.attribute_definitions.begin(), t.attribute_definitions.end(),
                                   [&](const auto& d) { return d.name == k.name; });
          if (!known) t.attribute_definitions.push_back(k);
        }
        index.key_schema = std::move(iks);
        index.projection = std::move(projection);
        if (u.create.throughput) {
          index.throughput.read_capacity_units = *u.create.throughput->read;
          index.throughput.write_capacity_units = *u.create.throughput->write;
        }
        index.status = store::IndexStatus::kCreating;
        index.backfilling = true;
        t.global_indexes.push_back(std::move(index));
        updating = true;
        continue;
      }
      if (u.has_delete) {
        const std::string& name = *u.delete_name;
        auto it = std::find_if(t.global_indexes.begin(), t.global_indexes.end(),
                               [&](const auto& g) { return g.name == name; });
        if (it == t.global_indexes.end()) {
          return Error::ResourceNotFound("Requested resource not found: Index: " + name +
                                         " not found");
        }
        it->status = store::IndexStatus::kDeleting;  // removed by the index worker
        updating = true;
        continue;
      }
      const std::string& name = *u.update_name;
      auto it = std::find_if(t.global_indexes.begin(), t.global_indexes.end(),
                             [&](const auto& g) { return g.name == name; });
      if (it == t.global_indexes.end()) {
        if (current.FindIndex(name) != nullptr) {
          return Error::Validation("Cannot update an index that is not a GlobalSecondaryIndex: " +
                                   name);
        }
        return Error::ResourceNotFound("Requested resource not found: Index: " + name +
                                       " not found");
      }
      if (on_demand) {
        return Invalid("The only Updates for index: " + name +
                       " when TableThroughputMode is PAY_PER_REQUEST can be to "
                       "OnDemandThroughput, WarmThroughput");
      }
      if (!was_on_demand && *u.update_throughput->read == it->throughput.read_capacity_units &&
          *u.update_throughput->write == it->throughput.write_capacity_units) {
        return Error::Validation(
            ThroughputUnchanged("index " + name, it->throughput, *u.update_throughput));
      }
      if (was_on_demand) {
        it->throughput.read_capacity_units = *u.update_throughput->read;
        it->throughput.write_capacity_units = *u.update_throughput->write;
      } else {
        ChangeThroughput(it->throughput, *u.update_throughput->read, *u.update_throughput->write,
                         now_ms);
      }
      updating = true;
    }
  }
  if (r.stream) {
    if (*r.stream->enabled) {
      if (current.stream.enabled) {
        return Error::Validation("Table already has an enabled stream: TableName: " + current.name);
      }
      t.stream.enabled = true;
      t.stream.view_type = *ParseViewType(*r.stream->view_type);
      // Each stream has its own label (its ARN): one enabled again within the same millisecond
      // as the last one gets the next millisecond.
      t.stream.label = StreamLabel(now_ms);
      if (t.stream.label <= current.stream.label) {
        t.stream.label = StreamLabel(std::max(now_ms, LabelMillis(current.stream.label)) + 1);
      }
    } else {
      if (!current.stream.enabled) {
        return Error::Validation("Table has no stream to disable: TableName: " + current.name);
      }
      t.stream.enabled = false;
    }
    updating = true;
  }
  if (r.sse) {
    bool enable = r.sse->enabled.value_or(false);
    if (!enable) {
      if (!current.sse.enabled) return Invalid("Table is already encrypted by default");
      t.sse = {};
    } else {
      std::string key = r.sse->kms_key.value_or("");
      if (current.sse.enabled && current.sse.kms_master_key_id == key) {
        return Invalid(
            "Table is already encrypted with given KMSMasterKeyId. Use KMSMasterKeyId "
            "parameter if you want to change Master Key");
      }
      t.sse = {true, key};
    }
    updating = true;
  }
  if (r.table_class) {
    t.table_class = *ParseTableClass(*r.table_class);
    t.table_class_set = true;
    updating = true;
  }
  if (r.vector_updates) {
    std::vector<store::AttributeDefinition> defs;
    if (r.attribute_definitions) defs = TypedDefinitions(*r.attribute_definitions);
    FDYNO_RETURN_IF_ERROR(ApplyVectorIndexUpdates(*r.vector_updates, defs, t));
    updating = true;
  }
  FDYNO_RETURN_IF_ERROR(CheckVectorIndexBilling(t));
  if (r.deletion_protection) t.deletion_protection = *r.deletion_protection;
  if (r.on_demand) ApplyOnDemand(*r.on_demand, t.on_demand);
  return std::make_pair(std::move(t), updating);
}

Result<std::string> UpdateTable(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(UpdateTableRequest r, ParseUpdateTable(body));
  FDYNO_ASSIGN_OR_RETURN(std::string name, ResolveTableName(ctx, r.table_name, "UpdateTable"));
  FDYNO_RETURN_IF_ERROR(CheckUpdateTableRequest(r));
  const int64_t now_ms = s.clock->WallMillis();
  std::optional<std::pair<TableInfo, bool>> written;  // what the latest attempt wrote
  FDYNO_ASSIGN_OR_RETURN(
      auto updated,
      kv::Run(*s.db, RunOptionsFor(ctx, s),
              [&](kv::Transaction& txn,
                  const kv::Attempt& attempt) -> Result<std::pair<TableInfo, bool>> {
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                                       s.catalog->Find(txn, ctx.account_id, name));
                if (!t) return TableNotFound(name);
                // After an ambiguous commit, the record the earlier attempt wrote is its
                // success (applying the request again would fail on its own effect).
                if (attempt.maybe_committed && written &&
                    store::EncodeTableInfo(*t) == store::EncodeTableInfo(written->first)) {
                  return *written;
                }
                FDYNO_RETURN_IF_ERROR(CheckNotCreating(*t));
                FDYNO_ASSIGN_OR_RETURN(auto plan, PlanUpdateTable(r, *t, now_ms));
                FDYNO_RETURN_IF_ERROR(
                    store::SyncStream(txn, t.get(), &plan.first, s.stream_slots, now_ms));
                FDYNO_RETURN_IF_ERROR(s.catalog->Update(txn, plan.first));
                written = plan;
                return plan;
              }));
  return DescriptionResponse("TableDescription", ctx, updated.first,
                             updated.second ? store::TableStatus::kUpdating : updated.first.status);
}

// ==== tags ==================================================================================

Error ArnNotFound(const std::string& arn) {
  return Error::ResourceNotFound("Requested resource not found: ResourcArn: " + arn + " not found");
}

// The ResourceArn member (type-checked); its constraints go to `e`.
Result<std::optional<std::string_view>> ReadResourceArn(const Value& body, ConstraintErrors& e) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> arn, GetString(body, "ResourceArn"));
  e.NotNull("resourceArn", arn.has_value());
  if (arn) {
    e.MinLength("resourceArn", *arn, 1);
    e.MaxLength("resourceArn", *arn, 1283);
  }
  return arn;
}

Result<std::string> TagResource(Services& s, const RequestContext& ctx, const Value& body) {
  ConstraintErrors e;
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> arn, ReadResourceArn(body, e));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::vector<TagIn>> tags, ParseTags(body));
  e.NotNull("tags", tags.has_value());
  CheckTagConstraints(e, tags);
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  FDYNO_ASSIGN_OR_RETURN(ArnTarget target, ParseTableArn(ctx, *arn, "TagResource"));
  if (tags->empty()) return Error::Validation("Atleast one Tag needs to be provided as Input.");
  FDYNO_ASSIGN_OR_RETURN(std::vector<store::Tag> add, ResolveTags(*tags));
  FDYNO_RETURN_IF_ERROR(kv::Run(
      *s.db, RunOptionsFor(ctx, s), [&](kv::Transaction& txn, const kv::Attempt&) -> Status {
        FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                               s.catalog->Find(txn, ctx.account_id, target.table));
        if (!t) return ArnNotFound(target.arn);
        FDYNO_ASSIGN_OR_RETURN(std::vector<store::Tag> current, s.catalog->GetTags(txn, t->id));
        for (const store::Tag& tag : add) {
          auto it = std::find_if(current.begin(), current.end(),
                                 [&](const store::Tag& c) { return c.key == tag.key; });
          if (it != current.end()) {
            it->value = tag.value;
          } else {
            current.push_back(tag);
          }
        }
        if (current.size() > kMaxTags) return TooManyTags();
        return s.catalog->SetTags(txn, t->id, current);
      }));
  // TagResource and UntagResource have no output: DynamoDB answers with an empty body.
  return std::string();
}

Result<std::string> UntagResource(Services& s, const RequestContext& ctx, const Value& body) {
  ConstraintErrors e;
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> arn, ReadResourceArn(body, e));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::vector<std::string>> keys, StringList(body, "TagKeys"));
  e.NotNull("tagKeys", keys.has_value());
  if (keys) {
    for (size_t i = 0; i < keys->size(); ++i) {
      e.MinLength(MemberPath("tagKeys", i), (*keys)[i], 1);
      e.MaxLength(MemberPath("tagKeys", i), (*keys)[i], 128);
    }
  }
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  FDYNO_ASSIGN_OR_RETURN(ArnTarget target, ParseTableArn(ctx, *arn, "UntagResource"));
  if (keys->empty()) return Error::Validation("Atleast one Tag Key needs to be provided as Input.");
  FDYNO_RETURN_IF_ERROR(kv::Run(
      *s.db, RunOptionsFor(ctx, s), [&](kv::Transaction& txn, const kv::Attempt&) -> Status {
        FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                               s.catalog->Find(txn, ctx.account_id, target.table));
        if (!t) return ArnNotFound(target.arn);
        FDYNO_ASSIGN_OR_RETURN(std::vector<store::Tag> current, s.catalog->GetTags(txn, t->id));
        std::erase_if(current, [&](const store::Tag& c) {
          return std::find(keys->begin(), keys->end(), c.key) != keys->end();
        });
        return s.catalog->SetTags(txn, t->id, current);
      }));
  return std::string();
}

Result<std::string> ListTagsOfResource(Services& s, const RequestContext& ctx, const Value& body) {
  ConstraintErrors e;
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> arn, ReadResourceArn(body, e));
  // NextToken is accepted and type-checked; every table's tags fit in one page.
  FDYNO_RETURN_IF_ERROR(GetString(body, "NextToken"));
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  FDYNO_ASSIGN_OR_RETURN(ArnTarget target, ParseTableArn(ctx, *arn, "ListTagsOfResource"));
  kv::RunOptions options = RunOptionsFor(ctx, s);
  options.read_only = true;
  FDYNO_ASSIGN_OR_RETURN(
      std::vector<store::Tag> tags,
      kv::Run(*s.db, options,
              [&](kv::Transaction& txn, const kv::Attempt&) -> Result<std::vector<store::Tag>> {
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                                       s.catalog->Find(txn, ctx.account_id, target.table));
                if (!t) return ArnNotFound(target.arn);
                return s.catalog->GetTags(txn, t->id);
              }));
  // At most 50 tags: one page, no NextToken.
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("Tags");
  w.StartArray();
  for (const auto& t : tags) {
    w.StartObject();
    w.Key("Key");
    Str(w, t.key);
    w.Key("Value");
    Str(w, t.value);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Json(buffer);
}

}  // namespace

kv::RunOptions RunOptionsFor(const RequestContext& ctx, const Services& s) {
  kv::RunOptions options;
  if (ctx.deadline != std::chrono::steady_clock::time_point{}) options.deadline = ctx.deadline;
  options.clock = s.clock;
  return options;
}

}  // namespace fdyno::api::tables

namespace fdyno::api {

void RegisterTableOperations(OperationRegistry& registry, const Services& services) {
  auto s = std::make_shared<Services>(services);
  auto bind =
      [s](Result<std::string> (*fn)(Services&, const RequestContext&, const rapidjson::Value&)) {
        return [s, fn](const RequestContext& ctx, const rapidjson::Value& body) {
          return fn(*s, ctx, body);
        };
      };
  registry.Register("CreateTable", bind(&tables::CreateTable));
  registry.Register("DescribeTable", bind(&tables::DescribeTable));
  registry.Register("ListTables", bind(&tables::ListTables));
  registry.Register("DeleteTable", bind(&tables::DeleteTable));
  registry.Register("UpdateTable", bind(&tables::UpdateTable));
  registry.Register("TagResource", bind(&tables::TagResource));
  registry.Register("UntagResource", bind(&tables::UntagResource));
  registry.Register("ListTagsOfResource", bind(&tables::ListTagsOfResource));
}

}  // namespace fdyno::api
