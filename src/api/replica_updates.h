// UpdateTable's ReplicaUpdates (global tables, version 2019.11.21; store/replication.h): Create
// adds a replica in another region (a table of the same name, key schema, indexes, stream and
// TTL, CREATING until the replication worker has filled it), Update changes a replica's table
// class, Delete removes one (DELETING until the worker drops it). A table's first replica makes
// it global: its stream is enabled with NEW_AND_OLD_IMAGES unless it has one, as DynamoDB does.
// The table is UPDATING until every replica it changed is ACTIVE or gone.
#pragma once

#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <string_view>

#include "api/operation.h"
#include "api/services.h"
#include "base/result.h"
#include "store/catalog.h"

namespace fdyno::api::tables {

// Whether `replica` may leave its global table (UpdateTable's Delete, DeleteTable), as DynamoDB
// rules: not while deletion protection is on, nor within 24 hours of filling a new replica.
Status CheckReplicaMayLeave(const store::TableInfo& replica, int64_t now_ms);

// REQUIRES: the request passed UpdateTable's checks, ReplicaUpdates (`updates`) is its only
// change. `consistency`: MultiRegionConsistency when given.
Result<std::string> UpdateReplicas(Services& s, const RequestContext& ctx, const std::string& name,
                                   const rapidjson::Value& updates,
                                   std::optional<std::string_view> consistency);

}  // namespace fdyno::api::tables
