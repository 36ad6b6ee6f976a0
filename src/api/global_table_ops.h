// Global tables version 2017.11.29 (Legacy): CreateGlobalTable, UpdateGlobalTable,
// DescribeGlobalTable, ListGlobalTables, DescribeGlobalTableSettings, UpdateGlobalTableSettings,
// as DynamoDB answers them today: no account can create a version 2017.11.29 global table any
// more (CreateGlobalTable, and UpdateGlobalTable adding a replica, are a ValidationException
// recommending version 2019.11.21), so none exists: the reads and the other updates answer
// GlobalTableNotFoundException for every name (plain tables and version 2019.11.21 global tables
// are not legacy global tables), and ListGlobalTables an empty list. Requests are validated
// first, as DynamoDB validates them.
//
// Thread-safety: the handlers are thread-safe.
#pragma once

#include "api/operation.h"
#include "api/services.h"

namespace fdyno::api {

void RegisterGlobalTableOperations(OperationRegistry& registry, const Services& services);

}  // namespace fdyno::api
