// DynamoDB's semantic rules on the table operations' requests, checked after the API model's
// constraints (api/table_request.h), one at a time in DynamoDB's order: key schemas against
// attribute definitions, tags, stream view types, table classes, SSE, throughput bounds, and
// the per-table limits. Each check returns the ValidationException DynamoDB gives (type and
// message) or OK; a Resolve function returns the stored form of a member it has checked.
//
// REQUIRES (everywhere): the request's constraints passed, so the members a rule reads are
// present and their enums valid.
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/table_request.h"
#include "base/error.h"
#include "base/result.h"
#include "store/catalog.h"

namespace fdyno::api::tables {

// DynamoDB's per-table limits shared by several operations.
inline constexpr size_t kMaxTags = 50;
inline constexpr int64_t kMaxCapacityUnits = 1'000'000'000'000;
// DynamoDB's per-table limits on indexes.
inline constexpr size_t kMaxLocalIndexes = 5;
inline constexpr size_t kMaxGlobalIndexes = 20;
// The account's most capacity units per table and per index (DescribeLimits' Table*CapacityUnits).
inline constexpr int64_t kTableMaxCapacityUnits = 40'000;

// ValidationException "One or more parameter values were invalid: <detail>".
Error Invalid(std::string_view detail);

// DeleteTable and UpdateTable of a table still CREATING (being restored): ResourceInUseException.
Status CheckNotCreating(const store::TableInfo& t);
// Whether an index of `t` (global or vector) is being created or deleted.
bool IndexesInFlight(const store::TableInfo& t);
// A table being updated: a global table's replica being created or deleted (the table UPDATING
// until none is) or an index in flight: ResourceInUseException.
Status CheckNotUpdating(const store::TableInfo& t);

// Each capacity unit of a throughput at most kMaxCapacityUnits: "Given value <n> for
// ReadCapacityUnits is out of bounds" (read first). REQUIRES: both units present.
Status CheckCapacityBounds(const ThroughputIn& t);
// The account's limit on a table's (`index` empty) or an index's capacity units in `region`:
// DynamoDB's LimitExceededException above kTableMaxCapacityUnits.
Status CheckCapacityLimit(const ThroughputIn& t, std::string_view region, std::string_view index);
// DynamoDB's LimitExceededException for an OnDemandThroughput above kTableMaxCapacityUnits, of
// the table (`index` empty) or of global index `index`.
Status CheckOnDemandLimit(const OnDemandIn& in, std::string_view region, std::string_view index);

// ==== key schemas ===========================================================================

// "[a, b, c]", as DynamoDB lists attribute names in messages.
std::string JoinNames(const std::vector<std::string>& names);
// The names of `defs` and of `ks`, in request order.
std::vector<std::string> DefinitionNames(const std::vector<AttributeIn>& defs);
std::vector<std::string> KeyNames(const std::vector<KeyElementIn>& ks);
// The stored form of `defs`.
std::vector<store::AttributeDefinition> TypedDefinitions(const std::vector<AttributeIn>& defs);

// Key schema rules shared by tables and indexes, in DynamoDB's order: every key attribute
// defined in `defs`, then the HASH/RANGE order and distinct names. Only a global secondary
// index (`multi_attribute_ok`) may have a multi-attribute key (up to four HASH then up to four
// RANGE elements). On success, the resolved schema.
Result<store::KeySchema> ResolveKeySchema(const std::vector<KeyElementIn>& ks,
                                          const std::vector<AttributeIn>& defs,
                                          bool multi_attribute_ok = false);

// "Attempting to create an index which already exists" (bare, as DynamoDB answers UpdateTable's
// creation of a secondary or vector index whose name the table has).
Error IndexAlreadyExists();

// ==== tags ==================================================================================

// The tags of TagResource and CreateTable: keys and values of DynamoDB's characters and
// lengths, no "aws:" prefix, no key twice. Their count is the caller's (TooManyTags).
Result<std::vector<store::Tag>> ResolveTags(const std::vector<TagIn>& in);
// A tag key as TagResource and UntagResource check it: 1 to 128 characters of DynamoDB's tag
// characters ("The Tag Key provided is invalid, Key: <key>"), not starting with "aws:" in any
// case ("Tag Key cannot be prefixed with aws:, Key: <key>").
Status CheckTagKey(std::string_view key);
// The error of a resource with more than kMaxTags tags.
Error TooManyTags();

// ==== streams, table class, SSE =============================================================

// A StreamViewType; nullopt for a name DynamoDB does not have.
std::optional<store::StreamViewType> ParseViewType(std::string_view s);
// A TableClass; nullopt for a name DynamoDB does not have (InvalidTableClass).
std::optional<store::TableClass> ParseTableClass(std::string_view s);
Error InvalidTableClass();

// SSESpecification rules shared by CreateTable and UpdateTable: no SSEType or KMSMasterKeyId
// Whether an SSESpecification turns KMS encryption on: Enabled, or an SSEType without Enabled
// (DynamoDB takes {SSEType: KMS} alone as enabling it).
bool SseEnabled(const SseIn& sse);
// when disabled, no AES256.
Status CheckSse(const SseIn& sse);
// OnDemandThroughput's rules for a table that is on-demand (`on_demand`) once the request is
// applied: its maximums only for an on-demand table, each at least 1 (-1, which clears one, only
// in an UpdateTable: `update`). `index` names the global index they are given for (empty: the
// table).
Status CheckOnDemand(const OnDemandIn& in, bool on_demand, bool update,
                     std::string_view index = {});

// DynamoDB's LatestStreamLabel: the stream's creation time, ISO 8601 with milliseconds, UTC.
std::string StreamLabel(int64_t wall_ms);
// The time a StreamLabel spells (0 for an empty or malformed one).
int64_t LabelMillis(const std::string& label);
// The label of a stream enabled at now_ms on a table whose latest stream had `previous` (empty:
// none): each stream has its own label (its ARN), so one enabled again within the same
// millisecond as the last one gets the next millisecond.
std::string NextStreamLabel(const std::string& previous, int64_t now_ms);

}  // namespace fdyno::api::tables
