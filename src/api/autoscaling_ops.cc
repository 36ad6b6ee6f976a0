#include "api/autoscaling_ops.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/json_util.h"
#include "api/table_arn.h"

namespace fdyno::api {
namespace {

using rapidjson::Value;

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

// ---- the operations --------------------------------------------------------------------------

// DynamoDB answers both operations only for a table of a global table (version 2019.11.21), and
// answers a regional table as it answers a missing one. Every fdyno table is regional.
Error GlobalTableNotFound(std::string_view name) {
  return Error::ResourceNotFound("Global table with name: '" + std::string(name) +
                                 "' does not exist.");
}

Result<std::string> DescribeTableReplicaAutoScaling(Services&, const RequestContext& ctx,
                                                    const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string name,
                         ReadExistingTableName(ctx, body, "DescribeTableReplicaAutoScaling"));
  return GlobalTableNotFound(name);
}

Result<std::string> UpdateTableReplicaAutoScaling(Services&, const RequestContext& ctx,
                                                  const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string name,
                         ReadExistingTableName(ctx, body, "UpdateTableReplicaAutoScaling"));
  std::vector<std::string> regions;
  FDYNO_ASSIGN_OR_RETURN(std::vector<SettingsUpdate> updates, ReadUpdates(body, &regions));
  for (const SettingsUpdate& u : updates) {
    FDYNO_RETURN_IF_ERROR(CheckSettings(name, *u.value));
  }
  return GlobalTableNotFound(name);
}

}  // namespace

void RegisterAutoScalingOperations(OperationRegistry& registry, const Services& services) {
  auto s = std::make_shared<Services>(services);
  registry.Register("DescribeTableReplicaAutoScaling", Bind(s, &DescribeTableReplicaAutoScaling));
  registry.Register("UpdateTableReplicaAutoScaling", Bind(s, &UpdateTableReplicaAutoScaling));
}

}  // namespace fdyno::api
