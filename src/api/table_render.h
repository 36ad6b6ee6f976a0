// DynamoDB's TableDescription rendering for the table operations (CreateTable, DescribeTable,
// UpdateTable, DeleteTable): ARNs, statuses, key schemas, throughput, indexes, streams, SSE.
// Pure functions of the stored table and the request context.
#pragma once

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <string_view>
#include <vector>

#include "api/operation.h"
#include "store/catalog.h"
#include "store/item_counts.h"

namespace fdyno::api {

// A time as DynamoDB's JSON protocol sends timestamps: seconds since the epoch, a number.
void WriteSeconds(rapidjson::Writer<rapidjson::StringBuffer>& w, int64_t ms);
// A key schema as DynamoDB's KeySchema list ([{"AttributeName":..,"KeyType":"HASH"},...]).
void WriteKeySchema(rapidjson::Writer<rapidjson::StringBuffer>& w, const store::KeySchema& ks);

// A stream view type as DynamoDB names it (StreamViewType: "NEW_IMAGE", "KEYS_ONLY", ...).
std::string_view StreamViewTypeText(store::StreamViewType v);
// A projection as DynamoDB's Projection ({"ProjectionType": ..., "NonKeyAttributes": [...]}).
void WriteProjection(rapidjson::Writer<rapidjson::StringBuffer>& w, const store::Projection& p);
// DynamoDB's SSEDescription of a table whose SSE is enabled (KMS).
void WriteSseDescription(rapidjson::Writer<rapidjson::StringBuffer>& w, const RequestContext& ctx,
                         const store::SseSettings& sse);

// What a TableDescription says of warm throughput (api/warm_throughput.h).
struct WarmShown {
  bool table = true;    // the table's WarmThroughput
  bool indexes = true;  // each global index's
  // Raised by the request, so shown as UPDATING with the values of `raised_from` (the table as
  // it was; null: the table described): the table's, and the global indexes named.
  bool table_raised = false;
  std::vector<std::string> indexes_raised;
  const store::TableInfo* raised_from = nullptr;
};

// {"<member>": TableDescription} as JSON text. `status` is what this response reports
// (CreateTable says CREATING, DeleteTable DELETING); index statuses follow it while the table
// is CREATING. `counts` gives ItemCount of the table and of each index (store/item_counts.h:
// exact, where DynamoDB's are refreshed about every six hours); null reports 0. DeleteTable's
// description (DELETING) has no warm throughput.
std::string DescriptionResponse(const char* member, const RequestContext& ctx,
                                const store::TableInfo& t, store::TableStatus status,
                                const store::ItemCounts* counts = nullptr,
                                const WarmShown& warm = {});

}  // namespace fdyno::api
