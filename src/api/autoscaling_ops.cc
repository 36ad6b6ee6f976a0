#include "api/autoscaling_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/json_util.h"
#include "api/table_arn.h"
#include "api/table_read.h"
#include "store/catalog.h"

namespace fdyno::api {
namespace {

using rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// ---- rendering -------------------------------------------------------------------------------

void WriteDisabled(Writer& w) {
  w.StartObject();
  w.Key("AutoScalingDisabled");
  w.Bool(true);
  w.Key("ScalingPolicies");
  w.StartArray();
  w.EndArray();
  w.EndObject();
}

std::string Describe(const RequestContext& ctx, const store::TableInfo& t) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("TableAutoScalingDescription");
  w.StartObject();
  w.Key("TableName");
  Str(w, t.name);
  w.Key("TableStatus");
  Str(w, t.status == store::TableStatus::kCreating ? "CREATING" : "ACTIVE");
  w.Key("Replicas");
  w.StartArray();
  w.StartObject();
  w.Key("RegionName");
  Str(w, ctx.region);
  w.Key("GlobalSecondaryIndexes");
  w.StartArray();
  if (t.billing_mode == store::BillingMode::kProvisioned) {
    for (const store::SecondaryIndex& i : t.global_indexes) {
      if (i.status != store::IndexStatus::kActive || i.backfilling) continue;
      w.StartObject();
      w.Key("IndexName");
      Str(w, i.name);
      w.Key("IndexStatus");
      Str(w, "ACTIVE");
      w.Key("ProvisionedReadCapacityAutoScalingSettings");
      WriteDisabled(w);
      w.Key("ProvisionedWriteCapacityAutoScalingSettings");
      WriteDisabled(w);
      w.EndObject();
    }
  }
  w.EndArray();
  w.Key("ReplicaProvisionedReadCapacityAutoScalingSettings");
  WriteDisabled(w);
  w.Key("ReplicaProvisionedWriteCapacityAutoScalingSettings");
  WriteDisabled(w);
  w.Key("ReplicaStatus");
  Str(w, "ACTIVE");
  w.EndObject();
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

// ---- the update's request --------------------------------------------------------------------

// One AutoScalingSettingsUpdate, and what it would change.
struct SettingsUpdate {
  std::string parameter;  // DynamoDB's name for it ("ReplicaProvisionedRead...SettingsUpdate")
  std::string index;      // empty: the table
  bool read = false;
  const Value* value = nullptr;
};

// The constraint errors of one AutoScalingSettingsUpdate at `path`.
void CheckSettingsShape(ConstraintErrors& e, const Value& s, const std::string& path) {
  for (const char* units : {"MinimumUnits", "MaximumUnits"}) {
    if (auto v = s.FindMember(units); v != s.MemberEnd() && v->value.IsInt64()) {
      std::string member(units);
      member[0] = static_cast<char>(std::tolower(member[0]));
      e.MinValue(path + "." + member, v->value.GetInt64(), 1);
    }
  }
  auto policy = s.FindMember("ScalingPolicyUpdate");
  if (policy != s.MemberEnd() && policy->value.IsObject()) {
    e.NotNull(path + ".scalingPolicyUpdate.targetTrackingScalingPolicyConfiguration",
              policy->value.HasMember("TargetTrackingScalingPolicyConfiguration"));
  }
}

// Every settings update of the request, in DynamoDB's order, with their shapes checked.
Result<std::vector<SettingsUpdate>> ReadUpdates(const Value& body,
                                                std::vector<std::string>* regions) {
  std::vector<SettingsUpdate> out;
  ConstraintErrors e;
  auto add = [&](const Value& obj, const char* member, std::string parameter, std::string index,
                 bool read, const std::string& path) -> Status {
    FDYNO_ASSIGN_OR_RETURN(const Value* v, GetStruct(obj, member, "AutoScalingSettingsUpdate"));
    if (v == nullptr) return Status::Ok();
    std::string field(member);
    field[0] = static_cast<char>(std::tolower(field[0]));
    CheckSettingsShape(e, *v, path + field);
    out.push_back({std::move(parameter), std::move(index), read, v});
    return Status::Ok();
  };
  FDYNO_RETURN_IF_ERROR(add(body, "ProvisionedWriteCapacityAutoScalingUpdate",
                            "ProvisionedWriteCapacityAutoScalingSettingsUpdate", "", false, ""));
  FDYNO_ASSIGN_OR_RETURN(const Value* gsis, GetList(body, "GlobalSecondaryIndexUpdates"));
  if (gsis != nullptr) {
    if (gsis->Empty())
      e.Add("globalSecondaryIndexUpdates", "[]",
            "Member must have length greater than or equal to 1");
    for (size_t i = 0; i < gsis->Size(); ++i) {
      const Value& g = (*gsis)[static_cast<rapidjson::SizeType>(i)];
      if (!g.IsObject()) continue;
      const std::string index =
          g.HasMember("IndexName") && g["IndexName"].IsString() ? g["IndexName"].GetString() : "";
      FDYNO_RETURN_IF_ERROR(add(g, "ProvisionedWriteCapacityAutoScalingUpdate",
                                "ProvisionedWriteCapacityAutoScalingSettingsUpdate", index, false,
                                MemberPath("globalSecondaryIndexUpdates", i) + "."));
    }
  }
  FDYNO_ASSIGN_OR_RETURN(const Value* replicas, GetList(body, "ReplicaUpdates"));
  if (replicas != nullptr) {
    if (replicas->Empty())
      e.Add("replicaUpdates", "[]", "Member must have length greater than or equal to 1");
    for (size_t i = 0; i < replicas->Size(); ++i) {
      const Value& r = (*replicas)[static_cast<rapidjson::SizeType>(i)];
      if (!r.IsObject()) continue;
      const std::string path = MemberPath("replicaUpdates", i) + ".";
      const bool named = r.HasMember("RegionName") && r["RegionName"].IsString();
      e.NotNull(path + "regionName", named);
      if (named) regions->push_back(r["RegionName"].GetString());
      FDYNO_RETURN_IF_ERROR(add(r, "ReplicaProvisionedReadCapacityAutoScalingUpdate",
                                "ReplicaProvisionedReadCapacityAutoScalingSettingsUpdate", "", true,
                                path));
      FDYNO_ASSIGN_OR_RETURN(const Value* rg, GetList(r, "ReplicaGlobalSecondaryIndexUpdates"));
      for (size_t j = 0; rg != nullptr && j < rg->Size(); ++j) {
        const Value& g = (*rg)[static_cast<rapidjson::SizeType>(j)];
        if (!g.IsObject()) continue;
        const std::string index =
            g.HasMember("IndexName") && g["IndexName"].IsString() ? g["IndexName"].GetString() : "";
        FDYNO_RETURN_IF_ERROR(
            add(g, "ProvisionedReadCapacityAutoScalingUpdate",
                "ProvisionedReadCapacityAutoScalingSettingsUpdate", index, true,
                path + MemberPath("replicaGlobalSecondaryIndexUpdates", j) + "."));
      }
    }
  }
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  return out;
}

// ---- DynamoDB's rules ------------------------------------------------------------------------

Error SettingsError(const std::string& table, const std::string& detail, bool colon = true) {
  return Error::Validation("Failed to update settings for global table with name" +
                           std::string(colon ? ": " : " ") + "\u2018" + table +
                           "\u2019: " + detail);
}

// A settings update that is complete and consistent: disabling with nothing else, or enabling
// with MinimumUnits, MaximumUnits and ScalingPolicyUpdate.
Status CheckSettings(const std::string& table, const Value& s) {
  const bool disabling = s.HasMember("AutoScalingDisabled") && s["AutoScalingDisabled"].IsBool() &&
                         s["AutoScalingDisabled"].GetBool();
  if (disabling) {
    if (s.HasMember("MinimumUnits") || s.HasMember("MaximumUnits")) {
      return SettingsError(table,
                           "Parameters 'MaximumUnits', 'MinimumUnits' must be left blank when "
                           "disabling auto scaling.",
                           false);
    }
    if (s.HasMember("ScalingPolicyUpdate")) {
      return SettingsError(table,
                           "Parameters 'ScalingPolicyUpdate' must be left blank when disabling "
                           "auto scaling.",
                           false);
    }
    return Status::Ok();
  }
  std::vector<std::string> missing;
  if (!s.HasMember("MaximumUnits")) missing.push_back("'MaximumUnits'");
  if (!s.HasMember("ScalingPolicyUpdate")) missing.push_back("'ScalingPolicyUpdate'");
  if (!s.HasMember("MinimumUnits")) missing.push_back("'MinimumUnits'");
  if (missing.empty()) return Status::Ok();
  std::string list;
  for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
  return SettingsError(
      table, "Parameters " + list + " are required unless auto scaling is being disabled.");
}

bool Disabling(const SettingsUpdate& u) {
  const Value& s = *u.value;
  return s.HasMember("AutoScalingDisabled") && s["AutoScalingDisabled"].IsBool() &&
         s["AutoScalingDisabled"].GetBool();
}

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

Status CheckUpdate(const RequestContext& ctx, const store::TableInfo& t,
                   const std::vector<SettingsUpdate>& updates,
                   const std::vector<std::string>& regions) {
  std::vector<std::string> strangers;
  for (const std::string& r : regions) {
    if (r != ctx.region) strangers.push_back(r);
  }
  if (!strangers.empty()) {
    std::string list;
    for (const std::string& r : strangers) list += (list.empty() ? "" : ", ") + r;
    return Error::Validation(
        "Update global table operation failed because one or more replicas were not part of the "
        "global table. Please retry the request without these replicas: [" +
        list + "].");
  }
  std::vector<std::string> unknown;
  for (const SettingsUpdate& u : updates) {
    if (u.index.empty()) continue;
    const store::SecondaryIndex* i = t.FindIndex(u.index);
    const bool gsi = i != nullptr && std::any_of(t.global_indexes.begin(), t.global_indexes.end(),
                                                 [&](const auto& g) { return g.name == u.index; });
    if (!gsi || i->status != store::IndexStatus::kActive || i->backfilling)
      unknown.push_back(u.index);
  }
  if (!unknown.empty()) {
    std::string list;
    for (const std::string& n : unknown) list += (list.empty() ? "" : ", ") + n;
    return Error::ResourceNotFound("Failed to update settings for global table with name: \u2018" +
                                   t.name +
                                   "\u2019 because the global secondary indexes with "
                                   "names: \u2018[" +
                                   list + "]\u2019 do not exist.");
  }
  for (const SettingsUpdate& u : updates) FDYNO_RETURN_IF_ERROR(CheckSettings(t.name, *u.value));
  for (const SettingsUpdate& u : updates) {
    if (Disabling(u)) continue;
    if (t.billing_mode == store::BillingMode::kPayPerRequest) {
      return Error::Validation("Failed to update global table with name \u2018" + t.name +
                               "\u2018. Replicas '" + Upper(ctx.region) +
                               "' BillingMode is PayPerRequest. You must convert table's "
                               "BillingMode to PROVISIONED to set parameters: '" +
                               u.parameter + "'.");
    }
    return SettingsError(t.name,
                         "fdyno does not scale provisioned capacity automatically; set the "
                         "capacity with UpdateTable instead of enabling auto scaling (" +
                             u.parameter + ").");
  }
  return Status::Ok();
}

// ---- the operations --------------------------------------------------------------------------

Result<std::string> DescribeTableReplicaAutoScaling(Services& s, const RequestContext& ctx,
                                                    const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string_view name, ReadControlPlaneTableName(body));
  FDYNO_ASSIGN_OR_RETURN(auto t, ReadTable(s, ctx, std::string(name)));
  return Describe(ctx, *t);
}

Result<std::string> UpdateTableReplicaAutoScaling(Services& s, const RequestContext& ctx,
                                                  const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string_view name, ReadControlPlaneTableName(body));
  std::vector<std::string> regions;
  FDYNO_ASSIGN_OR_RETURN(std::vector<SettingsUpdate> updates, ReadUpdates(body, &regions));
  FDYNO_ASSIGN_OR_RETURN(auto t, ReadTable(s, ctx, std::string(name)));
  FDYNO_RETURN_IF_ERROR(CheckUpdate(ctx, *t, updates, regions));
  return Describe(ctx, *t);
}

}  // namespace

void RegisterAutoScalingOperations(OperationRegistry& registry, const Services& services) {
  auto s = std::make_shared<Services>(services);
  registry.Register("DescribeTableReplicaAutoScaling", Bind(s, &DescribeTableReplicaAutoScaling));
  registry.Register("UpdateTableReplicaAutoScaling", Bind(s, &UpdateTableReplicaAutoScaling));
}

}  // namespace fdyno::api
