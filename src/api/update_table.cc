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
#include "api/replica_updates.h"
#include "api/table_arn.h"
#include "api/table_handlers.h"
#include "api/table_render.h"
#include "api/table_request.h"
#include "api/table_rules.h"
#include "api/vector_table_ops.h"
#include "api/warm_throughput.h"
#include "base/time_text.h"
#include "kv/run.h"
#include "store/streams.h"

namespace fdyno::api::tables {
namespace {

using rapidjson::Value;
using store::TableInfo;

struct GsiUpdateIn {
  std::optional<std::string> update_name;
  std::optional<ThroughputIn> update_throughput;
  std::optional<OnDemandIn> update_on_demand;
  std::optional<WarmIn> update_warm;
  bool has_update = false;
  bool has_create = false;
  std::optional<std::string> create_name;
  IndexIn create;  // KeySchema, Projection and the throughputs of a Create
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
  // GlobalTableWitnessUpdates' actions that name a region (DynamoDB counts the others as absent).
  size_t witness_actions = 0;
  std::optional<std::string> table_class;
  std::optional<bool> deletion_protection;
  std::optional<OnDemandIn> on_demand;
  // WarmThroughput: an empty one is left out, as DynamoDB drops it.
  std::optional<WarmIn> warm;
  // MultiRegionConsistency, when given (it changes nothing without ReplicaUpdates).
  std::optional<std::string> multi_region_consistency;
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
          FDYNO_ASSIGN_OR_RETURN(g.update_on_demand, ParseOnDemand(*up));
          FDYNO_ASSIGN_OR_RETURN(g.update_warm, ParseWarm(*up));
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
          FDYNO_ASSIGN_OR_RETURN(g.create.on_demand, ParseOnDemand(*cr));
          FDYNO_ASSIGN_OR_RETURN(g.create.warm, ParseWarm(*cr));
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
  FDYNO_ASSIGN_OR_RETURN(const Value* witnesses, GetList(body, "GlobalTableWitnessUpdates"));
  for (size_t i = 0; witnesses != nullptr && i < witnesses->Size(); ++i) {
    const Value& w = (*witnesses)[static_cast<rapidjson::SizeType>(i)];
    for (const char* action : {"Create", "Delete"}) {
      const Value* a = w.IsObject() ? Member(w, action) : nullptr;
      const Value* region = a != nullptr && a->IsObject() ? Member(*a, "RegionName") : nullptr;
      if (region != nullptr && region->IsString() && region->GetStringLength() > 0) {
        ++r.witness_actions;
      }
    }
  }
  FDYNO_ASSIGN_OR_RETURN(r.table_class, GetOwnedString(body, "TableClass"));
  FDYNO_ASSIGN_OR_RETURN(r.deletion_protection, GetBool(body, "DeletionProtectionEnabled"));
  FDYNO_ASSIGN_OR_RETURN(r.on_demand, ParseOnDemand(body));
  FDYNO_ASSIGN_OR_RETURN(r.warm, ParseWarm(body));
  if (r.warm && r.warm->empty()) r.warm.reset();
  FDYNO_ASSIGN_OR_RETURN(r.multi_region_consistency,
                         GetOwnedString(body, "MultiRegionConsistency"));
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
  for (size_t i = 0; r.replica_updates != nullptr && i < r.replica_updates->Size(); ++i) {
    const Value& u = (*r.replica_updates)[static_cast<rapidjson::SizeType>(i)];
    const Value* update = u.IsObject() ? Member(u, "Update") : nullptr;
    if (update != nullptr) {
      e.NotNull(MemberPath("replicaUpdates", i) + ".update.regionName",
                update->IsObject() && Member(*update, "RegionName") != nullptr);
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
    if (g.has_update && g.update_warm && g.update_warm->empty()) {
      return Invalid(
          "WarmThroughput must have at least one of ReadUnitsPerSecond or WriteUnitsPerSecond "
          "specified for index: " +
          name);
    }
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
  const bool iops = r.throughput || r.billing_mode || r.on_demand;
  const int kinds = int{iops} + int{r.stream.has_value()} + int{gsi || vector_changes > 0} +
                    int{r.sse.has_value()} + int{r.table_class.has_value()} +
                    int{r.deletion_protection.has_value()} + int{r.replica_updates != nullptr} +
                    int{r.warm.has_value()};
  if (r.sse && kinds > 1) {
    return Invalid("Server-Side Encryption modification must be the only operation in the request");
  }
  if (r.table_class && kinds > 1) {
    return Invalid("TableClass modification must be the only operation in the request");
  }
  if (r.witness_actions > 0 && kinds > 0) {
    return Invalid("Requests that modify replicas or witnesses must not also modify other fields");
  }
  if (r.deletion_protection && kinds > 1) {
    return Invalid("DeletionProtection modification must be the only operation in the request");
  }
  if (r.warm && r.gsi_updates &&
      std::any_of(r.gsi_updates->begin(), r.gsi_updates->end(),
                  [](const GsiUpdateIn& g) { return g.has_create; })) {
    return Invalid(
        "Create global secondary index cannot be specified when updating WarmThroughput");
  }
  if (r.warm && kinds > 1) {
    return Invalid("WarmThroughput must be the only operation in the request");
  }
  if (r.replica_updates && kinds > 1) {
    return Invalid("Replica modification must be the only operation in the request");
  }
  // A billing mode switch is not an IOPS change here: DynamoDB takes one with a stream change or
  // an index creation.
  if (r.throughput && r.stream) {
    return Invalid("You cannot modify stream status while updating table IOPS");
  }
  if (r.throughput && gsi_create_delete) {
    return Invalid("You cannot create or delete index while updating table IOPS");
  }
  if (r.stream && gsi_create_delete) {
    return Invalid("You cannot create or delete index while changing stream status");
  }
  return Status::Ok();
}

// ReplicaUpdates' actions as DynamoDB checks them before it looks at the regions: each entry
// one action (its texts, bare), a Create naming its region.
Status CheckReplicaActions(const Value& updates) {
  for (const Value& u : updates.GetArray()) {
    int actions = 0;
    for (const char* action : {"Create", "Update", "Delete"}) {
      actions += u.IsObject() && Member(u, action) != nullptr ? 1 : 0;
    }
    if (actions == 0) {
      return Error::Validation(
          "There are no actions specified in the Replica Update Action of the request.");
    }
    if (actions > 1) {
      return Error::Validation(
          "Update table operation with more than one type of replica actions not allowed.");
    }
    const Value* create = Member(u, "Create");
    if (create != nullptr && (!create->IsObject() || Member(*create, "RegionName") == nullptr)) {
      return Error::Validation("One or more parameter values were invalid");
    }
  }
  return Status::Ok();
}

Error OnlineIndexLimit() {
  return Error::Make(ErrorType::kLimitExceeded,
                     "Subscriber limit exceeded: Only 1 online index can be created or deleted "
                     "simultaneously per table");
}

// Whether the request creates or deletes an index (secondary or vector).
bool ChangesIndexesOnline(const UpdateTableRequest& r) {
  return CountVectorIndexChanges(r.vector_updates) > 0 ||
         (r.gsi_updates &&
          std::any_of(r.gsi_updates->begin(), r.gsi_updates->end(),
                      [](const GsiUpdateIn& g) { return g.has_create || g.has_delete; }));
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
  if (online > 1) return OnlineIndexLimit();
  return Status::Ok();
}

Status CheckUpdateTableRequest(const UpdateTableRequest& r) {
  FDYNO_RETURN_IF_ERROR(CheckUpdateTableConstraints(r));
  const bool gsi = r.gsi_updates && !r.gsi_updates->empty();
  const size_t vector_changes = CountVectorIndexChanges(r.vector_updates);
  if (!r.throughput && !r.billing_mode && !r.stream && !gsi && !r.sse && !r.replica_updates &&
      r.witness_actions == 0 && !r.deletion_protection && !r.table_class && !r.on_demand &&
      !r.warm && vector_changes == 0) {
    // DynamoDB leaves out of the list a member the request has (MultiRegionConsistency changes
    // nothing on its own).
    return Error::Validation(
        std::string("At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
                    "GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, "
                    "MultiAccountReplicaReady, ReplicaTransitRoleArn, ") +
        (r.multi_region_consistency ? "" : "MultiRegionConsistency, ") +
        "DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required");
  }
  if (r.gsi_updates && r.gsi_updates->empty()) {
    return Invalid("List of GlobalSecondaryIndexUpdates is empty");
  }
  // Beside SSE, TableClass or DeletionProtection, DynamoDB names those (CheckChangeKinds).
  if (r.on_demand && !r.sse && !r.table_class && !r.deletion_protection &&
      (r.throughput || r.stream || gsi || r.replica_updates || r.warm || vector_changes != 0)) {
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
  const bool gsi_create_delete = ChangesIndexesOnline(r);
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
  if (r.replica_updates) FDYNO_RETURN_IF_ERROR(CheckReplicaActions(*r.replica_updates));
  if (r.witness_actions > 0) {
    return Invalid("Global table witnesses are not supported by this server");
  }
  // MultiRegionConsistency goes only with replica creations (DynamoDB's text), never ignored.
  if (r.multi_region_consistency &&
      (!r.replica_updates ||
       std::any_of(r.replica_updates->GetArray().begin(), r.replica_updates->GetArray().end(),
                   [](const Value& u) { return Member(u, "Create") == nullptr; }))) {
    return Error::Validation(
        "Only Replica Create actions are supported when MultiRegionConsistency parameter is "
        "provided.");
  }
  if (gsi_create_delete) FDYNO_RETURN_IF_ERROR(CheckOnlineIndexChanges(r, vector_changes));
  return Status::Ok();
}

// Applies a throughput change, keeping DynamoDB's increase/decrease bookkeeping.
void ChangeThroughput(store::Throughput& t, int64_t read, int64_t write, int64_t now_ms) {
  if (read > t.read_capacity_units || write > t.write_capacity_units) t.last_increase_ms = now_ms;
  if (read < t.read_capacity_units || write < t.write_capacity_units) {
    t.number_of_decreases_today = DecreasesToday(t, now_ms) + 1;
    t.last_decrease_ms = now_ms;
  }
  t.read_capacity_units = read;
  t.write_capacity_units = write;
}

// DynamoDB's budget of throughput decreases, per table and per global index: four in a UTC day,
// then one at most every hour, counted from the last accepted one (failed attempts do not count).
Status CheckDecreaseBudget(const store::Throughput& t, const ThroughputIn& wanted, int64_t now_ms) {
  constexpr int64_t kFreeDecreases = 4;
  constexpr int64_t kIntervalMs = 3'600'000;
  const bool decrease =
      *wanted.read < t.read_capacity_units || *wanted.write < t.write_capacity_units;
  if (!decrease || DecreasesToday(t, now_ms) < kFreeDecreases ||
      now_ms >= t.last_decrease_ms + kIntervalMs) {
    return Status::Ok();
  }
  const int64_t midnight = (t.last_decrease_ms / 86'400'000 + 1) * 86'400'000;
  return Error::Make(
      ErrorType::kLimitExceeded,
      "Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC "
      "day. After the first 4 decreases, each subsequent decrease in the same UTC day can be "
      "performed at most once every 3600 seconds. Number of decreases today: " +
          std::to_string(t.number_of_decreases_today) + ". Last decrease at " +
          LongDateTimeText(t.last_decrease_ms) + ". Next decrease can be made at " +
          LongDateTimeText(std::min(t.last_decrease_ms + kIntervalMs, midnight)));
}

// `subject`: "table" or "index <name>".
std::string ThroughputUnchanged(std::string_view subject, const store::Throughput& cur,
                                const ThroughputIn& req) {
  const std::string of = subject == "table" ? "the table" : std::string(subject);
  return "The provisioned throughput for the " + std::string(subject) +
         " will not change. The requested value equals the current value. Current "
         "ReadCapacityUnits provisioned for " +
         of + ": " + std::to_string(cur.read_capacity_units) +
         ". Requested ReadCapacityUnits: " + std::to_string(*req.read) +
         ". Current WriteCapacityUnits provisioned for " + of + ": " +
         std::to_string(cur.write_capacity_units) +
         ". Requested WriteCapacityUnits: " + std::to_string(*req.write) +
         ". Refer to the Amazon DynamoDB Developer Guide for current limits and how to request "
         "higher limits.";
}

// One UpdateTable being planned: the request, the table as it is, and the table it becomes.
struct Plan {
  const UpdateTableRequest& r;
  const TableInfo& current;
  const RequestContext& ctx;
  const Services& s;
  int64_t now_ms;
  TableInfo t;            // the new table
  bool on_demand;         // the billing mode once the request is applied
  bool updating = false;  // the response reports UPDATING

  bool WasOnDemand() const { return current.billing_mode == store::BillingMode::kPayPerRequest; }
  store::SecondaryIndex* FindGlobal(const std::string& name) {
    auto it = std::find_if(t.global_indexes.begin(), t.global_indexes.end(),
                           [&](const auto& g) { return g.name == name; });
    return it == t.global_indexes.end() ? nullptr : &*it;
  }
  Error IndexNotFound(const std::string& name) const {
    return Error::ResourceNotFound("Requested resource not found: Index " + name + " for table " +
                                   current.name);
  }
};

// The request's Update of global index `name`, or null.
const GsiUpdateIn* UpdateOf(const UpdateTableRequest& r, const std::string& name) {
  if (!r.gsi_updates) return nullptr;
  for (const GsiUpdateIn& u : *r.gsi_updates) {
    if (u.has_update && *u.update_name == name) return &u;
  }
  return nullptr;
}

// Whether the request's Update of global index `name` gives `member` (its ProvisionedThroughput,
// its WarmThroughput).
template <typename T>
bool UpdateGives(const UpdateTableRequest& r, const std::string& name,
                 std::optional<T> GsiUpdateIn::*member) {
  const GsiUpdateIn* u = UpdateOf(r, name);
  return u != nullptr && (u->*member).has_value();
}

// BillingMode and the table's ProvisionedThroughput.
Status PlanBilling(Plan& p) {
  const UpdateTableRequest& r = p.r;
  if (r.throughput && p.on_demand) {
    if (r.billing_mode && !p.WasOnDemand()) {
      return Invalid(
          "ProvisionedThroughput cannot be specified when BillingMode is PAY_PER_REQUEST");
    }
    return Invalid(
        "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when "
        "BillingMode is PAY_PER_REQUEST");
  }
  TableInfo& t = p.t;
  if (r.billing_mode) p.updating = true;  // DynamoDB answers UPDATING, even to a re-send
  if (p.on_demand && !p.WasOnDemand()) {
    t.billing_mode = store::BillingMode::kPayPerRequest;
    t.last_update_to_pay_per_request_ms = p.now_ms;
    // Not a decrease of the table's throughput (DynamoDB's count stays), but of its indexes'.
    t.throughput.read_capacity_units = t.throughput.write_capacity_units = 0;
    for (auto& g : t.global_indexes) ChangeThroughput(g.throughput, 0, 0, p.now_ms);
    p.updating = true;
  } else if (!p.on_demand && p.WasOnDemand()) {
    // Every GSI needs its throughput in GlobalSecondaryIndexUpdates.
    std::vector<std::string> missing;
    for (const auto& g : p.current.global_indexes) {
      if (!UpdateGives(r, g.name, &GsiUpdateIn::update_throughput)) missing.push_back(g.name);
    }
    if (!missing.empty()) {
      std::string names;
      for (const auto& n : missing) names += (names.empty() ? "" : ",") + n;
      return Invalid("ProvisionedThroughput must be specified for index: " + names);
    }
    t.billing_mode = store::BillingMode::kProvisioned;
    t.throughput.read_capacity_units = *r.throughput->read;
    t.throughput.write_capacity_units = *r.throughput->write;
    // OnDemandThroughput is an on-demand setting: the table's and the indexes' go with the switch.
    t.on_demand = {};
    for (auto& g : t.global_indexes) g.on_demand = {};
    p.updating = true;
  } else if (r.throughput) {
    if (*r.throughput->read == p.current.throughput.read_capacity_units &&
        *r.throughput->write == p.current.throughput.write_capacity_units) {
      return Error::Validation(ThroughputUnchanged("table", p.current.throughput, *r.throughput));
    }
    FDYNO_RETURN_IF_ERROR(CheckDecreaseBudget(p.current.throughput, *r.throughput, p.now_ms));
    ChangeThroughput(t.throughput, *r.throughput->read, *r.throughput->write, p.now_ms);
    p.updating = true;
  }
  return Status::Ok();
}

// A new global index: CREATING and backfilling; the index worker fills it, then marks it ACTIVE.
Status PlanCreateIndex(Plan& p, const GsiUpdateIn& u) {
  const std::string& name = *u.create_name;
  if (p.current.FindIndex(name) != nullptr) {
    return IndexAlreadyExists();
  }
  if (!p.r.attribute_definitions) {
    return Invalid("AttributeDefinitions is not specified for index: " + name);
  }
  if (p.t.global_indexes.size() >= kMaxGlobalIndexes) {
    return Error::Make(ErrorType::kLimitExceeded,
                       "Subscriber limit exceeded: Number of global secondary indexes exceeds "
                       "per-table limit of " +
                           std::to_string(kMaxGlobalIndexes));
  }
  // The new index's key attributes must be defined in this request, even those the table
  // already defines. An attribute the table already defines keeps its type, as in DynamoDB,
  // whatever type the request gives it.
  std::vector<AttributeIn> defs = *p.r.attribute_definitions;
  for (AttributeIn& d : defs) {
    for (const auto& known : p.current.attribute_definitions) {
      if (known.name == *d.name) d.type = std::string(store::ScalarTypeName(known.type));
    }
  }
  FDYNO_ASSIGN_OR_RETURN(store::KeySchema iks, ResolveKeySchema(*u.create.key_schema, defs, true));
  FDYNO_ASSIGN_OR_RETURN(store::Projection projection, ResolveProjection(*u.create.projection));
  if (p.on_demand && u.create.throughput) {
    return Invalid("Neither ReadCapacityUnits nor WriteCapacityUnits can be specified for index: " +
                   name + " when BillingMode is PAY_PER_REQUEST");
  }
  if (!p.on_demand && !u.create.throughput) {
    return Invalid("Both ReadCapacityUnits and WriteCapacityUnits must be specified for index: " +
                   name);
  }
  store::SecondaryIndex index;
  index.name = name;
  index.id = p.t.next_index_id++;
  if (u.create.throughput) {
    index.throughput.read_capacity_units = *u.create.throughput->read;
    index.throughput.write_capacity_units = *u.create.throughput->write;
  }
  if (u.create.on_demand) {
    FDYNO_RETURN_IF_ERROR(CheckOnDemand(*u.create.on_demand, p.on_demand, true, name));
    ApplyOnDemand(*u.create.on_demand, index.on_demand);
  }
  FDYNO_ASSIGN_OR_RETURN(
      index.warm, InitialWarm(u.create.warm, p.on_demand, index.throughput, "index " + name));
  for (const model::KeyAttribute& k : iks.Attributes()) {
    bool known = std::any_of(p.t.attribute_definitions.begin(), p.t.attribute_definitions.end(),
                             [&](const auto& d) { return d.name == k.name; });
    if (!known) p.t.attribute_definitions.push_back(k);
  }
  index.key_schema = std::move(iks);
  index.projection = std::move(projection);
  index.status = store::IndexStatus::kCreating;
  index.backfilling = true;
  p.t.global_indexes.push_back(std::move(index));
  p.updating = true;
  return Status::Ok();
}

// The global index `name` an Update or Delete names, or DynamoDB's error.
Result<store::SecondaryIndex*> NamedGlobalIndex(Plan& p, const std::string& name,
                                                const char* action) {
  store::SecondaryIndex* index = p.FindGlobal(name);
  if (index != nullptr) return index;
  if (p.current.FindIndex(name) != nullptr) {
    return Error::Validation(std::string("Cannot ") + action +
                             " an index that is not a GlobalSecondaryIndex: " + name);
  }
  return p.IndexNotFound(name);
}

// An index's ProvisionedThroughput, as GlobalSecondaryIndexUpdates' Update gives it.
Status PlanIndexThroughput(Plan& p, store::SecondaryIndex& index, const ThroughputIn& given) {
  if (!p.WasOnDemand() && *given.read == index.throughput.read_capacity_units &&
      *given.write == index.throughput.write_capacity_units) {
    return Error::Validation(ThroughputUnchanged("index " + index.name, index.throughput, given));
  }
  if (p.WasOnDemand()) {
    index.throughput.read_capacity_units = *given.read;
    index.throughput.write_capacity_units = *given.write;
  } else {
    FDYNO_RETURN_IF_ERROR(CheckDecreaseBudget(index.throughput, given, p.now_ms));
    ChangeThroughput(index.throughput, *given.read, *given.write, p.now_ms);
  }
  return Status::Ok();  // the index is UPDATING, not the table (ResponseOf)
}

// An Update of a global index: its ProvisionedThroughput (provisioned tables), its
// OnDemandThroughput (on-demand tables) and its WarmThroughput.
Status PlanUpdateIndex(Plan& p, const GsiUpdateIn& u) {
  const std::string& name = *u.update_name;
  FDYNO_ASSIGN_OR_RETURN(store::SecondaryIndex * index, NamedGlobalIndex(p, name, "update"));
  const bool has_on_demand =
      u.update_on_demand && (u.update_on_demand->max_read || u.update_on_demand->max_write);
  if (p.on_demand && (u.update_throughput || (!has_on_demand && !u.update_warm))) {
    return Invalid("The only Updates for index: " + name +
                   " when TableThroughputMode is PAY_PER_REQUEST can be to "
                   "OnDemandThroughput, WarmThroughput");
  }
  if (has_on_demand) {
    FDYNO_RETURN_IF_ERROR(CheckOnDemand(*u.update_on_demand, p.on_demand, true, name));
    ApplyOnDemand(*u.update_on_demand, index->on_demand);
  }
  if (u.update_warm) {
    const store::SecondaryIndex* before = p.current.FindIndex(name);
    FDYNO_ASSIGN_OR_RETURN(
        index->warm,
        RaisedWarm(*u.update_warm, EffectiveWarm(p.current, *before), "index " + name));
  }
  if (u.update_throughput) return PlanIndexThroughput(p, *index, *u.update_throughput);
  if (!p.on_demand && !u.update_warm) {
    return Invalid("ProvisionedThroughput must be specified for index: " + name);
  }
  return Status::Ok();
}

Status PlanIndexUpdates(Plan& p) {
  if (!p.r.gsi_updates) return Status::Ok();
  for (const GsiUpdateIn& u : *p.r.gsi_updates) {
    if (u.has_create) {
      FDYNO_RETURN_IF_ERROR(PlanCreateIndex(p, u));
    } else if (u.has_delete) {
      FDYNO_ASSIGN_OR_RETURN(store::SecondaryIndex * index,
                             NamedGlobalIndex(p, *u.delete_name, "delete"));
      index->status = store::IndexStatus::kDeleting;  // removed by the index worker
      p.updating = true;
    } else {
      FDYNO_RETURN_IF_ERROR(PlanUpdateIndex(p, u));
    }
  }
  return Status::Ok();
}

Status PlanStream(Plan& p) {
  const StreamIn& stream = *p.r.stream;
  const TableInfo& current = p.current;
  TableInfo& t = p.t;
  if (*stream.enabled) {
    if (current.stream.enabled) {
      return Error::Validation("Table already has an enabled stream: TableName: " + current.name);
    }
    t.stream.enabled = true;
    t.stream.view_type = *ParseViewType(*stream.view_type);
    t.stream.label = NextStreamLabel(current.stream.label, p.now_ms);
  } else {
    if (!current.stream.enabled) {
      return Error::Validation("Table has no stream to disable: TableName: " + current.name);
    }
    if (!current.replicas.empty()) {
      return Invalid("Disabling Stream is not allowed for a Global Table replica.");
    }
    t.stream.enabled = false;
  }
  p.updating = true;
  return Status::Ok();
}

Status PlanSse(Plan& p) {
  const SseIn& sse = *p.r.sse;
  if (!SseEnabled(sse)) {
    if (!p.current.sse.enabled) return Invalid("Table is already encrypted by default");
    p.t.sse = {};
  } else {
    std::string key = sse.kms_key.value_or("");
    // Only the exact ARN of the current key changes nothing; DynamoDB takes any other re-send
    // (its alias or id, no key at all) as a change and encrypts the table again.
    if (p.current.sse.enabled && key == KmsKeyArn(p.ctx, p.current.sse.kms_master_key_id)) {
      return Invalid(
          "Table is already encrypted with given KMSMasterKeyId. Use KMSMasterKeyId "
          "parameter if you want to change Master Key");
    }
    p.t.sse = {true, key};
  }
  // The table stays ACTIVE: only its SSEDescription says UPDATING (ResponseOf).
  return Status::Ok();
}

// TableClass. DynamoDB allows two changes in 30 days per table; once they are spent, even a
// re-send of the current class is refused. STANDARD on a table that never had a class changes
// nothing (no TableClassSummary appears, nothing is spent); the response says UPDATING anyway.
Status PlanTableClass(Plan& p) {
  constexpr int64_t kWindowMs = int64_t{30} * 86'400'000;
  const store::TableClass wanted = *ParseTableClass(*p.r.table_class);
  p.updating = true;
  if (!p.current.table_class_set && wanted == store::TableClass::kStandard) return Status::Ok();
  const std::vector<int64_t>& changes = p.current.table_class_changes_ms;
  if (static_cast<size_t>(std::count_if(changes.begin(), changes.end(), [&](int64_t ms) {
        return ms > p.now_ms - kWindowMs;
      })) >= store::kTableClassChangesKept) {
    return Error::Make(ErrorType::kLimitExceeded,
                       "Subscriber limit exceeded: Updates to TableClass are limited to 2 times "
                       "in 30 day(s).");
  }
  TableInfo& t = p.t;
  t.table_class_set = true;
  if (wanted == p.current.table_class) return Status::Ok();
  t.table_class = wanted;
  t.table_class_changes_ms.push_back(p.now_ms);
  if (t.table_class_changes_ms.size() > store::kTableClassChangesKept) {
    t.table_class_changes_ms.erase(t.table_class_changes_ms.begin());
  }
  return Status::Ok();
}

// DeletionProtectionEnabled. Within DynamoDB's interval after its last change every request to
// set it is refused, a re-send too; otherwise a re-send changes nothing and starts no interval.
Status PlanDeletionProtection(Plan& p) {
  const int64_t interval_ms = p.s.deletion_protection_interval_ms;
  const int64_t last = p.current.deletion_protection_ms;
  if (last != 0 && p.now_ms < last + interval_ms) {
    return Error::Make(ErrorType::kThrottling,
                       "Deletion protection setting for table " + p.current.name +
                           " modified within the previous " + std::to_string(interval_ms) +
                           " milliseconds. Please try again after " +
                           Iso8601Millis(last + interval_ms));
  }
  if (*p.r.deletion_protection != p.current.deletion_protection) {
    p.t.deletion_protection = *p.r.deletion_protection;
    p.t.deletion_protection_ms = p.now_ms;
  }
  return Status::Ok();
}

// DynamoDB's refusals of a change while an index is being built or deleted: another index
// creation or deletion (one at a time per table), and, while one is deleted, an update, a second
// deletion or a creation of the same name (named first), a throughput change or a billing switch
// (a re-send of the current billing mode passes), an OnDemandThroughput change.
Status CheckIndexesInFlight(const UpdateTableRequest& r, const TableInfo& current) {
  std::vector<std::string> deleting;
  for (const store::SecondaryIndex& g : current.global_indexes) {
    if (g.status == store::IndexStatus::kDeleting) deleting.push_back(g.name);
  }
  const std::string in_use = "Attempt to change a resource which is still in use: ";
  if (r.gsi_updates) {
    for (const GsiUpdateIn& u : *r.gsi_updates) {
      const std::optional<std::string>& name =
          u.has_update ? u.update_name : (u.has_delete ? u.delete_name : u.create_name);
      if (name && std::find(deleting.begin(), deleting.end(), *name) != deleting.end()) {
        return Error::ResourceInUse(in_use + "Index is being deleted. Table: " + current.name +
                                    " Index: " + *name);
      }
    }
  }
  std::string names;
  for (const std::string& n : deleting) names += (names.empty() ? "" : ", ") + n;
  const bool switches =
      r.billing_mode && (*r.billing_mode == "PAY_PER_REQUEST") !=
                            (current.billing_mode == store::BillingMode::kPayPerRequest);
  if (!deleting.empty() && (r.throughput || switches)) {
    return Error::ResourceInUse(
        in_use + "Can't change table IOPS when an index is being deleted. Table: " + current.name +
        " Indexes: [" + names + "]");
  }
  if (!deleting.empty() && r.on_demand) {
    return Error::ResourceInUse(
        in_use +
        "OnDemandThroughput cannot be updated while index deletion is in progress for "
        "indexes: [" +
        names + "]");
  }
  if (IndexesInFlight(current) && ChangesIndexesOnline(r)) return OnlineIndexLimit();
  return Status::Ok();
}

// The new table, or the error DynamoDB gives for this change of `current`.
// The changes DynamoDB makes on every replica of a global table, which this server does not
// carry to the others yet: refused rather than made on one replica alone.
Status CheckReplicatedChange(const UpdateTableRequest& r, const TableInfo& current) {
  if (current.replicas.empty() || (!ChangesIndexesOnline(r) && !r.billing_mode)) {
    return Status::Ok();
  }
  return Invalid(
      "Index creation or deletion and billing mode changes of a global table are not supported "
      "by this server");
}

Result<std::pair<TableInfo, bool>> PlanUpdateTable(const UpdateTableRequest& r,
                                                   const TableInfo& current,
                                                   const RequestContext& ctx, const Services& s,
                                                   int64_t now_ms) {
  const bool was_on_demand = current.billing_mode == store::BillingMode::kPayPerRequest;
  FDYNO_RETURN_IF_ERROR(CheckIndexesInFlight(r, current));
  // A global table with replica work in flight is in use (DynamoDB's ResourceInUseException).
  if (!current.replicas.empty()) {
    FDYNO_RETURN_IF_ERROR(CheckNotUpdating(current));
  }
  FDYNO_RETURN_IF_ERROR(CheckReplicatedChange(r, current));
  Plan p{r,
         current,
         ctx,
         s,
         now_ms,
         current,
         r.billing_mode ? *r.billing_mode == "PAY_PER_REQUEST" : was_on_demand,
         false};
  FDYNO_RETURN_IF_ERROR(PlanBilling(p));
  FDYNO_RETURN_IF_ERROR(PlanIndexUpdates(p));
  if (r.stream) FDYNO_RETURN_IF_ERROR(PlanStream(p));
  if (r.sse) FDYNO_RETURN_IF_ERROR(PlanSse(p));
  if (r.table_class) FDYNO_RETURN_IF_ERROR(PlanTableClass(p));
  TableInfo& t = p.t;
  if (r.vector_updates) {
    std::vector<store::AttributeDefinition> defs;
    if (r.attribute_definitions) defs = TypedDefinitions(*r.attribute_definitions);
    FDYNO_RETURN_IF_ERROR(ApplyVectorIndexUpdates(*r.vector_updates, defs, t));
    p.updating = true;
  }
  FDYNO_RETURN_IF_ERROR(CheckVectorIndexBilling(t));
  if (r.deletion_protection) FDYNO_RETURN_IF_ERROR(PlanDeletionProtection(p));
  if (r.on_demand) {
    FDYNO_RETURN_IF_ERROR(CheckOnDemand(*r.on_demand, p.on_demand, true));
    ApplyOnDemand(*r.on_demand, t.on_demand);
  }
  if (r.warm) {
    FDYNO_ASSIGN_OR_RETURN(t.warm, RaisedWarm(*r.warm, EffectiveWarm(current), "table"));
  }
  SettleWarm(current, t);
  return std::make_pair(std::move(t), p.updating);
}

// The account's limits on the capacity units a request asks for.
Status CheckCapacityLimits(const UpdateTableRequest& r, std::string_view region) {
  if (r.throughput) FDYNO_RETURN_IF_ERROR(CheckCapacityLimit(*r.throughput, region, {}));
  if (r.on_demand) FDYNO_RETURN_IF_ERROR(CheckOnDemandLimit(*r.on_demand, region, {}));
  if (!r.gsi_updates) return Status::Ok();
  for (const GsiUpdateIn& u : *r.gsi_updates) {
    if (u.has_update && u.update_throughput) {
      FDYNO_RETURN_IF_ERROR(CheckCapacityLimit(*u.update_throughput, region, *u.update_name));
    }
    if (u.has_update && u.update_on_demand) {
      FDYNO_RETURN_IF_ERROR(CheckOnDemandLimit(*u.update_on_demand, region, *u.update_name));
    }
    if (u.has_create && u.create.throughput) {
      FDYNO_RETURN_IF_ERROR(CheckCapacityLimit(*u.create.throughput, region, *u.create_name));
    }
    if (u.has_create && u.create.on_demand) {
      FDYNO_RETURN_IF_ERROR(CheckOnDemandLimit(*u.create.on_demand, region, *u.create_name));
    }
  }
  return Status::Ok();
}

// The members of `shown` the request cleared with -1, shown as -1: DynamoDB echoes them so in
// its response (members cleared earlier stay absent).
void EchoCleared(const OnDemandIn& in, store::OnDemandLimits& shown) {
  if (in.max_read == -1) shown.max_read_request_units = -1;
  if (in.max_write == -1) shown.max_write_request_units = -1;
}

// What DynamoDB's UpdateTable response shows of `after`, the table `before` became: the new
// stream, deletion protection, OnDemandThroughput (members cleared by the request as -1) and new
// indexes (CREATING, Backfilling false);
// a billing mode switch as made (throughputs of table and indexes too; a switch to on-demand
// without its time); a throughput change with the old units and count of decreases but the new
// increase or decrease time (an index whose throughput changes keeps its old throughput and is
// UPDATING); the old table class; a raised warm throughput with its old values, UPDATING; an SSE
// change as in progress.
std::pair<TableInfo, ResponseView> ResponseOf(const UpdateTableRequest& r, const TableInfo& before,
                                              const TableInfo& after) {
  TableInfo shown = after;
  ResponseView view;
  const bool switched = before.billing_mode != after.billing_mode;
  if (switched && after.billing_mode == store::BillingMode::kPayPerRequest) {
    shown.last_update_to_pay_per_request_ms = 0;
  }
  if (!switched && r.throughput) {
    shown.throughput.read_capacity_units = before.throughput.read_capacity_units;
    shown.throughput.write_capacity_units = before.throughput.write_capacity_units;
    shown.throughput.number_of_decreases_today = before.throughput.number_of_decreases_today;
  }
  for (store::SecondaryIndex& index : shown.global_indexes) {
    const store::SecondaryIndex* old = before.FindIndex(index.name);
    if (old == nullptr) {
      index.backfilling = false;  // a new index: CREATING, its backfill not begun
      continue;
    }
    if (!switched) index.throughput = old->throughput;
    if (!switched && UpdateGives(r, index.name, &GsiUpdateIn::update_throughput))
      index.status = store::IndexStatus::kUpdating;
    if (UpdateGives(r, index.name, &GsiUpdateIn::update_warm)) {
      index.warm = old->warm;
      view.index_warm_updating.push_back(index.name);
    }
    const GsiUpdateIn* update = UpdateOf(r, index.name);
    if (update != nullptr && update->update_on_demand) {
      EchoCleared(*update->update_on_demand, index.on_demand);
    }
  }
  if (r.on_demand) EchoCleared(*r.on_demand, shown.on_demand);
  shown.table_class = before.table_class;
  shown.table_class_set = before.table_class_set;
  shown.table_class_changes_ms = before.table_class_changes_ms;
  if (r.warm) {
    shown.warm = before.warm;
    view.table_warm_updating = true;
  }
  if (r.sse) {
    shown.sse = before.sse;
    view.sse_updating = true;
  }
  return {std::move(shown), std::move(view)};
}

}  // namespace

Result<std::string> UpdateTable(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(UpdateTableRequest r, ParseUpdateTable(body));
  FDYNO_ASSIGN_OR_RETURN(std::string name, ResolveTableName(ctx, r.table_name, "UpdateTable"));
  FDYNO_RETURN_IF_ERROR(CheckUpdateTableRequest(r));
  FDYNO_RETURN_IF_ERROR(CheckCapacityLimits(r, ctx.region));
  if (r.replica_updates) {
    return UpdateReplicas(s, ctx, name, *r.replica_updates, r.multi_region_consistency);
  }
  const int64_t now_ms = s.clock->WallMillis();
  std::optional<std::pair<TableInfo, bool>> written;  // what the latest attempt wrote
  std::shared_ptr<const TableInfo> before;            // the table it changed
  FDYNO_ASSIGN_OR_RETURN(
      auto updated,
      kv::Run(*s.db, RunOptionsFor(ctx, s),
              [&](kv::Transaction& txn,
                  const kv::Attempt& attempt) -> Result<std::pair<TableInfo, bool>> {
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                                       s.catalog->Find(txn, CallerScope(ctx), name));
                if (!Settled(t)) return TableNotFound(name);
                // After an ambiguous commit, the record the earlier attempt wrote is its
                // success (applying the request again would fail on its own effect).
                if (attempt.maybe_committed && written &&
                    store::EncodeTableInfo(*t) == store::EncodeTableInfo(written->first)) {
                  return *written;
                }
                FDYNO_ASSIGN_OR_RETURN(auto plan, PlanUpdateTable(r, *t, ctx, s, now_ms));
                FDYNO_RETURN_IF_ERROR(
                    store::SyncStream(txn, t.get(), &plan.first, s.stream_slots, now_ms));
                FDYNO_RETURN_IF_ERROR(s.catalog->Update(txn, plan.first));
                written = plan;
                before = t;
                return plan;
              }));
  const auto [shown, view] = ResponseOf(r, *before, updated.first);
  return DescriptionResponse("TableDescription", ctx, shown,
                             updated.second ? store::TableStatus::kUpdating : shown.status, nullptr,
                             view);
}

}  // namespace fdyno::api::tables
