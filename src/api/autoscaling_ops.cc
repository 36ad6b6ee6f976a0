#include "api/autoscaling_ops.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/json_util.h"
#include "api/run_options.h"
#include "api/table_arn.h"
#include "api/table_render.h"
#include "kv/run.h"

namespace fdyno::api {
namespace {

using rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

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
// answers a regional table as it answers a missing one.
Error GlobalTableNotFound(std::string_view name) {
  return Error::ResourceNotFound("Global table with name: '" + std::string(name) +
                                 "' does not exist.");
}

// The global table `name` in the caller's region, as of one snapshot.
Result<std::shared_ptr<const store::TableInfo>> FindGlobalTable(Services& s,
                                                                const RequestContext& ctx,
                                                                const std::string& name) {
  kv::RunOptions options = RunOptionsFor(ctx, s);
  options.read_only = true;
  FDYNO_ASSIGN_OR_RETURN(auto t,
                         kv::Run(*s.db, options, [&](kv::Transaction& tx, const kv::Attempt&) {
                           return s.catalog->Find(tx, CallerScope(ctx), name);
                         }));
  if (!Settled(t) || t->replicas.empty()) return GlobalTableNotFound(name);
  return t;
}

// {"TableAutoScalingDescription": ...} of global table `t`: every replica, its own region's too,
// in region order, with the global secondary indexes. Every global table here is on-demand
// (replica_updates.h), so there are no auto scaling settings to show.
std::string Description(const store::TableInfo& t) {
  std::vector<store::Replica> replicas = t.replicas;
  std::sort(replicas.begin(), replicas.end(),
            [](const store::Replica& a, const store::Replica& b) { return a.region < b.region; });
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  const auto text = [&w](std::string_view s) { w.String(s.data(), s.size()); };
  w.StartObject();
  w.Key("TableAutoScalingDescription");
  w.StartObject();
  w.Key("TableName");
  text(t.name);
  w.Key("TableStatus");
  text(TableStatusText(t.status));
  w.Key("Replicas");
  w.StartArray();
  for (const store::Replica& r : replicas) {
    w.StartObject();
    w.Key("RegionName");
    text(r.region);
    w.Key("GlobalSecondaryIndexes");
    w.StartArray();
    for (const store::SecondaryIndex& i : t.global_indexes) {
      w.StartObject();
      w.Key("IndexName");
      text(i.name);
      w.Key("IndexStatus");
      text(IndexStatusText(i.status));
      w.EndObject();
    }
    w.EndArray();
    w.Key("ReplicaStatus");
    text(ReplicaStatusText(r.status));
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

// An update that sets auto scaling on an on-demand global table: DynamoDB's refusal, naming the
// replicas (upper case) and the first parameter.
Error OnDemandGroup(const store::TableInfo& t, const SettingsUpdate& u) {
  std::vector<std::string> regions;
  for (const store::Replica& r : t.replicas) {
    std::string upper = r.region;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    regions.push_back("'" + upper + "'");
  }
  std::sort(regions.begin(), regions.end());
  std::string list;
  for (const std::string& r : regions) list += (list.empty() ? "" : ", ") + r;
  const std::string parameter =
      u.parameter == "ProvisionedWriteCapacityAutoScalingSettingsUpdate" && u.index.empty()
          ? "GlobalTableProvisionedWriteCapacityAutoScalingSettingsUpdate"
          : u.parameter;
  return Error::Validation("Failed to update global table with name \u2018" + t.name +
                           "\u2018. Replicas " + list +
                           " BillingMode is PayPerRequest. You must convert table's BillingMode "
                           "to PROVISIONED to set parameters: '" +
                           parameter + "'.");
}

Result<std::string> DescribeTableReplicaAutoScaling(Services& s, const RequestContext& ctx,
                                                    const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string name,
                         ReadExistingTableName(ctx, body, "DescribeTableReplicaAutoScaling"));
  FDYNO_ASSIGN_OR_RETURN(auto t, FindGlobalTable(s, ctx, name));
  return Description(*t);
}

// On an on-demand global table DynamoDB takes only AutoScalingDisabled.
Result<std::string> UpdateTableReplicaAutoScaling(Services& s, const RequestContext& ctx,
                                                  const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string name,
                         ReadExistingTableName(ctx, body, "UpdateTableReplicaAutoScaling"));
  std::vector<std::string> regions;
  FDYNO_ASSIGN_OR_RETURN(std::vector<SettingsUpdate> updates, ReadUpdates(body, &regions));
  for (const SettingsUpdate& u : updates) {
    FDYNO_RETURN_IF_ERROR(CheckSettings(name, *u.value));
  }
  FDYNO_ASSIGN_OR_RETURN(auto t, FindGlobalTable(s, ctx, name));
  for (const std::string& region : regions) {
    if (t->FindReplica(region) == nullptr) {
      return SettingsError(name, "Replica not found in region: " + region);
    }
  }
  for (const SettingsUpdate& u : updates) {
    const bool disabling = u.value->HasMember("AutoScalingDisabled") &&
                           (*u.value)["AutoScalingDisabled"].IsBool() &&
                           (*u.value)["AutoScalingDisabled"].GetBool();
    if (!disabling) return OnDemandGroup(*t, u);
  }
  return Description(*t);
}

}  // namespace

void RegisterAutoScalingOperations(OperationRegistry& registry, const Services& services) {
  auto s = std::make_shared<Services>(services);
  registry.Register("DescribeTableReplicaAutoScaling", Bind(s, &DescribeTableReplicaAutoScaling));
  registry.Register("UpdateTableReplicaAutoScaling", Bind(s, &UpdateTableReplicaAutoScaling));
}

}  // namespace fdyno::api
