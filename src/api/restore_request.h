// What the two restores (RestoreTableFromBackup, RestoreTableToPointInTime) share: the target
// table's name and the overrides of the source's settings (GlobalSecondaryIndexOverride,
// LocalSecondaryIndexOverride, BillingModeOverride, ProvisionedThroughputOverride,
// OnDemandThroughputOverride, SSESpecificationOverride, VectorIndexOverride), parsed and checked
// as DynamoDB does, and the plan of the table a restore creates.
//
// Thread-safety: pure functions.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/json_util.h"
#include "api/vector_table_ops.h"
#include "base/result.h"
#include "store/catalog.h"

namespace fdyno::api {

struct IndexOverride {
  std::optional<std::string> name;
  std::vector<std::pair<std::optional<std::string>, std::optional<std::string>>> key_schema;
  bool has_key_schema = false;
  std::optional<std::string> projection_type;
  std::optional<std::vector<std::string>> non_key;
  bool has_projection = false;
  std::optional<int64_t> read, write;
  bool has_throughput = false;
};

struct RestoreRequest {
  std::optional<std::string> target;
  std::optional<std::string> billing;
  std::optional<std::vector<IndexOverride>> gsi;
  std::optional<std::vector<IndexOverride>> lsi;
  std::optional<int64_t> read, write;
  bool has_throughput = false;
  std::optional<int64_t> max_read, max_write;  // OnDemandThroughputOverride
  const rapidjson::Value* sse = nullptr;
  std::optional<bool> sse_enabled;
  std::optional<std::string> sse_type, sse_key;
  std::optional<std::vector<VectorIndexIn>> vector;  // VectorIndexOverride
};

// A timestamp member (seconds since the epoch, a JSON number) in ms; nullopt when absent.
Result<std::optional<int64_t>> GetTimestampMs(const rapidjson::Value& obj, std::string_view name);

// A name member's constraints (table, backup and index names): required, length 3..255, the
// pattern.
void CheckName(ConstraintErrors& e, std::string_view path, const std::optional<std::string>& v);

// TargetTableName and the overrides, decoded (shapes only: wrong types are
// SerializationException); CheckOverrideConstraints checks them against the API model.
Result<RestoreRequest> ParseRestoreRequest(const rapidjson::Value& body);
void CheckOverrideConstraints(ConstraintErrors& e, const RestoreRequest& r);

// The table a restore creates, CREATING, from `source` (the table record restored) with the
// request's overrides; `source_kind` names the source in messages ("backup", "source table").
// ValidationException when an override does not fit the source.
Result<store::TableInfo> PlanRestoredTable(const store::TableInfo& source, const RestoreRequest& r,
                                           int64_t now_ms, std::string_view source_kind);

}  // namespace fdyno::api
