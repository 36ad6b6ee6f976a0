// The stored forms of a table's catalog records (docs/format/catalog.md): the table record and
// its tag set. The table record is one field list over the record codec (store/record_codec.h),
// so its encoder and decoder cannot drift.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <string_view>
#include <vector>

#include "store/catalog.h"
#include "store/record_codec.h"

namespace fdyno::store {
namespace {

// Table record format versions. Version 2 adds the stream id and the TTL settings; version 1
// records (no such members) still read. Version 3 is a version 2 record with vector indexes
// ("vector_indexes"): only tables that have some are written so, and binaries that predate
// them reject it. Persisted: never renumber.
constexpr uint8_t kTableRecordVersion1 = 1;
constexpr uint8_t kTableRecordVersion = 2;
constexpr uint8_t kTableRecordVersion3 = 3;
constexpr uint8_t kTagsRecordVersion = 1;

// Enum names as stored, indexed by the enum's value. Persisted: never change a spelling.
constexpr std::string_view kScalarTypes[] = {"S", "N", "B"};
constexpr std::string_view kProjectionTypes[] = {"ALL", "KEYS_ONLY", "INCLUDE"};
constexpr std::string_view kTableStatuses[] = {"CREATING", "UPDATING", "DELETING", "ACTIVE"};
constexpr std::string_view kIndexStatuses[] = {"CREATING", "UPDATING", "DELETING", "ACTIVE"};
constexpr std::string_view kBillingModes[] = {"PROVISIONED", "PAY_PER_REQUEST"};
constexpr std::string_view kViewTypes[] = {"NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES",
                                           "KEYS_ONLY"};
constexpr std::string_view kTableClasses[] = {"STANDARD", "STANDARD_INFREQUENT_ACCESS"};
constexpr std::string_view kTtlStatuses[] = {"DISABLED", "ENABLING", "ENABLED", "DISABLING"};
constexpr std::string_view kInsightsStatuses[] = {"DISABLED", "ENABLED", "FAILED"};
constexpr std::string_view kInsightsModes[] = {"ACCESSED_AND_THROTTLED_KEYS", "THROTTLED_KEYS"};
constexpr std::string_view kDistances[] = {"COSINE", "DOT_PRODUCT", "EUCLIDEAN"};
constexpr std::string_view kSearchRoles[] = {"HASH", "INLINE_FILTER"};
constexpr std::string_view kReplicaStatuses[] = {"CREATING", "UPDATING", "DELETING", "ACTIVE"};

// Every field list below is a template over the codec: `R` is const when encoding.

template <typename Fields, typename R>
void AttributeFields(Fields& f, R& a) {
  f.Str("name", a.name);
  f.Enum("type", kScalarTypes, a.type);
}

// A role with one attribute is that attribute's object; a multi-attribute key's roles are
// arrays, which a binary without multi-attribute keys rejects (fails closed) rather than
// reading as a one-attribute key.
template <typename Fields, typename R>
void KeySchemaFields(Fields& f, R& k) {
  const bool many = k.multi_attribute();
  const auto attribute = [](auto& f, auto& a) { AttributeFields(f, a); };
  f.OneOrMany("hash", k.hash, k.more_hash, many, model::kMaxKeyAttributesPerRole, attribute);
  f.SparseOneOrMany("range", k.range, k.more_range, many, model::kMaxKeyAttributesPerRole,
                    attribute);
}

template <typename Fields, typename R>
void ThroughputFields(Fields& f, R& t) {
  f.Int("read", t.read_capacity_units);
  f.Int("write", t.write_capacity_units);
  f.OptInt("last_increase_ms", t.last_increase_ms);
  f.OptInt("last_decrease_ms", t.last_decrease_ms);
  f.OptInt("decreases_today", t.number_of_decreases_today);
}

// OnDemandThroughput and WarmThroughput: each {"read", "write"}, absent when both are 0.
template <typename Fields, typename OnDemand, typename Warm>
void CapacityFields(Fields& f, OnDemand& on_demand, Warm& warm) {
  f.SparseObject("on_demand", on_demand.set(), [&](auto& f) {
    f.Int("read", on_demand.max_read_request_units);
    f.Int("write", on_demand.max_write_request_units);
  });
  f.SparseObject("warm", warm.read_units_per_second != 0 || warm.write_units_per_second != 0,
                 [&](auto& f) {
                   f.Int("read", warm.read_units_per_second);
                   f.Int("write", warm.write_units_per_second);
                 });
}

// Absent while never configured (records before Contributor Insights read so).
template <typename Fields, typename R>
void InsightsFields(Fields& f, R& i) {
  f.SparseObject("insights", i.updated_ms != 0, [&](auto& f) {
    f.Enum("status", kInsightsStatuses, i.status);
    f.Enum("mode", kInsightsModes, i.mode);
    f.Int("updated_ms", i.updated_ms);
    f.Int("rules_ms", i.rules_ms);
    f.Require(i.updated_ms > 0);
  });
}

template <typename Fields, typename R>
void IndexFields(Fields& f, R& i) {
  f.Str("name", i.name);
  f.Int("id", i.id);
  f.Object("key_schema", [&](auto& f) { KeySchemaFields(f, i.key_schema); });
  f.Enum("projection", kProjectionTypes, i.projection.type);
  f.Strs("non_key_attributes", i.projection.non_key_attributes);
  f.Object("throughput", [&](auto& f) { ThroughputFields(f, i.throughput); });
  CapacityFields(f, i.on_demand, i.warm);
  f.Enum("status", kIndexStatuses, i.status);
  f.OptBool("backfilling", i.backfilling);
  InsightsFields(f, i.insights);
}

template <typename Fields, typename R>
void VectorIndexFields(Fields& f, R& v) {
  f.Str("name", v.name);
  f.Int("id", v.id);
  f.Str("attribute", v.attribute);
  f.Int("dimensions", v.dimensions);
  f.Require(v.dimensions >= 1);
  f.Enum("distance", kDistances, v.distance);
  f.List("search_schema", v.search_schema, [](auto& f, auto& e) {
    AttributeFields(f, e.attribute);
    f.Enum("role", kSearchRoles, e.role);
  });
  f.Enum("projection", kProjectionTypes, v.projection.type);
  f.Strs("non_key_attributes", v.projection.non_key_attributes);
  f.Enum("status", kIndexStatuses, v.status);
  f.Bool("backfilling", v.backfilling);
}

template <typename Fields, typename R>
void StreamFields(Fields& f, R& s, uint8_t version) {
  f.Bool("enabled", s.enabled);
  f.Enum("view_type", kViewTypes, s.view_type);
  f.Str("label", s.label);
  if (version == kTableRecordVersion1) return;
  f.Int("id", s.stream_id);
  f.Int("slots", s.slots);
  f.Require(s.slots >= 1 && s.slots <= 255);
}

template <typename Fields, typename R>
void TableFields(Fields& f, R& t, uint8_t version) {
  f.OptStr("account", t.account);  // absent before accounts: the shared account's
  f.OptStr("region", t.region);    // absent before regions, until Catalog::Migrate sets it
  f.Str("name", t.name);
  f.Int("id", t.id);
  f.Str("uuid", t.uuid);
  f.Int("creation_ms", t.creation_ms);
  f.Enum("status", kTableStatuses, t.status);
  f.List("attribute_definitions", t.attribute_definitions,
         [](auto& f, auto& a) { AttributeFields(f, a); });
  f.Object("key_schema", [&](auto& f) { KeySchemaFields(f, t.key_schema); });
  f.Enum("billing_mode", kBillingModes, t.billing_mode);
  f.OptInt("last_update_to_pay_per_request_ms", t.last_update_to_pay_per_request_ms);
  f.Object("throughput", [&](auto& f) { ThroughputFields(f, t.throughput); });
  const auto index = [](auto& f, auto& i) { IndexFields(f, i); };
  f.List("local_indexes", t.local_indexes, index);
  f.List("global_indexes", t.global_indexes, index);
  f.SparseList("vector_indexes", t.vector_indexes,
               [](auto& f, auto& v) { VectorIndexFields(f, v); });
  f.Require((version == kTableRecordVersion3) == !t.vector_indexes.empty());
  f.Object("stream", [&](auto& f) { StreamFields(f, t.stream, version); });
  if (version != kTableRecordVersion1) {
    f.Object("ttl", [&](auto& f) {
      f.Enum("status", kTtlStatuses, t.ttl.status);
      f.Str("attribute", t.ttl.attribute);
      f.Int("updated_ms", t.ttl.updated_ms);
    });
  }
  f.Object("sse", [&](auto& f) {
    f.Bool("enabled", t.sse.enabled);
    f.Str("kms_master_key_id", t.sse.kms_master_key_id);
  });
  f.Enum("table_class", kTableClasses, t.table_class);
  f.OptBool("table_class_set", t.table_class_set);
  f.SparseInts("table_class_changes_ms", t.table_class_changes_ms);
  f.OptBool("deletion_protection", t.deletion_protection);
  f.SparseInt("deletion_protection_ms", t.deletion_protection_ms);
  CapacityFields(f, t.on_demand, t.warm);
  f.Int("next_index_id", t.next_index_id);
  f.Opt("restore", t.restore, [](auto& f, auto& r) {
    f.Str("backup", r.source_backup_id);
    f.Str("table", r.source_table_name);
    f.Int("time_ms", r.restore_ms);
    f.Bool("in_progress", r.in_progress);
  });
  f.SparseObject("pitr", t.pitr.epoch != 0, [&](auto& f) {
    f.Bool("enabled", t.pitr.enabled);
    f.Int("epoch", t.pitr.epoch);
    f.Int("days", t.pitr.recovery_days);
    f.Int("since_ms", t.pitr.since_ms);
    f.Require(t.pitr.epoch >= 1 && t.pitr.recovery_days >= 1 && t.pitr.recovery_days <= 35);
  });
  InsightsFields(f, t.insights);
  f.SparseBool("has_policies", t.has_policies);
  f.SparseList("kinesis", t.kinesis, [](auto& f, auto& k) {
    f.Str("stream_arn", k.stream_arn);
    f.Str("status", k.status);
    f.Str("description", k.description);
    f.Str("precision", k.precision);
  });
  // Absent on regional tables; binaries before global tables reject a record with replicas
  // (they would write its items without replicating them).
  f.SparseList("replicas", t.replicas, [](auto& f, auto& r) {
    f.Str("region", r.region);
    f.Int("table_id", r.table_id);
    f.Enum("status", kReplicaStatuses, r.status);
    f.OptStr("filled_from", r.filled_from);
    f.SparseInt("added_ms", r.added_ms);
    f.Require(r.table_id >= 1);
  });
}

}  // namespace

std::string EncodeTableInfo(const TableInfo& t) {
  const uint8_t version = t.vector_indexes.empty() ? kTableRecordVersion : kTableRecordVersion3;
  RecordWriter w;
  TableFields(w, t, version);
  return w.Finish(version);
}

Result<TableInfo> DecodeTableInfo(std::string_view bytes) {
  RecordReader r(bytes, {kTableRecordVersion1, kTableRecordVersion, kTableRecordVersion3});
  TableInfo t;
  TableFields(r, t, r.version());
  if (!r.ok()) return CorruptRecord("catalog table");
  return t;
}

std::string EncodeTags(const std::vector<Tag>& tags) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartArray();
  for (const auto& t : tags) {
    w.StartArray();
    w.String(t.key.data(), static_cast<rapidjson::SizeType>(t.key.size()));
    w.String(t.value.data(), static_cast<rapidjson::SizeType>(t.value.size()));
    w.EndArray();
  }
  w.EndArray();
  std::string out(1, static_cast<char>(kTagsRecordVersion));
  out.append(buf.GetString(), buf.GetSize());
  return out;
}

// The tag set is a list of [key, value] pairs, not an object: it keeps its own codec.
Result<std::vector<Tag>> DecodeTags(std::string_view bytes) {
  if (bytes.empty() || static_cast<uint8_t>(bytes[0]) != kTagsRecordVersion) {
    return Error::Internal("unknown or corrupt tag record format");
  }
  rapidjson::Document d;
  d.Parse(bytes.data() + 1, bytes.size() - 1);
  if (d.HasParseError() || !d.IsArray()) return CorruptRecord("tag set");
  std::vector<Tag> tags;
  for (const auto& t : d.GetArray()) {
    if (!t.IsArray() || t.Size() != 2 || !t[0].IsString() || !t[1].IsString()) {
      return CorruptRecord("tag set");
    }
    tags.push_back({std::string(t[0].GetString(), t[0].GetStringLength()),
                    std::string(t[1].GetString(), t[1].GetStringLength())});
  }
  return tags;
}

}  // namespace fdyno::store
