// Replica auto scaling: DescribeTableReplicaAutoScaling and UpdateTableReplicaAutoScaling.
//
// fdyno does not scale provisioned capacity by itself (there is no Application Auto Scaling
// behind it), so every dimension reads as DynamoDB shows one without auto scaling:
// {"AutoScalingDisabled": true, "ScalingPolicies": []}, for the table (its replica in the
// table's region) and each active global secondary index (none listed for an on-demand table).
// UpdateTableReplicaAutoScaling checks a request as DynamoDB does (its messages for settings
// that are incomplete, settings with AutoScalingDisabled, an on-demand table, an index that does
// not exist, a region the table has no replica in); disabling, which is what every dimension
// already is, succeeds; enabling auto scaling is refused with a ValidationException saying so,
// rather than kept and not honoured.
//
// Thread-safety: the handlers are thread-safe.
#pragma once

#include "api/operation.h"
#include "api/services.h"

namespace fdyno::api {

void RegisterAutoScalingOperations(OperationRegistry& registry, const Services& services);

}  // namespace fdyno::api
