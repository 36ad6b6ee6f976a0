// The request members that CreateTable and UpdateTable share (and TagResource its Tags):
// deserialization, then the API model's constraints. Each ParseX reads one member of a request
// body, type-checked: a member of the wrong JSON type is DynamoDB's SerializationException
// (api/json_util.h), an absent one is nullopt; members of list elements that are not objects
// stay unset, for the constraints to report. Each CheckXConstraints adds the model's violations
// of one member to the request's ConstraintErrors, named by the member's path (e.g.
// "globalSecondaryIndexes.1.member.keySchema"), so one request's are reported together.
//
// The semantic rules that come after the constraints are api/table_rules.h's.
//
// Pure functions; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/json_util.h"
#include "api/projection_request.h"
#include "base/result.h"
#include "model/key_schema.h"
#include "store/catalog.h"

namespace fdyno::api::tables {

// ==== the members, as deserialized =========================================================

struct KeyElementIn {
  std::optional<std::string> name;
  std::optional<std::string> key_type;
};
struct AttributeIn {
  std::optional<std::string> name;
  std::optional<std::string> type;
};
struct ThroughputIn {
  std::optional<int64_t> read;
  std::optional<int64_t> write;
};
struct OnDemandIn {
  std::optional<int64_t> max_read;
  std::optional<int64_t> max_write;
};
struct WarmIn {
  std::optional<int64_t> read;
  std::optional<int64_t> write;
  bool empty() const { return !read && !write; }
};
// One LocalSecondaryIndex or GlobalSecondaryIndex (only a global one has throughputs).
struct IndexIn {
  std::optional<std::string> name;
  std::optional<std::vector<KeyElementIn>> key_schema;
  std::optional<ProjectionIn> projection;
  std::optional<ThroughputIn> throughput;
  std::optional<OnDemandIn> on_demand;
  std::optional<WarmIn> warm;
};
struct StreamIn {
  std::optional<bool> enabled;
  std::optional<std::string> view_type;
};
struct SseIn {
  std::optional<bool> enabled;
  std::optional<std::string> sse_type;
  std::optional<std::string> kms_key;
};
struct TagIn {
  std::optional<std::string> key;
  std::optional<std::string> value;
};

// ==== deserialization ======================================================================

// The "KeySchema" member of `obj` (a request body or an index).
Result<std::optional<std::vector<KeyElementIn>>> ParseKeySchema(const rapidjson::Value& obj);
// The ProvisionedThroughput structure `name` of `obj`.
Result<std::optional<ThroughputIn>> ParseThroughput(const rapidjson::Value& obj,
                                                    std::string_view name);
// The "OnDemandThroughput" member of `obj`.
Result<std::optional<OnDemandIn>> ParseOnDemand(const rapidjson::Value& obj);
// The "WarmThroughput" member of `obj`.
Result<std::optional<WarmIn>> ParseWarm(const rapidjson::Value& obj);
// The index list `name` of `body`, each element of type `type_name` (named in shape errors);
// a `global` index's ProvisionedThroughput, OnDemandThroughput and WarmThroughput are read too.
Result<std::optional<std::vector<IndexIn>>> ParseIndexes(const rapidjson::Value& body,
                                                         std::string_view name,
                                                         std::string_view type_name, bool global);
// "AttributeDefinitions".
Result<std::optional<std::vector<AttributeIn>>> ParseAttributeDefinitions(
    const rapidjson::Value& body);
// "StreamSpecification".
Result<std::optional<StreamIn>> ParseStream(const rapidjson::Value& body);
// "SSESpecification".
Result<std::optional<SseIn>> ParseSse(const rapidjson::Value& body);
// "Tags" (CreateTable, TagResource).
Result<std::optional<std::vector<TagIn>>> ParseTags(const rapidjson::Value& body);

// Applies an OnDemandThroughput member-wise over `limits`: a given member replaces the stored
// one, -1 removes it.
void ApplyOnDemand(const OnDemandIn& in, store::OnDemandLimits& limits);

// ==== the model's constraints ===============================================================

// Table and index names: [a-zA-Z0-9_.-]+, as constraint messages spell the pattern.
inline constexpr std::string_view kNamePattern = "[a-zA-Z0-9_.-]+";

// The longest key schema of a table or local index, and of a global secondary index (four
// partition and four sort key attributes).
inline constexpr size_t kMaxKeySchema = 2;
inline constexpr size_t kMaxGlobalIndexKeySchema = 2 * model::kMaxKeyAttributesPerRole;

// The key schema at `path`: present, 1 to `max_length` elements (the message prints the list),
// names of 1 to 255 characters, key types present and, with `check_key_type_enum`, HASH or RANGE.
void CheckKeySchemaConstraints(ConstraintErrors& e,
                               const std::optional<std::vector<KeyElementIn>>& ks,
                               const std::string& path, bool check_key_type_enum,
                               size_t max_length = kMaxKeySchema);
// A present throughput at `path`: both units present and at least 1 (write first).
void CheckThroughputConstraints(ConstraintErrors& e, const std::optional<ThroughputIn>& t,
                                const std::string& path);
// An index name at `path`: present, the name pattern, 3 to 255 characters.
void CheckIndexNameConstraints(ConstraintErrors& e, const std::optional<std::string>& name,
                               const std::string& path);
// Each index of a present list at `path`: its name, key schema, projection and, when `global`,
// throughput.
void CheckIndexConstraints(ConstraintErrors& e, const std::optional<std::vector<IndexIn>>& indexes,
                           const std::string& path, bool global);
// Each definition: a name of 1 to 255 characters, a type of B, N or S.
void CheckAttributeDefinitionConstraints(ConstraintErrors& e,
                                         const std::optional<std::vector<AttributeIn>>& defs);
// A present stream: StreamEnabled given, StreamViewType one of DynamoDB's four.
void CheckStreamConstraints(ConstraintErrors& e, const std::optional<StreamIn>& stream);
// A present SSEType: AES256 or KMS; a present KMSMasterKeyId not empty. `path` names the member
// (RestoreTableFromBackup's "sSESpecificationOverride").
void CheckSseConstraints(ConstraintErrors& e, const std::optional<SseIn>& sse,
                         std::string_view path = "sSESpecification");

}  // namespace fdyno::api::tables
