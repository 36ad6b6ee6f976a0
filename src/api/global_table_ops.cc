#include "api/global_table_ops.h"

#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "api/json_util.h"

namespace fdyno::api {
namespace {

using rapidjson::Value;

constexpr std::string_view kLegacyRefused =
    "One or more parameter values were invalid: DynamoDB global tables version 2017.11.29 is not "
    "supported. We recommend using DynamoDB global tables version 2019.11.21, instead of version "
    "2017.11.29 (Legacy).";

// GlobalTableName's constraints (a table name's) added to `e`; its value when given.
Result<std::optional<std::string_view>> ReadName(const Value& body, const char* member,
                                                 const char* path, bool required,
                                                 ConstraintErrors& e) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> name, GetString(body, member));
  if (required) e.NotNull(path, name.has_value());
  if (name) {
    e.MinLength(path, *name, 3);
    e.MaxLength(path, *name, 255);
    e.Pattern(path, *name, IsValidTableNameChars(*name), "[a-zA-Z0-9_.-]+");
  }
  return name;
}

Result<std::string> ReadGlobalTableName(const Value& body, ConstraintErrors& e) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> name,
                         ReadName(body, "GlobalTableName", "globalTableName", true, e));
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  return std::string(*name);
}

// DescribeGlobalTable and DescribeGlobalTableSettings check the name's length by hand, before
// its other constraints (DynamoDB, recorded in 2026 for an empty name).
Result<std::string> ReadDescribedName(const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> name, GetString(body, "GlobalTableName"));
  if (name) FDYNO_RETURN_IF_ERROR(CheckNameLengthByHand("TableName", *name));
  ConstraintErrors e;
  return ReadGlobalTableName(body, e);
}

Error NotFound(std::string_view prefix, const std::string& name) {
  return Error::Make(
      ErrorType::kGlobalTableNotFound,
      std::string(prefix) + "Global table with name: '" + name + "' does not exist.");
}

Result<std::string> CreateGlobalTable(const RequestContext&, const Value& body) {
  ConstraintErrors e;
  FDYNO_RETURN_IF_ERROR(RequireObjectBody(body));
  FDYNO_ASSIGN_OR_RETURN(const Value* group, GetList(body, "ReplicationGroup"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> name,
                         ReadName(body, "GlobalTableName", "globalTableName", true, e));
  e.NotNull("replicationGroup", group != nullptr);
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  (void)name;
  return Error::Validation(std::string(kLegacyRefused));
}

Result<std::string> UpdateGlobalTable(const RequestContext&, const Value& body) {
  ConstraintErrors e;
  FDYNO_ASSIGN_OR_RETURN(const Value* updates, GetList(body, "ReplicaUpdates"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> name,
                         ReadName(body, "GlobalTableName", "globalTableName", true, e));
  e.NotNull("replicaUpdates", updates != nullptr);
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  // An empty list, or an update that neither creates nor deletes a replica, is refused bare.
  const auto names = [](const Value& u, const char* action) {
    return u.IsObject() && Member(u, action) != nullptr;
  };
  for (const Value& u : updates->GetArray()) {
    if (!names(u, "Create") && !names(u, "Delete")) {
      return Error::Validation("One or more parameter values were invalid");
    }
  }
  if (updates->Empty()) return Error::Validation("One or more parameter values were invalid");
  // Adding a replica makes a version 2017.11.29 global table: refused before anything is looked
  // up. Removing one needs a global table, and there is none.
  for (const Value& u : updates->GetArray()) {
    if (names(u, "Create")) return Error::Validation(std::string(kLegacyRefused));
  }
  return NotFound("Global table not found: ", std::string(*name));
}

Result<std::string> DescribeGlobalTable(const RequestContext&, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string name, ReadDescribedName(body));
  return NotFound("Global table not found: ", name);
}

Result<std::string> DescribeGlobalTableSettings(const RequestContext&, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string name, ReadDescribedName(body));
  return NotFound("", name);
}

Result<std::string> UpdateGlobalTableSettings(const RequestContext&, const Value& body) {
  ConstraintErrors e;
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> mode,
                         GetString(body, "GlobalTableBillingMode"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<int64_t> units,
                         GetLong(body, "GlobalTableProvisionedWriteCapacityUnits"));
  FDYNO_ASSIGN_OR_RETURN(const Value* gsis,
                         GetList(body, "GlobalTableGlobalSecondaryIndexSettingsUpdate"));
  FDYNO_ASSIGN_OR_RETURN(const Value* replicas, GetList(body, "ReplicaSettingsUpdate"));
  if (mode) e.Enum("globalTableBillingMode", *mode, {"PROVISIONED", "PAY_PER_REQUEST"});
  if (units) e.MinValue("globalTableProvisionedWriteCapacityUnits", *units, 1);
  for (auto [list, path, max] :
       {std::tuple{gsis, "globalTableGlobalSecondaryIndexSettingsUpdate", 20},
        std::tuple{replicas, "replicaSettingsUpdate", 50}}) {
    if (list == nullptr) continue;
    if (list->Empty()) {
      e.AddWithoutValue(path, "Member must have length greater than or equal to 1");
    } else if (list->Size() > static_cast<rapidjson::SizeType>(max)) {
      e.AddWithoutValue(path,
                        "Member must have length less than or equal to " + std::to_string(max));
    }
  }
  // Each replica's settings name its region.
  for (size_t i = 0; replicas != nullptr && i < replicas->Size(); ++i) {
    const Value& u = (*replicas)[static_cast<rapidjson::SizeType>(i)];
    e.NotNull(MemberPath("replicaSettingsUpdate", i) + ".regionName",
              u.IsObject() && Member(u, "RegionName") != nullptr);
  }
  FDYNO_ASSIGN_OR_RETURN(std::string name, ReadGlobalTableName(body, e));
  return NotFound("", name);
}

Result<std::string> ListGlobalTables(const RequestContext&, const Value& body) {
  ConstraintErrors e;
  FDYNO_RETURN_IF_ERROR(RequireObjectBody(body));
  FDYNO_ASSIGN_OR_RETURN(std::optional<int64_t> limit, GetInteger(body, "Limit"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> region, GetString(body, "RegionName"));
  FDYNO_ASSIGN_OR_RETURN(
      std::optional<std::string_view> start,
      ReadName(body, "ExclusiveStartGlobalTableName", "exclusiveStartGlobalTableName", false, e));
  if (limit) e.MinValue("limit", *limit, 1);
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  (void)region;
  (void)start;
  return std::string(R"({"GlobalTables":[]})");
}

}  // namespace

void RegisterGlobalTableOperations(OperationRegistry& registry, const Services&) {
  registry.Register("CreateGlobalTable", &CreateGlobalTable);
  registry.Register("UpdateGlobalTable", &UpdateGlobalTable);
  registry.Register("DescribeGlobalTable", &DescribeGlobalTable);
  registry.Register("DescribeGlobalTableSettings", &DescribeGlobalTableSettings);
  registry.Register("UpdateGlobalTableSettings", &UpdateGlobalTableSettings);
  registry.Register("ListGlobalTables", &ListGlobalTables);
}

}  // namespace fdyno::api
