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
// DynamoDB's SSEDescription of a table whose SSE is enabled (KMS), with `status`.
void WriteSseDescription(rapidjson::Writer<rapidjson::StringBuffer>& w, const RequestContext& ctx,
                         const store::SseSettings& sse, std::string_view status = "ENABLED");

// How a response shows the settings its request changes, as DynamoDB's responses show them.
struct ResponseView {
  // WarmThroughput (api/warm_throughput.h): the table's, each global index's.
  bool table_warm = true;
  bool index_warm = true;
  // Raised by the request, so shown as UPDATING with the values of `before`: the table's, and
  // those of the global indexes named.
  bool table_warm_raised = false;
  std::vector<std::string> index_warm_raised;
  // SSEDescription with Status UPDATING: `before`'s KMS settings, or only the status when it had
  // none (an SSE change in progress).
  bool sse_updating = false;
  const store::TableInfo* before = nullptr;  // the table as it was (null: the table described)
};

// {"<member>": TableDescription} as JSON text. `status` is what this response reports
// (CreateTable says CREATING, DeleteTable DELETING); index statuses follow it while the table
// is CREATING. `counts` gives ItemCount of the table and of each index (store/item_counts.h:
// exact, where DynamoDB's are refreshed about every six hours); null reports 0. DeleteTable's
// description (DELETING) has no warm throughput.
std::string DescriptionResponse(const char* member, const RequestContext& ctx,
                                const store::TableInfo& t, store::TableStatus status,
                                const store::ItemCounts* counts = nullptr,
                                const ResponseView& view = {});

}  // namespace fdyno::api
