// DynamoDB's TableDescription rendering for the table operations (CreateTable, DescribeTable,
// UpdateTable, DeleteTable): ARNs, statuses, key schemas, throughput, indexes, streams, SSE.
// Pure functions of the stored table and the request context.
#pragma once

#include <string>
#include <string_view>

#include "api/operation.h"
#include "store/catalog.h"

namespace fdyno::api {

// {"<member>": TableDescription} as JSON text. `status` is what this response reports
// (CreateTable says CREATING, DeleteTable DELETING); index statuses follow it while the table
// is CREATING.
std::string DescriptionResponse(const char* member, const RequestContext& ctx,
                                const store::TableInfo& t, store::TableStatus status);

}  // namespace fdyno::api
