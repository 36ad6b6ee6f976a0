// Replica auto scaling: DescribeTableReplicaAutoScaling and UpdateTableReplicaAutoScaling.
//
// DynamoDB answers them only for a table of a global table (version 2019.11.21); for a regional
// table, as for a missing one, both answer ResourceNotFoundException "Global table with name:
// '<name>' does not exist." (recorded from DynamoDB, 2026). Every fdyno table is regional (global
// tables are not built yet), so that is every answer, after the request's own checks: the
// constraints of each AutoScalingSettingsUpdate and DynamoDB's rules on their members (disabling
// with nothing else, enabling with MinimumUnits, MaximumUnits and ScalingPolicyUpdate).
//
// Thread-safety: the handlers are thread-safe.
#pragma once

#include "api/operation.h"
#include "api/services.h"

namespace fdyno::api {

void RegisterAutoScalingOperations(OperationRegistry& registry, const Services& services);

}  // namespace fdyno::api
