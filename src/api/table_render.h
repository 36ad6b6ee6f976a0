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
// The member OnDemandThroughput of `limits`, when either is set.
void WriteOnDemand(rapidjson::Writer<rapidjson::StringBuffer>& w,
                   const store::OnDemandLimits& limits);
// NumberOfDecreasesToday of throughput `t` at `now_ms`: the decreases of the current UTC day
// (DynamoDB's count starts again at midnight).
int64_t DecreasesToday(const store::Throughput& t, int64_t now_ms);
// The KMSMasterKeyArn DynamoDB shows for the KMS key `key_id` (an ARN, an alias, a key id, or
// empty: DynamoDB's own key for the account).
std::string KmsKeyArn(const RequestContext& ctx, const std::string& key_id);
// DynamoDB's SSEDescription of a table whose SSE is enabled (KMS), with `status`.
void WriteSseDescription(rapidjson::Writer<rapidjson::StringBuffer>& w, const RequestContext& ctx,
                         const store::SseSettings& sse, std::string_view status = "ENABLED");

// Which settings of the table described a response shows, and which as being changed (Status
// UPDATING), as DynamoDB's responses show them. The values are the table's: a response that shows
// a setting as it was describes a table holding the old value.
struct ResponseView {
  // WarmThroughput (api/warm_throughput.h): the table's, each global index's.
  bool table_warm = true;
  bool index_warm = true;
  // Being raised: the table's, and those of the global indexes named.
  bool table_warm_updating = false;
  std::vector<std::string> index_warm_updating;
  // An SSE change in progress: the SSEDescription with Status UPDATING, or only the status when
  // the table shown has no KMS encryption.
  bool sse_updating = false;
  // Shown as a global table (Replicas, GlobalTableVersion) though `t` has no replicas yet: the
  // response of the UpdateTable that adds its first one.
  bool global_table = false;
};

// DynamoDB's names of the statuses.
std::string_view TableStatusText(store::TableStatus s);
std::string_view IndexStatusText(store::IndexStatus s);
std::string_view ReplicaStatusText(store::ReplicaStatus s);

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
