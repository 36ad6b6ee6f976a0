// Time to Live: UpdateTimeToLive and DescribeTimeToLive.
//
// Enabling records the attribute with status ENABLING; the TTL worker (workers/ttl.h) fills the
// expiry index from the items that exist (store/ttl.h) and marks it ENABLED, while every item
// write keeps the index exact. Disabling clears the index and the settings in one transaction.
// DynamoDB's rules: enabling an enabled TTL or disabling a disabled one is a ValidationException,
// as is naming another attribute than the active one, and a second change within the fixed
// interval after an accepted one (Services::ttl_update_interval_ms; DynamoDB's is about 30
// minutes, content errors are reported first).
//
// Thread-safety: the handlers are thread-safe.
#pragma once

#include <string_view>

#include "api/operation.h"
#include "api/services.h"
#include "store/catalog.h"

namespace fdyno::api {

void RegisterTtlOperations(OperationRegistry& registry, const Services& services);

// The TimeToLiveStatus DynamoDB shows for `status` (DescribeTimeToLive, a backup's
// TimeToLiveDescription).
std::string_view TtlStatusText(store::TtlStatus status);

}  // namespace fdyno::api
