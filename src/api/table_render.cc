#include "api/table_render.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "api/json_util.h"
#include "api/table_arn.h"
#include "api/warm_throughput.h"

namespace fdyno::api {

using store::TableInfo;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

namespace {}  // namespace

void WriteSeconds(Writer& w, int64_t ms) { w.Double(static_cast<double>(ms) / 1000.0); }

void WriteKeySchema(Writer& w, const store::KeySchema& ks) {
  auto element = [&w](const model::KeyAttribute& a, const char* key_type) {
    w.StartObject();
    w.Key("AttributeName");
    Str(w, a.name);
    w.Key("KeyType");
    w.String(key_type);
    w.EndObject();
  };
  w.StartArray();
  for (const model::KeyAttribute& a : ks.HashAttributes()) element(a, "HASH");
  for (const model::KeyAttribute& a : ks.RangeAttributes()) element(a, "RANGE");
  w.EndArray();
}

// OnDemandThroughput, when either maximum is set (an UpdateTable response may show -1).
void WriteOnDemand(Writer& w, const store::OnDemandLimits& limits) {
  if (!limits.set()) return;
  w.Key("OnDemandThroughput");
  w.StartObject();
  if (limits.max_read_request_units != 0) {
    w.Key("MaxReadRequestUnits");
    w.Int64(limits.max_read_request_units);
  }
  if (limits.max_write_request_units != 0) {
    w.Key("MaxWriteRequestUnits");
    w.Int64(limits.max_write_request_units);
  }
  w.EndObject();
}

int64_t DecreasesToday(const store::Throughput& t, int64_t now_ms) {
  constexpr int64_t kDayMs = 86'400'000;
  const bool today = t.last_decrease_ms != 0 && t.last_decrease_ms / kDayMs == now_ms / kDayMs;
  return today ? t.number_of_decreases_today : 0;
}

namespace {

void WriteThroughput(Writer& w, const store::Throughput& t, int64_t now_ms) {
  w.StartObject();
  if (t.last_increase_ms != 0) {
    w.Key("LastIncreaseDateTime");
    WriteSeconds(w, t.last_increase_ms);
  }
  if (t.last_decrease_ms != 0) {
    w.Key("LastDecreaseDateTime");
    WriteSeconds(w, t.last_decrease_ms);
  }
  w.Key("NumberOfDecreasesToday");
  w.Int64(DecreasesToday(t, now_ms));
  w.Key("ReadCapacityUnits");
  w.Int64(t.read_capacity_units);
  w.Key("WriteCapacityUnits");
  w.Int64(t.write_capacity_units);
  w.EndObject();
}

void WriteWarm(Writer& w, const store::WarmThroughput& warm, bool updating) {
  w.Key("WarmThroughput");
  w.StartObject();
  w.Key("ReadUnitsPerSecond");
  w.Int64(warm.read_units_per_second);
  w.Key("WriteUnitsPerSecond");
  w.Int64(warm.write_units_per_second);
  w.Key("Status");
  w.String(updating ? "UPDATING" : "ACTIVE");
  w.EndObject();
}

// The table's WarmThroughput as `shown` asks.
void WriteTableWarm(Writer& w, const TableInfo& t, store::TableStatus status,
                    const ResponseView& shown) {
  if (!shown.table_warm || status == store::TableStatus::kDeleting) return;
  WriteWarm(w, tables::EffectiveWarm(t),
            shown.table_warm_updating || status == store::TableStatus::kCreating);
}

// A global index's WarmThroughput as `shown` asks: UPDATING while the index is being created.
void WriteIndexWarm(Writer& w, const TableInfo& t, const store::SecondaryIndex& i, bool creating,
                    const ResponseView& shown) {
  if (!shown.index_warm) return;
  const auto& raised = shown.index_warm_updating;
  WriteWarm(w, tables::EffectiveWarm(t, i),
            creating || std::find(raised.begin(), raised.end(), i.name) != raised.end());
}

}  // namespace

void WriteProjection(Writer& w, const store::Projection& p) {
  w.StartObject();
  w.Key("ProjectionType");
  w.String(p.type == store::ProjectionType::kAll        ? "ALL"
           : p.type == store::ProjectionType::kKeysOnly ? "KEYS_ONLY"
                                                        : "INCLUDE");
  if (p.type == store::ProjectionType::kInclude) {
    // DynamoDB lists them sorted by name, whatever the request's order.
    std::vector<std::string> names = p.non_key_attributes;
    std::sort(names.begin(), names.end());
    w.Key("NonKeyAttributes");
    w.StartArray();
    for (const auto& a : names) Str(w, a);
    w.EndArray();
  }
  w.EndObject();
}

std::string_view StreamViewTypeText(store::StreamViewType v) {
  switch (v) {
    case store::StreamViewType::kNewImage:
      return "NEW_IMAGE";
    case store::StreamViewType::kOldImage:
      return "OLD_IMAGE";
    case store::StreamViewType::kNewAndOldImages:
      return "NEW_AND_OLD_IMAGES";
    case store::StreamViewType::kKeysOnly:
      return "KEYS_ONLY";
  }
  return "NEW_AND_OLD_IMAGES";
}

std::string KmsKeyArn(const RequestContext& ctx, const std::string& key_id) {
  if (key_id.rfind("arn:", 0) == 0) return key_id;
  std::string prefix = "arn:aws:kms:" + ctx.region + ":" + ctx.account_id + ":";
  if (key_id.empty()) return prefix + "alias/aws/dynamodb";
  if (key_id.rfind("alias/", 0) == 0) return prefix + key_id;
  return prefix + "key/" + key_id;
}

std::string_view IndexStatusText(store::IndexStatus s) {
  switch (s) {
    case store::IndexStatus::kCreating:
      return "CREATING";
    case store::IndexStatus::kUpdating:
      return "UPDATING";
    case store::IndexStatus::kDeleting:
      return "DELETING";
    case store::IndexStatus::kActive:
      return "ACTIVE";
  }
  return "ACTIVE";
}

std::string_view TableStatusText(store::TableStatus s) {
  switch (s) {
    case store::TableStatus::kCreating:
      return "CREATING";
    case store::TableStatus::kUpdating:
      return "UPDATING";
    case store::TableStatus::kDeleting:
      return "DELETING";
    case store::TableStatus::kActive:
      return "ACTIVE";
  }
  return "ACTIVE";
}

std::string_view ReplicaStatusText(store::ReplicaStatus s) {
  switch (s) {
    case store::ReplicaStatus::kCreating:
      return "CREATING";
    case store::ReplicaStatus::kUpdating:
      return "UPDATING";
    case store::ReplicaStatus::kDeleting:
      return "DELETING";
    case store::ReplicaStatus::kActive:
      return "ACTIVE";
  }
  return "ACTIVE";
}

namespace {

std::string_view DistanceText(store::DistanceFunction f) {
  switch (f) {
    case store::DistanceFunction::kCosine:
      return "COSINE";
    case store::DistanceFunction::kDotProduct:
      return "DOT_PRODUCT";
    case store::DistanceFunction::kEuclidean:
      return "EUCLIDEAN";
  }
  return "COSINE";
}

// DynamoDB's VectorIndexDescription list. IndexSizeBytes is the entries' float32 vectors
// (ItemCount x Dimensions x 4), an estimate as DynamoDB's six-hourly figure is.
void WriteVectorIndexes(Writer& w, const std::string& table_arn, const TableInfo& t,
                        store::TableStatus status, const store::ItemCounts* counts) {
  w.StartArray();
  for (const store::VectorIndex& v : t.vector_indexes) {
    const int64_t count = counts ? counts->Index(v.id) : 0;
    w.StartObject();
    w.Key("IndexName");
    Str(w, v.name);
    if (!v.search_schema.empty()) {
      w.Key("SearchSchema");
      w.StartArray();
      for (const store::SearchSchemaElement& e : v.search_schema) {
        w.StartObject();
        w.Key("AttributeName");
        Str(w, e.attribute.name);
        w.Key("SearchSchemaElementType");
        w.String(e.role == store::SearchRole::kHash ? "HASH" : "INLINE_FILTER");
        w.EndObject();
      }
      w.EndArray();
    }
    w.Key("Projection");
    WriteProjection(w, v.projection);
    w.Key("VectorAttribute");
    w.StartObject();
    w.Key("AttributeName");
    Str(w, v.attribute);
    w.EndObject();
    w.Key("Dimensions");
    w.Int64(v.dimensions);
    w.Key("DistanceFunction");
    Str(w, DistanceText(v.distance));
    w.Key("IndexStatus");
    Str(w, status == store::TableStatus::kCreating ? "CREATING" : IndexStatusText(v.status));
    if (v.backfilling) {
      w.Key("Backfilling");
      w.Bool(true);
    }
    w.Key("IndexSizeBytes");
    w.Int64(count * v.dimensions * static_cast<int64_t>(sizeof(float)));
    w.Key("ItemCount");
    w.Int64(count);
    w.Key("IndexArn");
    Str(w, table_arn + "/index/" + v.name);
    w.EndObject();
  }
  w.EndArray();
}

// DynamoDB's TableDescription. `status` is what this response reports (CreateTable says
// CREATING, DeleteTable DELETING); index statuses follow it while the table is CREATING.
// A global table's replicas in the other regions (store/replication.h), in the order they
// joined, as DynamoDB lists them: region, status, warm throughput (the table's: replicas share
// its capacity) and its global secondary indexes'; then the version of global tables it is.
void WriteReplicas(Writer& w, const TableInfo& t) {
  w.Key("Replicas");
  w.StartArray();
  for (const store::Replica& r : t.replicas) {
    if (r.region == t.region) continue;
    w.StartObject();
    w.Key("RegionName");
    Str(w, r.region);
    w.Key("ReplicaStatus");
    Str(w, ReplicaStatusText(r.status));
    WriteWarm(w, tables::EffectiveWarm(t), false);
    if (!t.global_indexes.empty()) {
      w.Key("GlobalSecondaryIndexes");
      w.StartArray();
      for (const store::SecondaryIndex& i : t.global_indexes) {
        w.StartObject();
        w.Key("IndexName");
        Str(w, i.name);
        WriteWarm(w, tables::EffectiveWarm(t, i), false);
        w.EndObject();
      }
      w.EndArray();
    }
    w.Key("GlobalTableSettingsReplicationMode");
    w.String("ENABLED_WITH_OVERRIDES");
    w.EndObject();
  }
  w.EndArray();
  w.Key("GlobalTableVersion");
  w.String("2019.11.21");
  w.Key("GlobalTableSettingsReplicationMode");
  w.String("ENABLED_WITH_OVERRIDES");
}

void WriteTableDescription(Writer& w, const RequestContext& ctx, const TableInfo& t,
                           store::TableStatus status, const store::ItemCounts* counts,
                           const ResponseView& view) {
  auto index_count = [&](const store::SecondaryIndex& i) -> int64_t {
    return counts ? counts->Index(i.id) : 0;
  };
  const std::string arn = TableArn(ctx, t.name);
  // DeleteTable's description leaves out the attribute definitions, the key schema and the
  // creation time, as DynamoDB's does.
  const bool deleting = status == store::TableStatus::kDeleting;
  w.StartObject();
  if (!deleting) {
    // DynamoDB lists them sorted by name, whatever the request's order.
    std::vector<store::AttributeDefinition> definitions = t.attribute_definitions;
    std::sort(definitions.begin(), definitions.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    w.Key("AttributeDefinitions");
    w.StartArray();
    for (const auto& a : definitions) {
      w.StartObject();
      w.Key("AttributeName");
      Str(w, a.name);
      w.Key("AttributeType");
      Str(w, store::ScalarTypeName(a.type));
      w.EndObject();
    }
    w.EndArray();
  }
  w.Key("TableName");
  Str(w, t.name);
  if (!deleting) {
    w.Key("KeySchema");
    WriteKeySchema(w, t.key_schema);
  }
  w.Key("TableStatus");
  Str(w, TableStatusText(status));
  if (!deleting) {
    w.Key("CreationDateTime");
    WriteSeconds(w, t.creation_ms);
  }
  w.Key("ProvisionedThroughput");
  WriteThroughput(w, t.throughput, ctx.clock->WallMillis());
  w.Key("TableSizeBytes");
  w.Int64(0);
  w.Key("ItemCount");
  w.Int64(counts ? counts->table : 0);
  w.Key("TableArn");
  Str(w, arn);
  w.Key("TableId");
  Str(w, t.uuid);
  if (t.billing_mode == store::BillingMode::kPayPerRequest ||
      t.last_update_to_pay_per_request_ms != 0) {
    w.Key("BillingModeSummary");
    w.StartObject();
    w.Key("BillingMode");
    w.String(t.billing_mode == store::BillingMode::kPayPerRequest ? "PAY_PER_REQUEST"
                                                                  : "PROVISIONED");
    if (t.last_update_to_pay_per_request_ms != 0) {
      w.Key("LastUpdateToPayPerRequestDateTime");
      WriteSeconds(w, t.last_update_to_pay_per_request_ms);
    }
    w.EndObject();
  }
  WriteOnDemand(w, t.on_demand);
  if (!t.local_indexes.empty()) {
    w.Key("LocalSecondaryIndexes");
    w.StartArray();
    for (const auto& i : t.local_indexes) {
      w.StartObject();
      w.Key("IndexName");
      Str(w, i.name);
      w.Key("KeySchema");
      WriteKeySchema(w, i.key_schema);
      w.Key("Projection");
      WriteProjection(w, i.projection);
      w.Key("IndexSizeBytes");
      w.Int64(0);
      w.Key("ItemCount");
      w.Int64(index_count(i));
      w.Key("IndexArn");
      Str(w, arn + "/index/" + i.name);
      w.EndObject();
    }
    w.EndArray();
  }
  if (!t.global_indexes.empty()) {
    w.Key("GlobalSecondaryIndexes");
    w.StartArray();
    for (const auto& i : t.global_indexes) {
      w.StartObject();
      w.Key("IndexName");
      Str(w, i.name);
      w.Key("KeySchema");
      WriteKeySchema(w, i.key_schema);
      w.Key("Projection");
      WriteProjection(w, i.projection);
      const bool creating =
          status == store::TableStatus::kCreating || i.status == store::IndexStatus::kCreating;
      w.Key("IndexStatus");
      Str(w, status == store::TableStatus::kCreating ? "CREATING" : IndexStatusText(i.status));
      if (i.backfilling || i.status == store::IndexStatus::kCreating) {
        w.Key("Backfilling");
        w.Bool(i.backfilling);
      }
      w.Key("ProvisionedThroughput");
      WriteThroughput(w, i.throughput, ctx.clock->WallMillis());
      WriteOnDemand(w, i.on_demand);
      w.Key("IndexSizeBytes");
      w.Int64(0);
      w.Key("ItemCount");
      w.Int64(index_count(i));
      w.Key("IndexArn");
      Str(w, arn + "/index/" + i.name);
      if (!deleting) WriteIndexWarm(w, t, i, creating, view);
      w.EndObject();
    }
    w.EndArray();
  }
  if (!t.vector_indexes.empty()) {
    w.Key("VectorIndexes");
    WriteVectorIndexes(w, arn, t, status, counts);
  }
  if (t.stream.enabled) {
    w.Key("StreamSpecification");
    w.StartObject();
    w.Key("StreamEnabled");
    w.Bool(true);
    w.Key("StreamViewType");
    Str(w, StreamViewTypeText(t.stream.view_type));
    w.EndObject();
  }
  if (!t.stream.label.empty()) {
    w.Key("LatestStreamLabel");
    Str(w, t.stream.label);
    w.Key("LatestStreamArn");
    Str(w, arn + "/stream/" + t.stream.label);
  }
  // Only while the restore runs: DynamoDB leaves RestoreSummary out once the table is ACTIVE.
  if (t.restore && t.restore->in_progress) {
    w.Key("RestoreSummary");
    w.StartObject();
    if (!t.restore->source_backup_id.empty()) {
      w.Key("SourceBackupArn");
      Str(w, BackupArn(ctx, t.restore->source_table_name, t.restore->source_backup_id));
    }
    w.Key("SourceTableArn");
    Str(w, TableArn(ctx, t.restore->source_table_name));
    w.Key("RestoreDateTime");
    WriteSeconds(w, t.restore->restore_ms);
    w.Key("RestoreInProgress");
    w.Bool(t.restore->in_progress);
    w.EndObject();
  }
  if (!t.replicas.empty() || view.global_table) WriteReplicas(w, t);
  if (view.sse_updating) {
    w.Key("SSEDescription");
    if (t.sse.enabled) {
      WriteSseDescription(w, ctx, t.sse, "UPDATING");
    } else {
      w.StartObject();
      w.Key("Status");
      w.String("UPDATING");
      w.EndObject();
    }
  } else if (t.sse.enabled) {
    w.Key("SSEDescription");
    WriteSseDescription(w, ctx, t.sse);
  }
  if (t.table_class_set) {
    w.Key("TableClassSummary");
    w.StartObject();
    w.Key("TableClass");
    w.String(t.table_class == store::TableClass::kStandard ? "STANDARD"
                                                           : "STANDARD_INFREQUENT_ACCESS");
    if (!t.table_class_changes_ms.empty()) {
      w.Key("LastUpdateDateTime");
      WriteSeconds(w, t.table_class_changes_ms.back());
    }
    w.EndObject();
  }
  w.Key("DeletionProtectionEnabled");
  w.Bool(t.deletion_protection);
  WriteTableWarm(w, t, status, view);
  w.EndObject();
}

}  // namespace

void WriteSseDescription(Writer& w, const RequestContext& ctx, const store::SseSettings& sse,
                         std::string_view status) {
  w.StartObject();
  w.Key("Status");
  Str(w, status);
  w.Key("SSEType");
  w.String("KMS");
  w.Key("KMSMasterKeyArn");
  Str(w, KmsKeyArn(ctx, sse.kms_master_key_id));
  w.EndObject();
}

std::string DescriptionResponse(const char* member, const RequestContext& ctx, const TableInfo& t,
                                store::TableStatus status, const store::ItemCounts* counts,
                                const ResponseView& view) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key(member);
  WriteTableDescription(w, ctx, t, status, counts, view);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace fdyno::api
