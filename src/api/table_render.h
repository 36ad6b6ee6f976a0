// DynamoDB's TableDescription rendering for the table operations (CreateTable, DescribeTable,
// UpdateTable, DeleteTable): ARNs, statuses, key schemas, throughput, indexes, streams, SSE.
// Pure functions of the stored table and the request context.
#pragma once

#include <string>
#include <string_view>

#include "api/operation.h"
#include "store/catalog.h"
#include "store/item_counts.h"

namespace fdyno::api {

// {"<member>": TableDescription} as JSON text. `status` is what this response reports
// (CreateTable says CREATING, DeleteTable DELETING); index statuses follow it while the table
// is CREATING. `counts` gives ItemCount of the table and of each index (store/item_counts.h:
// exact, where DynamoDB's are refreshed about every six hours); null reports 0.
std::string DescriptionResponse(const char* member, const RequestContext& ctx,
                                const store::TableInfo& t, store::TableStatus status,
                                const store::ItemCounts* counts = nullptr);

}  // namespace fdyno::api
