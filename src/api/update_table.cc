// UpdateTable: the request, its constraints and request-level rules, the plan of the changed
// table (throughput and billing mode, index creation and deletion, stream, SSE, table class,
// vector indexes) and the transaction that writes it and syncs its stream.
#include <rapidjson/document.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/json_util.h"
#include "api/projection_request.h"
#include "api/table_arn.h"
#include "api/table_handlers.h"
#include "api/table_render.h"
#include "api/table_request.h"
#include "api/table_rules.h"
#include "api/vector_table_ops.h"
#include "kv/run.h"
#include "store/streams.h"

namespace fdyno::api::tables {
namespace {

using rapidjson::Value;
using store::TableInfo;

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

// The API model's constraints, all reported together.
Status CheckUpdateTableConstraints(const UpdateTableRequest& r) {
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
  return e.ToStatus();
}

// Each GlobalSecondaryIndexUpdate names one action, and each index is updated once.
Status CheckGsiUpdateActions(const std::vector<GsiUpdateIn>& updates) {
  std::set<std::string> names;
  for (const GsiUpdateIn& g : updates) {
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
  return Status::Ok();
}

// The kinds of change that must come alone, or not together (vector index changes count as
// index changes).
Status CheckChangeKinds(const UpdateTableRequest& r, size_t vector_changes,
                        bool gsi_create_delete) {
  const bool gsi = r.gsi_updates && !r.gsi_updates->empty();
  const bool iops = r.throughput || r.billing_mode;
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
  return Status::Ok();
}

// Online index changes (workers/backfill.h): a Create needs its key schema and projection, and
// one index (secondary or vector) is created or deleted at a time.
Status CheckOnlineIndexChanges(const UpdateTableRequest& r, size_t vector_changes) {
  size_t online = vector_changes;
  if (r.gsi_updates) {
    for (const GsiUpdateIn& g : *r.gsi_updates) {
      if (g.has_create && (!g.create.key_schema || !g.create.projection)) {
        return Invalid("Both KeySchema and Projection are required to create index: " +
                       *g.create_name);
      }
      online += (g.has_create || g.has_delete) ? 1 : 0;
    }
  }
  if (online > 1) {
    return Error::Make(ErrorType::kLimitExceeded,
                       "Subscriber limit exceeded: Only 1 online index can be created or "
                       "deleted simultaneously per table");
  }
  return Status::Ok();
}

Status CheckUpdateTableRequest(const UpdateTableRequest& r) {
  FDYNO_RETURN_IF_ERROR(CheckUpdateTableConstraints(r));
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
  if (r.on_demand && (r.throughput || r.stream || gsi || r.sse || r.replica_updates ||
                      r.deletion_protection || r.table_class || vector_changes != 0)) {
    return Invalid(
        "OnDemandThroughput can only be combined with BillingMode in an UpdateTable "
        "request");
  }
  if (r.billing_mode && *r.billing_mode == "PROVISIONED" && !r.throughput) {
    return Invalid("ProvisionedThroughput must be specified when BillingMode is PROVISIONED");
  }
  if (r.throughput) FDYNO_RETURN_IF_ERROR(CheckCapacityBounds(*r.throughput));
  if (r.gsi_updates) FDYNO_RETURN_IF_ERROR(CheckGsiUpdateActions(*r.gsi_updates));
  if (r.vector_updates) FDYNO_RETURN_IF_ERROR(CheckVectorIndexUpdates(*r.vector_updates));
  const bool gsi_create_delete =
      vector_changes > 0 ||
      (r.gsi_updates &&
       std::any_of(r.gsi_updates->begin(), r.gsi_updates->end(),
                   [](const GsiUpdateIn& g) { return g.has_create || g.has_delete; }));
  FDYNO_RETURN_IF_ERROR(CheckChangeKinds(r, vector_changes, gsi_create_delete));
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
  if (gsi_create_delete) FDYNO_RETURN_IF_ERROR(CheckOnlineIndexChanges(r, vector_changes));
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
        // table already defines. An attribute the table already defines keeps its type, as in
        // DynamoDB, whatever type the request gives it.
        std::vector<AttributeIn> defs;
        if (r.attribute_definitions) defs = *r.attribute_definitions;
        for (AttributeIn& d : defs) {
          for (const auto& known : current.attribute_definitions) {
            if (known.name == *d.name) d.type = std::string(store::ScalarTypeName(known.type));
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
  if (r.on_demand) {
    FDYNO_RETURN_IF_ERROR(CheckOnDemand(*r.on_demand, on_demand, true));
    ApplyOnDemand(*r.on_demand, t.on_demand);
  }
  return std::make_pair(std::move(t), updating);
}

}  // namespace

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

}  // namespace fdyno::api::tables
