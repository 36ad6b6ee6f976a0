// The vector index parts of CreateTable (VectorIndexes), UpdateTable (VectorIndexUpdates) and the
// restores (VectorIndexOverride): deserialization, the API model's constraints, and the semantic
// rules with their messages (DynamoDB's where its documentation gives them; docs/compatibility.md
// lists the rest). create_table.cc, update_table.cc and restore_request.cc call these at the
// matching steps of their own checks.
//
// A vector index created with its table is ACTIVE with it; one added by UpdateTable is CREATING
// with Backfilling until the index worker has copied the existing items (workers/backfill.h);
// a deleted one is DELETING until the worker has removed its entries.
//
// Pure functions; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/json_util.h"
#include "api/projection_request.h"
#include "base/result.h"
#include "store/catalog.h"

namespace fdyno::api {

struct SearchSchemaElementIn {
  std::optional<std::string> name;
  std::optional<std::string> type;  // "HASH" or "INLINE_FILTER"
};

// One VectorIndex (CreateTable) or CreateVectorIndexAction (UpdateTable).
struct VectorIndexIn {
  std::optional<std::string> name;
  std::optional<std::string> attribute;  // VectorAttribute.AttributeName
  bool has_attribute = false;            // VectorAttribute given
  std::optional<int64_t> dimensions;
  std::optional<std::string> distance;
  std::optional<ProjectionIn> projection;
  std::optional<std::vector<SearchSchemaElementIn>> search_schema;
};

struct VectorIndexUpdateIn {
  std::optional<VectorIndexIn> create;
  std::optional<std::string> delete_name;
  bool has_delete = false;
};

// CreateTable's "VectorIndexes" (nullopt when absent).
Result<std::optional<std::vector<VectorIndexIn>>> ParseVectorIndexes(const rapidjson::Value& body);
// The restores' "VectorIndexOverride" (nullopt when absent).
Result<std::optional<std::vector<VectorIndexIn>>> ParseVectorIndexOverride(
    const rapidjson::Value& body);
// UpdateTable's "VectorIndexUpdates" (nullopt when absent).
Result<std::optional<std::vector<VectorIndexUpdateIn>>> ParseVectorIndexUpdates(
    const rapidjson::Value& body);

// The model's constraints (names, lengths, enums, minimums), collected with the request's others.
void CheckVectorIndexConstraints(ConstraintErrors& e,
                                 const std::optional<std::vector<VectorIndexIn>>& indexes);
void CheckVectorIndexOverrideConstraints(ConstraintErrors& e,
                                         const std::optional<std::vector<VectorIndexIn>>& indexes);
void CheckVectorIndexUpdateConstraints(
    ConstraintErrors& e, const std::optional<std::vector<VectorIndexUpdateIn>>& updates);

// UpdateTable's request-level rules: each update has exactly one action, a Create all its
// required members. The count of online index changes is update_table.cc's.
Status CheckVectorIndexUpdates(const std::vector<VectorIndexUpdateIn>& updates);
// How many of `updates` create or delete an index.
size_t CountVectorIndexChanges(const std::optional<std::vector<VectorIndexUpdateIn>>& updates);

// CreateTable: the vector indexes of the new table (ids are the catalog's), checked against the
// request's attribute definitions `defs`, the table `t` built so far (key schema, other indexes)
// and `index_names` (the names taken; the new ones are added). The attributes they use are
// appended to `used` (for the "AttributeDefinitions are not used" rule).
Result<std::vector<store::VectorIndex>> PlanCreateVectorIndexes(
    const std::vector<VectorIndexIn>& in, const std::vector<store::AttributeDefinition>& defs,
    const store::TableInfo& t, std::set<std::string>& index_names, std::vector<std::string>& used);

// UpdateTable: applies `updates` to `t` (the table after the request's other changes), with the
// request's attribute definitions `defs`. A new index gets the next index id and is CREATING with
// Backfilling; a deleted one becomes DELETING.
Status ApplyVectorIndexUpdates(const std::vector<VectorIndexUpdateIn>& updates,
                               const std::vector<store::AttributeDefinition>& defs,
                               store::TableInfo& t);

// A restore (RestoreTableFromBackup, RestoreTableToPointInTime): the vector indexes of the
// restored table. Without `overrides`, every index of `source` (the table record restored) that
// is built (neither DELETING nor backfilling); with them, only those they name, each of which
// must be such an index of the source and equal its definition (VectorAttribute, Dimensions,
// DistanceFunction, SearchSchema, Projection): ValidationException naming the index otherwise.
// `source_kind` names the source in messages ("backup", "source table"). The indexes are
// ACTIVE; their ids are the new table's (store::Catalog::Create).
Result<std::vector<store::VectorIndex>> PlanRestoredVectorIndexes(
    const store::TableInfo& source, const std::optional<std::vector<VectorIndexIn>>& overrides,
    std::string_view source_kind);

// The error of UpdateTable switching a table with vector indexes to PROVISIONED billing.
Status CheckVectorIndexBilling(const store::TableInfo& t);

}  // namespace fdyno::api
