// CreateTable: the request, its constraints, the plan of the new table (DynamoDB's semantic
// rules in its order) and the transaction that creates it with its stream.
#include <rapidjson/document.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/json_util.h"
#include "api/policy_ops.h"
#include "api/projection_request.h"
#include "api/table_arn.h"
#include "api/table_handlers.h"
#include "api/table_ops.h"
#include "api/table_render.h"
#include "api/table_request.h"
#include "api/table_rules.h"
#include "api/vector_table_ops.h"
#include "api/warm_throughput.h"
#include "kv/run.h"
#include "store/streams.h"

namespace fdyno::api::tables {
namespace {

using rapidjson::Value;
using store::TableInfo;

// Java's HashSet iteration order for strings (bucket of the spread String.hashCode, then
// insertion order): DynamoDB prints some sets of attribute names in this order.
std::vector<std::string> JavaHashSetOrder(const std::vector<std::string>& items) {
  size_t buckets = 16;
  while (static_cast<double>(items.size()) > static_cast<double>(buckets) * 0.75) buckets *= 2;
  auto bucket = [&](const std::string& s) {
    uint32_t h = 0;
    // String.hashCode over UTF-16 code units; names are ASCII in practice, and for non-ASCII
    // bytes this still yields a deterministic order.
    for (unsigned char c : s) h = 31 * h + c;
    h ^= h >> 16;
    return h & (buckets - 1);
  };
  std::vector<std::pair<size_t, size_t>> order;  // (bucket, insertion index)
  for (size_t i = 0; i < items.size(); ++i) order.emplace_back(bucket(items[i]), i);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& [b, i] : order) out.push_back(items[i]);
  return out;
}

struct CreateTableRequest {
  std::optional<std::vector<AttributeIn>> attribute_definitions;
  std::optional<std::string> table_name;
  std::optional<std::vector<KeyElementIn>> key_schema;
  std::optional<std::vector<IndexIn>> local_indexes;
  std::optional<std::vector<IndexIn>> global_indexes;
  std::optional<std::string> billing_mode;
  std::optional<ThroughputIn> throughput;
  std::optional<StreamIn> stream;
  std::optional<SseIn> sse;
  std::optional<std::vector<TagIn>> tags;
  std::optional<std::string> table_class;
  std::optional<bool> deletion_protection;
  std::optional<OnDemandIn> on_demand;
  std::optional<WarmIn> warm;
  std::optional<std::vector<VectorIndexIn>> vector_indexes;
  std::optional<std::string> resource_policy;
};

Result<CreateTableRequest> ParseCreateTable(const Value& body) {
  CreateTableRequest r;
  FDYNO_ASSIGN_OR_RETURN(r.attribute_definitions, ParseAttributeDefinitions(body));
  FDYNO_ASSIGN_OR_RETURN(r.table_name, GetOwnedString(body, "TableName"));
  FDYNO_ASSIGN_OR_RETURN(r.key_schema, ParseKeySchema(body));
  FDYNO_ASSIGN_OR_RETURN(r.local_indexes,
                         ParseIndexes(body, "LocalSecondaryIndexes", "LocalSecondaryIndex", false));
  FDYNO_ASSIGN_OR_RETURN(
      r.global_indexes, ParseIndexes(body, "GlobalSecondaryIndexes", "GlobalSecondaryIndex", true));
  FDYNO_ASSIGN_OR_RETURN(r.billing_mode, GetOwnedString(body, "BillingMode"));
  FDYNO_ASSIGN_OR_RETURN(r.throughput, ParseThroughput(body, "ProvisionedThroughput"));
  FDYNO_ASSIGN_OR_RETURN(r.stream, ParseStream(body));
  FDYNO_ASSIGN_OR_RETURN(r.sse, ParseSse(body));
  FDYNO_ASSIGN_OR_RETURN(r.tags, ParseTags(body));
  FDYNO_ASSIGN_OR_RETURN(r.table_class, GetOwnedString(body, "TableClass"));
  FDYNO_ASSIGN_OR_RETURN(r.deletion_protection, GetBool(body, "DeletionProtectionEnabled"));
  FDYNO_ASSIGN_OR_RETURN(r.on_demand, ParseOnDemand(body));
  FDYNO_ASSIGN_OR_RETURN(r.warm, ParseWarm(body));
  FDYNO_ASSIGN_OR_RETURN(r.vector_indexes, ParseVectorIndexes(body));
  FDYNO_ASSIGN_OR_RETURN(r.resource_policy, GetOwnedString(body, "ResourcePolicy"));
  return r;
}

Status CheckCreateTableConstraints(const CreateTableRequest& r) {
  ConstraintErrors e;
  e.NotNull("attributeDefinitions", r.attribute_definitions.has_value());
  CheckAttributeDefinitionConstraints(e, r.attribute_definitions);
  if (r.billing_mode) e.Enum("billingMode", *r.billing_mode, {"PROVISIONED", "PAY_PER_REQUEST"});
  CheckThroughputConstraints(e, r.throughput, "provisionedThroughput");
  CheckKeySchemaConstraints(e, r.key_schema, "keySchema", true);
  CheckIndexConstraints(e, r.local_indexes, "localSecondaryIndexes", false);
  CheckIndexConstraints(e, r.global_indexes, "globalSecondaryIndexes", true);
  CheckVectorIndexConstraints(e, r.vector_indexes);
  CheckStreamConstraints(e, r.stream);
  CheckSseConstraints(e, r.sse);
  return e.ToStatus();
}

Error UnusedDefinitions(const std::vector<AttributeIn>& defs,
                        const std::vector<std::string>& used) {
  return Invalid("Some AttributeDefinitions are not used. AttributeDefinitions: " +
                 JoinNames(DefinitionNames(defs)) +
                 ", keys used: " + JoinNames(JavaHashSetOrder(used)));
}

// DynamoDB reports attribute definitions no key schema uses before the indexes' projections,
// throughputs and names. Decided here from the key schemas as given, when every attribute they
// name is defined (an undefined one is the index's own error); vector indexes' search schemas
// are only known once planned, so a table with vector indexes is checked after them.
Status CheckDefinitionsUsed(const CreateTableRequest& r, const std::vector<AttributeIn>& defs) {
  if (r.vector_indexes || (!r.local_indexes && !r.global_indexes)) return Status::Ok();
  std::vector<std::string> used = KeyNames(*r.key_schema);
  for (const auto* list : {&r.local_indexes, &r.global_indexes}) {
    if (!*list) continue;
    if ((*list)->empty()) return Status::Ok();  // "List of ... is empty" comes first
    for (const IndexIn& in : **list) {
      for (const KeyElementIn& k : *in.key_schema) {
        if (std::find(used.begin(), used.end(), *k.name) == used.end()) used.push_back(*k.name);
      }
    }
  }
  const std::vector<std::string> defined = DefinitionNames(defs);
  for (const std::string& name : used) {
    if (std::find(defined.begin(), defined.end(), name) == defined.end()) return Status::Ok();
  }
  if (used.size() != defs.size()) return UnusedDefinitions(defs, used);
  return Status::Ok();
}

// Checks the semantic rules in DynamoDB's order and builds the table to create.
Result<std::pair<TableInfo, std::vector<store::Tag>>> PlanCreateTable(const CreateTableRequest& r,
                                                                      int64_t now_ms) {
  TableInfo t;
  t.name = *r.table_name;
  t.status = store::TableStatus::kActive;
  const bool on_demand = r.billing_mode && *r.billing_mode == "PAY_PER_REQUEST";
  if (on_demand) {
    if (r.throughput) {
      return Invalid(
          "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when "
          "BillingMode is PAY_PER_REQUEST");
    }
    t.billing_mode = store::BillingMode::kPayPerRequest;
    t.last_update_to_pay_per_request_ms = now_ms;
  } else {
    if (!r.throughput || !r.throughput->read || !r.throughput->write) {
      return Invalid(
          "ReadCapacityUnits and WriteCapacityUnits must both be specified when "
          "BillingMode is PROVISIONED");
    }
    FDYNO_RETURN_IF_ERROR(CheckCapacityBounds(*r.throughput));
    t.throughput.read_capacity_units = *r.throughput->read;
    t.throughput.write_capacity_units = *r.throughput->write;
  }

  const std::vector<AttributeIn>& defs = *r.attribute_definitions;
  {
    std::set<std::string> seen;
    for (const auto& d : defs) {
      if (!seen.insert(*d.name).second) {
        return Error::Validation("Attribute Name is duplicated: " + *d.name);
      }
    }
  }
  const std::vector<KeyElementIn>& ks = *r.key_schema;
  if (ks.size() > defs.size()) {
    return Error::Validation("Invalid KeySchema: Some index key attribute have no definition");
  }
  FDYNO_ASSIGN_OR_RETURN(t.key_schema, ResolveKeySchema(ks, defs));
  const bool has_indexes =
      r.local_indexes.has_value() || r.global_indexes.has_value() || r.vector_indexes.has_value();
  if (!has_indexes && ks.size() != defs.size()) {
    return Invalid(
        "Number of attributes in KeySchema does not exactly match number of attributes "
        "defined in AttributeDefinitions");
  }

  FDYNO_RETURN_IF_ERROR(CheckDefinitionsUsed(r, defs));
  std::set<std::string> index_names;
  std::vector<std::string> used = KeyNames(ks);
  auto note_used = [&](const store::KeySchema& k) {
    for (const model::KeyAttribute& a : k.Attributes()) {
      if (std::find(used.begin(), used.end(), a.name) == used.end()) used.push_back(a.name);
    }
  };
  if (r.local_indexes) {
    if (r.local_indexes->empty()) return Invalid("List of LocalSecondaryIndexes is empty");
    if (!t.key_schema.range) {
      return Invalid(
          "Table KeySchema does not have a range key, which is required when "
          "specifying a LocalSecondaryIndex");
    }
    for (const IndexIn& in : *r.local_indexes) {
      FDYNO_ASSIGN_OR_RETURN(store::KeySchema iks, ResolveKeySchema(*in.key_schema, defs));
      if (!iks.range) {
        return Invalid("Index KeySchema does not have a range key for index: " + *in.name);
      }
      if (iks.hash.name != t.key_schema.hash.name) {
        return Invalid(
            "Index KeySchema does not have the same leading hash key as table KeySchema "
            "for index: " +
            *in.name + ". index hash key: " + iks.hash.name +
            ", table hash key: " + t.key_schema.hash.name);
      }
      FDYNO_ASSIGN_OR_RETURN(store::Projection projection, ResolveProjection(*in.projection));
      if (!index_names.insert(*in.name).second) {
        return Invalid("Duplicate index name: " + *in.name);
      }
      store::SecondaryIndex index;
      index.name = *in.name;
      index.key_schema = std::move(iks);
      index.projection = std::move(projection);
      note_used(index.key_schema);
      t.local_indexes.push_back(std::move(index));
    }
    if (r.local_indexes->size() > kMaxLocalIndexes) {
      return Invalid("Number of LocalSecondaryIndexes exceeds per-table limit of 5");
    }
  }
  if (r.global_indexes) {
    if (r.global_indexes->empty()) return Invalid("List of GlobalSecondaryIndexes is empty");
    for (const IndexIn& in : *r.global_indexes) {
      FDYNO_ASSIGN_OR_RETURN(store::KeySchema iks, ResolveKeySchema(*in.key_schema, defs, true));
      FDYNO_ASSIGN_OR_RETURN(store::Projection projection, ResolveProjection(*in.projection));
      store::SecondaryIndex index;
      if (on_demand && in.throughput) {
        return Invalid("ProvisionedThroughput should not be specified for index: " + *in.name +
                       " when BillingMode is PAY_PER_REQUEST");
      }
      if (!on_demand) {
        if (!in.throughput) {
          return Invalid("ProvisionedThroughput is not specified for index: " + *in.name);
        }
        index.throughput.read_capacity_units = *in.throughput->read;
        index.throughput.write_capacity_units = *in.throughput->write;
      }
      if (in.on_demand) {
        FDYNO_RETURN_IF_ERROR(CheckOnDemand(*in.on_demand, on_demand, false, *in.name));
        ApplyOnDemand(*in.on_demand, index.on_demand);
      }
      FDYNO_ASSIGN_OR_RETURN(
          index.warm, InitialWarm(in.warm, on_demand, index.throughput, "index " + *in.name));
      if (!index_names.insert(*in.name).second) {
        return Invalid("Duplicate index name: " + *in.name);
      }
      index.name = *in.name;
      index.key_schema = std::move(iks);
      index.projection = std::move(projection);
      note_used(index.key_schema);
      t.global_indexes.push_back(std::move(index));
    }
    if (r.global_indexes->size() > kMaxGlobalIndexes) {
      return Invalid("GlobalSecondaryIndex count exceeds the per-table limit of 20");
    }
  }
  if (r.vector_indexes) {
    FDYNO_ASSIGN_OR_RETURN(
        t.vector_indexes,
        PlanCreateVectorIndexes(*r.vector_indexes, TypedDefinitions(defs), t, index_names, used));
  }
  if (has_indexes && used.size() != defs.size()) return UnusedDefinitions(defs, used);
  for (const auto& d : defs) {
    t.attribute_definitions.push_back({*d.name, *store::ParseScalarType(*d.type)});
  }

  if (r.stream) {
    bool enabled = *r.stream->enabled;
    if (enabled && !r.stream->view_type) {
      return Invalid("Table is being created with a stream enabled, UpdateViewType is required");
    }
    if (!enabled && r.stream->view_type) {
      return Invalid(
          "Table is being created with a stream disabled, UpdateViewType should not "
          "be specified");
    }
    if (enabled) {
      t.stream.enabled = true;
      t.stream.view_type = *ParseViewType(*r.stream->view_type);
      t.stream.label = StreamLabel(now_ms);
    }
  }
  if (r.sse) {
    FDYNO_RETURN_IF_ERROR(CheckSse(*r.sse));
    if (SseEnabled(*r.sse)) {
      t.sse.enabled = true;
      t.sse.kms_master_key_id = r.sse->kms_key.value_or("");
    }
  }
  if (r.table_class) {
    std::optional<store::TableClass> c = ParseTableClass(*r.table_class);
    if (!c) return InvalidTableClass();
    t.table_class = *c;
    t.table_class_set = true;
  }
  t.deletion_protection = r.deletion_protection.value_or(false);
  if (r.on_demand) {
    FDYNO_RETURN_IF_ERROR(CheckOnDemand(*r.on_demand, on_demand, false));
    ApplyOnDemand(*r.on_demand, t.on_demand);
  }
  FDYNO_ASSIGN_OR_RETURN(t.warm, InitialWarm(r.warm, on_demand, t.throughput, "table"));

  std::vector<store::Tag> tags;
  if (r.tags) {
    FDYNO_ASSIGN_OR_RETURN(tags, ResolveTags(*r.tags));
    if (tags.size() > kMaxTags) return TooManyTags();
  }
  return std::make_pair(std::move(t), std::move(tags));
}

// The account's limits on the capacity units a request asks for.
Status CheckCapacityLimits(const CreateTableRequest& r, std::string_view region) {
  if (r.throughput) FDYNO_RETURN_IF_ERROR(CheckCapacityLimit(*r.throughput, region, {}));
  if (r.on_demand) FDYNO_RETURN_IF_ERROR(CheckOnDemandLimit(*r.on_demand, region, {}));
  if (!r.global_indexes) return Status::Ok();
  for (const IndexIn& in : *r.global_indexes) {
    if (in.throughput) FDYNO_RETURN_IF_ERROR(CheckCapacityLimit(*in.throughput, region, *in.name));
    if (in.on_demand) FDYNO_RETURN_IF_ERROR(CheckOnDemandLimit(*in.on_demand, region, *in.name));
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> CreateTable(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(CreateTableRequest r, ParseCreateTable(body));
  FDYNO_RETURN_IF_ERROR(ValidateControlPlaneTableName(r.table_name));
  FDYNO_RETURN_IF_ERROR(CheckCreateTableConstraints(r));
  FDYNO_ASSIGN_OR_RETURN(auto plan, PlanCreateTable(r, s.clock->WallMillis()));
  FDYNO_RETURN_IF_ERROR(CheckCapacityLimits(r, ctx.region));
  plan.first.account = ctx.account_id;
  plan.first.region = ctx.region;
  // ResourcePolicy: validated as PutResourcePolicy validates it, written with the table.
  std::optional<PolicyDocument> policy;
  if (r.resource_policy) {
    FDYNO_ASSIGN_OR_RETURN(policy, ParsePolicy(*r.resource_policy, PolicyTarget::kTable));
    plan.first.has_policies = true;
  }
  const std::string uuid = store::NewTableUuid();
  FDYNO_ASSIGN_OR_RETURN(
      std::shared_ptr<const TableInfo> created,
      kv::Run(*s.db, RunOptionsFor(ctx, s),
              [&](kv::Transaction& txn,
                  const kv::Attempt& attempt) -> Result<std::shared_ptr<const TableInfo>> {
                if (attempt.maybe_committed) {  // the table an earlier attempt made, if any
                  FDYNO_ASSIGN_OR_RETURN(
                      std::shared_ptr<const TableInfo> mine,
                      s.catalog->FindCreated(txn, CallerScope(ctx), plan.first.name, uuid));
                  if (mine) return mine;
                }
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                                       s.catalog->Create(txn, plan.first, plan.second, uuid));
                if (policy) WriteTablePolicy(txn, t->id, *policy, t->creation_ms);
                if (!t->stream.enabled) return t;
                // The table's stream, created with it (its id is in the table record).
                TableInfo with_stream = *t;
                FDYNO_RETURN_IF_ERROR(store::SyncStream(txn, nullptr, &with_stream, s.stream_slots,
                                                        s.clock->WallMillis()));
                FDYNO_RETURN_IF_ERROR(s.catalog->Update(txn, with_stream));
                return std::make_shared<const TableInfo>(std::move(with_stream));
              }));
  spdlog::info("created table {} (id {}, account {})", created->name, created->id, ctx.account_id);
  // DynamoDB's response has the table's warm throughput only when the request gave it (being
  // raised), and no index's.
  ResponseView warm;
  warm.table_warm = r.warm.has_value();
  warm.index_warm = false;
  warm.table_warm_updating = true;
  // BillingModeSummary says the mode alone, without the time of the switch to on-demand.
  TableInfo shown = *created;
  shown.last_update_to_pay_per_request_ms = 0;
  return DescriptionResponse("TableDescription", ctx, shown, store::TableStatus::kCreating, nullptr,
                             warm);
}

}  // namespace fdyno::api::tables

namespace fdyno::api {

Result<store::TableInfo> PlanImportedTable(const rapidjson::Value& params, int64_t now_ms) {
  using namespace tables;
  FDYNO_ASSIGN_OR_RETURN(CreateTableRequest r, ParseCreateTable(params));
  FDYNO_RETURN_IF_ERROR(ValidateControlPlaneTableName(r.table_name));
  FDYNO_RETURN_IF_ERROR(CheckCreateTableConstraints(r));
  FDYNO_ASSIGN_OR_RETURN(auto plan, PlanCreateTable(r, now_ms));
  plan.first.status = store::TableStatus::kCreating;
  return std::move(plan.first);
}

}  // namespace fdyno::api
