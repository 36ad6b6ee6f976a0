// The Projection member of index definitions (CreateTable's LocalSecondaryIndexes,
// GlobalSecondaryIndexes and VectorIndexes, UpdateTable's Create actions): deserialization,
// the API model's constraints and DynamoDB's semantic rules, with its messages.
// Pure functions; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <vector>

#include "api/json_util.h"
#include "base/result.h"
#include "store/catalog.h"

namespace fdyno::api {

struct ProjectionIn {
  std::optional<std::string> type;
  std::optional<std::vector<std::string>> non_key;
};

// The "Projection" member of `obj` (nullopt when absent); shape errors as DynamoDB's.
Result<std::optional<ProjectionIn>> ParseProjection(const rapidjson::Value& obj);

// The model's constraints on a present projection at `path` (e.g.
// "globalSecondaryIndexes.1.member.projection"): the type's enum, 1 to 20 non-key attributes of
// 1 to 255 characters.
void CheckProjectionConstraints(ConstraintErrors& e, const ProjectionIn& p,
                                const std::string& path);

// The projection, or DynamoDB's error ("One or more parameter values were invalid: ProjectionType
// is INCLUDE, but NonKeyAttributes is not specified", ...).
Result<store::Projection> ResolveProjection(const ProjectionIn& p);

}  // namespace fdyno::api
