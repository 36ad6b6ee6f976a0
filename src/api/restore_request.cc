#include "api/restore_request.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/request_model.h"
#include "api/table_request.h"
#include "store/attribute_usage.h"

namespace fdyno::api {

using rapidjson::Value;
using store::TableInfo;

namespace {
constexpr std::string_view kInvalid = "One or more parameter values were invalid: ";
constexpr std::string_view kNamePattern = "[a-zA-Z0-9_.-]+";
}  // namespace

// A name member's constraints (table, backup and index names): length 3..255, the pattern.
void CheckName(ConstraintErrors& e, std::string_view path, const std::optional<std::string>& v) {
  e.NotNull(path, v.has_value());
  if (!v) return;
  e.Pattern(path, *v, IsValidTableNameChars(*v), kNamePattern);
  e.MinLength(path, *v, 3);
  e.MaxLength(path, *v, 255);
}

// A timestamp member (seconds since the epoch, a JSON number) in ms.
Result<std::optional<int64_t>> GetTimestampMs(const Value& obj, std::string_view name) {
  FDYNO_ASSIGN_OR_RETURN(const Value* v, request::ReadMember(obj, name, JsonShape::kDouble, {},
                                                             request::TimestampNumber));
  return request::Millis(v);
}

namespace {
Status ParseThroughputInto(const Value& obj, std::optional<int64_t>& read,
                           std::optional<int64_t>& write, bool& present) {
  FDYNO_ASSIGN_OR_RETURN(const Value* t,
                         GetStruct(obj, "ProvisionedThroughput", "ProvisionedThroughput"));
  if (t == nullptr) return Status::Ok();
  present = true;
  FDYNO_ASSIGN_OR_RETURN(read, GetLong(*t, "ReadCapacityUnits"));
  FDYNO_ASSIGN_OR_RETURN(write, GetLong(*t, "WriteCapacityUnits"));
  return Status::Ok();
}

Result<std::optional<std::vector<IndexOverride>>> ParseIndexOverrides(const Value& body,
                                                                      std::string_view member,
                                                                      std::string_view type) {
  FDYNO_ASSIGN_OR_RETURN(const Value* list, GetList(body, member));
  if (list == nullptr) return std::optional<std::vector<IndexOverride>>();
  std::vector<IndexOverride> out;
  for (const Value& v : list->GetArray()) {
    FDYNO_RETURN_IF_ERROR(CheckShape(v, JsonShape::kValueStruct, type));
    if (!v.IsObject()) continue;
    IndexOverride o;
    FDYNO_ASSIGN_OR_RETURN(o.name, GetOwnedString(v, "IndexName"));
    FDYNO_ASSIGN_OR_RETURN(const Value* ks, GetList(v, "KeySchema"));
    if (ks != nullptr) {
      o.has_key_schema = true;
      for (const Value& k : ks->GetArray()) {
        FDYNO_RETURN_IF_ERROR(CheckShape(k, JsonShape::kValueStruct, "KeySchemaElement"));
        if (!k.IsObject()) continue;
        FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> n, GetOwnedString(k, "AttributeName"));
        FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> t, GetOwnedString(k, "KeyType"));
        o.key_schema.emplace_back(std::move(n), std::move(t));
      }
    }
    FDYNO_ASSIGN_OR_RETURN(const Value* p, GetStruct(v, "Projection", "Projection"));
    if (p != nullptr) {
      o.has_projection = true;
      FDYNO_ASSIGN_OR_RETURN(o.projection_type, GetOwnedString(*p, "ProjectionType"));
      FDYNO_ASSIGN_OR_RETURN(const Value* nka, GetList(*p, "NonKeyAttributes"));
      if (nka != nullptr) {
        std::vector<std::string> names;
        for (const Value& n : nka->GetArray()) {
          FDYNO_RETURN_IF_ERROR(CheckShape(n, JsonShape::kString));
          if (n.IsString()) names.emplace_back(AsStringView(n));
        }
        o.non_key = std::move(names);
      }
    }
    FDYNO_RETURN_IF_ERROR(ParseThroughputInto(v, o.read, o.write, o.has_throughput));
    out.push_back(std::move(o));
  }
  return std::optional<std::vector<IndexOverride>>(std::move(out));
}

}  // namespace
Result<RestoreRequest> ParseRestoreRequest(const Value& body) {
  RestoreRequest r;
  FDYNO_ASSIGN_OR_RETURN(r.target, GetOwnedString(body, "TargetTableName"));
  FDYNO_ASSIGN_OR_RETURN(r.billing, GetOwnedString(body, "BillingModeOverride"));
  FDYNO_ASSIGN_OR_RETURN(
      r.gsi, ParseIndexOverrides(body, "GlobalSecondaryIndexOverride", "GlobalSecondaryIndex"));
  FDYNO_ASSIGN_OR_RETURN(
      r.lsi, ParseIndexOverrides(body, "LocalSecondaryIndexOverride", "LocalSecondaryIndex"));
  FDYNO_ASSIGN_OR_RETURN(const Value* t,
                         GetStruct(body, "ProvisionedThroughputOverride", "ProvisionedThroughput"));
  if (t != nullptr) {
    r.has_throughput = true;
    FDYNO_ASSIGN_OR_RETURN(r.read, GetLong(*t, "ReadCapacityUnits"));
    FDYNO_ASSIGN_OR_RETURN(r.write, GetLong(*t, "WriteCapacityUnits"));
  }
  FDYNO_ASSIGN_OR_RETURN(const Value* od,
                         GetStruct(body, "OnDemandThroughputOverride", "OnDemandThroughput"));
  if (od != nullptr) {
    FDYNO_ASSIGN_OR_RETURN(r.max_read, GetLong(*od, "MaxReadRequestUnits"));
    FDYNO_ASSIGN_OR_RETURN(r.max_write, GetLong(*od, "MaxWriteRequestUnits"));
  }
  FDYNO_ASSIGN_OR_RETURN(r.vector, ParseVectorIndexOverride(body));
  FDYNO_ASSIGN_OR_RETURN(r.sse, GetStruct(body, "SSESpecificationOverride", "SSESpecification"));
  if (r.sse != nullptr) {
    FDYNO_ASSIGN_OR_RETURN(r.sse_enabled, GetBool(*r.sse, "Enabled"));
    FDYNO_ASSIGN_OR_RETURN(r.sse_type, GetOwnedString(*r.sse, "SSEType"));
    FDYNO_ASSIGN_OR_RETURN(r.sse_key, GetOwnedString(*r.sse, "KMSMasterKeyId"));
  }
  return r;
}

namespace {
// A present ProvisionedThroughput's constraints, as everywhere else (tables::).
void CheckThroughputConstraints(ConstraintErrors& e, const std::string& path, bool present,
                                const std::optional<int64_t>& read,
                                const std::optional<int64_t>& write) {
  if (present) tables::CheckThroughputConstraints(e, tables::ThroughputIn{read, write}, path);
}

void CheckIndexConstraints(ConstraintErrors& e, std::string_view list,
                           const std::optional<std::vector<IndexOverride>>& indexes) {
  if (!indexes) return;
  for (size_t i = 0; i < indexes->size(); ++i) {
    const IndexOverride& o = (*indexes)[i];
    const std::string p = std::string(list) + "." + std::to_string(i + 1) + ".member";
    CheckName(e, p + ".indexName", o.name);
    e.NotNull(p + ".keySchema", o.has_key_schema);
    if (o.has_key_schema && (o.key_schema.empty() || o.key_schema.size() > 2)) {
      e.AddWithoutValue(p + ".keySchema", o.key_schema.empty()
                                              ? "Member must have length greater than or equal to 1"
                                              : "Member must have length less than or equal to 2");
    }
    for (size_t k = 0; k < o.key_schema.size(); ++k) {
      const std::string kp = p + ".keySchema." + std::to_string(k + 1) + ".member";
      e.NotNull(kp + ".attributeName", o.key_schema[k].first.has_value());
      e.NotNull(kp + ".keyType", o.key_schema[k].second.has_value());
      if (o.key_schema[k].second)
        e.Enum(kp + ".keyType", *o.key_schema[k].second, {"HASH", "RANGE"});
    }
    e.NotNull(p + ".projection", o.has_projection);
    if (o.projection_type) {
      e.Enum(p + ".projection.projectionType", *o.projection_type, {"ALL", "KEYS_ONLY", "INCLUDE"});
    }
    CheckThroughputConstraints(e, p + ".provisionedThroughput", o.has_throughput, o.read, o.write);
  }
}

}  // namespace
void CheckOverrideConstraints(ConstraintErrors& e, const RestoreRequest& r) {
  if (r.billing) e.Enum("billingModeOverride", *r.billing, {"PROVISIONED", "PAY_PER_REQUEST"});
  CheckIndexConstraints(e, "globalSecondaryIndexOverride", r.gsi);
  CheckIndexConstraints(e, "localSecondaryIndexOverride", r.lsi);
  CheckThroughputConstraints(e, "provisionedThroughputOverride", r.has_throughput, r.read, r.write);
  if (r.sse) {
    tables::CheckSseConstraints(e, tables::SseIn{r.sse_enabled, r.sse_type, r.sse_key},
                                "sSESpecificationOverride");
  }
  CheckVectorIndexOverrideConstraints(e, r.vector);
}

namespace {
Error Invalid(std::string_view detail) {
  return Error::Validation(std::string(kInvalid) + std::string(detail));
}
Error InvalidRequest(std::string_view detail) {
  return Error::Validation("Invalid Request: " + std::string(detail));
}

// Whether override `o` describes index `i`: the same key schema (attributes and roles, in order)
// and the same projection (non-key attributes in any order).
bool Describes(const IndexOverride& o, const store::SecondaryIndex& i) {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const model::KeyAttribute& a : i.key_schema.HashAttributes())
    keys.emplace_back(a.name, "HASH");
  for (const model::KeyAttribute& a : i.key_schema.RangeAttributes()) {
    keys.emplace_back(a.name, "RANGE");
  }
  if (keys.size() != o.key_schema.size()) return false;
  for (size_t k = 0; k < keys.size(); ++k) {
    if (keys[k].first != *o.key_schema[k].first || keys[k].second != *o.key_schema[k].second) {
      return false;
    }
  }
  const std::string type = o.projection_type.value_or("");
  const store::ProjectionType wanted = type == "ALL"         ? store::ProjectionType::kAll
                                       : type == "KEYS_ONLY" ? store::ProjectionType::kKeysOnly
                                                             : store::ProjectionType::kInclude;
  if (wanted != i.projection.type) return false;
  std::vector<std::string> given = o.non_key.value_or(std::vector<std::string>());
  std::vector<std::string> kept = i.projection.non_key_attributes;
  std::sort(given.begin(), given.end());
  std::sort(kept.begin(), kept.end());
  return given == kept;
}

// The indexes the restored table keeps: for each override, the source's index it describes (key
// schema and projection), under the override's name (DynamoDB lets a restore rename an index,
// not change it), with the override's throughput for a global index.
Result<std::vector<store::SecondaryIndex>> OverrideIndexes(
    const std::vector<store::SecondaryIndex>& source, const std::vector<IndexOverride>& overrides) {
  std::vector<store::SecondaryIndex> out;
  std::set<std::string> names;
  std::set<int64_t> taken;
  for (const IndexOverride& o : overrides) {
    auto it = std::find_if(source.begin(), source.end(), [&](const store::SecondaryIndex& i) {
      return !taken.contains(i.id) && Describes(o, i);
    });
    if (it == source.end()) {
      return InvalidRequest("Index " + *o.name +
                            " does not match a secondary index that existed in the source table "
                            "and cannot be created during the restore operation");
    }
    if (!names.insert(*o.name).second) return Invalid("Duplicate index name: " + *o.name);
    taken.insert(it->id);
    store::SecondaryIndex index = *it;
    index.name = *o.name;
    if (o.has_throughput) index.throughput = {*o.read, *o.write};
    out.push_back(std::move(index));
  }
  return out;
}

// The restored table's billing mode (the override's, else the source's) and its throughputs,
// with DynamoDB's rules on the overrides that go with each mode.
Status PlanRestoredBilling(const TableInfo& source, const RestoreRequest& r, int64_t now_ms,
                           TableInfo& t) {
  const bool to_on_demand = r.billing && *r.billing == "PAY_PER_REQUEST";
  const bool to_provisioned = r.billing && *r.billing == "PROVISIONED";
  const bool on_demand =
      to_on_demand ||
      (!to_provisioned && source.billing_mode == store::BillingMode::kPayPerRequest);
  const std::vector<IndexOverride> none;
  const std::vector<IndexOverride>& gsi = r.gsi ? *r.gsi : none;
  if (on_demand) {
    if (r.has_throughput) {
      return InvalidRequest(to_on_demand ? "Cannot override ProvisionedThroughput if BillingMode "
                                           "is overridden to PAY_PER_REQUEST"
                                         : "Cannot override ProvisionedThroughput unless "
                                           "BillingMode is PROVISIONED");
    }
    for (const IndexOverride& o : gsi) {
      if (o.has_throughput) {
        return InvalidRequest(
            "Cannot override ProvisionedThroughput if BillingMode is overridden to "
            "PAY_PER_REQUEST for index " +
            *o.name);
      }
    }
    const std::pair<const char*, std::optional<int64_t>> maximums[] = {
        {"MaxReadRequestUnits", r.max_read}, {"MaxWriteRequestUnits", r.max_write}};
    for (const auto& [member, value] : maximums) {
      if (value && *value < 1) {
        return InvalidRequest("Requested " + std::string(member) +
                              " for OnDemandThroughput is outside of valid range");
      }
    }
    t.billing_mode = store::BillingMode::kPayPerRequest;
    t.last_update_to_pay_per_request_ms = now_ms;
    t.throughput = {};
    if (source.billing_mode == store::BillingMode::kPayPerRequest) t.on_demand = source.on_demand;
    if (r.max_read) t.on_demand.max_read_request_units = *r.max_read;
    if (r.max_write) t.on_demand.max_write_request_units = *r.max_write;
    for (store::SecondaryIndex& i : t.global_indexes) i.throughput = {};
    return Status::Ok();
  }
  if (to_provisioned && !r.has_throughput) {
    return InvalidRequest(
        "Must override ProvisionedThroughput if BillingMode is overridden to PROVISIONED");
  }
  if (r.max_read || r.max_write) {
    return InvalidRequest(std::string("Cannot override ") +
                          (r.max_read ? "MaxReadRequestUnits" : "MaxWriteRequestUnits") +
                          " for OnDemandThroughput unless BillingModeOverride is PAY_PER_REQUEST");
  }
  for (const IndexOverride& o : gsi) {
    if (!o.has_throughput) {
      return InvalidRequest("Must specify provisioned throughput for index " + *o.name);
    }
  }
  t.billing_mode = store::BillingMode::kProvisioned;
  if (r.has_throughput) t.throughput = {*r.read, *r.write};
  for (store::SecondaryIndex& i : t.global_indexes) {
    i.on_demand = {};
    if (i.throughput.read_capacity_units == 0) {  // from an on-demand source
      i.throughput = {t.throughput.read_capacity_units, t.throughput.write_capacity_units};
    }
  }
  return Status::Ok();
}

}  // namespace

// The table a restore creates from the backup's table record `source`.
Result<TableInfo> PlanRestoredTable(const TableInfo& source, const RestoreRequest& r,
                                    int64_t now_ms, std::string_view source_kind) {
  TableInfo t;
  t.name = *r.target;
  t.status = store::TableStatus::kCreating;
  t.key_schema = source.key_schema;
  t.throughput = {source.throughput.read_capacity_units, source.throughput.write_capacity_units};
  t.local_indexes = source.local_indexes;
  t.global_indexes = source.global_indexes;
  for (auto* list : {&t.local_indexes, &t.global_indexes}) {
    std::erase_if(*list, [](const store::SecondaryIndex& i) {
      return i.status == store::IndexStatus::kDeleting ||
             (i.status == store::IndexStatus::kCreating && i.backfilling);
    });
  }
  if (r.gsi) {
    FDYNO_ASSIGN_OR_RETURN(t.global_indexes, OverrideIndexes(t.global_indexes, *r.gsi));
  }
  if (r.lsi) {
    FDYNO_ASSIGN_OR_RETURN(t.local_indexes, OverrideIndexes(t.local_indexes, *r.lsi));
  }
  FDYNO_ASSIGN_OR_RETURN(t.vector_indexes,
                         PlanRestoredVectorIndexes(source, r.vector, source_kind));
  FDYNO_RETURN_IF_ERROR(PlanRestoredBilling(source, r, now_ms, t));
  FDYNO_RETURN_IF_ERROR(CheckVectorIndexBilling(t));
  for (auto* list : {&t.local_indexes, &t.global_indexes}) {
    for (store::SecondaryIndex& i : *list) {
      i.status = store::IndexStatus::kActive;
      i.backfilling = false;
      i.throughput.last_increase_ms = i.throughput.last_decrease_ms = 0;
      i.throughput.number_of_decreases_today = 0;
      i.warm = {};  // a new table's: what its throughput gives
    }
  }
  // The attribute definitions the key schemas and search schemas that remain use, in the
  // source's order.
  t.attribute_definitions = source.attribute_definitions;
  store::DropUnusedAttributeDefinitions(t);
  t.sse = source.sse;
  if (r.sse != nullptr) {
    const bool kms = r.sse_enabled.value_or(false) || (r.sse_type && *r.sse_type == "KMS");
    if (r.sse_enabled && !*r.sse_enabled && (r.sse_type || r.sse_key)) {
      return Invalid("SSEType and KMSMasterKeyId can only be specified when SSE is enabled");
    }
    t.sse = {kms, kms ? r.sse_key.value_or("") : ""};
  }
  // Streams, TTL, point-in-time recovery, tags, deletion protection, resource policies and the
  // table class are not restored, as in DynamoDB.
  return t;
}

}  // namespace fdyno::api
